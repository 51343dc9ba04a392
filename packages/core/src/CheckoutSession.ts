/**
 * The checkout session: the hosted page where a customer pays once (`PAYMENT`) or pays the first cycle of
 * a subscription (`SUBSCRIPTION`), that payment being the standing consent. This module is the model and
 * its pure decisions; `Checkout` loads, decides and writes. Settling a subscription session is
 * `Subscription.activate`, which completes the session and creates the subscription in one decision.
 */
import { DateTime, Either, Schema } from "effect"
import * as Calendar from "./Calendar.js"
import {
  CheckoutSessionId,
  type CustomerId,
  type Environment,
  type MerchantId,
  type SubscriptionId
} from "./Ids.js"
import { limited, MaxTextLength } from "./Fields.js"
import { isAmount, MaxCap, MinAmount } from "./Money.js"

// Defined in Ids so this module need not import Subscription; re-exported for callers.
export { CheckoutSessionId }

export const Mode = Schema.Literal("PAYMENT", "SUBSCRIPTION")
export type Mode = typeof Mode.Type

export const Status = Schema.Literal("OPEN", "COMPLETE", "EXPIRED", "CANCELLED")
export type Status = typeof Status.Type

export const terminal: ReadonlyArray<Status> = ["COMPLETE", "EXPIRED", "CANCELLED"]
export const isTerminal = (s: Status): boolean => terminal.includes(s)

/** An unpaid session lapses 24 hours after creation (spec 2.6 and 8). */
export const LifetimeHours = 24
export const MaxPlanNameLength = 120

/** `price_data.name`: the plan's name, frozen into the subscription. */
export const PlanName = limited(MaxPlanNameLength, "PlanName", "The plan's name, frozen at consent")

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

/** The plan a subscription session sells; frozen into the subscription at consent. */
export interface Price {
  readonly name: string
  /** Laari per cycle: the first payment and every renewal. */
  readonly amount: number
  readonly interval: Calendar.Interval
  readonly intervalCount: number
}

export interface CheckoutSession {
  readonly id: CheckoutSessionId
  readonly merchantId: MerchantId
  readonly environment: Environment
  readonly mode: Mode
  readonly status: Status
  readonly reference: string
  readonly title: string
  readonly description: string | null
  readonly returnUrl: string | null
  /** Laari the customer pays on this page; in `SUBSCRIPTION` mode always `price.amount`. */
  readonly amount: number
  /** `SUBSCRIPTION` mode only. */
  readonly price: Price | null
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
  readonly amount: number
  readonly price: Price | null
}

export type FieldProblem = { readonly field: string; readonly message: string }

/** An absolute http(s) URL with a host and no whitespace (core has no `URL` global). */
const httpUrl = /^https?:\/\/[^\s/?#]+[^\s]*$/i

/**
 * The rules of `POST /checkout/sessions` that need no database (spec 4.3 and 8), every problem at once,
 * with the snake_case field names of the request. Reference uniqueness is a database constraint.
 */
export const validate = (r: Request): Either.Either<Terms, ReadonlyArray<FieldProblem>> => {
  const problems: Array<FieldProblem> = []
  const problem = (field: string, message: string) => problems.push({ field, message })
  const text = (field: string, value: string | null, required: boolean, max: number) => {
    if (value === null) {
      if (required) problem(field, `${field} is required`)
    } else if (required && value.trim().length === 0) problem(field, `${field} must not be empty`)
    else if (value.length > max) problem(field, `${field} must be at most ${max} characters`)
  }
  const amountMessage = (field: string) =>
    `${field} must be a whole number of laari from ${MinAmount} to ${MaxCap}`

  let mode: Mode | null = null
  if (r.mode === null || r.mode === "PAYMENT") mode = "PAYMENT"
  else if (r.mode === "SUBSCRIPTION") mode = "SUBSCRIPTION"
  else problem("mode", "mode must be PAYMENT or SUBSCRIPTION")

  text("reference", r.reference, true, MaxTextLength)
  text("title", r.title, true, MaxTextLength)
  text("description", r.description, false, MaxTextLength)
  if (r.returnUrl !== null && !httpUrl.test(r.returnUrl))
    problem("return_url", "return_url must be an http or https URL")

  let price: Price | null = null
  if (mode === "SUBSCRIPTION") {
    const p = r.priceData
    if (p === null) problem("price_data", "price_data is required in SUBSCRIPTION mode")
    else {
      text("price_data.name", p.name, true, MaxPlanNameLength)
      if (p.amount === null) problem("price_data.amount", "price_data.amount is required")
      else if (!isAmount(p.amount)) problem("price_data.amount", amountMessage("price_data.amount"))
      const interval = p.interval !== null && isInterval(p.interval) ? p.interval : null
      if (p.interval === null) problem("price_data.interval", "price_data.interval is required")
      else if (interval === null) problem("price_data.interval", "price_data.interval must be WEEK or MONTH")
      const count = p.intervalCount ?? 1
      if (interval !== null && !Calendar.isValidSpan(interval, count))
        problem(
          "price_data.interval_count",
          `price_data.interval_count must be a whole number from 1 to ${Calendar.MaxIntervalCount[interval]} for ${interval}: a span of one week to one year`
        )
      else if (interval === null && !isIntervalCount(count))
        problem(
          "price_data.interval_count",
          `price_data.interval_count must be a whole number from 1 to ${maxCount}`
        )
      // `amount` is ignored in subscription mode, but one that disagrees with the price is a mistake.
      if (r.amount !== null && p.amount !== null && r.amount !== p.amount)
        problem("amount", "amount must equal price_data.amount in SUBSCRIPTION mode")
      if (problems.length === 0 && interval !== null && p.name !== null && p.amount !== null)
        price = { name: p.name, amount: p.amount, interval, intervalCount: count }
    }
  } else if (mode === "PAYMENT") {
    if (r.amount === null) problem("amount", "amount is required")
    else if (!isAmount(r.amount)) problem("amount", amountMessage("amount"))
    if (r.priceData !== null) problem("price_data", "price_data is only for SUBSCRIPTION mode")
  }

  if (problems.length > 0 || mode === null) return Either.left(problems)
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

/** The customer's payment settled: the session is `COMPLETE`. */
export const complete = (
  s: CheckoutSession,
  now: DateTime.Utc,
  settlement: { customerId: CustomerId; paymentId: string; subscriptionId?: SubscriptionId | undefined }
): Either.Either<CheckoutSession, Refusal> => {
  const refusal = whyNotOpen(s, now)
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
