/**
 * Read shapes of subscriptions and invoices: camelCase, Maldives time.
 */
import { Calendar, type Invoice, type Subscription } from "@laari/core"
import type { Cancelled, InvoiceRead, SubscriptionRead } from "./Api.js"
import { timeOrNull } from "../Http/Fields.js"

export const subscription = (s: Subscription.Subscription): typeof SubscriptionRead.Type => ({
  id: s.id,
  reference: s.reference,
  status: s.status,
  planName: s.planName,
  amount: s.amount,
  currency: "MVR",
  interval: s.interval,
  intervalCount: s.intervalCount,
  checkoutSessionId: s.checkoutSessionId,
  billingCycleAnchor: Calendar.formatMaldives(s.billingCycleAnchor),
  currentPeriodStart: Calendar.formatMaldives(s.currentPeriodStart),
  currentPeriodEnd: Calendar.formatMaldives(s.currentPeriodEnd),
  nextBillingAt: timeOrNull(s.nextBillingAt),
  cancelAtPeriodEnd: s.cancelAtPeriodEnd,
  cancelledAt: timeOrNull(s.cancelledAt),
  cancellationInitiator: s.cancellationInitiator,
  metadata: s.metadata,
  createdAt: Calendar.formatMaldives(s.createdAt)
})

export const cancelled = (s: Subscription.Subscription): typeof Cancelled.Type => ({
  id: s.id,
  reference: s.reference,
  status: s.status,
  cancelAtPeriodEnd: s.cancelAtPeriodEnd,
  cancelledAt: timeOrNull(s.cancelledAt),
  cancellationInitiator: s.cancellationInitiator,
  currentPeriodEnd: Calendar.formatMaldives(s.currentPeriodEnd)
})

export const invoice = (i: Invoice.Invoice): typeof InvoiceRead.Type => ({
  id: i.id,
  subscriptionId: i.subscriptionId,
  periodKey: i.periodKey,
  periodStart: Calendar.formatMaldives(i.periodStart),
  periodEnd: Calendar.formatMaldives(i.periodEnd),
  amount: i.amount,
  amountRefunded: i.amountRefunded,
  currency: "MVR",
  status: i.status,
  attemptCount: i.attemptCount,
  nextRetryAt: timeOrNull(i.nextRetryAt),
  failureReason: i.failureReason,
  paymentIntentId: i.paymentIntentId,
  paidAt: timeOrNull(i.paidAt),
  createdAt: Calendar.formatMaldives(i.createdAt)
})
