/**
 * Merchants, their outlets and API keys, and customers: the rows, their mapping to the model, and the
 * ports `Store.MerchantsStore`, `Store.MerchantRegistryStore`, `Store.CustomersStore` and `Store.ApiKeysStore`. The
 * ops side writes customers through `Directory`.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type * as SqlError from "@effect/sql/SqlError"
import { type ApiKey, Crypto, Ids, Merchant, Store } from "@laari/core"
import { type DateTime, Effect, Layer } from "effect"
import * as Ledger from "./Ledger.js"
import { all, Column, type Field, inTransaction, int, one, repository, rows, toDate } from "./Repository.js"
import * as RowCache from "./RowCache.js"
import * as ServerSecrets from "./ServerSecrets.js"

// ---------------------------------------------------------------------------------------------------
// merchants
// ---------------------------------------------------------------------------------------------------

/** The gates, a column each. */
const features: Field<Store.Merchant["features"]> = {
  columns: ["mandates_live", "subscriptions_live"],
  read: (row) => ({
    mandatesLive: row.mandates_live as boolean,
    subscriptionsLive: row.subscriptions_live as boolean
  }),
  write: (f, row) => {
    row.mandates_live = f.mandatesLive
    row.subscriptions_live = f.subscriptionsLive
  }
}

/** Merchants; `created_at` is the row's alone. */
const merchants = rows<Store.Merchant>({
  id: Column.as("id"),
  name: Column.as("name"),
  city: Column.as("city"),
  mcc: Column.as("mcc"),
  feeBps: Column.as("fee_bps"),
  features,
  sandboxPayer: Column.as("sandbox_payer_id")
})

// ---------------------------------------------------------------------------------------------------
// outlets
// ---------------------------------------------------------------------------------------------------

export const outlets = rows<Store.Outlet>({
  id: Column.as("id"),
  merchantId: Column.as("merchant_id"),
  name: Column.as("name")
})

// ---------------------------------------------------------------------------------------------------
// api_keys
// ---------------------------------------------------------------------------------------------------

const keys = rows<ApiKey.StoredKey>({
  id: Column.as("id"),
  merchantId: Column.as("merchant_id"),
  environment: Column.as("environment"),
  kind: Column.as("kind"),
  scopes: Column.as("scopes"),
  keyHash: Column.as("key_hash"),
  keyPrefix: Column.as("key_prefix"),
  createdAt: Column.date("created_at"),
  revokedAt: Column.dateOrNull("revoked_at")
})

// ---------------------------------------------------------------------------------------------------
// customers
// ---------------------------------------------------------------------------------------------------

/** Customers; `created_at` is the row's alone. */
const customers = rows<Store.Customer>({
  id: Column.as("id"),
  environment: Column.as("environment"),
  phone: Column.as("phone"),
  name: Column.as("name")
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
            sql`SELECT * FROM merchants WHERE id = ${id}`.pipe(Effect.map(one(merchants.fromRow)))
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
  const service: Store.ApiKeysStoreService = repository({
    hashKey: Effect.suspend(() => (hashSecret !== undefined ? Effect.succeed(hashSecret) : loadHashSecret)),
    insert: (key: ApiKey.NewKey, now: DateTime.Utc) =>
      sql`INSERT INTO api_keys ${sql.insert(keys.toRow({ ...key, createdAt: now, revokedAt: null }))}`.pipe(
        Effect.asVoid
      ),
    findByHash: (keyHash: string) =>
      cache.through(
        RowCache.cacheKey.apiKey(keyHash),
        sql`SELECT * FROM api_keys WHERE key_hash = ${keyHash}`.pipe(Effect.map(one(keys.fromRow)))
      ),
    upgradeHash: (keyId: string, from: string, to: string) =>
      Effect.zipRight(
        sql`UPDATE api_keys SET key_hash = ${to} WHERE id = ${keyId} AND key_hash = ${from}`,
        cache.invalidate(RowCache.cacheKey.apiKey(from))
      ),
    list: (merchantId: Ids.MerchantId) =>
      Ids.isUuid(merchantId)
        ? sql`SELECT * FROM api_keys WHERE merchant_id = ${merchantId} ORDER BY created_at, id`.pipe(
            Effect.map(all(keys.fromRow))
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
        ? sql`SELECT * FROM customers WHERE id = ${id}`.pipe(Effect.map(one(customers.fromRow)))
        : Effect.succeed(undefined),
    findByPhone: (environment: Ids.Environment, phone: string) =>
      sql`SELECT * FROM customers WHERE environment = ${environment} AND phone = ${phone}`.pipe(
        Effect.map(one(customers.fromRow))
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
      yield* sql`INSERT INTO customers ${sql.insert({ ...customers.toRow(customer), created_at: toDate(now) })}
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

/** The SQL adapter of core's `Store.MerchantRegistryStore`; a change of gates drops the cached merchant. */
export const makeMerchantsStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const cache = yield* RowCache.RowCache
  const crypto = yield* Crypto.Crypto
  const transaction = inTransaction(sql)

  const insertOutlets = (merchantId: Ids.MerchantId, names: ReadonlyArray<string>, now: DateTime.Utc) =>
    names.length === 0
      ? Effect.succeed([])
      : sql`INSERT INTO outlets ${sql.insert(
          names.map((name) => ({ merchant_id: merchantId, name, created_at: toDate(now) }))
        )} RETURNING id, merchant_id, name`.pipe(Effect.map(all(outlets.fromRow)))

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
        yield* sql`INSERT INTO merchants ${sql.insert({ ...merchants.toRow(merchant), created_at: toDate(now) })}`
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
      const found = (yield* sql`SELECT * FROM merchants ORDER BY created_at, id LIMIT ${limit}`).map(
        merchants.fromRow
      )
      if (found.length === 0) return []
      const theirs = (yield* sql`
        SELECT merchant_id, id, name FROM outlets WHERE ${sql.in(
          "merchant_id",
          found.map((m) => m.id)
        )} ORDER BY id`).map(outlets.fromRow)
      return found.map((merchant) => ({
        merchant,
        outlets: theirs.filter((o) => o.merchantId === merchant.id)
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
      ? sql`SELECT id, merchant_id, name FROM outlets WHERE merchant_id = ${merchantId} ORDER BY id`.pipe(
          Effect.map(all(outlets.fromRow))
        )
      : Effect.succeed([])

  const setFeatures = (merchantId: Ids.MerchantId, patch: Merchant.FeaturesPatch) => {
    if (!Ids.isUuid(merchantId)) return Effect.succeed(undefined)
    const changes: Record<string, unknown> = {}
    if (patch.mandatesLive !== undefined) changes.mandates_live = patch.mandatesLive
    if (patch.subscriptionsLive !== undefined) changes.subscriptions_live = patch.subscriptionsLive
    if (Object.keys(changes).length === 0)
      return sql`SELECT * FROM merchants WHERE id = ${merchantId}`.pipe(Effect.map(one(merchants.fromRow)))
    return transaction(
      Effect.zipLeft(
        sql`UPDATE merchants SET ${sql.update(changes)} WHERE id = ${merchantId} RETURNING *`.pipe(
          Effect.map(one(merchants.fromRow))
        ),
        cache.invalidate(RowCache.cacheKey.merchant(merchantId))
      )
    )
  }

  const service: Store.MerchantRegistryStoreService = repository({
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
  Store.MerchantRegistryStore,
  never,
  SqlClient.SqlClient | RowCache.RowCache | Crypto.Crypto
> = Layer.effect(Store.MerchantRegistryStore, makeMerchantsStore)

export const merchantsLayer: Layer.Layer<
  Store.MerchantsStore,
  never,
  SqlClient.SqlClient | RowCache.RowCache
> = Layer.effect(Store.MerchantsStore, makeMerchants)

export const customersLayer: Layer.Layer<Store.CustomersStore, never, SqlClient.SqlClient> = Layer.effect(
  Store.CustomersStore,
  makeCustomers
)

export const apiKeysLayer: Layer.Layer<Store.ApiKeysStore, never, SqlClient.SqlClient | RowCache.RowCache> =
  Layer.effect(Store.ApiKeysStore, makeApiKeys)
