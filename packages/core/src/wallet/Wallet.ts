/**
 * The wallet port: customer wallets, merchant wallets and transfers between them. The server ships a
 * double-entry ledger in its own database; a host platform may plug in its own.
 */
import { Context, type Effect, Schema } from "effect"
import type { DateTime } from "effect"
import type { ServiceUnavailable } from "../kernel/Errors.js"
import type { CustomerId, Environment, MerchantId } from "../kernel/Ids.js"
import type { Laari } from "../kernel/Money.js"

/** What a customer wallet looks like to the payments engine. */
export interface PayerAccount {
  readonly customerId: CustomerId
  readonly environment: Environment
  readonly balance: Laari
  /** Largest single payment the wallet may make; `null` for none. */
  readonly limit: Laari | null
  readonly frozen: boolean
  readonly blockedByRules: boolean
  /** IANA zone the customer lives in; periods count the customer's own calendar month. */
  readonly timeZone: string
}

/** Why a transfer did not go through. These are also an invoice's `failureReason` values. */
export const RefusalReason = Schema.Literal(
  "insufficient-balance",
  "wallet-limit",
  "wallet-frozen",
  "blocked-by-rules",
  "executor-error"
)
export type RefusalReason = typeof RefusalReason.Type

export class TransferRefused extends Schema.TaggedError<TransferRefused>()("TransferRefused", {
  reason: RefusalReason
}) {}

export interface Transfer {
  /** Unique per cause (charge id, invoice id + attempt, QR payment id): a retried transfer never moves money twice. */
  readonly id: string
  readonly environment: Environment
  readonly payer: CustomerId
  readonly merchant: MerchantId
  readonly amount: Laari
  readonly fee: Laari
  readonly memo: string
  /**
   * Set when `id` was made for this call (a new charge's id), so no earlier transfer can have it: a
   * ledger may skip looking for one. Its uniqueness must still be enforced.
   */
  readonly fresh?: boolean | undefined
}

export interface TransferReceipt {
  readonly id: string
  readonly amount: Laari
  readonly fee: Laari
  readonly netAmount: Laari
  readonly createdAt: DateTime.Utc
}

/** A refund's transfer: `amount` from the merchant's wallet back to the payer's; no fee moves. */
export interface Reversal {
  /** Unique per refund (`Refund.transferId`): a retried reversal never moves money twice. */
  readonly id: string
  readonly environment: Environment
  readonly payer: CustomerId
  readonly merchant: MerchantId
  readonly amount: Laari
  readonly memo: string
}

/** The merchant's wallet holds less than the reversal would take from it. */
export class InsufficientMerchantBalance extends Schema.TaggedError<InsufficientMerchantBalance>()(
  "InsufficientMerchantBalance",
  { balance: Schema.Number }
) {}

export interface WalletService {
  /** The payer's wallet, or `undefined` when there is none. */
  readonly payer: (customerId: CustomerId) => Effect.Effect<PayerAccount | undefined, ServiceUnavailable>
  /**
   * Moves `amount` from the payer: `amount - fee` to the merchant, `fee` to the service. Idempotent on
   * `id`: a transfer that already happened returns its receipt and moves nothing. Joins the caller's
   * transaction when the ledger shares its database.
   */
  readonly transfer: (
    transfer: Transfer
  ) => Effect.Effect<TransferReceipt, TransferRefused | ServiceUnavailable>
  /**
   * Moves `amount` from the merchant's wallet back to the payer's, fee untouched. Idempotent on `id`
   * like `transfer`. Refused with `InsufficientMerchantBalance` when the merchant's balance is short;
   * reversals of one merchant are serialized (a ledger locks the merchant's wallet), so two cannot
   * together overdraw it. Joins the caller's transaction.
   */
  readonly reverse: (
    reversal: Reversal
  ) => Effect.Effect<TransferReceipt, InsufficientMerchantBalance | ServiceUnavailable>
  /**
   * Optional: the caller is about to read or pay from these wallets in its transaction (the renewal
   * engine, a batch at a time). A ledger in the caller's database may lock them all now, in one go and
   * in an order two callers cannot deadlock on, so the `payer` and `transfer` calls that follow need not
   * lock each in turn. Without it, each call locks its own.
   */
  readonly prepare?: (customerIds: ReadonlyArray<CustomerId>) => Effect.Effect<void, ServiceUnavailable>
  /**
   * Optional: `true` when `transfer` joins the caller's transaction and commits or rolls back with it (a
   * ledger in the caller's database). The renewal engine then charges a cycle in the transaction that
   * opens it, since a crash can leave nothing between the two; otherwise it commits each attempt
   * `CHARGING` before its transfer.
   */
  readonly joinsTransaction?: boolean
}

export class Wallet extends Context.Tag("laari/Wallet")<Wallet, WalletService>() {}

/**
 * Whether `amount` (and `fee` out of it) can be moved: whole laari, `amount` above 0, `fee` from 0 to
 * `amount`. Core never asks for anything else, so a ledger given other figures has found laari's bug.
 */
const movable = (amount: number, fee: number): boolean =>
  Number.isSafeInteger(amount) && amount > 0 && Number.isSafeInteger(fee) && fee >= 0 && fee <= amount

/**
 * What is wrong with a transfer's figures, or `undefined` when they can be a payment. Every ledger asks
 * first and dies with the answer: a bug, not the customer's refusal.
 */
export const transferDefect = (transfer: Pick<Transfer, "id" | "amount" | "fee">): string | undefined =>
  movable(transfer.amount, transfer.fee)
    ? undefined
    : `transfer ${transfer.id}: amount ${transfer.amount} and fee ${transfer.fee} do not make sense`

/** What is wrong with a reversal's amount, or `undefined`; as `transferDefect`, with no fee. */
export const reversalDefect = (reversal: Pick<Reversal, "id" | "amount">): string | undefined =>
  movable(reversal.amount, 0)
    ? undefined
    : `reversal ${reversal.id}: amount ${reversal.amount} does not make sense`

/** The order a ledger checks a payment in; the first that applies is the refusal. */
export const decideTransfer = (account: PayerAccount, amount: number): RefusalReason | undefined => {
  if (account.frozen) return "wallet-frozen"
  if (account.blockedByRules) return "blocked-by-rules"
  if (account.limit !== null && amount > account.limit) return "wallet-limit"
  if (account.balance < amount) return "insufficient-balance"
  return undefined
}
