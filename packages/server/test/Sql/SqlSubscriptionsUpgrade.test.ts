/**
 * Migrating a database deployed before subscriptions, on PGlite and (with DATABASE_URL) PostgreSQL: the
 * subscriptions migration applies over existing merchants, QR codes and mandates, leaves them untouched,
 * and the new adapters work beside them.
 */
import * as Migrator from "@effect/sql/Migrator"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import { describe, expect, it } from "@effect/vitest"
import { Crypto, Ids, Store } from "@laari/core"
import { Effect, Layer, Redacted } from "effect"
import { mandatesLayer } from "../../src/Sql/Mandates.js"
import * as Migrations from "../../src/Sql/Migrations.js"
import * as PgliteClient from "../../src/Sql/Pglite/PgliteClient.js"
import { transactorLayer } from "../../src/Sql/Store.js"
import { checkoutSessionsLayer } from "../../src/Sql/CheckoutSessions.js"
import { invoicesLayer } from "../../src/Sql/Invoices.js"
import { subscriptionsLayer } from "../../src/Sql/Subscriptions.js"
import { uuid, at, T0, subscribe, tables } from "../support/SubscriptionRows.js"
import * as TestDatabase from "../support/TestDatabase.js"

// ---------------------------------------------------------------------------------------------------
// Migrating a database deployed before subscriptions
// ---------------------------------------------------------------------------------------------------

/** Migrates only `0001_init` and `0002_qr_codes`, as a database deployed before subscriptions would be. */
const migrateBeforeSubscriptions = Migrator.make({})({
  loader: Migrator.fromRecord({
    "0001_init": Migrations.migrations["0001_init"]!,
    "0002_qr_codes": Migrations.migrations["0002_qr_codes"]!
  }),
  table: "effect_sql_migrations"
})

/** A database at 0002 with a merchant, its payer, an outlet, a QR code and a mandate, migrated to the latest. */
const upgrade = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  expect(yield* migrateBeforeSubscriptions).toEqual([
    [1, "init"],
    [2, "qr_codes"]
  ])
  expect(yield* tables).not.toContain("subscriptions")
  const merchantId = (yield* uuid) as Ids.MerchantId
  const payerId = (yield* uuid) as Ids.CustomerId
  yield* sql`INSERT INTO customers ${sql.insert({
    id: payerId,
    environment: "test",
    phone: `+960 ${payerId}`,
    created_at: new Date()
  })}`
  yield* sql`INSERT INTO merchants ${sql.insert({
    id: merchantId,
    name: "Before subscriptions",
    city: "Male",
    mcc: "5999",
    fee_bps: 100,
    mandates_live: false,
    subscriptions_live: false,
    sandbox_payer_id: payerId,
    created_at: new Date()
  })}`
  const [outlet] = yield* sql<{ id: number }>`INSERT INTO outlets ${sql.insert({
    merchant_id: merchantId,
    name: "Majeedhee Magu",
    created_at: new Date()
  })} RETURNING id`
  yield* sql`INSERT INTO qr_codes ${sql.insert({
    id: yield* uuid,
    merchant_id: merchantId,
    environment: "test",
    outlet_id: outlet!.id,
    type: "STATIC",
    status: "ACTIVE",
    title: "Counter",
    payload: "payload",
    qrid: `LQ${(yield* uuid).replaceAll("-", "").slice(0, 22)}`,
    reference: "qr-before",
    created_at: new Date()
  })}`
  const mandates = yield* Store.MandatesStore
  const tenant: Ids.Tenant = { merchantId, environment: "test" }
  const mandateId = (yield* uuid) as Ids.MandateId
  yield* mandates.insert({
    id: mandateId,
    merchantId,
    environment: "test",
    reference: "mandate-before",
    status: "INITIATED",
    title: "Before subscriptions",
    description: null,
    perChargeCap: 10_000,
    periodCap: null,
    period: null,
    periodKey: null,
    periodCharged: 0,
    returnUrl: null,
    customerId: null,
    setupExpiresAt: at("2030-01-02T00:00:00Z"),
    expiresAt: at("2031-01-01T00:00:00Z"),
    approvedAt: null,
    revokedAt: null,
    revokedBy: null,
    declinedAt: null,
    expiredAt: null,
    createdAt: at("2030-01-01T00:00:00Z")
  })

  expect((yield* Migrations.run)[0]).toEqual([3, "subscriptions"])
  expect(yield* tables).toEqual(expect.arrayContaining(["checkout_sessions", "subscriptions", "invoices"]))
  // What was there is untouched, and the new adapters work beside it.
  expect((yield* mandates.find(tenant, Ids.lookup("mandate-before")))?.id).toBe(mandateId)
  const [qr] = yield* sql<{
    reference: string
  }>`SELECT reference FROM qr_codes WHERE merchant_id = ${merchantId}`
  expect(qr?.reference).toBe("qr-before")
  const a = yield* subscribe(tenant, payerId, T0)
  expect(yield* (yield* Store.SubscriptionsStore).find(tenant, Ids.lookup(a.subscription.id))).toStrictEqual(
    a.subscription
  )
  expect(yield* (yield* Store.InvoicesStore).latest(a.subscription.id)).toStrictEqual(a.invoice)
  expect(yield* Migrations.run).toEqual([])
})

/** Just what `upgrade` needs over `client`, which must not migrate by itself. */
const unmigrated = (client: Layer.Layer<SqlClient.SqlClient, SqlError>) =>
  Layer.mergeAll(
    transactorLayer,
    mandatesLayer,
    checkoutSessionsLayer,
    subscriptionsLayer,
    invoicesLayer,
    Crypto.layerWeb
  ).pipe(Layer.provideMerge(client))

describe("migrating a database that predates subscriptions", () => {
  it.live(
    "PGlite: 0003 applies over existing merchants, QR codes and mandates",
    () => upgrade.pipe(Effect.provide(unmigrated(PgliteClient.layer({})))),
    60_000
  )

  it.live.skipIf(TestDatabase.postgresUrl === undefined)(
    "PostgreSQL: 0003 applies over existing merchants, QR codes and mandates",
    () =>
      Effect.gen(function* () {
        const url = yield* TestDatabase.createDatabase(TestDatabase.postgresUrl!)
        yield* upgrade.pipe(
          Effect.provide(unmigrated(PgClient.layer({ url: Redacted.make(url), maxConnections: 2 })))
        )
      }).pipe(Effect.scoped),
    60_000
  )
})
