/**
 * The server's directory port: customers made by the operator API, and the sandbox side of the ledger
 * (a payer wallet read and changed, funding, balances) that operators and the test helpers need. Core
 * has no such operations: they are the server's own, so their port is here and the front ends use it
 * without naming the SQL adapter (`Sql/Directory` implements it). Merchants, their outlets and keys are
 * core's (`Merchants`, `ApiKeys`).
 */
import type { Errors, Events, Ids, Store, Wallet } from "@laari/core"
import { Context, type Effect, Schema } from "effect"

/** Another customer in the environment already has that phone number. */
export class PhoneTaken extends Schema.TaggedError<PhoneTaken>()("PhoneTaken", {
  message: Schema.optionalWith(Schema.String, {
    default: () => "A customer with this phone number already exists"
  })
}) {}

export interface CustomerInput {
  readonly environment: Ids.Environment
  readonly phone: string
  readonly name?: string | undefined
  /** Opening balance, funded from the environment's funding account. Default 0. */
  readonly balance?: number | undefined
  /** Default `Indian/Maldives`. */
  readonly timeZone?: string | undefined
}

/** A change to a payer wallet; the same shape as the testkit's `Seed.PayerPatch`. */
export interface PayerPatch {
  readonly balance?: number | undefined
  /** `null` clears the limit. */
  readonly limit?: number | null | undefined
  readonly frozen?: boolean | undefined
  readonly blockedByRules?: boolean | undefined
  readonly timeZone?: string | undefined
}

export interface DirectoryService {
  readonly createCustomer: (
    input: CustomerInput
  ) => Effect.Effect<Store.Customer, PhoneTaken | Errors.ServiceUnavailable>
  readonly payer: (
    customerId: string
  ) => Effect.Effect<Wallet.PayerAccount | undefined, Errors.ServiceUnavailable>
  /** Changes a payer wallet; a balance change is a funding transfer with a fresh id. `undefined`: no wallet. */
  readonly setPayer: (
    customerId: string,
    patch: PayerPatch
  ) => Effect.Effect<Wallet.PayerAccount | undefined, Errors.ServiceUnavailable>
  /** Recorded events, newest first. */
  readonly listEvents: (filter: {
    readonly merchantId?: string | undefined
    readonly type?: string | undefined
    readonly limit: number
  }) => Effect.Effect<ReadonlyArray<Events.Event>, Errors.ServiceUnavailable>
  readonly merchantBalance: (
    merchantId: string,
    environment: Ids.Environment
  ) => Effect.Effect<number, Errors.ServiceUnavailable>
  readonly feeBalance: (environment: Ids.Environment) => Effect.Effect<number, Errors.ServiceUnavailable>
  /** The sum of every ledger balance, funding included: zero while money is conserved. */
  readonly ledgerTotal: Effect.Effect<number, Errors.ServiceUnavailable>
}

export class Directory extends Context.Tag("laari/server/Directory")<Directory, DirectoryService>() {}
