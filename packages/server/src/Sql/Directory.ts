/**
 * The server's directory of customers for the ops API, and the sandbox side of the ledger (funding
 * wallets, setting a payer's state) with the read-outs operators and tests need. Merchants, their outlets
 * and keys are core's (`Merchants`, `ApiKeys`).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import {
  Calendar,
  Crypto,
  type Errors,
  type Events,
  type Ids,
  Phone,
  type Store,
  type Wallet
} from "@laari/core"
import { Context, DateTime, Effect, Layer, Schema } from "effect"
import { makeEvents, parsed } from "./Events.js"
import * as Ledger from "./Ledger.js"
import { openCustomer } from "./Merchants.js"
import { inTransaction, repository } from "./Repository.js"

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

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const crypto = yield* Crypto.Crypto
  const transaction = inTransaction(sql)
  const ledger = Ledger.make(sql)
  const events = yield* makeEvents

  /** A customer with a wallet holding `balance`, funded in the same transaction. */
  const createCustomer = (input: CustomerInput) =>
    transaction(
      Effect.gen(function* () {
        const customer: Store.Customer = {
          id: (yield* crypto.uuid) as Ids.CustomerId,
          environment: input.environment,
          // Kept as lookups compare it: E.164 for a Maldivian number however typed.
          phone: Phone.lookupKey(input.phone),
          name: input.name ?? null
        }
        const wallet = { balance: input.balance ?? 0, timeZone: input.timeZone ?? Calendar.MaldivesZone }
        if (!(yield* openCustomer(sql, crypto, customer, wallet, yield* DateTime.now)))
          return yield* new PhoneTaken()
        return customer
      })
    )

  const setPayer = (customerId: string, patch: PayerPatch) =>
    transaction(
      Effect.gen(function* () {
        const before = yield* ledger.payer(customerId, { lock: true })
        if (before === undefined) return undefined
        if (patch.balance !== undefined && patch.balance !== before.balance) {
          const now = yield* DateTime.now
          const memo = patch.balance > before.balance ? "Sandbox top-up" : "Sandbox withdrawal"
          const delta = patch.balance - before.balance
          yield* ledger.fund(
            customerId,
            before.environment,
            delta,
            `funding:${yield* crypto.uuid}`,
            memo,
            now
          )
        }
        yield* ledger.configure(customerId, patch)
        return yield* ledger.payer(customerId, { lock: false })
      })
    )

  const service: DirectoryService = repository({
    createCustomer,
    payer: (customerId: string) => ledger.payer(customerId, { lock: false }),
    setPayer,
    listEvents: (filter: Parameters<DirectoryService["listEvents"]>[0]) =>
      Effect.map(events.list(filter), (list) => list.map(parsed)),
    merchantBalance: (merchantId: string, environment: Ids.Environment) =>
      ledger.balance({ kind: "merchant", merchantId, environment }),
    feeBalance: (environment: Ids.Environment) => ledger.balance({ kind: "fee", environment }),
    ledgerTotal: ledger.total
  })
  return service
})

export const layer: Layer.Layer<Directory, never, SqlClient.SqlClient | Crypto.Crypto> = Layer.effect(
  Directory,
  make
)
