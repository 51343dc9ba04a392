/**
 * The checkout session: the hosted page where a customer pays once (`PAYMENT`) or pays the first cycle of
 * a subscription (`SUBSCRIPTION`), that payment being the standing consent. This module is the model and
 * its pure decisions; `Checkout` loads, decides and writes. Settling a subscription session is
 * `Subscription.activate`, which completes the session and creates the subscription in one decision.
 */
import { DateTime, Either, Schema } from "effect"
import * as Calendar from "../kernel/Calendar.js"
import {
  CheckoutSessionId,
  type CustomerId,
  type Environment,
  type MerchantId,
  type SubscriptionId
} from "../kernel/Ids.js"
import * as Fields from "../kernel/Fields.js"
import { Amount } from "../kernel/Money.js"

// Defined in Ids so this module need not import Subscription; re-exported for callers.
export { CheckoutSessionId }

export const Mode = Schema.Literal("PAYMENT", "SUBSCRIPTION").annotations({
  description:
    "`PAYMENT`: one payment; `SUBSCRIPTION`: the first payment of a plan, which starts a subscription"
})
export type Mode = typeof Mode.Type

export const Status = Schema.Literal("OPEN", "COMPLETE", "EXPIRED", "CANCELLED").annotations({
  description:
    "`OPEN`: waiting for the customer to pay; `COMPLETE`: paid; `EXPIRED`: unpaid 24 hours after creation; `CANCELLED`: the merchant cancelled it unpaid (`POST /checkout/sessions/{id}/cancel`)"
})
export type Status = typeof Status.Type

export const terminal: ReadonlyArray<Status> = ["COMPLETE", "EXPIRED", "CANCELLED"]
export const isTerminal = (s: Status): boolean => terminal.includes(s)

/** An unpaid session lapses 24 hours after creation. */
export const LifetimeHours = 24
export const MaxPlanNameLength = 120

/** `price_data.name`: the plan's name, frozen into the subscription. */
export const PlanName = Fields.nonBlank(
  Fields.limited(MaxPlanNameLength, "PlanName", "The plan's name, frozen at consent")
)

/**
 * `price_data.interval_count` on its own: 1 to the most of any interval. Whether the span fits one week
 * to one year depends on `interval` too, which `validate` decides (`Calendar.isValidSpan`).
 */
const maxCount = Math.max(...Object.values(Calendar.MaxIntervalCount))
export const IntervalCount = Schema.Number.pipe(Schema.int(), Schema.between(1, maxCount)).annotations({
  title: "IntervalCount",
  description: `Intervals per cycle, default 1: WEEK 1 to ${Calendar.MaxIntervalCount.WEEK}, MONTH 1 to ${Calendar.MaxIntervalCount.MONTH}`,
  message: () => ({ message: `must be a whole number from 1 to ${maxCount}`, override: true })
})
const isIntervalCount = Schema.is(IntervalCount)
const isInterval = Schema.is(Calendar.Interval)
const isMode = Schema.is(Mode)

/** The plan a subscription session sells; frozen into the subscription at consent. */
export interface Price {
  readonly name: string
  /** Laari per cycle: the first payment and every renewal. */
  readonly amount: number
  readonly interval: Calendar.Interval
  readonly intervalCount: number
}

/** A session: the terms it was opened with, and where it stands. */
export interface CheckoutSession extends Terms {
  readonly id: CheckoutSessionId
  readonly merchantId: MerchantId
  readonly environment: Environment
  readonly status: Status
  /** The paying customer's wallet, once complete; never shown to the merchant. */
  readonly customerId: CustomerId | null
  /** The payment that completed the session. */
  readonly paymentId: string | null
  /** The subscription the payment created (`SUBSCRIPTION` mode, once complete). */
  readonly subscriptionId: SubscriptionId | null
  readonly expiresAt: DateTime.Utc
  readonly completedAt: DateTime.Utc | null
  readonly cancelledAt: DateTime.Utc | null
  readonly expiredAt: DateTime.Utc | null
  readonly createdAt: DateTime.Utc
}

/**
 * What a merchant sent, after only the JSON shape was decoded: `null` is an absent field. Values are kept
 * loose (`interval` as any string, amounts as any number) so every rule is reported as a field problem.
 */
export interface PriceDataRequest {
  readonly name: string | null
  readonly amount: number | null
  readonly interval: string | null
  readonly intervalCount: number | null
}

export interface Request {
  /** `null`: omitted, an ordinary one-off `PAYMENT` session. */
  readonly mode: string | null
  readonly reference: string | null
  readonly title: string | null
  readonly description: string | null
  readonly returnUrl: string | null
  readonly amount: number | null
  readonly priceData: PriceDataRequest | null
}

/** A request that passed every rule, with defaults applied. */
export interface Terms {
  readonly mode: Mode
  readonly reference: string
  readonly title: string
  readonly description: string | null
  readonly returnUrl: string | null
  /** Laari the customer pays on this page; in `SUBSCRIPTION` mode always `price.amount`. */
  readonly amount: number
  /** `SUBSCRIPTION` mode only. */
  readonly price: Price | null
}

/** The rules of each field of a request: the same schemas the server's request is decoded with. */
const RequestFields = Schema.Struct({
  // `override`: a union of literals otherwise reports its first member's own "Expected ..." message.
  mode: Fields.nullable(
    // Stryker disable next-line BooleanLiteral: the summary of the literals' own messages (`Fields.summarize`) is these words too
    Mode.annotations({ message: () => ({ message: "must be PAYMENT or SUBSCRIPTION", override: true }) })
  ),
  reference: Fields.nullable(Fields.Reference),
  title: Fields.nullable(Fields.Title),
  description: Fields.nullable(Fields.Description),
  returnUrl: Fields.nullable(Fields.ReturnUrl),
  amount: Fields.nullable(Amount),
  priceData: Fields.nullable(
    Schema.Struct({
      name: Fields.nullable(PlanName),
      amount: Fields.nullable(Amount),
      interval: Fields.nullable(
        Calendar.Interval.annotations({
          // Stryker disable next-line BooleanLiteral: the summary of the literals' own messages (`Fields.summarize`) is these words too
          message: () => ({ message: "must be WEEK or MONTH", override: true })
        })
      ),
      intervalCount: Fields.nullable(IntervalCount)
    })
  )
})

/**
 * The rules of `POST /checkout/sessions` that need no database, every problem at once:
 * each field's (its schema), and those across fields, which live only here: what each mode requires
 * and allows, and the span of `interval` times `intervalCount`. Reference uniqueness is a database
 * constraint.
 */
export const validate = (r: Request): Either.Either<Terms, ReadonlyArray<Fields.FieldProblem>> => {
  const problems = Fields.collect(Fields.problems(RequestFields)(r))
  const problem = problems.add
  if (r.reference === null) problem("reference", "is required")
  if (r.title === null) problem("title", "is required")

  const mode: Mode | null = r.mode === null ? "PAYMENT" : isMode(r.mode) ? r.mode : null
  let price: Price | null = null
  if (mode === "SUBSCRIPTION") {
    const p = r.priceData
    if (p === null) problem("priceData", "is required in SUBSCRIPTION mode")
    else {
      if (p.name === null) problem("priceData.name", "is required")
      if (p.amount === null) problem("priceData.amount", "is required")
      if (p.interval === null) problem("priceData.interval", "is required")
      // Stryker disable next-line ConditionalExpression: `isInterval(null)` is false; the `null` check only narrows the type
      const interval = p.interval !== null && isInterval(p.interval) ? p.interval : null
      const count = p.intervalCount ?? 1
      if (interval !== null && isIntervalCount(count) && !Calendar.isValidSpan(interval, count))
        problem(
          "priceData.intervalCount",
          `must be from 1 to ${Calendar.MaxIntervalCount[interval]} for ${interval}: a span of one week to one year`
        )
      // `amount` is ignored in subscription mode, but one that disagrees with the price is a mistake.
      if (r.amount !== null && p.amount !== null && r.amount !== p.amount)
        problem("amount", "must equal priceData.amount in SUBSCRIPTION mode")
      // Stryker disable next-line ConditionalExpression,LogicalOperator: with no problem every part is set, and with one the problems are returned whatever `price` is
      if (problems.list.length === 0 && interval !== null && p.name !== null && p.amount !== null)
        price = { name: p.name, amount: p.amount, interval, intervalCount: count }
    }
  } else if (mode === "PAYMENT") {
    if (r.amount === null) problem("amount", "is required")
    if (r.priceData !== null) problem("priceData", "is only for SUBSCRIPTION mode")
  }

  // Stryker disable next-line ConditionalExpression: a `null` mode is a mode the field's schema refused, so a problem; the check only narrows the type
  if (problems.list.length > 0 || mode === null) return Either.left(problems.list)
  return Either.right({
    mode,
    reference: r.reference!,
    title: r.title!,
    description: r.description,
    returnUrl: r.returnUrl,
    amount: price === null ? r.amount! : price.amount,
    price
  })
}

/** A new session awaiting the customer's payment. */
export const open = (
  input: { id: CheckoutSessionId; merchantId: MerchantId; environment: Environment; terms: Terms },
  now: DateTime.Utc
): CheckoutSession => ({
  id: input.id,
  merchantId: input.merchantId,
  environment: input.environment,
  mode: input.terms.mode,
  status: "OPEN",
  reference: input.terms.reference,
  title: input.terms.title,
  description: input.terms.description,
  returnUrl: input.terms.returnUrl,
  amount: input.terms.amount,
  price: input.terms.price,
  customerId: null,
  paymentId: null,
  subscriptionId: null,
  expiresAt: Calendar.addHours(now, LifetimeHours),
  completedAt: null,
  cancelledAt: null,
  expiredAt: null,
  createdAt: now
})

/**
 * The wallet transfer id of the session's payment. A session is paid at most once, so its id is the cause;
 * a refused payment moves nothing, and the customer may try again under the same id.
 */
export const transferId = (s: CheckoutSession): string => `checkout:${s.id}`

/**
 * Why a session cannot be paid or cancelled. `mode-mismatch`: a subscription session completed without a
 * subscription, or a payment session with one (a defect of the caller).
 */
export type Refusal = "already-complete" | "expired" | "cancelled" | "mode-mismatch"

const lapsed = (s: CheckoutSession, now: DateTime.Utc) => DateTime.greaterThanOrEqualTo(now, s.expiresAt)

/** Why `s` is not payable at `now`, if it is not: it must be `OPEN` and before `expiresAt`. */
export const whyNotOpen = (s: CheckoutSession, now: DateTime.Utc): Refusal | undefined => {
  switch (s.status) {
    case "COMPLETE":
      return "already-complete"
    case "CANCELLED":
      return "cancelled"
    case "EXPIRED":
      return "expired"
    case "OPEN":
      // Past `expiresAt` a session is expired even before a sweep has marked it so.
      return lapsed(s, now) ? "expired" : undefined
  }
}

/**
 * The customer's payment settled: the session is `COMPLETE`. `openAt` is when the payment was taken, if
 * it settled later (a payment pending in the wallet provider's core): a session open then completes,
 * even past its expiry by `now`, since the money moved; by default, `now`.
 */
export const complete = (
  s: CheckoutSession,
  now: DateTime.Utc,
  settlement: {
    customerId: CustomerId
    paymentId: string
    subscriptionId?: SubscriptionId | undefined
    openAt?: DateTime.Utc | undefined
  }
): Either.Either<CheckoutSession, Refusal> => {
  const refusal = whyNotOpen(s, settlement.openAt ?? now)
  if (refusal !== undefined) return Either.left(refusal)
  if ((s.mode === "SUBSCRIPTION") !== (settlement.subscriptionId !== undefined))
    return Either.left("mode-mismatch")
  return Either.right({
    ...s,
    status: "COMPLETE",
    customerId: settlement.customerId,
    paymentId: settlement.paymentId,
    subscriptionId: settlement.subscriptionId ?? null,
    completedAt: now
  })
}

/** Only an open, unexpired session can be cancelled. */
export const cancel = (s: CheckoutSession, now: DateTime.Utc): Either.Either<CheckoutSession, Refusal> => {
  const refusal = whyNotOpen(s, now)
  return refusal !== undefined
    ? Either.left(refusal)
    : Either.right({ ...s, status: "CANCELLED", cancelledAt: now })
}

/** Whether a sweep at `now` should expire `s`: still open at or after `expiresAt`. */
export const isDueToExpire = (s: CheckoutSession, now: DateTime.Utc): boolean =>
  s.status === "OPEN" && lapsed(s, now)

/** `s` expired, or `s` itself when it is not due. An expired session leaves no subscription behind. */
export const expire = (s: CheckoutSession, now: DateTime.Utc): CheckoutSession =>
  isDueToExpire(s, now) ? { ...s, status: "EXPIRED", expiredAt: now } : s
