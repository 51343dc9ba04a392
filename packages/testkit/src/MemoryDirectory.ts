/**
 * Memory adapters of the directory's repositories: merchants, their customers and outlets (the seed writes
 * them; the store only reads).
 */
import type { Store } from "@laari/core"
import { Effect, HashMap, Option } from "effect"
import type { MemoryDbService } from "./MemoryDb.js"

export const merchants = (db: MemoryDbService): Store.MerchantsRepo => ({
  get: (id) => Effect.map(db.get, (t) => Option.getOrUndefined(HashMap.get(t.merchants, id)))
})

export const customers = (db: MemoryDbService): Store.CustomersRepo => ({
  get: (id) => Effect.map(db.get, (t) => Option.getOrUndefined(HashMap.get(t.customers, id))),
  findByPhone: (environment, phone) =>
    Effect.map(db.get, (t) =>
      Array.from(HashMap.values(t.customers)).find((c) => c.environment === environment && c.phone === phone)
    )
})

export const outlets = (db: MemoryDbService): Store.OutletsRepo => ({
  find: (merchantId, outletId) =>
    Effect.map(db.get, (t) => {
      const outlet = Option.getOrUndefined(HashMap.get(t.outlets, outletId))
      return outlet?.merchantId === merchantId ? outlet : undefined
    })
})
