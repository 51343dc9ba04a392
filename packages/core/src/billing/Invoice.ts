/**
 * The invoice: one per billing cycle of a subscription, charged at most once, retried on a schedule. This
 * module is the model and its pure transitions; `Subscription` decides when they apply.
 */
import { DateTime, Either, Schema } from "effect"
import * as Calendar from "../kernel/Calendar.js"
import { type Environment, InvoiceId, type MerchantId, type SubscriptionId } from "../kernel/Ids.js"
import type { RefusalReason } from "../wallet/Wallet.js"

// Defined in Ids (with the other ids) to keep the domain modules free of import cycles; re-exported for callers.
export { InvoiceId }

/** `PENDING`: open, waiting for its first attempt or a retry. `CHARGING`: an attempt is in flight. */
export const Status = Schema.Literal("PENDING", "CHARGING", "PAID", "FAILED", "VOID").annotations({
  description:
    "`PENDING`: the cycle is open, waiting for its first attempt or a retry; `CHARGING`: an attempt is in flight; `PAID`; `FAILED`: all four attempts missed (final); `VOID`: the subscription ended while the cycle was open, nothing charged (final)"
})
export type Status = typeof Status.Type

/**
 * What an invoice takes from its subscription: declared here (a `Subscription` is one) so the model does not
 * import the module that decides when invoices open.
 */
export interface Billed {
  readonly id: SubscriptionId
  readonly merchantId: MerchantId
  readonly environment: Environment
  readonly reference: string
  readonly amount: number
  readonly interval: Calendar.Interval
  readonly intervalCount: number
  readonly billingCycleAnchor: DateTime.Utc
}

export const terminal: ReadonlyArray<Status> = ["PAID", "FAILED", "VOID"]
export const isTerminal = (s: Status): boolean => terminal.includes(s)

/** Why the last attempt missed. */
export const FailureReason = Schema.Literal(
  "insufficient-balance",
  "blocked-by-rules",
  "wallet-frozen",
  "executor-error"
).annotations({
  description:
    "Why the last attempt missed: `insufficient-balance`, `blocked-by-rules` (the customer's wallet rules), `wallet-frozen` or `executor-error` (the wallet failed to carry out the payment); `null` if no attempt missed"
})
export type FailureReason = typeof FailureReason.Type

/**
 * The invoice's reason for a wallet refusal. The spec's invoice reasons have no `wallet-limit`: a limit on
 * the customer's account is one of the account's rules, so it reads `blocked-by-rules`.
 */
export const failureReasonOf = (reason: RefusalReason | FailureReason): FailureReason =>
  reason === "wallet-limit" ? "blocked-by-rules" : reason

/** Four attempts per cycle: the first when the cycle opens, then three retries. */
export const MaxAttempts = 4

/** Hours from attempt `k` (1-based) to attempt `k + 1`: so t0, +12 h, +36 h, +84 h. */
export const RetryDelayHours: ReadonlyArray<number> = [12, 24, 48]

export interface Invoice {
  readonly id: InvoiceId
  readonly subscriptionId: SubscriptionId
  readonly merchantId: MerchantId
  readonly environment: Environment
  /** Carried into `invoice.paid` and `invoice.payment_failed`. */
  readonly subscriptionReference: string
  readonly periodIndex: number
  /** The Maldives date of `periodStart`; unique per subscription, so a cycle is charged at most once. */
  readonly periodKey: string
  readonly periodStart: DateTime.Utc
  readonly periodEnd: DateTime.Utc
  readonly amount: number
  /** How much of a `PAID` invoice has gone back to the payer by refunds (`Refund`); at most `amount`. */
  readonly amountRefunded: number
  readonly status: Status
  /** Every attempt, the successful one included. */
  readonly attemptCount: number
  /** When a `PENDING` invoice may next be attempted; `null`: at once (a new cycle) or never. */
  readonly nextRetryAt: DateTime.Utc | null
  readonly failureReason: FailureReason | null
  readonly paymentIntentId: string | null
  readonly paidAt: DateTime.Utc | null
  /** When the latest attempt started: retries are scheduled from it. */
  readonly lastAttemptAt: DateTime.Utc | null
  readonly voidedAt: DateTime.Utc | null
  readonly createdAt: DateTime.Utc
}

/** Open and unpaid: waiting for an attempt, or one in flight. At most one per subscription. */
export const isOpen = (inv: Invoice): boolean => inv.status === "PENDING" || inv.status === "CHARGING"

/** The invoice of period `periodIndex` of `sub`, `PENDING`, to be attempted at once. */
export const open = (sub: Billed, periodIndex: number, now: DateTime.Utc, id: InvoiceId): Invoice => {
  const p = Calendar.period(sub.billingCycleAnchor, sub.interval, sub.intervalCount, periodIndex)
  return {
    id,
    subscriptionId: sub.id,
    merchantId: sub.merchantId,
    environment: sub.environment,
    subscriptionReference: sub.reference,
    periodIndex,
    periodKey: Calendar.periodKey(p.start),
    periodStart: p.start,
    periodEnd: p.end,
    amount: sub.amount,
    amountRefunded: 0,
    status: "PENDING",
    attemptCount: 0,
    nextRetryAt: null,
    failureReason: null,
    paymentIntentId: null,
    paidAt: null,
    lastAttemptAt: null,
    voidedAt: null,
    createdAt: now
  }
}

/** Invoice 0, written `PAID` at consent: the checkout payment was its one and only attempt. */
export const paidAtConsent = (sub: Billed, id: InvoiceId, paymentId: string, now: DateTime.Utc): Invoice => ({
  ...open(sub, 0, now, id),
  status: "PAID",
  attemptCount: 1,
  paymentIntentId: paymentId,
  paidAt: now,
  lastAttemptAt: now
})

/** Whether an attempt may start at `now`: `PENDING`, and its retry moment (if any) reached. */
export const isDue = (inv: Invoice, now: DateTime.Utc): boolean =>
  inv.status === "PENDING" &&
  (inv.nextRetryAt === null || DateTime.greaterThanOrEqualTo(now, inv.nextRetryAt))

/**
 * The wallet transfer id of the current attempt, `<invoice id>:<attempt>`. Repeating an in-flight attempt
 * repeats the id, so a crash between the transfer and its record can never move money twice.
 */
export const transferId = (inv: Invoice): string => `${inv.id}:${inv.attemptCount}`

/** When attempt `attemptCount + 1` is due after a miss of attempt `attemptCount` at `attemptAt`; `null` after the last. */
export const retryAt = (attemptCount: number, attemptAt: DateTime.Utc): DateTime.Utc | null => {
  const hours = RetryDelayHours[attemptCount - 1]
  // Stryker disable next-line ConditionalExpression,EqualityOperator: `RetryDelayHours` has a delay for each attempt but the last, so either check alone finds the last
  return attemptCount >= MaxAttempts || hours === undefined ? null : Calendar.addHours(attemptAt, hours)
}

export type Refusal = "not-pending" | "not-due" | "not-charging" | "no-attempts-left"

/** `PENDING -> CHARGING`: an attempt starts; committed before the transfer runs. */
export const startAttempt = (inv: Invoice, now: DateTime.Utc): Either.Either<Invoice, Refusal> => {
  if (inv.status !== "PENDING") return Either.left("not-pending")
  if (inv.attemptCount >= MaxAttempts) return Either.left("no-attempts-left")
  if (!isDue(inv, now)) return Either.left("not-due")
  return Either.right({
    ...inv,
    status: "CHARGING",
    attemptCount: inv.attemptCount + 1,
    nextRetryAt: null,
    lastAttemptAt: now
  })
}

/** `CHARGING -> PAID`: the attempt's transfer went through. */
export const succeed = (
  inv: Invoice,
  paymentId: string,
  now: DateTime.Utc
): Either.Either<Invoice, Refusal> =>
  inv.status !== "CHARGING"
    ? Either.left("not-charging")
    : Either.right({
        ...inv,
        status: "PAID",
        paymentIntentId: paymentId,
        paidAt: now,
        nextRetryAt: null,
        // The reason describes the last attempt, and the last attempt did not miss.
        failureReason: null
      })

/**
 * The attempt's transfer was refused: back to `PENDING` with the retry moment, counted from when the
 * attempt started, or `FAILED` after the fourth miss.
 */
export const fail = (
  inv: Invoice,
  reason: RefusalReason | FailureReason,
  _now: DateTime.Utc
): Either.Either<Invoice, Refusal> => {
  if (inv.status !== "CHARGING") return Either.left("not-charging")
  const next = retryAt(inv.attemptCount, inv.lastAttemptAt ?? inv.createdAt)
  return Either.right({
    ...inv,
    status: next === null ? "FAILED" : "PENDING",
    nextRetryAt: next,
    failureReason: failureReasonOf(reason)
  })
}

/**
 * `PENDING -> VOID`: the subscription ended while the cycle was open; nothing is charged. A `CHARGING`
 * invoice is not voided: its in-flight transfer is resolved first (repeated under the same id).
 */
const void_ = (inv: Invoice, now: DateTime.Utc): Either.Either<Invoice, Refusal> =>
  inv.status !== "PENDING"
    ? Either.left("not-pending")
    : Either.right({ ...inv, status: "VOID", nextRetryAt: null, voidedAt: now })

export { void_ as void }
