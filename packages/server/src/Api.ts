/**
 * The whole HTTP API. Its OpenAPI description (`GET /openapi.json`) covers the merchant endpoints and, as
 * OpenAPI 3.1 `webhooks`, every event the service delivers.
 */
import { HttpApi, OpenApi } from "@effect/platform"
import { Events, EventType } from "@laari/core"
import { JSONSchema } from "effect"
import { ApprovalsApi } from "./Approvals/Api.js"
import { CheckoutApi } from "./Checkout/Api.js"
import { HealthApi } from "./Health/Api.js"
import { MandatesApi } from "./Mandates/Api.js"
import { OpsApi } from "./Ops/Api.js"
import { QrCodesApi, QrImagesApi } from "./QrCodes/Api.js"
import { SubscriptionsApi } from "./Subscriptions/Api.js"
import { TestHelpersApi } from "./TestHelpers/Api.js"

/**
 * Replaces each `$ref` into `$defs` by the definition itself. A webhook schema sits deep inside the
 * OpenAPI document, where `#/$defs/...` would point at the document's root and not resolve.
 */
const inline = (node: unknown, defs: { readonly [name: string]: unknown }): unknown => {
  if (Array.isArray(node)) return node.map((item) => inline(item, defs))
  if (typeof node !== "object" || node === null) return node
  const { $ref, ...rest } = node as { readonly $ref?: unknown }
  if (typeof $ref === "string" && $ref.startsWith("#/$defs/")) {
    const name = $ref.slice("#/$defs/".length)
    if (!(name in defs)) throw new Error(`Unresolved ${$ref} in a webhook schema`)
    return inline({ ...(defs[name] as object), ...rest }, defs)
  }
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, inline(value, defs)]))
}

/** The request body of one event's delivery: its envelope, `type` fixed, the event's object inlined. */
const webhookSchema = (type: EventType.Type): unknown => {
  const {
    $schema: _dialect,
    $defs,
    ...schema
  } = JSONSchema.make(Events.envelopeOf(type), {
    target: "jsonSchema2020-12"
  })
  return inline(schema, $defs ?? {})
}

/** The OpenAPI 3.1 `webhooks` map, one item per event type of the catalogue (`Events.Objects`). */
export const webhooks = Object.fromEntries(
  EventType.Types.map((type) => [
    type,
    {
      post: {
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

export class Api extends HttpApi.make("laari")
  .add(MandatesApi)
  .add(QrCodesApi)
  .add(QrImagesApi)
  .add(CheckoutApi)
  .add(SubscriptionsApi)
  .add(ApprovalsApi)
  .add(TestHelpersApi)
  .add(OpsApi)
  .add(HealthApi)
  .annotate(OpenApi.Title, "laari")
  .annotate(OpenApi.Version, EventType.ApiVersion)
  // `OpenApi.fromApi` has no notion of webhooks: the Override adds the 3.1 `webhooks` key to the document.
  .annotate(OpenApi.Override, { webhooks })
  .annotate(
    OpenApi.Description,
    "Mandates, national-scheme QR codes and subscriptions for merchants of a Maldivian wallet. Amounts are integer laari (100 laari = 1 MVR)."
  ) {}
