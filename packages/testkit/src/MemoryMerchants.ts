/**
 * The memory adapter of core's `Store.MerchantRegistryStore`: merchants with their sandbox payers and
 * outlets. The payer's wallet opens in the ledger it is given (`MemoryWallet`, or a host's own book seen
 * as one), so the merchant and its money are created in one `MemoryDb` transaction.
 */
import { Merchant, Store } from "@laari/core"
import { DateTime, Effect, HashMap, Layer, Option } from "effect"
import { MemoryDb, type MemoryDbService, type Tables } from "./MemoryDb.js"
import * as MemoryWallet from "./MemoryWallet.js"

/** Adds a customer; dies where the SQL store's unique phone constraint would refuse it. */
export const addCustomer = (t: Tables, customer: Store.Customer): Tables => {
  const taken = Array.from(HashMap.values(t.customers)).some(
    (c) => c.environment === customer.environment && c.phone === customer.phone
  )
  if (taken) throw new Error(`a ${customer.environment} customer with phone ${customer.phone} exists`)
  return { ...t, customers: HashMap.set(t.customers, customer.id, customer) }
}

/** A new outlet of `merchantId`, numbered one past the count, as a `serial` would number it. */
const addOutletRow = (t: Tables, merchantId: Store.Merchant["id"], name: string): [Store.Outlet, Tables] => {
  const created: Store.Outlet = { id: HashMap.size(t.outlets) + 1, merchantId, name }
  return [created, { ...t, outlets: HashMap.set(t.outlets, created.id, created) }]
}

const outletsOf = (t: Tables, merchantId: string) =>
  Array.from(HashMap.values(t.outlets))
    .filter((o) => o.merchantId === merchantId)
    .sort((a, b) => a.id - b.id)

export const make = (
  db: MemoryDbService,
  wallet: Pick<MemoryWallet.MemoryWalletService, "open">
): Store.MerchantRegistryStoreService => ({
  create: ({ merchant, sandboxPayer, outlets }, now) =>
    db.withTransaction(
      Effect.gen(function* () {
        yield* db.update((t) => addCustomer(t, sandboxPayer))
        yield* wallet.open({
          customerId: sandboxPayer.id,
          environment: sandboxPayer.environment,
          balance: Merchant.SandboxPayerBalance,
          timeZone: Merchant.SandboxPayerZone
        })
        // The merchant's own wallets need no opening here: an account no entry has touched is at zero.
        yield* db.update((t) => ({
          ...t,
          merchants: HashMap.set(t.merchants, merchant.id, { seq: t.seq, value: merchant, createdAt: now }),
          seq: t.seq + 1
        }))
        return yield* Effect.forEach(outlets, (name) => db.modify((t) => addOutletRow(t, merchant.id, name)))
      })
    ),
  list: (limit) =>
    Effect.map(db.get, (t) =>
      Array.from(HashMap.values(t.merchants))
        .sort(
          (a, b) => DateTime.toEpochMillis(a.createdAt) - DateTime.toEpochMillis(b.createdAt) || a.seq - b.seq
        )
        .slice(0, limit)
        .map((row) => ({ merchant: row.value, outlets: outletsOf(t, row.value.id) }))
    ),
  count: Effect.map(db.get, (t) => HashMap.size(t.merchants)),
  addOutlet: (merchantId, name) =>
    db.modify((t) =>
      HashMap.has(t.merchants, merchantId) ? addOutletRow(t, merchantId, name) : [undefined, t]
    ),
  listOutlets: (merchantId) => Effect.map(db.get, (t) => outletsOf(t, merchantId)),
  setFeatures: (merchantId, patch) =>
    db.modify((t) =>
      Option.match(HashMap.get(t.merchants, merchantId), {
        onNone: () => [undefined, t],
        onSome: (row) => {
          const next = Merchant.withFeatures(row.value, patch)
          return [next, { ...t, merchants: HashMap.set(t.merchants, merchantId, { ...row, value: next }) }]
        }
      })
    )
})

export const layer: Layer.Layer<Store.MerchantRegistryStore, never, MemoryDb | MemoryWallet.MemoryWallet> =
  Layer.effect(
    Store.MerchantRegistryStore,
    Effect.zipWith(MemoryDb, MemoryWallet.MemoryWallet, (db, wallet) => make(db, wallet))
  )
