/**
 * The event catalogue and the outbox port. Webhook objects are built here, snake_case with Unix seconds,
 * so the outbox stores exactly what will be sent.
 */
import { Context, type DateTime, Effect, Schema } from "effect"
import * as Calendar from "./Calendar.js"
import * as CheckoutSession from "./CheckoutSession.js"
import type { ServiceUnavailable } from "./Errors.js"
import { ApiVersion, Type } from "./EventType.js"
import type { Environment, MerchantId } from "./Ids.js"
import * as Ids from "./Ids.js"
import * as Invoice from "./Invoice.js"
import * as Mandate from "./Mandate.js"
import { Currency } from "./Money.js"
import type { Payment as QrPayment } from "./QrCode.js"
import { RefundObject } from "./Refund.js"
import * as Subscription from "./Subscription.js"

// The names live in EventType (so domain modules can use them without importing this one); kept here too.
export { ApiVersion, Type, Types } from "./EventType.js"

// Annotated so the published JSON Schema says what the integers mean.
const UnixSeconds = Schema.Int.annotations({
  identifier: "EventUnixSeconds",
  description: "Unix time, whole seconds"
})
const Amount = Schema.NonNegativeInt.annotations({
  identifier: "EventLaari",
  description: "Laari (100 laari = 1 MVR)"
})
const CurrencyCode = Schema.Literal(Currency)

export const MandateObject = Schema.Struct({
  id: Ids.MandateId,
  object: Schema.Literal("mandate"),
  reference: Schema.String,
  status: Mandate.Status,
  title: Schema.String,
  description: Schema.NullOr(Schema.String),
  currency: CurrencyCode,
  per_charge_cap: Amount,
  period_cap: Schema.NullOr(Amount),
  period: Schema.NullOr(Schema.Literal("MONTH")),
  period_key: Schema.NullOr(Schema.String),
  period_charged: Amount,
  setup_expires_at: UnixSeconds,
  expires_at: UnixSeconds,
  approved_at: Schema.NullOr(UnixSeconds),
  revoked_at: Schema.NullOr(UnixSeconds),
  revoked_by: Schema.NullOr(Mandate.RevokedBy),
  created_at: UnixSeconds
}).annotations({ identifier: "MandateEventObject" })
export type MandateObject = typeof MandateObject.Type

export const ChargeObject = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("mandate_charge"),
  mandate_id: Ids.MandateId,
  amount: Amount,
  currency: CurrencyCode,
  status: Schema.Literal("SUCCEEDED"),
  description: Schema.String,
  reference: Schema.String,
  fee: Amount,
  net_amount: Amount,
  period_key: Schema.String,
  period_charged: Amount,
  created_at: UnixSeconds
}).annotations({ identifier: "MandateChargeEventObject" })
export type ChargeObject = typeof ChargeObject.Type

/** A refused charge has no id: nothing was created, only the refusal is reported. */
export const ChargeFailureObject = Schema.Struct({
  object: Schema.Literal("mandate_charge_failure"),
  mandate_id: Ids.MandateId,
  mandate_reference: Schema.String,
  amount: Schema.Int,
  currency: CurrencyCode,
  reference: Schema.String,
  description: Schema.String,
  code: Mandate.RefusalCode,
  message: Schema.String,
  created_at: UnixSeconds
}).annotations({ identifier: "MandateChargeFailureEventObject" })
export type ChargeFailureObject = typeof ChargeFailureObject.Type

export const QrPaymentObject = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("qr_code_payment"),
  qrid: Schema.String,
  qr_code_id: Schema.String,
  // A string here although requests send an integer: kept as delivered so far (the outbox stores exact text).
  outlet_id: Schema.String,
  amount: Amount,
  currency: CurrencyCode,
  fee: Amount,
  net_amount: Amount,
  reference: Schema.String,
  created_at: UnixSeconds
}).annotations({ identifier: "QrCodePaymentEventObject" })
export type QrPaymentObject = typeof QrPaymentObject.Type

export const SubscriptionObject = Schema.Struct({
  id: Ids.SubscriptionId,
  object: Schema.Literal("subscription"),
  reference: Schema.String,
  status: Subscription.Status,
  plan_name: Schema.String,
  amount: Amount,
  currency: CurrencyCode,
  interval: Calendar.Interval,
  interval_count: Schema.Int,
  checkout_session_id: Ids.CheckoutSessionId,
  billing_cycle_anchor: UnixSeconds,
  current_period_start: UnixSeconds,
  current_period_end: UnixSeconds,
  next_billing_at: Schema.NullOr(UnixSeconds),
  cancel_at_period_end: Schema.Boolean,
  cancelled_at: Schema.NullOr(UnixSeconds),
  cancellation_initiator: Schema.NullOr(Subscription.Initiator),
  metadata: Schema.NullOr(Schema.Record({ key: Schema.String, value: Schema.String })),
  created_at: UnixSeconds
}).annotations({ identifier: "SubscriptionEventObject" })
export type SubscriptionObject = typeof SubscriptionObject.Type

export const InvoiceObject = Schema.Struct({
  id: Ids.InvoiceId,
  object: Schema.Literal("invoice"),
  subscription_id: Ids.SubscriptionId,
  subscription_reference: Schema.String,
  period_key: Schema.String,
  period_start: UnixSeconds,
  period_end: UnixSeconds,
  amount: Amount,
  currency: CurrencyCode,
  status: Invoice.Status,
  attempt_count: Schema.Int,
  next_retry_at: Schema.NullOr(UnixSeconds),
  failure_reason: Schema.NullOr(Invoice.FailureReason),
  payment_intent_id: Schema.NullOr(Schema.String),
  paid_at: Schema.NullOr(UnixSeconds),
  created_at: UnixSeconds
}).annotations({ identifier: "InvoiceEventObject" })
export type InvoiceObject = typeof InvoiceObject.Type

export const CheckoutSessionObject = Schema.Struct({
  id: Ids.CheckoutSessionId,
  object: Schema.Literal("checkout.session"),
  mode: CheckoutSession.Mode,
  status: CheckoutSession.Status,
  reference: Schema.String,
  title: Schema.String,
  description: Schema.NullOr(Schema.String),
  amount: Amount,
  currency: CurrencyCode,
  price: Schema.NullOr(
    Schema.Struct({
      name: Schema.String,
      amount: Amount,
      interval: Calendar.Interval,
      interval_count: Schema.Int
    })
  ),
  subscription: Schema.NullOr(Schema.Struct({ id: Ids.SubscriptionId })),
  payment_id: Schema.NullOr(Schema.String),
  expires_at: UnixSeconds,
  completed_at: Schema.NullOr(UnixSeconds),
  created_at: UnixSeconds
}).annotations({ identifier: "CheckoutSessionEventObject" })
export type CheckoutSessionObject = typeof CheckoutSessionObject.Type

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
  id: Schema.String,
  api_version: Schema.Literal(ApiVersion),
  created: UnixSeconds,
  livemode: Schema.Boolean,
  sequence: Schema.Int.pipe(Schema.positive()).annotations({
    description:
      "Grows with each event about the same mandate or subscription (otherwise the same object), so a receiver can drop an update that arrives after a newer one"
  })
}

/** The delivery envelope (DESIGN section 7), for any event type. */
export const Envelope = Schema.Struct({
  ...envelopeFields,
  type: Type,
  data: Schema.Struct({ object: WebhookObject })
})
export type Envelope = typeof Envelope.Type

/** The envelope of one event type: its `type` fixed, its `data.object` that type's object. */
export const envelopeOf = <T extends Type>(type: T) =>
  Schema.Struct({
    ...envelopeFields,
    type: Schema.Literal(type),
    data: Schema.Struct({ object: Objects[type] })
  })

/** An event as the outbox keeps it: the envelope and whom it belongs to. */
export interface Event {
  readonly merchantId: MerchantId
  readonly environment: Environment
  readonly createdAt: DateTime.Utc
  /** The object whose events `sequence` counts (`subjectOf`). */
  readonly subject: string
  readonly envelope: Envelope
}

/** An event as a service emits it: everything but its `sequence`, which the outbox assigns. */
export interface Draft extends Omit<Event, "envelope"> {
  readonly id: string
  readonly type: Type
  readonly object: WebhookObject
}

/**
 * The object an event is about, for `sequence`: the mandate of mandate and charge events, the
 * subscription of subscription, invoice and subscription checkout events, else the object itself.
 */
export const subjectOf = (object: WebhookObject): string => {
  switch (object.object) {
    case "mandate_charge":
    case "mandate_charge_failure":
      return object.mandate_id
    case "invoice":
      return object.subscription_id
    case "checkout.session":
      return object.subscription?.id ?? object.id
    case "qr_code_payment":
      return object.qr_code_id
    default:
      return object.id
  }
}

export const make = (input: {
  id: string
  type: Type
  merchantId: MerchantId
  environment: Environment
  now: DateTime.Utc
  object: WebhookObject
}): Draft => ({
  id: input.id,
  type: input.type,
  merchantId: input.merchantId,
  environment: input.environment,
  createdAt: input.now,
  subject: subjectOf(input.object),
  object: input.object
})

/** The stored and delivered event: the draft with the `sequence` the outbox gave it. */
export const seal = (draft: Draft, sequence: number): Event => ({
  merchantId: draft.merchantId,
  environment: draft.environment,
  createdAt: draft.createdAt,
  subject: draft.subject,
  envelope: {
    id: draft.id,
    type: draft.type,
    api_version: ApiVersion,
    created: Calendar.unixSeconds(draft.createdAt),
    livemode: draft.environment === "live",
    sequence,
    data: { object: draft.object }
  }
})

// Overloaded so a timestamp that is never null stays a plain number in the object's type.
function unix(t: DateTime.Utc): number
function unix(t: DateTime.Utc | null): number | null
function unix(t: DateTime.Utc | null): number | null {
  return t === null ? null : Calendar.unixSeconds(t)
}

export const mandateObject = (m: Mandate.Mandate): MandateObject => ({
  id: m.id,
  object: "mandate",
  reference: m.reference,
  status: m.status,
  title: m.title,
  description: m.description,
  currency: Currency,
  per_charge_cap: m.perChargeCap,
  period_cap: m.periodCap,
  period: m.period,
  period_key: m.periodKey,
  period_charged: m.periodCharged,
  setup_expires_at: unix(m.setupExpiresAt),
  expires_at: unix(m.expiresAt),
  approved_at: unix(m.approvedAt),
  revoked_at: unix(m.revokedAt),
  revoked_by: m.revokedBy,
  created_at: unix(m.createdAt)
})

export const chargeObject = (c: Mandate.Charge): ChargeObject => ({
  id: c.id,
  object: "mandate_charge",
  mandate_id: c.mandateId,
  amount: c.amount,
  currency: Currency,
  status: "SUCCEEDED",
  description: c.description,
  reference: c.reference,
  fee: c.fee,
  net_amount: c.netAmount,
  period_key: c.periodKey,
  period_charged: c.periodCharged,
  created_at: unix(c.createdAt)
})

export const chargeFailedObject = (input: {
  mandate: Mandate.Mandate
  amount: number
  reference: string
  description: string
  code: Mandate.RefusalCode
  message: string
  now: DateTime.Utc
}): ChargeFailureObject => ({
  object: "mandate_charge_failure",
  mandate_id: input.mandate.id,
  mandate_reference: input.mandate.reference,
  amount: input.amount,
  currency: Currency,
  reference: input.reference,
  description: input.description,
  code: input.code,
  message: input.message,
  created_at: Calendar.unixSeconds(input.now)
})

export const qrPaymentObject = (p: QrPayment): QrPaymentObject => ({
  id: p.id,
  object: "qr_code_payment",
  qrid: p.qrid,
  qr_code_id: p.qrCodeId,
  outlet_id: String(p.outletId),
  amount: p.amount,
  currency: Currency,
  fee: p.fee,
  net_amount: p.netAmount,
  reference: p.reference,
  created_at: unix(p.createdAt)
})

export const subscriptionObject = (sub: Subscription.Subscription): SubscriptionObject => ({
  id: sub.id,
  object: "subscription",
  reference: sub.reference,
  status: sub.status,
  plan_name: sub.planName,
  amount: sub.amount,
  currency: Currency,
  interval: sub.interval,
  interval_count: sub.intervalCount,
  checkout_session_id: sub.checkoutSessionId,
  billing_cycle_anchor: unix(sub.billingCycleAnchor),
  current_period_start: unix(sub.currentPeriodStart),
  current_period_end: unix(sub.currentPeriodEnd),
  next_billing_at: unix(sub.nextBillingAt),
  cancel_at_period_end: sub.cancelAtPeriodEnd,
  cancelled_at: unix(sub.cancelledAt),
  cancellation_initiator: sub.cancellationInitiator,
  metadata: sub.metadata,
  created_at: unix(sub.createdAt)
})

export const invoiceObject = (inv: Invoice.Invoice): InvoiceObject => ({
  id: inv.id,
  object: "invoice",
  subscription_id: inv.subscriptionId,
  subscription_reference: inv.subscriptionReference,
  period_key: inv.periodKey,
  period_start: unix(inv.periodStart),
  period_end: unix(inv.periodEnd),
  amount: inv.amount,
  currency: Currency,
  status: inv.status,
  attempt_count: inv.attemptCount,
  next_retry_at: unix(inv.nextRetryAt),
  failure_reason: inv.failureReason,
  payment_intent_id: inv.paymentIntentId,
  paid_at: unix(inv.paidAt),
  created_at: unix(inv.createdAt)
})

export const checkoutSessionObject = (s: CheckoutSession.CheckoutSession): CheckoutSessionObject => ({
  id: s.id,
  object: "checkout.session",
  mode: s.mode,
  status: s.status,
  reference: s.reference,
  title: s.title,
  description: s.description,
  amount: s.amount,
  currency: Currency,
  price:
    s.price === null
      ? null
      : {
          name: s.price.name,
          amount: s.price.amount,
          interval: s.price.interval,
          interval_count: s.price.intervalCount
        },
  subscription: s.subscriptionId === null ? null : { id: s.subscriptionId },
  payment_id: s.paymentId,
  expires_at: unix(s.expiresAt),
  completed_at: unix(s.completedAt),
  created_at: unix(s.createdAt)
})

/** The webhook object of a subscription-side event, from what the transition left behind. */
export const subscriptionEventObject = (
  type: Type,
  context: {
    readonly subscription: Subscription.Subscription
    readonly invoice?: Invoice.Invoice | undefined
    readonly session?: CheckoutSession.CheckoutSession | undefined
  }
): WebhookObject => {
  switch (type) {
    case "invoice.paid":
    case "invoice.payment_failed":
      if (context.invoice === undefined) throw new Error(`${type} needs an invoice`)
      return invoiceObject(context.invoice)
    case "checkout.session.completed":
      if (context.session === undefined) throw new Error(`${type} needs a session`)
      return checkoutSessionObject(context.session)
    default:
      return subscriptionObject(context.subscription)
  }
}

export interface OutboxService {
  /**
   * Records an event in the caller's transaction, numbered one past the last event about its subject;
   * delivery happens later, from the outbox.
   */
  readonly append: (event: Draft) => Effect.Effect<void, ServiceUnavailable>
}

export class Outbox extends Context.Tag("laari/Outbox")<Outbox, OutboxService>() {}

/**
 * The one way services record an event: a fresh `evt_` id, the envelope, appended in the caller's
 * transaction.
 */
export const emitter =
  (outbox: OutboxService, uuid: Effect.Effect<string>) =>
  (
    type: Type,
    owner: { readonly merchantId: MerchantId; readonly environment: Environment },
    object: WebhookObject,
    now: DateTime.Utc
  ): Effect.Effect<void, ServiceUnavailable> =>
    Effect.flatMap(uuid, (id) =>
      outbox.append(
        make({
          id: `evt_${id.replaceAll("-", "")}`,
          type,
          merchantId: owner.merchantId,
          environment: owner.environment,
          now,
          object
        })
      )
    )
