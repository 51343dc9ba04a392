/**
 * The event catalogue and the outbox port. Webhook objects are built here, snake_case with Unix seconds,
 * so the outbox stores exactly what will be sent.
 */
import { Context, type DateTime, Effect } from "effect"
import * as Calendar from "./Calendar.js"
import type { ServiceUnavailable } from "./Errors.js"
import type { Environment, MerchantId } from "./Ids.js"
import type { Charge, Mandate, RefusalCode } from "./Mandate.js"
import { Currency } from "./Money.js"
import type { CheckoutSession } from "./CheckoutSession.js"
import type { Invoice } from "./Invoice.js"
import type { Payment as QrPayment } from "./QrCode.js"
import type { Subscription } from "./Subscription.js"

/** The API version, carried as `api_version` in every delivery. */
export const ApiVersion = "2026-07-01"

export const Types = [
  "mandate.activated",
  "mandate.declined",
  "mandate.revoked",
  "mandate.charge.succeeded",
  "mandate.charge.failed",
  "subscription.activated",
  "invoice.paid",
  "invoice.payment_failed",
  "subscription.past_due",
  "subscription.canceled",
  "checkout.session.completed",
  "qr_code.payment.succeeded"
] as const
export type Type = (typeof Types)[number]

export type WebhookObject = { readonly [key: string]: unknown }

/** The delivery envelope (DESIGN section 7). */
export interface Envelope {
  readonly id: string
  readonly type: Type
  readonly api_version: typeof ApiVersion
  readonly created: number
  readonly livemode: boolean
  readonly data: { readonly object: WebhookObject }
}

/** An event as the outbox keeps it: the envelope and whom it belongs to. */
export interface Event {
  readonly merchantId: MerchantId
  readonly environment: Environment
  readonly createdAt: DateTime.Utc
  readonly envelope: Envelope
}

export const make = (input: {
  id: string
  type: Type
  merchantId: MerchantId
  environment: Environment
  now: DateTime.Utc
  object: WebhookObject
}): Event => ({
  merchantId: input.merchantId,
  environment: input.environment,
  createdAt: input.now,
  envelope: {
    id: input.id,
    type: input.type,
    api_version: ApiVersion,
    created: Calendar.unixSeconds(input.now),
    livemode: input.environment === "live",
    data: { object: input.object }
  }
})

const unix = (t: DateTime.Utc | null): number | null => (t === null ? null : Calendar.unixSeconds(t))

export const mandateObject = (m: Mandate): WebhookObject => ({
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

export const chargeObject = (c: Charge): WebhookObject => ({
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
  mandate: Mandate
  amount: number
  reference: string
  description: string
  code: RefusalCode
  message: string
  now: DateTime.Utc
}): WebhookObject => ({
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

export const qrPaymentObject = (p: QrPayment): WebhookObject => ({
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

export const subscriptionObject = (sub: Subscription): WebhookObject => ({
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

export const invoiceObject = (inv: Invoice): WebhookObject => ({
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

export const checkoutSessionObject = (s: CheckoutSession): WebhookObject => ({
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
    readonly subscription: Subscription
    readonly invoice?: Invoice | undefined
    readonly session?: CheckoutSession | undefined
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
  /** Records an event in the caller's transaction; delivery happens later, from the outbox. */
  readonly append: (event: Event) => Effect.Effect<void, ServiceUnavailable>
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
