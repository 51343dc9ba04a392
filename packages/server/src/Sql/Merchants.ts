/**
 * Merchants, their outlets and API keys, and customers: the rows, their mapping to the model, and the
 * read ports `Store.Merchants` and `Store.Customers`. The ops side writes them through `Directory`.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { type Auth, Ids, Store } from "@laari/core"
import { type DateTime, Effect, Layer } from "effect"
import { fromDate, fromDateOrNull, one, repository } from "./Repository.js"
import * as RowCache from "./RowCache.js"

// ---------------------------------------------------------------------------------------------------
// merchants
// ---------------------------------------------------------------------------------------------------

export interface MerchantRow {
  readonly id: string
  readonly name: string
  readonly city: string
  readonly mcc: string
  readonly fee_bps: number
  readonly mandates_live: boolean
  readonly subscriptions_live: boolean
  readonly sandbox_payer_id: string
  readonly created_at: Date
}

export const merchantFromRow = (row: MerchantRow): Store.Merchant => ({
  id: row.id as Ids.MerchantId,
  name: row.name,
  city: row.city,
  mcc: row.mcc,
  feeBps: row.fee_bps,
  features: { mandatesLive: row.mandates_live, subscriptionsLive: row.subscriptions_live },
  sandboxPayer: row.sandbox_payer_id as Ids.CustomerId
})

export const merchantToRow = (m: Store.Merchant, createdAt: Date): MerchantRow => ({
  id: m.id,
  name: m.name,
  city: m.city,
  mcc: m.mcc,
  fee_bps: m.feeBps,
  mandates_live: m.features.mandatesLive,
  subscriptions_live: m.features.subscriptionsLive,
  sandbox_payer_id: m.sandboxPayer,
  created_at: createdAt
})

// ---------------------------------------------------------------------------------------------------
// outlets
// ---------------------------------------------------------------------------------------------------

export interface Outlet {
  readonly id: number
  readonly name: string
}

export interface OutletRow {
  readonly id: number
  readonly name: string
}

export const outletFromRow = (row: OutletRow): Outlet => ({ id: row.id, name: row.name })

// ---------------------------------------------------------------------------------------------------
// api_keys
// ---------------------------------------------------------------------------------------------------

/** A key as stored: only its hash, and a prefix to show it by. */
export interface NewKey {
  readonly id: string
  readonly merchantId: Ids.MerchantId
  readonly environment: Ids.Environment
  readonly kind: Auth.KeyKind
  readonly scopes: ReadonlyArray<Auth.Scope>
  readonly keyHash: string
  /** The first characters of the key (e.g. `sk_test_AbCd`), to show it by. */
  readonly keyPrefix: string
}

export interface StoredKey {
  readonly id: string
  readonly merchantId: Ids.MerchantId
  readonly environment: Ids.Environment
  readonly kind: Auth.KeyKind
  readonly scopes: ReadonlyArray<Auth.Scope>
  readonly keyHash: string
  readonly keyPrefix: string
  readonly createdAt: DateTime.Utc
  readonly revokedAt: DateTime.Utc | null
}

export interface KeyRow {
  readonly id: string
  readonly merchant_id: string
  readonly environment: string
  readonly kind: string
  readonly scopes: ReadonlyArray<string>
  readonly key_hash: string
  readonly key_prefix: string
  readonly created_at: Date
  readonly revoked_at: Date | null
}

export const keyFromRow = (row: KeyRow): StoredKey => ({
  id: row.id,
  merchantId: row.merchant_id as Ids.MerchantId,
  environment: row.environment as Ids.Environment,
  kind: row.kind as Auth.KeyKind,
  scopes: row.scopes as ReadonlyArray<Auth.Scope>,
  keyHash: row.key_hash,
  keyPrefix: row.key_prefix,
  createdAt: fromDate(row.created_at),
  revokedAt: fromDateOrNull(row.revoked_at)
})

export const keyToRow = (key: NewKey, createdAt: Date): KeyRow => ({
  id: key.id,
  merchant_id: key.merchantId,
  environment: key.environment,
  kind: key.kind,
  scopes: key.scopes,
  key_hash: key.keyHash,
  key_prefix: key.keyPrefix,
  created_at: createdAt,
  revoked_at: null
})

// ---------------------------------------------------------------------------------------------------
// customers
// ---------------------------------------------------------------------------------------------------

export interface CustomerRow {
  readonly id: string
  readonly environment: string
  readonly phone: string
  readonly name: string | null
  readonly created_at: Date
}

export const customerFromRow = (row: CustomerRow): Store.Customer => ({
  id: row.id as Ids.CustomerId,
  environment: row.environment as Ids.Environment,
  phone: row.phone,
  name: row.name
})

export const customerToRow = (c: Store.Customer, createdAt: Date): CustomerRow => ({
  id: c.id,
  environment: c.environment,
  phone: c.phone,
  name: c.name,
  created_at: createdAt
})

// ---------------------------------------------------------------------------------------------------
// The read ports
// ---------------------------------------------------------------------------------------------------

/** Merchants by id, through the process's `RowCache` (a merchant changes through `Directory.setFeatures`). */
export const makeMerchants = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const cache = yield* RowCache.RowCache
  return repository({
    get: (id: Ids.MerchantId) =>
      Ids.isUuid(id)
        ? cache.through(
            RowCache.cacheKey.merchant(id),
            sql<MerchantRow>`SELECT * FROM merchants WHERE id = ${id}`.pipe(Effect.map(one(merchantFromRow)))
          )
        : Effect.succeed(undefined)
  })
})

export const makeCustomers = Effect.map(SqlClient.SqlClient, (sql) =>
  repository({
    get: (id: Ids.CustomerId) =>
      Ids.isUuid(id)
        ? sql<CustomerRow>`SELECT * FROM customers WHERE id = ${id}`.pipe(Effect.map(one(customerFromRow)))
        : Effect.succeed(undefined),
    findByPhone: (environment: Ids.Environment, phone: string) =>
      sql<CustomerRow>`SELECT * FROM customers WHERE environment = ${environment} AND phone = ${phone}`.pipe(
        Effect.map(one(customerFromRow))
      )
  })
)

export const merchantsLayer: Layer.Layer<Store.Merchants, never, SqlClient.SqlClient | RowCache.RowCache> =
  Layer.effect(Store.Merchants, makeMerchants)

export const customersLayer: Layer.Layer<Store.Customers, never, SqlClient.SqlClient> = Layer.effect(
  Store.Customers,
  makeCustomers
)
