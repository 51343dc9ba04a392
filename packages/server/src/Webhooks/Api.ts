/**
 * Webhook endpoints, their delivery log, and the events themselves. Scope
 * `webhooks:write`, which secret keys hold by default.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Events, EventType, Fields, Ids, Webhook } from "@laari/core"
import { Schema } from "effect"
import {
  Body,
  optionalNullable,
  Paging,
  PathSegment,
  Text,
  Timestamp,
  Uuid,
  WholeNumber
} from "../Http/Fields.js"
import * as Idempotent from "../Http/Idempotent.js"
import * as OptionalBody from "../Http/OptionalBody.js"
import * as WebhooksProblems from "./Problems.js"
import * as Declare from "../Http/Declare.js"
import * as Access from "../Http/Access.js"

const Url = Text.pipe(
  Schema.minLength(1),
  Schema.maxLength(2048, { message: () => "must be at most 2048 characters" })
).annotations({
  description:
    "Where deliveries are sent: `https` on a public address, in test mode as in live (for local development use `laari listen`; the operator may allow private targets with `LAARI_WEBHOOK_ALLOW_PRIVATE`)."
})

const EndpointId = Schema.UUID.annotations({ description: "The webhook endpoint's id (a UUID)" })

export const WebhookEndpointRead = Schema.Struct({
  id: EndpointId,
  url: Text.annotations({ description: "Where deliveries are sent" }),
  enabledEvents: Schema.Array(Text).annotations({ description: 'Event types received, or `["*"]`' }),
  description: Schema.NullOr(Text).annotations({
    description: "The merchant's note on the endpoint; `null` if none"
  }),
  status: Webhook.EndpointStatus,
  statusReason: Schema.NullOr(Text).annotations({
    description:
      "Why a `DISABLED` endpoint is disabled: by the merchant, or by laari after 3 days of failures"
  }),
  createdAt: Timestamp
}).annotations({ identifier: "WebhookEndpoint", description: "Where the merchant receives events" })

const SecretField = Text.annotations({
  description: "`whsec_` + base64 of 32 random bytes: the signing secret, shown only here"
})

export const WebhookEndpointCreated = Schema.Struct({
  ...WebhookEndpointRead.fields,
  secret: SecretField
}).annotations({ identifier: "WebhookEndpointCreated" })

export const WebhookEndpointDeleted = Schema.Struct({
  id: EndpointId,
  deleted: Schema.Literal(true).annotations({ description: "Always `true`: the endpoint is deleted" })
}).annotations({ identifier: "WebhookEndpointDeleted" })

export const SecretRotated = Schema.Struct({
  secret: SecretField,
  previousSecretExpiresAt: Timestamp.annotations({
    description: "Until then every delivery is signed with both secrets, the new one first"
  })
}).annotations({ identifier: "WebhookSecretRotated" })

export const WebhookDeliveryRead = Schema.Struct({
  id: Schema.UUID.annotations({ description: "The delivery attempt's id (a UUID)" }),
  endpointId: EndpointId,
  eventId: Text.annotations({ description: "The id of the event delivered (`GET /events/{id}`)" }),
  eventType: Text.annotations({ description: "The type of the event delivered" }),
  attempt: Schema.Int.annotations({ description: "1 for the first attempt of an event to this endpoint" }),
  status: Webhook.AttemptStatus,
  responseStatus: Schema.NullOr(WholeNumber("The HTTP status the endpoint answered")).annotations({
    description:
      "The HTTP status the endpoint answered; `null` if it gave none (timeout, connection refused) or the attempt is not made yet"
  }),
  responseBody: Schema.NullOr(Text).annotations({ description: "The first 1 KiB of the response" }),
  error: Schema.NullOr(Text).annotations({
    description: "Why the attempt failed: `HTTP 500`, `timed out after 10 s`, `connection refused`..."
  }),
  durationMs: Schema.NullOr(WholeNumber("How long the attempt took, in milliseconds")).annotations({
    description: "How long the attempt took, in milliseconds; `null` until it is made"
  }),
  attemptedAt: Schema.NullOr(Timestamp),
  scheduledAt: Timestamp.annotations({ description: "When the attempt was due to be made" }),
  nextRetryAt: Schema.NullOr(Timestamp).annotations({
    description: "When a failed attempt is retried; `null` after the last one and for resends"
  }),
  resend: Schema.Boolean.annotations({
    description: "`true`: a resend asked for by the merchant, which is not retried"
  })
}).annotations({ identifier: "WebhookDelivery", description: "One attempt to deliver an event" })

export const CreateWebhookEndpoint = Body({
  url: Url,
  enabled_events: Webhook.EnabledEvents,
  description: optionalNullable(Fields.Note)
}).annotations({
  examples: [
    {
      url: "https://merchant.example/webhooks/laari",
      enabled_events: ["mandate.charge.succeeded", "mandate.charge.failed"],
      description: "Order fulfilment"
    },
    { url: "https://merchant.example/webhooks/all", enabled_events: ["*"] }
  ]
})

export const UpdateWebhookEndpoint = Body({
  url: Schema.optional(Url),
  enabled_events: Schema.optional(Webhook.EnabledEvents),
  description: optionalNullable(Fields.Note),
  status: Schema.optional(Webhook.EndpointStatus).annotations({
    description: "`DISABLED` stops deliveries; `ENABLED` resumes them and clears a disabled endpoint's reason"
  })
}).annotations({ examples: [{ status: "ENABLED" }, { enabled_events: ["*"] }] })

export const RotateSecret = Body({
  expire_previous_after_seconds: Schema.optional(
    Schema.Int.pipe(Schema.between(0, Webhook.MaxRotationOverlapSeconds))
  ).annotations({ description: "How long the previous secret keeps signing: 0 to 7 days, default 24 h" })
})

export const Resend = Body({
  event_id: Schema.propertySignature(Text.pipe(Schema.minLength(1), Schema.maxLength(255))).annotations({
    description: "The event to deliver again (its `id`), to this endpoint"
  })
})

// Described at the property, so a refusal keeps the segment's own words.
const pathId = (description: string) =>
  Schema.Struct({ id: Schema.propertySignature(PathSegment).annotations({ description }) })
const IdPath = pathId("The webhook endpoint's id")
const EventPath = pathId("The event's id (`evt_...`)")

/** The URL parameters of the list, which the GraphQL read API takes as its arguments too. */
export const DeliveriesParams = Schema.Struct({
  event_id: Schema.optional(Text).annotations({ description: "Only attempts of this event" }),
  status: Schema.optional(Webhook.AttemptStatus).annotations({
    description: "Only attempts in this status"
  }),
  ...Paging
})

export class WebhookEndpointsApi extends HttpApiGroup.make("webhookEndpoints")
  .add(
    Idempotent.post("create", "/webhook-endpoints")
      .setPayload(CreateWebhookEndpoint)
      .addSuccess(WebhookEndpointCreated, { status: 201 })
      .addError(WebhooksProblems.WebhookEndpointLimitReached)
      .annotate(OpenApi.Summary, "Register a webhook endpoint")
      .annotate(
        OpenApi.Description,
        "Events of the key's environment and of the types in `enabled_events` are delivered to `url`, signed with the `secret` returned here (Standard Webhooks). " +
          `A merchant has at most ${Webhook.MaxEndpoints} endpoints in each environment.`
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/webhook-endpoints")
      .setUrlParams(Schema.Struct(Paging))
      .addSuccess(Schema.Array(WebhookEndpointRead))
      .annotate(OpenApi.Summary, "List webhook endpoints")
      .annotate(OpenApi.Description, "Newest first.")
  )
  .add(
    HttpApiEndpoint.get("get", "/webhook-endpoints/:id")
      .setPath(IdPath)
      .addSuccess(WebhookEndpointRead)
      .addError(WebhooksProblems.WebhookEndpointNotFound)
      .annotate(OpenApi.Summary, "Fetch a webhook endpoint")
      .annotate(OpenApi.Description, "The secret is never returned.")
  )
  .add(
    Idempotent.post("update", "/webhook-endpoints/:id")
      .setPath(IdPath)
      .setPayload(UpdateWebhookEndpoint)
      .addSuccess(WebhookEndpointRead)
      .addError(WebhooksProblems.WebhookEndpointNotFound)
      .annotate(OpenApi.Summary, "Change a webhook endpoint")
      .annotate(OpenApi.Description, "Its URL, events, description or status.")
  )
  .add(
    HttpApiEndpoint.del("delete", "/webhook-endpoints/:id")
      .setPath(IdPath)
      .addSuccess(WebhookEndpointDeleted)
      .addError(WebhooksProblems.WebhookEndpointNotFound)
      .annotate(OpenApi.Summary, "Delete a webhook endpoint")
      .annotate(OpenApi.Description, "It receives nothing more; attempts still pending are ended.")
  )
  .add(
    Idempotent.post("rotateSecret", "/webhook-endpoints/:id/rotate-secret")
      .setPath(IdPath)
      .addSuccess(SecretRotated)
      .addError(WebhooksProblems.WebhookEndpointNotFound)
      .annotate(OpenApi.Override, OptionalBody.document(RotateSecret))
      .annotate(OptionalBody.Declared, RotateSecret)
      .annotate(OpenApi.Summary, "Rotate the signing secret")
      .annotate(
        OpenApi.Description,
        "A new secret, shown once. Until the previous one expires, every delivery carries both signatures (`webhook-signature: v1,<new> v1,<old>`). The body is optional."
      )
  )
  .add(
    HttpApiEndpoint.get("deliveries", "/webhook-endpoints/:id/deliveries")
      .setPath(IdPath)
      .setUrlParams(DeliveriesParams)
      .addSuccess(Schema.Array(WebhookDeliveryRead))
      .addError(WebhooksProblems.WebhookEndpointNotFound)
      .annotate(OpenApi.Summary, "The delivery log")
      .annotate(OpenApi.Description, "One entry per attempt, newest first.")
  )
  .add(
    Idempotent.post("resend", "/webhook-endpoints/:id/resend")
      .setPath(IdPath)
      .setPayload(Resend)
      .addSuccess(WebhookDeliveryRead, { status: 202 })
      .addError(WebhooksProblems.WebhookEndpointNotFound)
      .addError(WebhooksProblems.EventNotFound)
      .annotate(OpenApi.Summary, "Resend an event")
      .annotate(
        OpenApi.Description,
        "Queues one more attempt of the event to this endpoint, signed anew when it is sent, and logged like any other; it is not retried automatically."
      )
  )
  .pipe(
    Declare.merchant({
      access: Access.scoped("webhooks:write"),
      title: "Webhook endpoints",
      description:
        "Where events are delivered, signed per Standard Webhooks, retried for about three days, with a log per attempt"
    })
  ) {}

/** The URL parameters of the list, which the GraphQL read API takes as its arguments too. */
export const EventsParams = Schema.Struct({
  type: Schema.optional(EventType.Type).annotations({ description: "Only events of this type" }),
  created_after: Schema.optional(
    Schema.NumberFromString.pipe(Schema.int(), Schema.nonNegative()).annotations({
      jsonSchema: {
        type: "integer",
        minimum: 0,
        description: "Only events created after this Unix second"
      }
    })
  ),
  ...Paging
})

export class EventsApi extends HttpApiGroup.make("events")
  .add(
    HttpApiEndpoint.get("list", "/events")
      .setUrlParams(EventsParams)
      .addSuccess(Schema.Array(Events.Envelope))
      .annotate(OpenApi.Summary, "List events")
      .annotate(
        OpenApi.Description,
        "The envelopes of the key's environment exactly as delivered, newest first: for reconciliation and catching up after an outage."
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/events/:id")
      .setPath(EventPath)
      .addSuccess(Events.Envelope)
      .addError(WebhooksProblems.EventNotFound)
      .annotate(OpenApi.Summary, "Fetch an event")
      .annotate(OpenApi.Description, "Its envelope exactly as delivered.")
  )
  .pipe(
    Declare.merchant({
      access: Access.scoped("webhooks:write"),
      title: "Events",
      description: "Every event the service recorded for the merchant, as delivered"
    })
  ) {}

export const OpsWebhookEndpointRead = Schema.Struct({
  ...WebhookEndpointRead.fields,
  environment: Ids.Environment
}).annotations({ identifier: "OpsWebhookEndpoint" })

const merchantId = Uuid.annotations({ description: "The merchant's id" })
const MerchantPath = Schema.Struct({ id: merchantId })

/** The operator's view of merchants' endpoints and logs (excluded from the merchant document). */
export class OpsWebhooksApi extends HttpApiGroup.make("opsWebhooks")
  .add(
    HttpApiEndpoint.get("endpoints", "/ops/merchants/:id/webhook-endpoints")
      .setPath(MerchantPath)
      .setUrlParams(Schema.Struct(Paging))
      .addSuccess(Schema.Array(OpsWebhookEndpointRead))
      .annotate(OpenApi.Summary, "A merchant's webhook endpoints")
      .annotate(OpenApi.Description, "Both environments, newest first, deleted ones left out.")
  )
  .add(
    HttpApiEndpoint.get("deliveries", "/ops/merchants/:id/webhook-endpoints/:endpoint/deliveries")
      .setPath(
        Schema.Struct({
          id: merchantId,
          endpoint: Schema.propertySignature(PathSegment).annotations({
            description: "The webhook endpoint's id"
          })
        })
      )
      .setUrlParams(DeliveriesParams)
      .addSuccess(Schema.Array(WebhookDeliveryRead))
      .addError(WebhooksProblems.WebhookEndpointNotFound)
      .annotate(OpenApi.Summary, "An endpoint's delivery log")
      .annotate(OpenApi.Description, "One entry per attempt, newest first.")
  )
  .pipe(Declare.operator({ title: "Operations: webhooks" })) {}
