/**
 * The event catalogue: which webhook object each event type carries, and the envelope's schema. Each feature
 * builds its own objects (`mandates/MandateEvents.ts`, `qr/QrEvents.ts`, `billing/BillingEvents.ts`,
 * `refunds/Refund.ts`), snake_case with Unix seconds, so the outbox (`kernel/Outbox.ts`) stores exactly what
 * will be sent. Re-exported here as the `Events` namespace hosts and adapters use.
 */
import { Schema } from "effect"
import { ChargeFailureObject, ChargeObject, MandateObject } from "./mandates/MandateEvents.js"
import { CheckoutSessionObject, InvoiceObject, SubscriptionObject } from "./billing/BillingEvents.js"
import { UnixSeconds } from "./kernel/EventFields.js"
import { ApiVersion, Type } from "./kernel/EventType.js"
import { QrPaymentObject } from "./qr/QrEvents.js"
import { RefundObject } from "./refunds/Refund.js"

// The names live in EventType (so domain modules can use them without importing this one); kept here too.
export { ApiVersion, Type, Types } from "./kernel/EventType.js"
export * from "./billing/BillingEvents.js"
export * from "./mandates/MandateEvents.js"
export * from "./qr/QrEvents.js"
export { RefundObject } from "./refunds/Refund.js"
export {
  type Draft,
  type Event,
  type EventObject,
  emitter,
  make,
  Outbox,
  type OutboxService,
  seal,
  subjectOf
} from "./kernel/Outbox.js"

/** Which object each event type carries as `data.object`: the catalogue, one entry per type. */
export const Objects = {
  "mandate.activated": MandateObject,
  "mandate.declined": MandateObject,
  "mandate.revoked": MandateObject,
  "mandate.charge.succeeded": ChargeObject,
  "mandate.charge.failed": ChargeFailureObject,
  "subscription.activated": SubscriptionObject,
  "invoice.paid": InvoiceObject,
  "invoice.payment_failed": InvoiceObject,
  "subscription.past_due": SubscriptionObject,
  "subscription.canceled": SubscriptionObject,
  "checkout.session.completed": CheckoutSessionObject,
  "qr_code.payment.succeeded": QrPaymentObject,
  "refund.created": RefundObject
} as const satisfies { readonly [T in Type]: Schema.Schema.Any }

export const WebhookObject = Schema.Union(
  MandateObject,
  ChargeObject,
  ChargeFailureObject,
  QrPaymentObject,
  SubscriptionObject,
  InvoiceObject,
  CheckoutSessionObject,
  RefundObject
)
export type WebhookObject = typeof WebhookObject.Type

const envelopeFields = {
  id: Schema.String.annotations({
    description: "The event's id: the same in every delivery of the event, so a receiver can drop a repeat"
  }),
  api_version: Schema.Literal(ApiVersion).annotations({
    description: "The API version the event's objects are written in"
  }),
  created: UnixSeconds,
  livemode: Schema.Boolean.annotations({
    description: "`true`: from the live environment (real money); `false`: from the sandbox"
  }),
  sequence: Schema.Number.pipe(Schema.int(), Schema.positive()).annotations({
    description:
      "Grows with each event about the same mandate or subscription (otherwise the same object), so a receiver can drop an update that arrives after a newer one"
  })
}

/** The delivery envelope, for any event type. */
export const Envelope = Schema.Struct({
  ...envelopeFields,
  type: Type,
  data: Schema.Struct({
    object: WebhookObject.annotations({ description: "The object the event is about, as it was then" })
  }).annotations({ description: "What the event carries" })
})
export type Envelope = typeof Envelope.Type

/** The envelope of one event type: its `type` fixed, its `data.object` that type's object. */
export const envelopeOf = <T extends Type>(type: T) =>
  Schema.Struct({
    ...envelopeFields,
    type: Schema.Literal(type).annotations({ description: "The event's type" }),
    data: Schema.Struct({ object: Objects[type] }).annotations({
      description: "What the event carries: `object`, the object the event is about, as it was then"
    })
  })
