/**
 * Memory adapters of the directory's repositories: merchants, their customers and outlets (the seed writes
 * them; the store only reads), and their API keys.
 */
import type { Store } from "@laari/core"
import { Effect, HashMap, Option } from "effect"
import type { MemoryDbService } from "./MemoryDb.js"
import { insertRow, newestFirst } from "./MemoryRows.js"

export const merchants = (db: MemoryDbService): Store.MerchantsStoreService => ({
  get: (id) => Effect.map(db.get, (t) => Option.getOrUndefined(HashMap.get(t.merchants, id))?.value)
})

export const customers = (db: MemoryDbService): Store.CustomersStoreService => ({
  get: (id) => Effect.map(db.get, (t) => Option.getOrUndefined(HashMap.get(t.customers, id))),
  findByPhone: (environment, phone) =>
    Effect.map(db.get, (t) =>
      Array.from(HashMap.values(t.customers)).find((c) => c.environment === environment && c.phone === phone)
    )
})

export const outlets = (db: MemoryDbService): Store.OutletsStoreService => ({
  find: (merchantId, outletId) =>
    Effect.map(db.get, (t) => {
      const outlet = Option.getOrUndefined(HashMap.get(t.outlets, outletId))
      return outlet?.merchantId === merchantId ? outlet : undefined
    })
})

/** API keys, hashed under `hashKey` (one secret per store, as a deployment has one). */
export const apiKeys = (db: MemoryDbService, hashKey: Uint8Array): Store.ApiKeysStoreService => ({
  hashKey: Effect.succeed(hashKey),
  insert: (key, now) =>
    db.update((t) =>
      insertRow(t, "apiKeys", key.id, { ...key, scopes: [...key.scopes], createdAt: now, revokedAt: null })
    ),
  findByHash: (keyHash) =>
    Effect.map(
      db.get,
      (t) => Array.from(HashMap.values(t.apiKeys)).find((r) => r.value.keyHash === keyHash)?.value
    ),
  upgradeHash: (keyId, from, to) =>
    db.update((t) =>
      Option.match(HashMap.get(t.apiKeys, keyId), {
        onNone: () => t,
        onSome: (r) =>
          r.value.keyHash === from
            ? { ...t, apiKeys: HashMap.set(t.apiKeys, keyId, { ...r, value: { ...r.value, keyHash: to } }) }
            : t
      })
    ),
  list: (merchantId) =>
    Effect.map(db.get, (t) =>
      // Oldest first, as `newestFirst` orders the other way.
      newestFirst(
        Array.from(HashMap.values(t.apiKeys)).filter((r) => r.value.merchantId === merchantId)
      ).reverse()
    ),
  revoke: (merchantId, keyId, now) =>
    db.modify((t) => {
      const r = Option.getOrUndefined(HashMap.get(t.apiKeys, keyId))
      if (r === undefined || r.value.merchantId !== merchantId || r.value.revokedAt !== null)
        return [false, t]
      return [
        true,
        { ...t, apiKeys: HashMap.set(t.apiKeys, keyId, { ...r, value: { ...r.value, revokedAt: now } }) }
      ]
    })
})
