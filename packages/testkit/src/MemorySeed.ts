/**
 * The `Seed` port over the memory adapters, plus memory-only helpers (changing a merchant's fee or
 * feature gates) that the server does through its ops API.
 */
import { Crypto, type Ids, Merchant, Merchants, Phone, type Store } from "@laari/core"
import { Chunk, DateTime, Effect, HashMap, Layer, Option } from "effect"
import { MemoryDb, type MemoryDbService } from "./MemoryDb.js"
import * as MemoryMerchants from "./MemoryMerchants.js"
import * as MemoryWallet from "./MemoryWallet.js"
import { Seed, type SeedService } from "./Seed.js"

/** The sandbox payer's phone: unique per merchant, and obviously not a real number. */
export const sandboxPhone = (merchantId: string): string =>
  Merchant.sandboxPhone(merchantId as Ids.MerchantId)

export const make = (
  db: MemoryDbService,
  wallet: MemoryWallet.MemoryWalletService,
  crypto: Crypto.CryptoService
): SeedService => {
  const store = MemoryMerchants.make(db, wallet)
  const create = Merchants.creating(store, crypto)

  // Seeding is given valid input: a refusal is the test's mistake.
  const merchant: SeedService["merchant"] = (input) =>
    Effect.map(Effect.orDie(create(input)), (created) => created.merchant)

  const outlet: SeedService["outlet"] = (merchantId, name) =>
    DateTime.now.pipe(
      Effect.flatMap((now) => Effect.orDie(store.addOutlet(merchantId, name, now))),
      Effect.flatMap((created) =>
        created === undefined ? Effect.dieMessage(`no merchant ${merchantId}`) : Effect.succeed(created)
      )
    )

  const customer: SeedService["customer"] = (input) =>
    db.withTransaction(
      Effect.gen(function* () {
        const c: Store.Customer = {
          id: (yield* crypto.uuid) as Ids.CustomerId,
          environment: input.environment,
          phone: Phone.lookupKey(input.phone),
          name: input.name ?? null
        }
        yield* db.update((t) => MemoryMerchants.addCustomer(t, c))
        yield* wallet.open({
          customerId: c.id,
          environment: c.environment,
          balance: input.balance ?? 0,
          ...(input.timeZone !== undefined && { timeZone: input.timeZone })
        })
        return c
      })
    )

  return {
    merchant,
    outlet,
    customer,
    setPayer: wallet.setPayer,
    merchantBalance: (merchantId, environment) =>
      wallet.balance(MemoryWallet.account.merchant(environment, merchantId)),
    feeBalance: (environment) => wallet.balance(MemoryWallet.account.fee(environment)),
    ledgerTotal: wallet.ledgerTotal,
    events: Effect.map(db.get, (t) => Chunk.toReadonlyArray(t.events))
  }
}

export const layer: Layer.Layer<Seed, never, MemoryDb | MemoryWallet.MemoryWallet | Crypto.Crypto> =
  Layer.effect(
    Seed,
    Effect.gen(function* () {
      return make(yield* MemoryDb, yield* MemoryWallet.MemoryWallet, yield* Crypto.Crypto)
    })
  )

/** Memory only: changes a merchant's fee or feature gates (the server does this through its ops API). */
export const updateMerchant = (
  merchantId: Ids.MerchantId,
  patch: { readonly feeBps?: number; readonly features?: Partial<Store.Merchant["features"]> }
): Effect.Effect<Store.Merchant, never, MemoryDb> =>
  Effect.flatMap(MemoryDb, (db) =>
    db.modify((t) => {
      const row = Option.getOrThrowWith(
        HashMap.get(t.merchants, merchantId),
        () => new Error(`no merchant ${merchantId}`)
      )
      const next: Store.Merchant = {
        ...Merchant.withFeatures(row.value, patch.features ?? {}),
        feeBps: patch.feeBps ?? row.value.feeBps
      }
      return [next, { ...t, merchants: HashMap.set(t.merchants, merchantId, { ...row, value: next }) }]
    })
  )
