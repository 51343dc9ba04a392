/** The webhook objects of subscription-side events: the subscription, an invoice, a checkout session. */
import { Schema } from "effect"
import * as Calendar from "../kernel/Calendar.js"
import { Amount, CurrencyCode, UnixSeconds, unix } from "../kernel/EventFields.js"
import type { Type } from "../kernel/EventType.js"
import * as Ids from "../kernel/Ids.js"
import { Currency } from "../kernel/Money.js"
import * as CheckoutSession from "./CheckoutSession.js"
import * as Invoice from "./Invoice.js"
import * as Subscription from "./Subscription.js"

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
): SubscriptionObject | InvoiceObject | CheckoutSessionObject => {
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

// The outbox's catalogue of objects (kernel/Outbox.ts): these are this feature's.
declare module "../kernel/Outbox.js" {
  interface EventObjects {
    subscription: SubscriptionObject
    invoice: InvoiceObject
    checkoutSession: CheckoutSessionObject
  }
}
