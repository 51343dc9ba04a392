/**
 * Seeding: how a test puts merchants, their outlets, customers and wallet state into a store, whatever
 * the adapter. The memory adapters implement it here; the server implements it over its SQL directory
 * and ledger.
 */
import { type Events, type Ids, Merchant, type Store, type Wallet } from "@laari/core"
import { Context, type Effect } from "effect"

export interface MerchantInput {
  readonly name: string
  readonly city?: string
  readonly mcc?: string
  readonly feeBps?: number
  readonly features?: { readonly mandatesLive?: boolean; readonly subscriptionsLive?: boolean }
}

export interface CustomerInput {
  readonly environment: Ids.Environment
  readonly phone: string
  readonly name?: string
  readonly balance?: number
  readonly timeZone?: string
}

export interface PayerPatch {
  readonly balance?: number
  /** `null` clears the limit. */
  readonly limit?: number | null
  readonly frozen?: boolean
  readonly blockedByRules?: boolean
  readonly timeZone?: string
}

export interface SeedService {
  /** A merchant with its sandbox payer wallet (balance 10,000,000 laari) and its own wallets. */
  readonly merchant: (input: MerchantInput) => Effect.Effect<Store.Merchant>
  /** A new outlet of the merchant, numbered by the store; dies if there is no such merchant. */
  readonly outlet: (merchantId: Ids.MerchantId, name: string) => Effect.Effect<Store.Outlet>
  /** A customer with a wallet funded with `balance` (default 0) in `timeZone` (default Maldives). */
  readonly customer: (input: CustomerInput) => Effect.Effect<Store.Customer>
  /** Changes a payer wallet's state; a balance change is booked against the funding account. */
  readonly setPayer: (customerId: Ids.CustomerId, patch: PayerPatch) => Effect.Effect<Wallet.PayerAccount>
  /** The merchant's wallet balance in `environment`. */
  readonly merchantBalance: (
    merchantId: Ids.MerchantId,
    environment: Ids.Environment
  ) => Effect.Effect<number>
  /** The service's fee account balance in `environment`. */
  readonly feeBalance: (environment: Ids.Environment) => Effect.Effect<number>
  /** Sum of every ledger account's balance, funding included: zero while money is conserved. */
  readonly ledgerTotal: Effect.Effect<number>
  /** Every event recorded, oldest first. */
  readonly events: Effect.Effect<ReadonlyArray<Events.Event>>
}

export class Seed extends Context.Tag("laari/testkit/Seed")<Seed, SeedService>() {}

/** Core's `Merchant.SandboxPayerBalance`, where the tests have found it. */
export const SandboxPayerBalance = Merchant.SandboxPayerBalance
