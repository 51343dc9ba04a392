/**
 * The SQL adapter of the server's `Directory` (`Platform/Directory`): customers for the ops API, and the
 * sandbox side of the ledger (funding wallets, setting a payer's state) with the read-outs operators and
 * tests need.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Calendar, Crypto, type Ids, Phone, type Store } from "@laari/core"
import { DateTime, Effect, Layer } from "effect"
import {
  type CustomerInput,
  Directory,
  type DirectoryService,
  type PayerPatch,
  PhoneTaken
} from "../Platform/Directory.js"
import { makeEvents, parsed } from "./Events.js"
import * as Ledger from "./Ledger.js"
import { openCustomer } from "./Merchants.js"
import { inTransaction, repository } from "./Repository.js"

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
