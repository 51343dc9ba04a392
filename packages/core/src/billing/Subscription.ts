/**
 * The subscription: a recurring charge created by paying the first cycle of a `SUBSCRIPTION` checkout
 * session, then renewed, retried and ended by the service itself. This module is the model, its pure
 * transitions and the renewal decision (`next`, `afterAttempt`, `nextDueAt`): the renewal engine loads a
 * subscription and its latest invoice, asks `next` what to do now, does it, and writes what the
 * transition returns.
 */
import { Data, DateTime, Either, Schema } from "effect"
import * as Calendar from "../kernel/Calendar.js"
import * as CheckoutSession from "./CheckoutSession.js"
import type { Type as EventType } from "../kernel/EventType.js"
import { type CustomerId, type Environment, type MerchantId, SubscriptionId } from "../kernel/Ids.js"
import * as Invoice from "./Invoice.js"
import type { RefusalReason } from "../wallet/Wallet.js"

// Defined in Ids so CheckoutSession and Invoice need not import this module; re-exported for callers.
export { SubscriptionId }

export const Status = Schema.Literal("ACTIVE", "PAST_DUE", "CANCELLED").annotations({
  description:
    "`ACTIVE`: renewing; `PAST_DUE`: a renewal missed and is being retried; `CANCELLED`: ended, final"
})
export type Status = typeof Status.Type

export const Initiator = Schema.Literal("PAYER", "MERCHANT", "DUNNING", "OPS").annotations({
  description:
    "Who ended the subscription: `PAYER` (the customer, in the wallet app), `MERCHANT`, `DUNNING` (all four renewal attempts missed) or `OPS` (the service's operators); `null` while it is live"
})
export type Initiator = typeof Initiator.Type

/** The customer is warned this long before a renewal their balance will not cover. */
export const BalanceWarningHours = 24

export interface Subscription {
  readonly id: SubscriptionId
  readonly merchantId: MerchantId
  readonly environment: Environment
  /** Inherited from the checkout session. */
  readonly reference: string
  readonly status: Status
  /** The plan, frozen at consent. */
  readonly planName: string
  readonly amount: number
  readonly interval: Calendar.Interval
  readonly intervalCount: number
  readonly checkoutSessionId: CheckoutSession.CheckoutSessionId
  /** The payer's wallet. Never shown: subscriptions carry no customer identity. */
  readonly customerId: CustomerId
  /** The instant the first payment settled; every period derives from it and it never changes. */
  readonly billingCycleAnchor: DateTime.Utc
  /** `n` of the current period: 0 at consent, one more each time a cycle opens. */
  readonly currentPeriodIndex: number
  readonly currentPeriodStart: DateTime.Utc
  readonly currentPeriodEnd: DateTime.Utc
  /** When the next renewal is due (the current period's end); `null` once ended. */
  readonly nextBillingAt: DateTime.Utc | null
  readonly cancelAtPeriodEnd: boolean
  readonly cancelledAt: DateTime.Utc | null
  readonly cancellationInitiator: Initiator | null
  /** When the open cycle's first attempt missed; set exactly while `PAST_DUE`. */
  readonly pastDueSince: DateTime.Utc | null
  /** The period index whose upcoming renewal has had its 24-hour balance check; `null`: none yet. */
  readonly balanceWarnedFor: number | null
  /** Merchant metadata; no request field carries it yet, so `null`. */
  readonly metadata: { readonly [key: string]: string } | null
  readonly createdAt: DateTime.Utc
}

/** The events a transition asks the caller to append to the outbox, in order. */
export type Emitted = Extract<
  EventType,
  | "subscription.activated"
  | "invoice.paid"
  | "invoice.payment_failed"
  | "subscription.past_due"
  | "subscription.canceled"
  | "checkout.session.completed"
>

/** What a transition leaves behind: the subscription, the invoice it wrote (if any), the events. */
export interface Change {
  readonly subscription: Subscription
  readonly invoice: Invoice.Invoice | undefined
  readonly events: ReadonlyArray<Emitted>
}

export const isLive = (sub: Subscription): boolean => sub.status !== "CANCELLED"

// ---------------------------------------------------------------------------------------------------
// Consent
// ---------------------------------------------------------------------------------------------------

export interface Activation {
  readonly session: CheckoutSession.CheckoutSession
  readonly subscription: Subscription
  readonly invoice: Invoice.Invoice
  readonly events: ReadonlyArray<Emitted>
}

/**
 * The first payment of a `SUBSCRIPTION` session settled at `now`: in one decision the session completes,
 * the subscription starts `ACTIVE` anchored at `now` with the plan frozen, and invoice 0 is written
 * `PAID`. Period 0 is [anchor, start of period 1).
 */
export const activate = (
  session: CheckoutSession.CheckoutSession,
  customerId: CustomerId,
  now: DateTime.Utc,
  ids: {
    subscriptionId: SubscriptionId
    invoiceId: Invoice.InvoiceId
    paymentId: string
    /** When the payment was taken, if it settled later (`CheckoutSession.complete`). */
    openAt?: DateTime.Utc | undefined
  }
): Either.Either<Activation, CheckoutSession.Refusal> => {
  const price = session.price
  // Stryker disable next-line ConditionalExpression: `CheckoutSession.complete` refuses a PAYMENT session settled as a subscription with the same refusal
  if (session.mode !== "SUBSCRIPTION" || price === null) return Either.left("mode-mismatch")
  return Either.map(
    CheckoutSession.complete(session, now, {
      customerId,
      paymentId: ids.paymentId,
      subscriptionId: ids.subscriptionId,
      openAt: ids.openAt
    }),
    (completed) => {
      const period0 = Calendar.period(now, price.interval, price.intervalCount, 0)
      const subscription: Subscription = {
        id: ids.subscriptionId,
        merchantId: session.merchantId,
        environment: session.environment,
        reference: session.reference,
        status: "ACTIVE",
        planName: price.name,
        amount: price.amount,
        interval: price.interval,
        intervalCount: price.intervalCount,
        checkoutSessionId: session.id,
        customerId,
        billingCycleAnchor: now,
        currentPeriodIndex: 0,
        currentPeriodStart: period0.start,
        currentPeriodEnd: period0.end,
        nextBillingAt: period0.end,
        cancelAtPeriodEnd: false,
        cancelledAt: null,
        cancellationInitiator: null,
        pastDueSince: null,
        balanceWarnedFor: null,
        metadata: null,
        createdAt: now
      }
      return {
        session: completed,
        subscription,
        invoice: Invoice.paidAtConsent(subscription, ids.invoiceId, ids.paymentId, now),
        events: ["subscription.activated", "invoice.paid", "checkout.session.completed"]
      }
    }
  )
}

// ---------------------------------------------------------------------------------------------------
// Ending
// ---------------------------------------------------------------------------------------------------

export type CancelRefusal = "already-cancelled" | "not-active"

const ended = (sub: Subscription, initiator: Initiator, now: DateTime.Utc): Subscription => ({
  ...sub,
  status: "CANCELLED",
  nextBillingAt: null,
  cancelledAt: now,
  cancellationInitiator: initiator,
  pastDueSince: null
})

/**
 * Ends `sub` now (`ACTIVE` or `PAST_DUE`), by the merchant, the payer or operations. An open `PENDING`
 * invoice becomes `VOID`; a `CHARGING` one is left to be resolved, as its transfer started before the
 * cancellation. The current paid period is never refunded. `cancelAtPeriodEnd` is cleared: the
 * subscription did not end at the period's end.
 */
export const cancelNow = (
  sub: Subscription,
  initiator: Initiator,
  now: DateTime.Utc,
  openInvoice?: Invoice.Invoice
): Either.Either<Change, "already-cancelled"> => {
  if (sub.status === "CANCELLED") return Either.left("already-cancelled")
  const voided =
    openInvoice !== undefined && openInvoice.subscriptionId === sub.id
      ? Either.getOrUndefined(Invoice.void(openInvoice, now))
      : undefined
  return Either.right({
    subscription: { ...ended(sub, initiator, now), cancelAtPeriodEnd: false },
    invoice: voided,
    events: ["subscription.canceled"]
  })
}

/**
 * Sets `sub` to end at `currentPeriodEnd` with no further charge. Only an `ACTIVE` subscription: a
 * `PAST_DUE` one is in the retry window of an unpaid current period, where "end after this paid period"
 * has no meaning; the merchant cancels it now instead. Setting it twice is harmless. Nothing is emitted
 * until it ends.
 */
export const cancelAtPeriodEnd = (sub: Subscription): Either.Either<Subscription, CancelRefusal> =>
  sub.status === "CANCELLED"
    ? Either.left("already-cancelled")
    : sub.status === "PAST_DUE"
      ? Either.left("not-active")
      : Either.right(sub.cancelAtPeriodEnd ? sub : { ...sub, cancelAtPeriodEnd: true })

/** The engine ends a subscription set to end at period end, once the period is over; initiator `MERCHANT`. */
export const endAtPeriodEnd = (sub: Subscription, now: DateTime.Utc): Either.Either<Change, "not-due"> =>
  sub.status === "CANCELLED" || !sub.cancelAtPeriodEnd || DateTime.lessThan(now, sub.currentPeriodEnd)
    ? Either.left("not-due")
    : Either.right({
        subscription: ended(sub, "MERCHANT", now),
        invoice: undefined,
        events: ["subscription.canceled"]
      })

// ---------------------------------------------------------------------------------------------------
// The renewal engine's decisions
// ---------------------------------------------------------------------------------------------------

/** What the engine should do for one subscription now. */
export type Step = Data.TaggedEnum<{
  /** Nothing is due: ask again at `nextDueAt`. */
  Nothing: {}
  /** The current period is over and paid: open period `periodIndex` (`openNextPeriod`), then attempt it. */
  OpenNextPeriod: { readonly periodIndex: number }
  /** The current period is over and the subscription was set to end: `endAtPeriodEnd`. */
  EndAtPeriodEnd: {}
  /** The open invoice is due: `Invoice.startAttempt` (commit), transfer, `afterAttempt`. */
  Attempt: { readonly invoice: Invoice.Invoice }
  /** An attempt is in flight (a crash, or a racing cancel): repeat its transfer under the same id, `afterAttempt`. */
  ResumeAttempt: { readonly invoice: Invoice.Invoice }
  /** The subscription ended with a `PENDING` invoice left open: `Invoice.void` it. */
  VoidInvoice: { readonly invoice: Invoice.Invoice }
  /** 24 h before renewal `periodIndex`: warn the payer if the balance will not cover `amount`, then `markBalanceWarned`. */
  WarnBalance: { readonly periodIndex: number; readonly amount: number; readonly renewsAt: DateTime.Utc }
}>
export const Step = Data.taggedEnum<Step>()

/** The moment of the balance warning before the current period's renewal. */
export const balanceWarningAt = (sub: Subscription): DateTime.Utc =>
  Calendar.addHours(sub.currentPeriodEnd, -BalanceWarningHours)

const ownOpen = (sub: Subscription, latest: Invoice.Invoice | undefined): Invoice.Invoice | undefined =>
  latest !== undefined && latest.subscriptionId === sub.id && Invoice.isOpen(latest) ? latest : undefined

/**
 * The engine's heart: given `sub` and its latest invoice (any status, or none), what to do at `now`. An
 * open invoice comes first: while it is unpaid no later period opens. Then, once the current period is
 * over, the subscription either ends (set to end at period end) or opens the next period; before that
 * comes the balance warning. A renewal that is late (the engine was down) opens one period at a time, each
 * from its own anchored bounds, so no period is skipped or charged twice.
 */
export const next = (sub: Subscription, latest: Invoice.Invoice | undefined, now: DateTime.Utc): Step => {
  const open = ownOpen(sub, latest)
  if (open !== undefined) {
    if (open.status === "CHARGING") return Step.ResumeAttempt({ invoice: open })
    if (sub.status === "CANCELLED") return Step.VoidInvoice({ invoice: open })
    return Invoice.isDue(open, now) ? Step.Attempt({ invoice: open }) : Step.Nothing()
  }
  // `PAST_DUE` without an open invoice cannot arise: a paid cycle makes it `ACTIVE`, a failed one `CANCELLED`.
  if (sub.status !== "ACTIVE") return Step.Nothing()
  if (DateTime.greaterThanOrEqualTo(now, sub.currentPeriodEnd))
    return sub.cancelAtPeriodEnd
      ? Step.EndAtPeriodEnd()
      : Step.OpenNextPeriod({ periodIndex: sub.currentPeriodIndex + 1 })
  if (
    !sub.cancelAtPeriodEnd &&
    sub.balanceWarnedFor !== sub.currentPeriodIndex + 1 &&
    DateTime.greaterThanOrEqualTo(now, balanceWarningAt(sub))
  )
    return Step.WarnBalance({
      periodIndex: sub.currentPeriodIndex + 1,
      amount: sub.amount,
      renewsAt: sub.currentPeriodEnd
    })
  return Step.Nothing()
}

/**
 * The next moment `next` has work for `sub`, or `undefined` when it never will again. Work that is due
 * already (an in-flight attempt, an invoice to void) reports the moment it became due, which may be past.
 */
export const nextDueAt = (
  sub: Subscription,
  latest: Invoice.Invoice | undefined
): DateTime.Utc | undefined => {
  const open = ownOpen(sub, latest)
  if (open !== undefined) {
    if (open.status === "CHARGING") return open.lastAttemptAt ?? open.createdAt
    if (sub.status === "CANCELLED") return sub.cancelledAt ?? open.createdAt
    return open.nextRetryAt ?? open.createdAt
  }
  if (sub.status !== "ACTIVE") return undefined
  return sub.cancelAtPeriodEnd || sub.balanceWarnedFor === sub.currentPeriodIndex + 1
    ? sub.currentPeriodEnd
    : balanceWarningAt(sub)
}

/** The balance check before renewal `periodIndex` was made (whether or not a warning went out). */
export const markBalanceWarned = (sub: Subscription, periodIndex: number): Subscription =>
  sub.balanceWarnedFor === periodIndex ? sub : { ...sub, balanceWarnedFor: periodIndex }

/**
 * Opens the next cycle: the subscription moves to period `n + 1` (start, end, `nextBillingAt` = its end)
 * and its invoice is written `PENDING`, due at once. Only when `next` says `OpenNextPeriod`.
 */
export const openNextPeriod = (
  sub: Subscription,
  latest: Invoice.Invoice | undefined,
  now: DateTime.Utc,
  invoiceId: Invoice.InvoiceId
): Either.Either<Change & { readonly invoice: Invoice.Invoice }, "not-due"> => {
  const step = next(sub, latest, now)
  if (step._tag !== "OpenNextPeriod") return Either.left("not-due")
  const p = Calendar.period(sub.billingCycleAnchor, sub.interval, sub.intervalCount, step.periodIndex)
  const moved: Subscription = {
    ...sub,
    currentPeriodIndex: p.n,
    currentPeriodStart: p.start,
    currentPeriodEnd: p.end,
    nextBillingAt: p.end
  }
  return Either.right({ subscription: moved, invoice: Invoice.open(moved, p.n, now, invoiceId), events: [] })
}

/** How an attempt's transfer ended. */
export type Outcome =
  | { readonly _tag: "Paid"; readonly paymentId: string }
  | { readonly _tag: "Missed"; readonly reason: RefusalReason }

export const paid = (paymentId: string): Outcome => ({ _tag: "Paid", paymentId })
export const missed = (reason: RefusalReason): Outcome => ({ _tag: "Missed", reason })

/**
 * The state after a `CHARGING` invoice's transfer ended at `now`.
 * - Paid: the invoice is `PAID`; a `PAST_DUE` subscription is `ACTIVE` again, keeping its anchor and
 *   period. `invoice.paid`.
 * - Missed with attempts left: the invoice is `PENDING` until its retry; the first miss of the cycle makes
 *   the subscription `PAST_DUE`. `invoice.payment_failed`, and `subscription.past_due` on entering.
 * - The fourth miss: the invoice is `FAILED`, the subscription `CANCELLED` by `DUNNING`.
 *   `invoice.payment_failed`, `subscription.canceled`.
 * - On a subscription cancelled while the attempt was in flight: a success is still `PAID` (the money
 *   moved); a miss voids the invoice (`FAILED` if it was the fourth) and nothing is emitted.
 */
export const afterAttempt = (
  sub: Subscription,
  invoice: Invoice.Invoice,
  outcome: Outcome,
  now: DateTime.Utc
): Either.Either<Change, "not-charging"> => {
  // Stryker disable next-line ConditionalExpression: `Invoice.succeed` and `fail` refuse an invoice not `CHARGING` too
  if (invoice.status !== "CHARGING" || invoice.subscriptionId !== sub.id) return Either.left("not-charging")
  const decided: Either.Either<Change, Invoice.Refusal> =
    outcome._tag === "Paid"
      ? Either.map(Invoice.succeed(invoice, outcome.paymentId, now), (paidInvoice) => ({
          subscription: sub.status === "PAST_DUE" ? { ...sub, status: "ACTIVE", pastDueSince: null } : sub,
          invoice: paidInvoice,
          events: ["invoice.paid"]
        }))
      : Either.map(Invoice.fail(invoice, outcome.reason, now), (failed): Change => {
          if (sub.status === "CANCELLED")
            return {
              subscription: sub,
              invoice: Either.getOrElse(Invoice.void(failed, now), () => failed),
              events: []
            }
          if (failed.status === "FAILED")
            return {
              subscription: ended(sub, "DUNNING", now),
              invoice: failed,
              events: ["invoice.payment_failed", "subscription.canceled"]
            }
          return sub.status === "ACTIVE"
            ? {
                subscription: { ...sub, status: "PAST_DUE", pastDueSince: now },
                invoice: failed,
                events: ["invoice.payment_failed", "subscription.past_due"]
              }
            : { subscription: sub, invoice: failed, events: ["invoice.payment_failed"] }
        })
  // Stryker disable next-line ArrowFunction: unreachable, as the check above leaves `Invoice.succeed` and `fail` nothing to refuse
  return Either.mapLeft(decided, () => "not-charging" as const)
}
