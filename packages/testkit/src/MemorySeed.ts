/**
 * The `Seed` port over the memory adapters, plus memory-only helpers (changing a merchant's fee or
 * feature gates) that the server does through its ops API.
 */
import { Crypto, Fees, type Ids, Phone, type Store } from "@laari/core"
import { Chunk, Effect, HashMap, Layer, Option } from "effect"
import { MemoryDb, type MemoryDbService } from "./MemoryDb.js"
import * as MemoryWallet from "./MemoryWallet.js"
import { SandboxPayerBalance, Seed, type SeedService } from "./Seed.js"

/** The sandbox payer's phone: unique per merchant, and obviously not a real number. */
export const sandboxPhone = (merchantId: string): string => `+960 sandbox-${merchantId}`

export const make = (
  db: MemoryDbService,
  wallet: MemoryWallet.MemoryWalletService,
  crypto: Crypto.CryptoService
): SeedService => {
  const addCustomer = (customer: Store.Customer) =>
    db.update((t) => {
      const taken = Array.from(HashMap.values(t.customers)).some(
        (c) => c.environment === customer.environment && c.phone === customer.phone
      )
      if (taken) throw new Error(`a ${customer.environment} customer with phone ${customer.phone} exists`)
      return { ...t, customers: HashMap.set(t.customers, customer.id, customer) }
    })

  const merchant: SeedService["merchant"] = (input) =>
    db.withTransaction(
      Effect.gen(function* () {
        const id = (yield* crypto.uuid) as Ids.MerchantId
        const payer: Store.Customer = {
          id: (yield* crypto.uuid) as Ids.CustomerId,
          environment: "test",
          phone: sandboxPhone(id),
          name: `${input.name} sandbox payer`
        }
        yield* addCustomer(payer)
        yield* wallet.open({ customerId: payer.id, environment: "test", balance: SandboxPayerBalance })
        const merchant: Store.Merchant = {
          id,
          name: input.name,
          city: input.city ?? "Male",
          mcc: input.mcc ?? "5999",
          feeBps: input.feeBps ?? Fees.DefaultFeeBps,
          features: {
            mandatesLive: input.features?.mandatesLive ?? false,
            subscriptionsLive: input.features?.subscriptionsLive ?? false
          },
          sandboxPayer: payer.id
        }
        yield* db.update((t) => ({ ...t, merchants: HashMap.set(t.merchants, id, merchant) }))
        return merchant
      })
    )

  const outlet: SeedService["outlet"] = (merchantId, name) =>
    db.modify((t) => {
      if (!HashMap.has(t.merchants, merchantId)) throw new Error(`no merchant ${merchantId}`)
      // Outlets are never deleted, so the next number is one past the count, as a `serial` would give.
      const created: Store.Outlet = { id: HashMap.size(t.outlets) + 1, merchantId, name }
      return [created, { ...t, outlets: HashMap.set(t.outlets, created.id, created) }]
    })

  const customer: SeedService["customer"] = (input) =>
    db.withTransaction(
      Effect.gen(function* () {
        const c: Store.Customer = {
          id: (yield* crypto.uuid) as Ids.CustomerId,
          environment: input.environment,
          phone: Phone.lookupKey(input.phone),
          name: input.name ?? null
        }
        yield* addCustomer(c)
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
      const m = Option.getOrThrowWith(
        HashMap.get(t.merchants, merchantId),
        () => new Error(`no merchant ${merchantId}`)
      )
      const next: Store.Merchant = {
        ...m,
        feeBps: patch.feeBps ?? m.feeBps,
        features: { ...m.features, ...patch.features }
      }
      return [next, { ...t, merchants: HashMap.set(t.merchants, merchantId, next) }]
    })
  )
