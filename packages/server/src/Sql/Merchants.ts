/**
 * Merchants, their outlets and API keys, and customers: the rows, their mapping to the model, and the
 * ports `Store.Merchants`, `Merchant.MerchantsStore`, `Store.Customers` and `Store.ApiKeysStore`. The
 * ops side writes customers through `Directory`.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type * as SqlError from "@effect/sql/SqlError"
import { type ApiKey, type Auth, Crypto, Ids, Merchant, Store } from "@laari/core"
import { type DateTime, Effect, Layer } from "effect"
import * as Ledger from "./Ledger.js"
import { fromDate, fromDateOrNull, inTransaction, int, one, repository, toDate } from "./Repository.js"
import * as RowCache from "./RowCache.js"
import * as ServerSecrets from "./ServerSecrets.js"

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

export interface OutletRow {
  readonly id: number
  readonly merchant_id: string
  readonly name: string
}

export const outletFromRow = (row: OutletRow): Store.Outlet => ({
  id: row.id,
  merchantId: row.merchant_id as Ids.MerchantId,
  name: row.name
})

// ---------------------------------------------------------------------------------------------------
// api_keys
// ---------------------------------------------------------------------------------------------------

export type NewKey = ApiKey.NewKey
export type StoredKey = ApiKey.StoredKey

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

/** Merchants by id, through the process's `RowCache` (a merchant changes through `setFeatures` below). */
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

/** The name of the API-key hash secret in `server_secrets`. */
const KeyHashSecretName = "api_key_hashes"

/**
 * API keys by hash through the process's `RowCache` (a key changes only by being revoked or rehashed,
 * and both invalidate it); the hash secret is read once per process, as it never changes.
 */
export const makeApiKeys = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const cache = yield* RowCache.RowCache
  const transaction = inTransaction(sql)
  let hashSecret: Uint8Array | undefined
  const loadHashSecret: Effect.Effect<Uint8Array, SqlError.SqlError> = Effect.tap(
    ServerSecrets.ensure(sql, KeyHashSecretName),
    (secret) => {
      hashSecret = secret
    }
  )
  const service: Store.ApiKeysRepo = repository({
    hashKey: Effect.suspend(() => (hashSecret !== undefined ? Effect.succeed(hashSecret) : loadHashSecret)),
    insert: (key: ApiKey.NewKey, now: DateTime.Utc) =>
      sql`INSERT INTO api_keys ${sql.insert({ ...keyToRow(key, toDate(now)) })}`.pipe(Effect.asVoid),
    findByHash: (keyHash: string) =>
      cache.through(
        RowCache.cacheKey.apiKey(keyHash),
        sql<KeyRow>`SELECT * FROM api_keys WHERE key_hash = ${keyHash}`.pipe(Effect.map(one(keyFromRow)))
      ),
    upgradeHash: (keyId: string, from: string, to: string) =>
      Effect.zipRight(
        sql`UPDATE api_keys SET key_hash = ${to} WHERE id = ${keyId} AND key_hash = ${from}`,
        cache.invalidate(RowCache.cacheKey.apiKey(from))
      ),
    list: (merchantId: Ids.MerchantId) =>
      Ids.isUuid(merchantId)
        ? sql<KeyRow>`SELECT * FROM api_keys WHERE merchant_id = ${merchantId} ORDER BY created_at, id`.pipe(
            Effect.map((rows) => rows.map(keyFromRow))
          )
        : Effect.succeed([]),
    revoke: (merchantId: Ids.MerchantId, keyId: string, now: DateTime.Utc) =>
      Ids.isUuid(merchantId)
        ? transaction(
            Effect.gen(function* () {
              const rows = yield* sql<{ readonly key_hash: string }>`UPDATE api_keys
                SET revoked_at = ${toDate(now)}
                WHERE merchant_id = ${merchantId} AND id = ${keyId} AND revoked_at IS NULL
                RETURNING key_hash`
              if (rows[0] === undefined) return false
              yield* cache.invalidate(RowCache.cacheKey.apiKey(rows[0].key_hash))
              return true
            })
          )
        : Effect.succeed(false)
  })
  return service
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

/**
 * Opens `customer` with a wallet holding `balance`, funded by a transfer from the environment's funding
 * account, in the caller's transaction; `false` when another customer of the environment has the phone.
 */
export const openCustomer = (
  sql: SqlClient.SqlClient,
  crypto: Crypto.CryptoService,
  customer: Store.Customer,
  wallet: { readonly balance: number; readonly timeZone: string },
  now: DateTime.Utc
) =>
  Effect.gen(function* () {
    const inserted =
      yield* sql`INSERT INTO customers ${sql.insert({ ...customerToRow(customer, toDate(now)) })}
      ON CONFLICT ON CONSTRAINT customers_phone DO NOTHING RETURNING id`
    if (inserted.length === 0) return false
    const ledger = Ledger.make(sql)
    yield* ledger.openWallet(
      customer.id,
      customer.environment,
      { limit: null, timeZone: wallet.timeZone },
      now
    )
    yield* ledger.fund(
      customer.id,
      customer.environment,
      wallet.balance,
      `funding:${yield* crypto.uuid}`,
      "Opening balance",
      now
    )
    return true
  })

/** The SQL adapter of core's `Merchant.MerchantsStore`; a change of gates drops the cached merchant. */
export const makeMerchantsStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const cache = yield* RowCache.RowCache
  const crypto = yield* Crypto.Crypto
  const transaction = inTransaction(sql)

  const insertOutlets = (merchantId: Ids.MerchantId, names: ReadonlyArray<string>, now: DateTime.Utc) =>
    names.length === 0
      ? Effect.succeed([])
      : sql<OutletRow>`INSERT INTO outlets ${sql.insert(
          names.map((name) => ({ merchant_id: merchantId, name, created_at: toDate(now) }))
        )} RETURNING id, merchant_id, name`.pipe(Effect.map((rows) => rows.map(outletFromRow)))

  const create = ({ merchant, sandboxPayer, outlets }: Merchant.NewMerchant, now: DateTime.Utc) =>
    transaction(
      Effect.gen(function* () {
        const opened = yield* openCustomer(
          sql,
          crypto,
          sandboxPayer,
          { balance: Merchant.SandboxPayerBalance, timeZone: Merchant.SandboxPayerZone },
          now
        )
        if (!opened) return yield* Effect.dieMessage(`sandbox payer phone of ${merchant.id} is taken`)
        yield* sql`INSERT INTO merchants ${sql.insert({ ...merchantToRow(merchant, toDate(now)) })}`
        // The merchant's wallets, so they show up with a zero balance before the first payment.
        yield* sql`INSERT INTO ledger_accounts ${sql.insert(
          (["test", "live"] as const).map((environment) => ({
            id: Ledger.accountId.merchant(merchant.id, environment),
            kind: "merchant",
            environment,
            merchant_id: merchant.id,
            balance: 0,
            created_at: toDate(now)
          }))
        )}`
        return yield* insertOutlets(merchant.id, outlets, now)
      })
    )

  const list = (limit: number) =>
    Effect.gen(function* () {
      const rows = yield* sql<MerchantRow>`SELECT * FROM merchants ORDER BY created_at, id LIMIT ${limit}`
      if (rows.length === 0) return []
      const outlets = yield* sql<OutletRow>`
        SELECT merchant_id, id, name FROM outlets WHERE ${sql.in(
          "merchant_id",
          rows.map((r) => r.id)
        )} ORDER BY id`
      return rows.map((row) => ({
        merchant: merchantFromRow(row),
        outlets: outlets.filter((o) => o.merchant_id === row.id).map(outletFromRow)
      }))
    })

  const exists = (merchantId: Ids.MerchantId) =>
    sql`SELECT 1 FROM merchants WHERE id = ${merchantId}`.pipe(Effect.map((rows) => rows.length === 1))

  const addOutlet = (merchantId: Ids.MerchantId, name: string, now: DateTime.Utc) =>
    Effect.gen(function* () {
      if (!Ids.isUuid(merchantId) || !(yield* exists(merchantId))) return undefined
      const [outlet] = yield* insertOutlets(merchantId, [name], now)
      return outlet
    })

  const listOutlets = (merchantId: Ids.MerchantId) =>
    Ids.isUuid(merchantId)
      ? sql<OutletRow>`SELECT id, merchant_id, name FROM outlets WHERE merchant_id = ${merchantId} ORDER BY id`.pipe(
          Effect.map((rows) => rows.map(outletFromRow))
        )
      : Effect.succeed([])

  const setFeatures = (merchantId: Ids.MerchantId, patch: Merchant.FeaturesPatch) => {
    if (!Ids.isUuid(merchantId)) return Effect.succeed(undefined)
    const changes: Record<string, unknown> = {}
    if (patch.mandatesLive !== undefined) changes.mandates_live = patch.mandatesLive
    if (patch.subscriptionsLive !== undefined) changes.subscriptions_live = patch.subscriptionsLive
    if (Object.keys(changes).length === 0)
      return sql<MerchantRow>`SELECT * FROM merchants WHERE id = ${merchantId}`.pipe(
        Effect.map(one(merchantFromRow))
      )
    return transaction(
      Effect.zipLeft(
        sql<MerchantRow>`UPDATE merchants SET ${sql.update(changes)} WHERE id = ${merchantId} RETURNING *`.pipe(
          Effect.map(one(merchantFromRow))
        ),
        cache.invalidate(RowCache.cacheKey.merchant(merchantId))
      )
    )
  }

  const service: Merchant.MerchantsStoreRepo = repository({
    create,
    list,
    count: sql<{ readonly n: number | string }>`SELECT count(*) AS n FROM merchants`.pipe(
      Effect.map((rows) => int(rows[0]!.n))
    ),
    addOutlet,
    listOutlets,
    setFeatures
  })
  return service
})

export const merchantsStoreLayer: Layer.Layer<
  Merchant.MerchantsStore,
  never,
  SqlClient.SqlClient | RowCache.RowCache | Crypto.Crypto
> = Layer.effect(Merchant.MerchantsStore, makeMerchantsStore)

export const merchantsLayer: Layer.Layer<Store.Merchants, never, SqlClient.SqlClient | RowCache.RowCache> =
  Layer.effect(Store.Merchants, makeMerchants)

export const customersLayer: Layer.Layer<Store.Customers, never, SqlClient.SqlClient> = Layer.effect(
  Store.Customers,
  makeCustomers
)

export const apiKeysLayer: Layer.Layer<Store.ApiKeysStore, never, SqlClient.SqlClient | RowCache.RowCache> =
  Layer.effect(Store.ApiKeysStore, makeApiKeys)
