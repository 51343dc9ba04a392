/**
 * The server's directory of merchants, outlets, API keys and customers, for the ops API and key
 * authentication; also the sandbox side of the ledger (funding wallets, setting a payer's state) and
 * the read-outs operators and tests need.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import {
  ApiKeys,
  Calendar,
  Crypto,
  type Errors,
  type Events,
  Fees,
  Ids,
  Phone,
  Store,
  type Wallet
} from "@laari/core"
import { Context, DateTime, Effect, Layer, Schema } from "effect"
import { makeEvents, parsed } from "./Events.js"
import * as Ledger from "./Ledger.js"
import {
  customerToRow,
  makeMerchants,
  merchantFromRow,
  type MerchantRow,
  merchantToRow,
  type NewKey,
  type Outlet,
  outletFromRow,
  type OutletRow,
  type StoredKey
} from "./Merchants.js"
import { inTransaction, int, one, repository, toDate } from "./Repository.js"
import * as RowCache from "./RowCache.js"

export type { NewKey, Outlet, StoredKey }

/** Every merchant's sandbox payer starts with this much (laari). */
export const SandboxPayerBalance = 10_000_000

export const DefaultCity = "Male"
/** ISO 18245 5999: miscellaneous retail. */
export const DefaultMcc = "5999"

/** Another customer in the environment already has that phone number. */
export class PhoneTaken extends Schema.TaggedError<PhoneTaken>()("PhoneTaken", {
  message: Schema.optionalWith(Schema.String, {
    default: () => "A customer with this phone number already exists"
  })
}) {}

export interface MerchantInput {
  readonly name: string
  readonly city?: string | undefined
  readonly mcc?: string | undefined
  /** Default `Fees.DefaultFeeBps`. */
  readonly feeBps?: number | undefined
  readonly features?: { readonly mandatesLive?: boolean; readonly subscriptionsLive?: boolean } | undefined
  readonly outlets?: ReadonlyArray<string> | undefined
}

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
  /** A merchant, its outlets, its wallets, and its sandbox payer (a test customer holding 10,000,000 laari). */
  readonly createMerchant: (
    input: MerchantInput
  ) => Effect.Effect<
    { readonly merchant: Store.Merchant; readonly outlets: ReadonlyArray<Outlet> },
    Errors.ServiceUnavailable
  >
  readonly getMerchant: (
    merchantId: string
  ) => Effect.Effect<Store.Merchant | undefined, Errors.ServiceUnavailable>
  /** Merchants with their outlets, oldest first, at most `limit`. */
  readonly listMerchants: (
    limit: number
  ) => Effect.Effect<
    ReadonlyArray<{ readonly merchant: Store.Merchant; readonly outlets: ReadonlyArray<Outlet> }>,
    Errors.ServiceUnavailable
  >
  /** `undefined` when there is no such merchant. */
  readonly addOutlet: (
    merchantId: string,
    name: string
  ) => Effect.Effect<Outlet | undefined, Errors.ServiceUnavailable>
  readonly listOutlets: (
    merchantId: string
  ) => Effect.Effect<ReadonlyArray<Outlet>, Errors.ServiceUnavailable>
  readonly setFeatures: (
    merchantId: string,
    features: {
      readonly mandatesLive?: boolean | undefined
      readonly subscriptionsLive?: boolean | undefined
    }
  ) => Effect.Effect<Store.Merchant | undefined, Errors.ServiceUnavailable>
  /** Creates a key (core's `ApiKeys.issue`); the full key is returned once and only its hash is kept. */
  readonly issueKey: (
    request: ApiKeys.IssueRequest
  ) => Effect.Effect<ApiKeys.IssuedKey, Errors.ServiceUnavailable>
  readonly insertKey: (key: NewKey) => Effect.Effect<void, Errors.ServiceUnavailable>
  /** A key's stored hash: keyed by a server secret kept in `server_secrets`, made on first use. */
  readonly keyDigest: (key: string) => Effect.Effect<string, Errors.ServiceUnavailable>
  /** The key with that hash, revoked or not (the caller refuses revoked keys). */
  readonly findKeyByHash: (keyHash: string) => Effect.Effect<StoredKey | undefined, Errors.ServiceUnavailable>
  /** The merchant's keys, oldest first. */
  readonly listKeys: (
    merchantId: string
  ) => Effect.Effect<ReadonlyArray<StoredKey>, Errors.ServiceUnavailable>
  /** `false` when the merchant has no such key or it was already revoked. */
  readonly revokeKey: (merchantId: string, keyId: string) => Effect.Effect<boolean, Errors.ServiceUnavailable>
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
  /** How many merchants exist (zero on a first start, to seed a demo merchant). */
  readonly merchantCount: Effect.Effect<number, Errors.ServiceUnavailable>
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
  const keys = yield* Store.ApiKeysStore
  const apiKeys = yield* ApiKeys.ApiKeys

  const merchants = yield* makeMerchants
  const cache = yield* RowCache.RowCache
  const merchant = (id: string) => merchants.get(id as Ids.MerchantId)

  const insertCustomer = (customer: Store.Customer, now: DateTime.Utc) =>
    sql`INSERT INTO customers ${sql.insert({ ...customerToRow(customer, toDate(now)) })}
        ON CONFLICT ON CONSTRAINT customers_phone DO NOTHING RETURNING id`.pipe(
      Effect.map((rows) => rows.length === 1)
    )

  /** A customer with a wallet holding `balance`, funded in the same transaction. */
  const openCustomer = (input: CustomerInput, now: DateTime.Utc) =>
    Effect.gen(function* () {
      const customer: Store.Customer = {
        id: (yield* crypto.uuid) as Ids.CustomerId,
        environment: input.environment,
        // Kept as lookups compare it: E.164 for a Maldivian number however typed.
        phone: Phone.lookupKey(input.phone),
        name: input.name ?? null
      }
      if (!(yield* insertCustomer(customer, now))) return yield* new PhoneTaken()
      yield* ledger.openWallet(
        customer.id,
        customer.environment,
        { limit: null, timeZone: input.timeZone ?? Calendar.MaldivesZone },
        now
      )
      yield* ledger.fund(
        customer.id,
        customer.environment,
        input.balance ?? 0,
        `funding:${yield* crypto.uuid}`,
        "Opening balance",
        now
      )
      return customer
    })

  const insertOutlets = (merchantId: string, names: ReadonlyArray<string>, now: DateTime.Utc) =>
    names.length === 0
      ? Effect.succeed([])
      : sql<OutletRow>`INSERT INTO outlets ${sql.insert(
          names.map((name) => ({ merchant_id: merchantId, name, created_at: toDate(now) }))
        )} RETURNING id, name`.pipe(Effect.map((rows) => rows.map(outletFromRow)))

  const createMerchant = (input: MerchantInput) =>
    transaction(
      Effect.gen(function* () {
        const now = yield* DateTime.now
        const id = (yield* crypto.uuid) as Ids.MerchantId
        // The sandbox payer's phone is not a real number: it only has to be unique and recognizable.
        const payer = yield* openCustomer(
          {
            environment: "test",
            phone: `+960 sandbox-${id}`,
            name: `${input.name} sandbox payer`,
            balance: SandboxPayerBalance
          },
          now
        ).pipe(
          Effect.catchTag("PhoneTaken", () => Effect.dieMessage(`sandbox payer phone of ${id} is taken`))
        )
        const created: Store.Merchant = {
          id,
          name: input.name,
          city: input.city ?? DefaultCity,
          mcc: input.mcc ?? DefaultMcc,
          feeBps: input.feeBps ?? Fees.DefaultFeeBps,
          features: {
            mandatesLive: input.features?.mandatesLive ?? false,
            subscriptionsLive: input.features?.subscriptionsLive ?? false
          },
          sandboxPayer: payer.id
        }
        yield* sql`INSERT INTO merchants ${sql.insert({ ...merchantToRow(created, toDate(now)) })}`
        // The merchant's wallets, so they show up with a zero balance before the first payment.
        yield* sql`INSERT INTO ledger_accounts ${sql.insert(
          (["test", "live"] as const).map((environment) => ({
            id: Ledger.accountId.merchant(id, environment),
            kind: "merchant",
            environment,
            merchant_id: id,
            balance: 0,
            created_at: toDate(now)
          }))
        )}`
        const outlets = yield* insertOutlets(id, input.outlets ?? [], now)
        return { merchant: created, outlets }
      })
    )

  const addOutlet = (merchantId: string, name: string) =>
    Effect.gen(function* () {
      if ((yield* merchant(merchantId)) === undefined) return undefined
      const [outlet] = yield* insertOutlets(merchantId, [name], yield* DateTime.now)
      return outlet
    })

  const listOutlets = (merchantId: string) =>
    Ids.isUuid(merchantId)
      ? sql<OutletRow>`SELECT id, name FROM outlets WHERE merchant_id = ${merchantId} ORDER BY id`.pipe(
          Effect.map((rows) => rows.map(outletFromRow))
        )
      : Effect.succeed([])

  const listMerchants = (limit: number) =>
    Effect.gen(function* () {
      const rows = yield* sql<MerchantRow>`SELECT * FROM merchants ORDER BY created_at, id LIMIT ${limit}`
      if (rows.length === 0) return []
      const outlets = yield* sql<OutletRow & { readonly merchant_id: string }>`
        SELECT merchant_id, id, name FROM outlets WHERE ${sql.in(
          "merchant_id",
          rows.map((r) => r.id)
        )} ORDER BY id`
      return rows.map((row) => ({
        merchant: merchantFromRow(row),
        outlets: outlets.filter((o) => o.merchant_id === row.id).map(outletFromRow)
      }))
    })

  const setFeatures = (
    merchantId: string,
    features: {
      readonly mandatesLive?: boolean | undefined
      readonly subscriptionsLive?: boolean | undefined
    }
  ) => {
    if (!Ids.isUuid(merchantId)) return Effect.succeed(undefined)
    const changes: Record<string, unknown> = {}
    if (features.mandatesLive !== undefined) changes.mandates_live = features.mandatesLive
    if (features.subscriptionsLive !== undefined) changes.subscriptions_live = features.subscriptionsLive
    if (Object.keys(changes).length === 0) return merchant(merchantId)
    return transaction(
      Effect.zipLeft(
        sql<MerchantRow>`UPDATE merchants SET ${sql.update(changes)} WHERE id = ${merchantId} RETURNING *`.pipe(
          Effect.map(one(merchantFromRow))
        ),
        cache.invalidate(RowCache.cacheKey.merchant(merchantId))
      )
    )
  }

  // Keys are core's (`ApiKeys` over `Store.ApiKeysStore`); these name them as the ops side and
  // authentication use them.
  const insertKey = (key: NewKey) => Effect.flatMap(DateTime.now, (now) => keys.insert(key, now))
  const findKeyByHash = keys.findByHash
  const listKeys = (merchantId: string) => keys.list(merchantId as Ids.MerchantId)
  const revokeKey = (merchantId: string, keyId: string) => apiKeys.revoke(merchantId as Ids.MerchantId, keyId)

  const createCustomer = (input: CustomerInput) =>
    transaction(Effect.flatMap(DateTime.now, (now) => openCustomer(input, now)))

  const payer = (customerId: string) => ledger.payer(customerId, { lock: false })

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

  const merchantCount = sql<{ readonly n: number | string }>`SELECT count(*) AS n FROM merchants`.pipe(
    Effect.map((rows) => int(rows[0]!.n))
  )

  const merchantBalance = (merchantId: string, environment: Ids.Environment) =>
    ledger.balance({ kind: "merchant", merchantId, environment })

  const feeBalance = (environment: Ids.Environment) => ledger.balance({ kind: "fee", environment })

  const service: DirectoryService = repository({
    createMerchant,
    getMerchant: merchant,
    listMerchants,
    addOutlet,
    listOutlets,
    setFeatures,
    issueKey: apiKeys.issue,
    insertKey,
    keyDigest: apiKeys.digest,
    findKeyByHash,
    listKeys,
    revokeKey,
    createCustomer,
    payer,
    setPayer,
    listEvents: (filter: Parameters<DirectoryService["listEvents"]>[0]) =>
      Effect.map(events.list(filter), (list) => list.map(parsed)),
    merchantCount,
    merchantBalance,
    feeBalance,
    ledgerTotal: ledger.total
  })
  return service
})

export const layer: Layer.Layer<
  Directory,
  never,
  SqlClient.SqlClient | Crypto.Crypto | RowCache.RowCache | Store.ApiKeysStore | ApiKeys.ApiKeys
> = Layer.effect(Directory, make)
