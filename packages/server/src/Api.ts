/**
 * The whole HTTP API. Its OpenAPI description (`GET /openapi.json`) covers the merchant endpoints and, as
 * OpenAPI 3.1 `webhooks`, every event the service delivers.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as OpenApi from "@effect/platform/OpenApi"
import { Events, EventType } from "@laari/core"
import { ApprovalsApi } from "./Approvals/Api.js"
import { AuditApi, OpsAuditApi } from "./Audit/Api.js"
import { BalanceApi } from "./Balance/Api.js"
import { CheckoutApi } from "./Checkout/Api.js"
import { HealthApi } from "./Health/Api.js"
import * as JsonSchema from "./Http/JsonSchema.js"
import * as OpenApiDocument from "./Http/OpenApiDocument.js"
import * as Problems from "./Http/Problems.js"
import { MandatesApi } from "./Mandates/Api.js"
import { OpsApi } from "./Ops/Api.js"
import { OpsUsersApi } from "./Ops/UsersApi.js"
import { QrCodesApi, QrImagesApi } from "./QrCodes/Api.js"
import { ReconciliationApi } from "./Reconciliation/Api.js"
import { RefundsApi } from "./Refunds/Api.js"
import { SubscriptionsApi } from "./Subscriptions/Api.js"
import { TestHelpersApi } from "./TestHelpers/Api.js"
import { EventsApi, OpsWebhooksApi, WebhookEndpointsApi } from "./Webhooks/Api.js"

/** The request body of one event's delivery: its envelope, `type` fixed, the event's object inlined. */
const webhookSchema = (type: EventType.Type): unknown => JsonSchema.standalone(Events.envelopeOf(type))

/** `mandate.activated` is `onMandateActivated`: unique per event type, and a valid identifier. */
export const webhookOperationId = (type: EventType.Type): string =>
  `on${type
    .split(/[._]/)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1).toLowerCase())
    .join("")}`

/** The OpenAPI 3.1 `webhooks` map, one item per event type of the catalogue (`Events.Objects`). */
export const webhooks = Object.fromEntries(
  EventType.Types.map((type) => [
    type,
    {
      post: {
        // An operationId like every path's: generated clients name their webhook handlers after it.
        operationId: webhookOperationId(type),
        summary: `The ${type} event`,
        description: `Delivered to the merchant's endpoint with Standard Webhooks signature headers; \`data.object\` is the object this event carries.`,
        requestBody: {
          required: true,
          content: { "application/json": { schema: webhookSchema(type) } }
        },
        responses: { "2XX": { description: "Received. Any other answer, or none, is retried later." } }
      }
    }
  ])
)

/** HttpApi's document made ours: what both documents add (`OpenApiDocument`). */
const transform = OpenApiDocument.finish({ internal: false })

export class Api extends HttpApi.make("laari")
  .add(MandatesApi)
  .add(QrCodesApi)
  .add(QrImagesApi)
  .add(CheckoutApi)
  .add(SubscriptionsApi)
  .add(RefundsApi)
  .add(BalanceApi)
  .add(AuditApi)
  .add(WebhookEndpointsApi)
  .add(EventsApi)
  .add(ApprovalsApi)
  .add(TestHelpersApi)
  .add(OpsApi)
  .add(OpsUsersApi)
  .add(OpsWebhooksApi)
  .add(ReconciliationApi)
  .add(OpsAuditApi)
  .add(HealthApi)
  // Any request can be over the body limit (`Http/Edge`, `Http/Middleware`).
  .addError(Problems.BodyTooLargeProblem)
  // An empty or dot (`.`, `..`) path parameter matches no route, answered `NOT_FOUND` on any path.
  .addError(Problems.NotFoundProblem)
  .annotate(OpenApi.Title, "laari")
  .annotate(OpenApi.Version, EventType.ApiVersion)
  // `OpenApi.fromApi` has no notion of webhooks: the Override adds the 3.1 `webhooks` key to the document.
  .annotate(OpenApi.Override, { webhooks })
  .annotate(OpenApi.Transform, transform)
  .annotate(
    OpenApi.Description,
    [
      "Mandates, national-scheme QR codes, subscriptions and refunds for merchants of a Maldivian wallet.",
      "Amounts are integer laari (100 laari = 1 MVR); times in reads are Maldives time (+05:00).",
      "Authenticate with `Authorization: Bearer <key>`. Every error body is `{ message, code, errors? }`, its `code` distinct among the errors one status of one operation can answer with.",
      "Schemas describe exactly what this version sends; additive changes (a new optional field, a new event) keep the version, so clients must ignore fields they do not know."
    ].join(" ")
  ) {}
