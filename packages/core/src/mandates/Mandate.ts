/**
 * The mandate: a standing authorization to charge a customer's wallet within caps. This module is the
 * model and its pure decisions; `Mandates` loads, decides and writes.
 */
import { DateTime, Either, Schema } from "effect"
import * as Calendar from "../kernel/Calendar.js"
import * as Fields from "../kernel/Fields.js"
import type { CustomerId, Environment, MandateId, MerchantId } from "../kernel/Ids.js"
import { Amount, Chargeable, isChargeable, MaxCap, MinAmount } from "../kernel/Money.js"

export const Status = Schema.Literal(
  "INITIATED",
  "ACTIVE",
  "DECLINED",
  "REVOKED",
  "EXPIRED",
  "SUSPENDED"
).annotations({
  description:
    "`INITIATED`: waiting for the customer's approval; `ACTIVE`: approved, the only state that can be charged; `DECLINED`: the customer refused; `REVOKED`: ended by the customer, the merchant or the service; `EXPIRED`: the approval link lapsed or the mandate reached `expiresAt`; `SUSPENDED`: held by the service during a dispute. `DECLINED`, `REVOKED` and `EXPIRED` are final"
})
export type Status = typeof Status.Type

export const terminal: ReadonlyArray<Status> = ["DECLINED", "REVOKED", "EXPIRED"]
export const isTerminal = (s: Status): boolean => terminal.includes(s)

/** The approval link works for 24 hours; a mandate lives at most 365 days. */
export const SetupWindowHours = 24
export const MaxLifetimeDays = 365

/** The only period a merchant may set. */
export const Period = Schema.Literal("MONTH").annotations({
  description: "The period `periodCap` counts over: `MONTH`, the customer's calendar month"
})
export type Period = typeof Period.Type

/**
 * A charge's `amount` as the request decodes it: any whole number. The bounds are published, but an
 * amount outside them is a charge refusal (`MANDATE_CHARGE_AMOUNT_INVALID` below the minimum,
 * `PER_CHARGE_CAP_EXCEEDED` above the cap) with its code and event, decided by `authorizeCharge`.
 */
export const ChargeAmount = Schema.Number.pipe(
  Schema.int({
    message: () => "must be a whole number of laari",
    jsonSchema: { type: "integer", minimum: MinAmount, maximum: MaxCap }
  })
).annotations({
  title: "ChargeAmount",
  description: `Laari, at least ${MinAmount} and at most the mandate's per_charge_cap`
})

export const RevokedBy = Schema.Literal("CUSTOMER", "MERCHANT", "SERVICE").annotations({
  description:
    "Who revoked the mandate: the customer in the wallet app, the merchant (`POST /mandates/{id}/revoke`) or the service"
})
export type RevokedBy = typeof RevokedBy.Type

export interface Mandate {
  readonly id: MandateId
  readonly merchantId: MerchantId
  readonly environment: Environment
  readonly reference: string
  readonly status: Status
  readonly title: string
  readonly description: string | null
  readonly perChargeCap: number
  readonly periodCap: number | null
  readonly period: Period | null
  readonly periodKey: string | null
  readonly periodCharged: number
  readonly returnUrl: string | null
  /** The approving customer's wallet; `null` until approved. */
  readonly customerId: CustomerId | null
  readonly setupExpiresAt: DateTime.Utc
  readonly expiresAt: DateTime.Utc
  readonly approvedAt: DateTime.Utc | null
  readonly revokedAt: DateTime.Utc | null
  readonly revokedBy: RevokedBy | null
  readonly declinedAt: DateTime.Utc | null
  readonly expiredAt: DateTime.Utc | null
  readonly createdAt: DateTime.Utc
}

/** What a merchant asks for; already decoded from the request. */
export interface Terms {
  readonly reference: string
  readonly title: string
  readonly description: string | null
  readonly perChargeCap: number
  readonly periodCap: number | null
  readonly period: Period | null
  readonly expiresAt: DateTime.Utc | null
  readonly returnUrl: string | null
}

/** The rules of each field of `Terms`: the same schemas the server's request is decoded with. */
const TermsFields = Schema.Struct({
  reference: Fields.Reference,
  title: Fields.Title,
  description: Fields.nullable(Fields.Description),
  perChargeCap: Amount,
  periodCap: Fields.nullable(Chargeable),
  period: Fields.nullable(Period),
  returnUrl: Fields.nullable(Fields.ReturnUrl)
})

/**
 * The rules of a mandate's terms that need no database, every problem at once: each field's (its schema)
 * and those across fields, which live only here; `now` settles the expiry.
 */
export const validateTerms = (terms: Terms, now: DateTime.Utc): ReadonlyArray<Fields.FieldProblem> => {
  const problems = Fields.collect(Fields.problems(TermsFields)(terms))
  if (terms.periodCap !== null) {
    if (terms.periodCap < terms.perChargeCap) problems.add("periodCap", "must be at least the per-charge cap")
    if (terms.period === null) problems.add("period", "is required with a period cap")
  }
  if (terms.expiresAt !== null) {
    if (!DateTime.greaterThan(terms.expiresAt, now)) problems.add("expiresAt", "must be in the future")
    else if (DateTime.greaterThan(terms.expiresAt, Calendar.addDays(now, MaxLifetimeDays)))
      problems.add("expiresAt", `must be at most ${MaxLifetimeDays} days away`)
  }
  return problems.list
}

/** A new mandate awaiting approval. */
export const initiate = (
  input: { id: MandateId; merchantId: MerchantId; environment: Environment; terms: Terms },
  now: DateTime.Utc
): Mandate => ({
  id: input.id,
  merchantId: input.merchantId,
  environment: input.environment,
  reference: input.terms.reference,
  status: "INITIATED",
  title: input.terms.title,
  description: input.terms.description,
  perChargeCap: input.terms.perChargeCap,
  periodCap: input.terms.periodCap,
  period: input.terms.periodCap === null ? null : input.terms.period,
  periodKey: null,
  periodCharged: 0,
  returnUrl: input.terms.returnUrl,
  customerId: null,
  setupExpiresAt: Calendar.addHours(now, SetupWindowHours),
  expiresAt: input.terms.expiresAt ?? Calendar.addDays(now, MaxLifetimeDays),
  approvedAt: null,
  revokedAt: null,
  revokedBy: null,
  declinedAt: null,
  expiredAt: null,
  createdAt: now
})

/** Why a transition is not allowed from the current state. */
export type TransitionRefusal = "not-pending" | "setup-expired" | "not-revocable" | "not-active"

/** Approved and not yet ended: the states whose lifetime runs out at `expiresAt`. */
/** Whether the mandate can still end by revocation: active, or held in a dispute. */
export const isLive = (m: Mandate): boolean => m.status === "ACTIVE" || m.status === "SUSPENDED"

const setupLapsed = (m: Mandate, now: DateTime.Utc) => DateTime.greaterThanOrEqualTo(now, m.setupExpiresAt)

export const approve = (
  m: Mandate,
  customerId: CustomerId,
  now: DateTime.Utc
): Either.Either<Mandate, TransitionRefusal> =>
  m.status !== "INITIATED"
    ? Either.left("not-pending")
    : setupLapsed(m, now)
      ? Either.left("setup-expired")
      : Either.right({ ...m, status: "ACTIVE", customerId, approvedAt: now })

export const decline = (m: Mandate, now: DateTime.Utc): Either.Either<Mandate, TransitionRefusal> =>
  m.status !== "INITIATED"
    ? Either.left("not-pending")
    : setupLapsed(m, now)
      ? Either.left("setup-expired")
      : Either.right({ ...m, status: "DECLINED", declinedAt: now })

/** Active (and suspended) mandates can be revoked by anyone; terminal and unapproved ones cannot. */
export const revoke = (
  m: Mandate,
  by: RevokedBy,
  now: DateTime.Utc
): Either.Either<Mandate, TransitionRefusal> =>
  isLive(m)
    ? Either.right({ ...m, status: "REVOKED", revokedAt: now, revokedBy: by })
    : Either.left("not-revocable")

export const suspend = (m: Mandate): Either.Either<Mandate, TransitionRefusal> =>
  m.status === "ACTIVE" ? Either.right({ ...m, status: "SUSPENDED" }) : Either.left("not-active")

/** Whether a sweep at `now` should expire `m`: a lapsed approval link, or a lifetime that has run out. */
export const isDueToExpire = (m: Mandate, now: DateTime.Utc): boolean =>
  (m.status === "INITIATED" && setupLapsed(m, now)) ||
  (isLive(m) && DateTime.greaterThanOrEqualTo(now, m.expiresAt))

export const expire = (m: Mandate, now: DateTime.Utc): Mandate =>
  isDueToExpire(m, now) ? { ...m, status: "EXPIRED", expiredAt: now } : m

// ---------------------------------------------------------------------------------------------------
// Charges
// ---------------------------------------------------------------------------------------------------

/** The charge refusals, with their messages. HTTP statuses live in the server. */
export const RefusalCode = Schema.Literal(
  "MANDATE_NOT_FOUND",
  "MANDATE_INACTIVE",
  "MANDATE_EXPIRED",
  "PER_CHARGE_CAP_EXCEEDED",
  "PERIOD_CAP_EXCEEDED",
  "MANDATE_CHARGE_AMOUNT_INVALID",
  "WALLET_LIMIT_EXCEEDED",
  "MANDATE_CHARGE_FAILED",
  "INSUFFICIENT_FUNDS",
  "SERVICE_UNAVAILABLE"
).annotations({
  description: "Why the charge was refused, as the code of the error answer to the charge request"
})
export type RefusalCode = typeof RefusalCode.Type

export const refusalMessages: Record<RefusalCode, string> = {
  MANDATE_NOT_FOUND: "Mandate not found",
  MANDATE_INACTIVE: "Mandate is not active",
  MANDATE_EXPIRED: "Mandate has expired",
  PER_CHARGE_CAP_EXCEEDED: "Amount exceeds the per charge cap",
  PERIOD_CAP_EXCEEDED: "Amount exceeds the period cap",
  MANDATE_CHARGE_AMOUNT_INVALID: "Amount is not chargeable",
  WALLET_LIMIT_EXCEEDED: "The charge was blocked by a wallet limit",
  MANDATE_CHARGE_FAILED: "The charge could not be taken",
  INSUFFICIENT_FUNDS: "Insufficient funds",
  SERVICE_UNAVAILABLE: "This service is temporarily unavailable"
}

/** The counters a charge leaves behind. */
export interface Authorization {
  /** The payer's month the charge counts in (for a mandate without a period: the month it fell in). */
  readonly periodKey: string
  /** Running total of `periodKey` after this charge; `0` for a mandate without a period. */
  readonly periodCharged: number
}

/**
 * Whether `amount` may be charged at `now` against `m`, for a payer living in `payerZone`. Pure: the
 * caller holds the mandate's lock, so the counters it returns cannot be overrun by a concurrent charge.
 */
export const authorizeCharge = (
  m: Mandate,
  amount: number,
  now: DateTime.Utc,
  payerZone: string
): Either.Either<Authorization, RefusalCode> => {
  // Past `expiresAt` a mandate is expired even before a sweep has marked it so.
  if (m.status === "EXPIRED" || (isLive(m) && DateTime.greaterThanOrEqualTo(now, m.expiresAt)))
    return Either.left("MANDATE_EXPIRED")
  if (m.status !== "ACTIVE") return Either.left("MANDATE_INACTIVE")
  if (!isChargeable(amount)) return Either.left("MANDATE_CHARGE_AMOUNT_INVALID")
  if (amount > m.perChargeCap) return Either.left("PER_CHARGE_CAP_EXCEEDED")
  const periodKey = Calendar.monthKey(now, payerZone)
  if (m.periodCap === null) return Either.right({ periodKey, periodCharged: 0 })
  const already = m.periodKey === periodKey ? m.periodCharged : 0
  if (already + amount > m.periodCap) return Either.left("PERIOD_CAP_EXCEEDED")
  return Either.right({ periodKey, periodCharged: already + amount })
}

/** The mandate after a successful charge: a mandate without a period keeps `null` and `0`. */
export const recordCharge = (m: Mandate, auth: Authorization): Mandate =>
  m.periodCap === null ? m : { ...m, periodKey: auth.periodKey, periodCharged: auth.periodCharged }

/**
 * The mandate once a charge counted while pending (`recordCharge` before the wallet answered) was
 * refused or cancelled: its amount no longer counts. A period that has rolled since counts it no more.
 */
export const releaseCharge = (m: Mandate, periodKey: string, amount: number): Mandate =>
  // Stryker disable next-line ConditionalExpression: without a period cap nothing is counted (`recordCharge`), so `periodCharged` stays 0 and max(0, 0 - amount) is 0
  m.periodCap === null || m.periodKey !== periodKey
    ? m
    : { ...m, periodCharged: Math.max(0, m.periodCharged - amount) }

/** A successful charge. */
export interface Charge {
  readonly id: string
  readonly mandateId: MandateId
  readonly merchantId: MerchantId
  readonly environment: Environment
  readonly customerId: CustomerId
  readonly amount: number
  readonly description: string
  readonly reference: string
  readonly fee: number
  readonly netAmount: number
  /** How much has gone back to the payer by refunds (`Refund`); at most `amount`. */
  readonly amountRefunded: number
  readonly periodKey: string
  readonly periodCharged: number
  readonly createdAt: DateTime.Utc
}
