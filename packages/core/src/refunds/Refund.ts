/**
 * The refund: money given back from the merchant's balance to the wallet that paid, for a mandate charge,
 * a QR payment or a paid invoice. This module is the model and its pure decisions; `Refunds` loads,
 * decides and writes.
 *
 * Fee policy: laari keeps its fee (as Stripe does). A refund takes the refunded amount from the
 * merchant's balance in full and moves no fee, so payments minus refunds equals the merchant's balance
 * plus fees.
 */
import { type DateTime, Either, Schema } from "effect"
import * as Calendar from "../kernel/Calendar.js"
import { type CustomerId, type Environment, type MerchantId, brandedUuid } from "../kernel/Ids.js"
import { Amount, UnixSeconds } from "../kernel/EventFields.js"
import { Currency, CurrencyCode } from "../kernel/Money.js"
import type { RefusalReason } from "../wallet/Wallet.js"

export const RefundId = brandedUuid("RefundId", "The refund's id (a UUID)")
export type RefundId = typeof RefundId.Type

export const Reason = Schema.Literal("requested_by_customer", "duplicate", "fraudulent").annotations({
  description: "Why the merchant refunded, as it said; `null` if it gave no reason"
})
export type Reason = typeof Reason.Type

/** What a refund applies to; each kind is the name of the request field without `_id`. */
export const SourceKind = Schema.Literal("charge", "qr_payment", "invoice")
export type SourceKind = typeof SourceKind.Type

export interface Source {
  readonly kind: SourceKind
  readonly id: string
}

/**
 * The kinds of payment a request may name by the merchant's reference: a charge (its `reference`, by
 * default its mandate's) and a QR payment (the reference of the code it paid). An invoice has none of its
 * own (its subscription's reference names every cycle).
 */
export const ReferencedKind = Schema.Literal("charge", "qr_payment")
export type ReferencedKind = typeof ReferencedKind.Type

/** How a request names its payment: by id, or by reference where the kind has one. */
export type Selector =
  | Source
  | { readonly kind: ReferencedKind; readonly reference: string; readonly id?: undefined }

/** The smallest refund: one laari (a partial refund may be any whole amount up to what remains). */
export const MinAmount = 1

export interface Refund {
  readonly id: RefundId
  readonly merchantId: MerchantId
  readonly environment: Environment
  readonly source: Source
  /** The wallet that paid, and is paid back. */
  readonly customerId: CustomerId
  readonly amount: number
  readonly reason: Reason | null
  readonly reference: string | null
  readonly description: string | null
  readonly createdAt: DateTime.Utc
}

/** A payment as a refund sees it, whatever its kind: how much was paid, and how much is already back. */
export interface Payment {
  readonly source: Source
  readonly merchantId: MerchantId
  readonly environment: Environment
  readonly customerId: CustomerId
  readonly amount: number
  readonly amountRefunded: number
  /** Settled money (a charge, a QR payment, a `PAID` invoice); anything else cannot be refunded. */
  readonly settled: boolean
}

export const RefusalCode = Schema.Literal(
  "REFUND_AMOUNT_INVALID",
  "REFUND_EXCEEDS_PAYMENT",
  "PAYMENT_NOT_REFUNDABLE",
  "PAYMENT_ALREADY_REFUNDED",
  "INSUFFICIENT_MERCHANT_BALANCE"
)
export type RefusalCode = typeof RefusalCode.Type

export const refusalMessages: Record<RefusalCode, string> = {
  REFUND_AMOUNT_INVALID: `Refund amount must be a whole number of laari of at least ${MinAmount}`,
  REFUND_EXCEEDS_PAYMENT: "Refund amount exceeds what remains to be refunded of the payment",
  PAYMENT_NOT_REFUNDABLE: "Only a settled payment can be refunded",
  PAYMENT_ALREADY_REFUNDED: "The payment has already been refunded in full",
  INSUFFICIENT_MERCHANT_BALANCE: "The merchant's balance is too low to fund this refund"
}

/** What can still be given back. */
export const remaining = (p: Payment): number => p.amount - p.amountRefunded

/**
 * Decides a refund of `requested` laari (`undefined`: all that remains) of `p`: the amount to refund,
 * or why not. The checks in order: the payment is settled, something remains, the amount is whole and
 * at least `MinAmount`, and it is no more than what remains. So the refunds of a payment, each decided
 * against the payment as the previous one left it, never sum to more than it.
 */
export const decide = (p: Payment, requested: number | undefined): Either.Either<number, RefusalCode> => {
  if (!p.settled) return Either.left("PAYMENT_NOT_REFUNDABLE")
  const left = remaining(p)
  if (left <= 0) return Either.left("PAYMENT_ALREADY_REFUNDED")
  if (requested === undefined) return Either.right(left)
  if (!Number.isSafeInteger(requested) || requested < MinAmount) return Either.left("REFUND_AMOUNT_INVALID")
  if (requested > left) return Either.left("REFUND_EXCEEDS_PAYMENT")
  return Either.right(requested)
}

/** What a payment's refunds pending in the wallet provider's core hold (`Movement.holdKey`). */
export const holdKey = (s: Source): string => `refund:${s.kind}:${s.id}`

/**
 * `decide` counting `pending`, the sum of the payment's refunds still pending in the wallet provider's
 * core, as refunded: they may yet go through, so no refund may take what they hold. None is refunded in
 * full while one is pending (it may yet be refused): asking for more than is left beside them exceeds
 * the payment.
 */
export const decideCountingPending = (
  p: Payment,
  pending: number,
  requested: number | undefined
): Either.Either<number, RefusalCode> => {
  const decided = decide({ ...p, amountRefunded: p.amountRefunded + pending }, requested)
  return pending > 0 && Either.isLeft(decided) && decided.left === "PAYMENT_ALREADY_REFUNDED"
    ? Either.left("REFUND_EXCEEDS_PAYMENT")
    : decided
}

/** A refusal with what it says to the merchant. */
export interface Refusal {
  readonly code: RefusalCode
  readonly message: string
}

/**
 * The wallet provider's core refusing a refund's transfer (a reversal from the merchant's wallet there
 * to the payer's), as the refund's refusal. Too little in the merchant's wallet is the merchant's balance
 * too low, as with the built-in ledger. No refund code names a wallet's state, so the others (the payer's
 * wallet frozen, blocked by the provider's rules or over its limit, or the transfer cancelled unposted
 * when the core did not answer in time) are the payment not refundable as things stand, each saying why:
 * nothing moved, and the merchant may try again later under a new key.
 */
export const walletRefusal = (reason: RefusalReason): Refusal => {
  switch (reason) {
    case "insufficient-balance":
      return { code: "INSUFFICIENT_MERCHANT_BALANCE", message: refusalMessages.INSUFFICIENT_MERCHANT_BALANCE }
    case "wallet-frozen":
      return {
        code: "PAYMENT_NOT_REFUNDABLE",
        message: "The paying wallet is frozen: it cannot be refunded now"
      }
    case "blocked-by-rules":
      return { code: "PAYMENT_NOT_REFUNDABLE", message: "The wallet provider's rules refused this refund" }
    case "wallet-limit":
      return {
        code: "PAYMENT_NOT_REFUNDABLE",
        message: "The paying wallet's limit cannot take this refund now"
      }
    case "executor-error":
      return {
        code: "PAYMENT_NOT_REFUNDABLE",
        message: "The wallet provider did not make this refund; nothing moved. Try again later"
      }
  }
}

/** A payer the wallet provider's core holds no wallet of: there is nothing to give the money back to. */
export const noWalletRefusal: Refusal = {
  code: "PAYMENT_NOT_REFUNDABLE",
  message: "The paying wallet is not held by the wallet provider, so nothing can be given back to it"
}

/** The payment after `amount` of it went back. */
export const apply = (p: Payment, amount: number): Payment => ({
  ...p,
  amountRefunded: p.amountRefunded + amount
})

/** The ledger transfer of a refund: derived from its id, so it happens at most once. */
export const transferId = (id: RefundId | string): string => `refund:${id}`

// ---------------------------------------------------------------------------------------------------
// The webhook object (`refund.created`): snake_case with Unix seconds, like the other event objects.
// ---------------------------------------------------------------------------------------------------

export const RefundObject = Schema.Struct({
  id: RefundId,
  object: Schema.Literal("refund").annotations({ description: "Always `refund`" }),
  amount: Amount,
  currency: CurrencyCode,
  status: Schema.Literal("SUCCEEDED").annotations({
    description: "Always `SUCCEEDED`: a refund is made at once or refused"
  }),
  charge_id: Schema.NullOr(Schema.String).annotations({
    description: "The mandate charge refunded; `null` if it refunds something else"
  }),
  qr_payment_id: Schema.NullOr(Schema.String).annotations({
    description: "The QR payment refunded; `null` if it refunds something else"
  }),
  invoice_id: Schema.NullOr(Schema.String).annotations({
    description: "The paid invoice refunded; `null` if it refunds something else"
  }),
  reason: Schema.NullOr(Reason),
  reference: Schema.NullOr(Schema.String).annotations({
    description: "The merchant's own identifier of the refund; `null` if none was sent"
  }),
  description: Schema.NullOr(Schema.String).annotations({
    description: "The merchant's note on the refund; `null` if none was sent"
  }),
  created_at: UnixSeconds
}).annotations({
  identifier: "RefundEventObject",
  description:
    "A refund: the amount went back from the merchant's balance to the paying wallet. laari keeps its fee: no fee is returned."
})
export type RefundObject = typeof RefundObject.Type

/** The source's id under its field name, the other two `null`. */
export const sourceFields = (s: Source) => ({
  charge_id: s.kind === "charge" ? s.id : null,
  qr_payment_id: s.kind === "qr_payment" ? s.id : null,
  invoice_id: s.kind === "invoice" ? s.id : null
})

export const refundObject = (r: Refund): RefundObject => ({
  id: r.id,
  object: "refund",
  amount: r.amount,
  currency: Currency,
  status: "SUCCEEDED",
  ...sourceFields(r.source),
  reason: r.reason,
  reference: r.reference,
  description: r.description,
  created_at: Calendar.unixSeconds(r.createdAt)
})

// The outbox's catalogue of objects (kernel/Outbox.ts): these are this feature's.
declare module "../kernel/Outbox.js" {
  interface EventObjects {
    refund: RefundObject
  }
}
