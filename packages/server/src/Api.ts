/**
 * The whole HTTP API. Its OpenAPI description (`GET /openapi.json`) covers the merchant endpoints and, as
 * OpenAPI 3.1 `webhooks`, every event the service delivers.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as OpenApi from "@effect/platform/OpenApi"
import { Events, EventType } from "@laari/core"
import { ApprovalsApi } from "./Approvals/Api.js"
import { BalanceApi } from "./Balance/Api.js"
import { CheckoutApi } from "./Checkout/Api.js"
import { HealthApi } from "./Health/Api.js"
import * as JsonSchema from "./Http/JsonSchema.js"
import * as OpenApiDocument from "./Http/OpenApiDocument.js"
import * as Problems from "./Http/Problems.js"
import { MandatesApi } from "./Mandates/Api.js"
import { OpsApi } from "./Ops/Api.js"
import { QrCodesApi, QrImagesApi } from "./QrCodes/Api.js"
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

const DecodeErrorRef = "#/components/schemas/HttpApiDecodeError"

interface SchemaNode {
  readonly $ref?: string
  readonly anyOf?: ReadonlyArray<SchemaNode>
}

/** The parts of the document `dropDecodeError` reads. */
interface Document {
  readonly paths: Record<
    string,
    Record<string, { responses?: Record<string, { content?: Record<string, { schema: SchemaNode }> }> }>
  >
  readonly components: { readonly schemas: Record<string, unknown> }
}

/** A response's schema without the platform's decode error: the schema left, or none. */
const withoutDecodeError = (schema: SchemaNode): SchemaNode | undefined => {
  if (schema.$ref === DecodeErrorRef) return undefined
  if (schema.anyOf === undefined) return schema
  const rest = schema.anyOf.filter((s) => s.$ref !== DecodeErrorRef)
  return rest.length === 1 ? rest[0] : { ...schema, anyOf: rest }
}

/**
 * HttpApi lists its own decode error as a `400` of every operation, but the service never sends it:
 * `Http/Middleware` answers a request that does not decode with `422` `InvalidRequest`, documented on
 * the groups. This removes the platform's entry, so the document lists only bodies that are sent.
 */
const dropDecodeError = (spec: Record<string, unknown>): Record<string, unknown> => {
  const doc = structuredClone(spec) as unknown as Document
  for (const item of Object.values(doc.paths)) {
    for (const op of Object.values(item)) {
      const content = op.responses?.["400"]?.content?.["application/json"]
      if (content === undefined) continue
      const schema = withoutDecodeError(content.schema)
      if (schema !== undefined) content.schema = schema
      else delete op.responses?.["400"]
    }
  }
  for (const name of ["HttpApiDecodeError", "Issue", "PropertyKey"]) delete doc.components.schemas[name]
  if (JSON.stringify(doc).includes(DecodeErrorRef)) throw new Error(`${DecodeErrorRef} is still referenced`)
  return doc as unknown as Record<string, unknown>
}

/** HttpApi's document made ours: without the decode error, then what both documents add (`OpenApiDocument`). */
const transform = (spec: Record<string, unknown>): Record<string, unknown> =>
  OpenApiDocument.finish({ internal: false })(dropDecodeError(spec))

export class Api extends HttpApi.make("laari")
  .add(MandatesApi)
  .add(QrCodesApi)
  .add(QrImagesApi)
  .add(CheckoutApi)
  .add(SubscriptionsApi)
  .add(RefundsApi)
  .add(BalanceApi)
  .add(WebhookEndpointsApi)
  .add(EventsApi)
  .add(ApprovalsApi)
  .add(TestHelpersApi)
  .add(OpsApi)
  .add(OpsWebhooksApi)
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
