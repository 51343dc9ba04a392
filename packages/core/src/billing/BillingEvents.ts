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
  object: Schema.Literal("subscription").annotations({ description: "Always `subscription`" }),
  reference: Schema.String.annotations({
    description: "The merchant's reference, from the checkout session that started the subscription"
  }),
  status: Subscription.Status,
  plan_name: Schema.String.annotations({ description: "The plan's name, frozen at consent" }),
  amount: Amount,
  currency: CurrencyCode,
  interval: Calendar.Interval,
  interval_count: Schema.Number.pipe(Schema.int(), Schema.positive()).annotations({
    description: "How many `interval`s each billing cycle lasts"
  }),
  checkout_session_id: Ids.CheckoutSessionId,
  billing_cycle_anchor: UnixSeconds,
  current_period_start: UnixSeconds,
  current_period_end: UnixSeconds,
  next_billing_at: Schema.NullOr(UnixSeconds),
  cancel_at_period_end: Schema.Boolean.annotations({
    description: "`true`: it ends at `current_period_end` with no further charge"
  }),
  cancelled_at: Schema.NullOr(UnixSeconds),
  cancellation_initiator: Schema.NullOr(Subscription.Initiator),
  metadata: Schema.NullOr(Schema.Record({ key: Schema.String, value: Schema.String })).annotations({
    description: "Key-value strings the merchant attached; no request sets them yet, so always `null`"
  }),
  created_at: UnixSeconds
}).annotations({
  identifier: "SubscriptionEventObject",
  description: "The subscription the event is about"
})
export type SubscriptionObject = typeof SubscriptionObject.Type

export const InvoiceObject = Schema.Struct({
  id: Ids.InvoiceId,
  object: Schema.Literal("invoice").annotations({ description: "Always `invoice`" }),
  subscription_id: Ids.SubscriptionId,
  subscription_reference: Schema.String.annotations({ description: "The subscription's reference" }),
  period_key: Schema.String.annotations({
    description:
      "The billing period's stable key, from its start in Maldives time: each period is charged at most once"
  }),
  period_start: UnixSeconds,
  period_end: UnixSeconds,
  amount: Amount,
  currency: CurrencyCode,
  status: Invoice.Status,
  attempt_count: Schema.Number.pipe(Schema.int(), Schema.nonNegative()).annotations({
    description: "Charge attempts so far, the successful one included (at most 4)"
  }),
  next_retry_at: Schema.NullOr(UnixSeconds),
  failure_reason: Schema.NullOr(Invoice.FailureReason),
  payment_intent_id: Schema.NullOr(Schema.String).annotations({
    description: "The id of the payment that paid it; `null` until `PAID`"
  }),
  paid_at: Schema.NullOr(UnixSeconds),
  created_at: UnixSeconds
}).annotations({
  identifier: "InvoiceEventObject",
  description: "One billing cycle of a subscription and its payment"
})
export type InvoiceObject = typeof InvoiceObject.Type

export const CheckoutSessionObject = Schema.Struct({
  id: Ids.CheckoutSessionId,
  object: Schema.Literal("checkout.session").annotations({ description: "Always `checkout.session`" }),
  mode: CheckoutSession.Mode,
  status: CheckoutSession.Status,
  reference: Schema.String.annotations({ description: "The merchant's own identifier of the session" }),
  title: Schema.String.annotations({ description: "Shown to the customer on the payment page" }),
  description: Schema.NullOr(Schema.String).annotations({
    description: "Shown to the customer on the payment page; `null` if none was sent"
  }),
  amount: Amount,
  currency: CurrencyCode,
  price: Schema.NullOr(
    Schema.Struct({
      name: Schema.String.annotations({ description: "The plan's name" }),
      amount: Amount,
      interval: Calendar.Interval,
      interval_count: Schema.Number.pipe(Schema.int(), Schema.positive()).annotations({
        description: "How many `interval`s each billing cycle lasts"
      })
    })
  ).annotations({ description: "The plan sold (`SUBSCRIPTION` mode); `null` in `PAYMENT` mode" }),
  subscription: Schema.NullOr(Schema.Struct({ id: Ids.SubscriptionId })).annotations({
    description: "The subscription its payment started (`SUBSCRIPTION` mode, once paid); otherwise `null`"
  }),
  payment_id: Schema.NullOr(Schema.String).annotations({
    description:
      "The id of the payment that paid it, as `GET /balance-transactions` lists it; `null` until paid"
  }),
  expires_at: UnixSeconds,
  completed_at: Schema.NullOr(UnixSeconds),
  created_at: UnixSeconds
}).annotations({
  identifier: "CheckoutSessionEventObject",
  description: "The checkout session the event is about"
})
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
