/**
 * A movement of money in a ledger across the network (the wallet provider's core, through the connector):
 * committed in laari as `pending`, with the transfer id it is sent under, before the call leaves, and
 * settled by the core's answer in a later transaction. While pending it holds what its cause counts
 * (a mandate's cap), so concurrent payments cannot overrun a cap while an outcome is unknown; an unknown
 * outcome is never guessed: the resolver asks, sends again, and in the end cancels, whose answer is final.
 */
import { DateTime, Duration, Schema } from "effect"
import type { CustomerId, Environment, MerchantId } from "../kernel/Ids.js"
import type { Laari } from "../kernel/Money.js"
import type { Type as BalanceType } from "./Balance.js"
import type { RefusalReason } from "./Wallet.js"

/** What caused a movement; each cause settles its own (a charge recorded, an invoice paid, ...). */
export const Cause = Schema.Literal("mandate-charge", "qr-payment", "checkout", "invoice", "refund")
export type Cause = typeof Cause.Type

export type Status = "pending" | "posted" | "refused" | "cancelled"

/** How the movement was settled: the first answer, the resolver's question, its resend, or its cancel. */
export type SettledBy = "answer" | "status" | "resend" | "cancel"

export interface Movement {
  /** The transfer id sent to the core: a UUID, made and committed here before the first call. */
  readonly id: string
  readonly merchantId: MerchantId
  readonly environment: Environment
  readonly kind: "payment" | "reversal"
  readonly cause: Cause
  /** The cause's own id (a charge id, an invoice id and attempt, ...); one movement per cause. */
  readonly causeId: string
  /**
   * What the movement holds while pending, beside a cap: a dynamic QR code or a checkout session it pays
   * (paid once), the payment it refunds (refunded at most in full). The cause, holding that thing's lock,
   * counts the pending movements under its key (`MovementsStoreService.held`); `null` when it holds nothing.
   */
  readonly holdKey: string | null
  readonly customerId: CustomerId
  /** The core's wallet ids: debited, credited the amount less the fee, credited the fee. */
  readonly from: string
  readonly to: string
  readonly feeTo: string | null
  readonly amount: Laari
  readonly fee: Laari
  readonly memo: string
  readonly status: Status
  /** Why the core refused it; `null` unless refused (or refused by a cancel that does not say why). */
  readonly reason: RefusalReason | null
  /** What settling needs of the cause, as its service wrote it (JSON). */
  readonly detail: unknown
  readonly createdAt: DateTime.Utc
  /** When the resolver next looks at it; `null` once settled. */
  readonly nextCheckAt: DateTime.Utc | null
  /** How many times the resolver has looked. */
  readonly checks: number
  readonly settledAt: DateTime.Utc | null
  readonly settledBy: SettledBy | null
  /** When the core posted it, as the core said; `null` unless posted (or not told). */
  readonly postedAt: DateTime.Utc | null
}

/** What the core said of a movement, in the port's words; `unknown` is no answer at all. */
export type Answer =
  | { readonly _tag: "posted"; readonly postedAt: DateTime.Utc | null }
  | { readonly _tag: "refused"; readonly reason: RefusalReason | null }
  | { readonly _tag: "cancelled" }
  | { readonly _tag: "unknown"; readonly cause: string }

/** A known answer: one that settles. */
export type Settling = Exclude<Answer, { readonly _tag: "unknown" }>

export const posted = (postedAt: DateTime.Utc | null): Answer => ({ _tag: "posted", postedAt })
export const refused = (reason: RefusalReason | null): Answer => ({ _tag: "refused", reason })
export const cancelled: Answer = { _tag: "cancelled" }
export const unknown = (cause: string): Answer => ({ _tag: "unknown", cause })

/** How long after its first call a pending movement waits for the resolver's first look. */
export const FirstCheckAfter = Duration.seconds(3)

/** The longest wait between two looks: every pending movement settles within this of the core answering. */
export const MaxCheckInterval = Duration.seconds(15)

/** The wait before the `checks`-th look after the first: doubling from 1 s, at most `MaxCheckInterval`. */
export const checkInterval = (checks: number): Duration.Duration =>
  Duration.min(Duration.seconds(2 ** Math.min(Math.max(checks, 0), 10)), MaxCheckInterval)

/** A new movement, pending, first looked at `FirstCheckAfter` from `now`. */
export const pending = (
  fields: Omit<
    Movement,
    "status" | "reason" | "createdAt" | "nextCheckAt" | "checks" | "settledAt" | "settledBy" | "postedAt"
  >,
  now: DateTime.Utc
): Movement => ({
  ...fields,
  status: "pending",
  reason: null,
  createdAt: now,
  nextCheckAt: DateTime.addDuration(now, FirstCheckAfter),
  checks: 0,
  settledAt: null,
  settledBy: null,
  postedAt: null
})

/** The movement settled by a known answer. */
export const settle = (m: Movement, answer: Settling, by: SettledBy, now: DateTime.Utc): Movement => ({
  ...m,
  status: answer._tag,
  reason: answer._tag === "refused" ? answer.reason : null,
  postedAt: answer._tag === "posted" ? answer.postedAt : null,
  nextCheckAt: null,
  settledAt: now,
  settledBy: by
})

/** The movement still pending after a look that learnt nothing: the next look, later. */
export const postpone = (m: Movement, now: DateTime.Utc): Movement => ({
  ...m,
  checks: m.checks + 1,
  nextCheckAt: DateTime.addDuration(now, checkInterval(m.checks + 1))
})

/**
 * What the resolver does with a pending movement after asking the core for it (`GET /transfers/{id}`):
 * settle on a known answer; when the core never took it, send it again while young, cancel once older
 * than `cancelAfter`; when the core did not answer, cancel once older than `cancelAfter` (the cancel's
 * answer is final), else look again later.
 */
export type Step =
  | { readonly _tag: "settle"; readonly answer: Settling }
  | { readonly _tag: "resend" }
  | { readonly _tag: "cancel" }
  | { readonly _tag: "later" }

export const nextStep = (
  m: Movement,
  asked: Answer | { readonly _tag: "not-taken" },
  now: DateTime.Utc,
  cancelAfter: Duration.Duration
): Step => {
  if (asked._tag === "posted" || asked._tag === "refused" || asked._tag === "cancelled")
    return { _tag: "settle", answer: asked }
  const old = DateTime.distanceDuration(m.createdAt, now)
  const overdue =
    Duration.greaterThanOrEqualTo(old, cancelAfter) && DateTime.lessThanOrEqualTo(m.createdAt, now)
  if (overdue) return { _tag: "cancel" }
  return asked._tag === "not-taken" ? { _tag: "resend" } : { _tag: "later" }
}

/** The answer a transfer got, as what settles a refusal of the cause: a cancel is no refusal reason of a wallet's. */
export const refusalOf = (answer: Settling): RefusalReason | undefined =>
  answer._tag === "posted"
    ? undefined
    : // Stryker disable next-line ConditionalExpression: a cancel has no `reason`, so `?? "executor-error"` gives the same
      answer._tag === "refused"
      ? (answer.reason ?? "executor-error")
      : "executor-error"

/**
 * What a movement is in the merchant's balance: its type and the record that caused it. A checkout's
 * movement names its session in `detail.sessionId` (each attempt has a movement of its own); an invoice's
 * cause id is the invoice's id and attempt.
 */
export const balanceSource = (
  m: Pick<Movement, "cause" | "causeId" | "detail">
): { readonly type: BalanceType; readonly sourceId: string } => {
  switch (m.cause) {
    case "mandate-charge":
      return { type: "charge", sourceId: m.causeId }
    case "qr-payment":
      return { type: "qr_payment", sourceId: m.causeId }
    case "checkout": {
      const session = (m.detail as { readonly sessionId?: unknown } | null)?.sessionId
      return { type: "checkout_payment", sourceId: typeof session === "string" ? session : m.causeId }
    }
    case "invoice":
      return { type: "invoice", sourceId: m.causeId.split(":")[0]! }
    case "refund":
      return { type: "refund", sourceId: m.causeId }
  }
}
