/**
 * The QR adapters beyond the store contract, on PGlite and (with DATABASE_URL) PostgreSQL: what only a
 * database shows (a refused insert leaves the transaction usable, which constraint refuses what, index
 * use, row locks between connections, migrating a database that already has data) and the server's PNG
 * renderer end to end through the `QrCodes` service and a `bytea` column.
 */
import * as Migrator from "@effect/sql/Migrator"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import { describe, expect, it } from "@effect/vitest"
import { Crypto, Ids, type QrCode, QrCodes, QrScheme, Store } from "@laari/core"
import { Seed } from "@laari/testkit"
import { Cause, DateTime, Deferred, Effect, Exit, Fiber, Layer, Option, Redacted } from "effect"
import jsQRModule from "jsqr"
import { PNG } from "pngjs"
import * as Migrations from "../../src/Sql/Migrations.js"
import * as PgliteClient from "../../src/Sql/Pglite/PgliteClient.js"
import * as QrPng from "../../src/QrPng.js"
import { qrCodesLayer } from "../../src/Sql/QrCodes.js"
import * as TestDatabase from "../support/TestDatabase.js"

// jsqr's types declare an ES default export on a CommonJS module: under NodeNext the default import is
// typed as the module, but at run time it is the function itself.
const jsQR = jsQRModule as unknown as typeof jsQRModule.default

const uuid = Effect.flatMap(Crypto.Crypto, (c) => c.uuid)
const qrid = Effect.flatMap(Crypto.Crypto, (c) => Effect.map(c.bytes(QrScheme.QridBytes), QrScheme.makeQrid))
const at = (iso: string) => DateTime.unsafeMake(iso)

const merchantWithOutlet = Effect.gen(function* () {
  const seed = yield* Seed.Seed
  const merchant = yield* seed.merchant({ name: "Bappa Cafe" })
  const outlet = yield* seed.outlet(merchant.id, "Majeedhee Magu")
  return { merchant, outlet, tenant: { merchantId: merchant.id, environment: "test" } as Ids.Tenant }
})

const code = (tenant: Ids.Tenant, outletId: number, overrides: Partial<QrCode.QrCode> = {}) =>
  Effect.gen(function* () {
    const id = yield* uuid
    const key = yield* qrid
    return {
      id,
      merchantId: tenant.merchantId,
      environment: tenant.environment,
      outletId,
      type: "STATIC",
      status: "ACTIVE",
      title: "Counter",
      description: null,
      amount: null,
      payload: `payload ${key}`,
      qrid: key,
      reference: `qr-${id}`,
      expiresAt: null,
      deactivatedAt: null,
      createdAt: at("2030-01-01T00:00:00Z"),
      ...overrides
    } satisfies QrCode.QrCode
  })

/** The constraint a defect's SQL statement broke, and its SQLSTATE. */
const brokenConstraint = (exit: Exit.Exit<unknown, unknown>) => {
  if (Exit.isSuccess(exit)) return "succeeded"
  const defect = Option.getOrUndefined(Cause.dieOption(exit.cause))
  if (!(defect instanceof SqlError)) return `not a SqlError defect: ${Cause.pretty(exit.cause)}`
  const cause = defect.cause as { readonly code?: string; readonly constraint?: string }
  return `${cause.code} ${cause.constraint}`
}

const tables = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(
    sql<{
      name: string
    }>`SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`,
    (rows) => rows.map((r) => r.name)
  )
)

TestDatabase.eachBackend("SQL QR codes", (it, backend) => {
  it.effect("a duplicate reference is DuplicateReference and leaves the caller's transaction usable", () =>
    Effect.gen(function* () {
      const tx = yield* Store.Transactor
      const store = yield* Store.QrCodesStore
      const { outlet, tenant } = yield* merchantWithOutlet
      const first = yield* code(tenant, outlet.id)
      yield* store.insert(first)
      const duplicate = yield* code(tenant, outlet.id, { reference: first.reference })
      const after = yield* code(tenant, outlet.id)
      yield* tx.withTransaction(
        Effect.gen(function* () {
          const refused = yield* Effect.flip(store.insert(duplicate))
          expect(refused).toEqual(new Store.DuplicateReference({ reference: first.reference }))
          // On PostgreSQL a failed statement would have aborted the transaction; this one was not.
          yield* store.insert(after)
          yield* store.saveImage(after, Uint8Array.of(1, 2, 3))
        })
      )
      expect((yield* store.find(tenant, Ids.lookup(after.id)))?.id).toBe(after.id)
      expect(Array.from((yield* store.image(after.id))!)).toEqual([1, 2, 3])
      expect(yield* store.find(tenant, Ids.lookup(duplicate.id))).toBeUndefined()
    })
  )

  it.effect("each rule of the schema is a named constraint that refuses the row", () =>
    Effect.gen(function* () {
      const store = yield* Store.QrCodesStore
      const payments = yield* Store.QrPaymentsStore
      const { merchant, outlet, tenant } = yield* merchantWithOutlet
      const other = yield* merchantWithOutlet
      const taken = yield* code(other.tenant, other.outlet.id)
      yield* store.insert(taken)
      const dynamic = { type: "DYNAMIC", amount: 500, expiresAt: at("2030-01-01T00:15:00Z") } as const
      const codeCases: ReadonlyArray<readonly [Partial<QrCode.QrCode>, string]> = [
        [{ qrid: taken.qrid }, "23505 qr_codes_qrid"],
        [{ outletId: other.outlet.id }, "23503 qr_codes_outlet"],
        [{ outletId: 2_000_000_000 }, "23503 qr_codes_outlet"],
        [{ amount: 500 }, "23514 qr_codes_amount"],
        [{ ...dynamic, amount: 99 }, "23514 qr_codes_amount"],
        [{ ...dynamic, expiresAt: null }, "23514 qr_codes_expiry"],
        [{ status: "INACTIVE" }, "23514 qr_codes_deactivated"]
      ]
      for (const [overrides, constraint] of codeCases)
        expect(
          brokenConstraint(yield* Effect.exit(store.insert(yield* code(tenant, outlet.id, overrides))))
        ).toBe(constraint)

      const mine = yield* code(tenant, outlet.id)
      yield* store.insert(mine)
      const payment = (overrides: Partial<QrCode.Payment>) =>
        Effect.map(
          uuid,
          (id): QrCode.Payment => ({
            id,
            qrCodeId: mine.id,
            qrid: mine.qrid,
            merchantId: merchant.id,
            environment: "test",
            outletId: outlet.id,
            customerId: merchant.sandboxPayer,
            amount: 1_000,
            fee: 10,
            netAmount: 990,
            amountRefunded: 0,
            reference: mine.reference,
            createdAt: at("2030-01-01T00:01:00Z"),
            ...overrides
          })
        )
      const paymentCases: ReadonlyArray<readonly [Partial<QrCode.Payment>, string]> = [
        [{ qrid: taken.qrid }, "23503 qr_payments_code"],
        [{ qrCodeId: taken.id }, "23503 qr_payments_code"],
        [{ environment: "live" }, "23503 qr_payments_code"],
        [{ fee: 11 }, "23514 qr_payments_split"],
        [{ amount: 99, fee: 0, netAmount: 99 }, "23514 qr_payments_amount_check"]
      ]
      for (const [overrides, constraint] of paymentCases)
        expect(brokenConstraint(yield* Effect.exit(payments.insert(yield* payment(overrides))))).toBe(
          constraint
        )
      yield* payments.insert(yield* payment({}))
      expect(yield* payments.listByCode(mine.id)).toHaveLength(1)
    })
  )

  it.effect("every QR query the adapters make is served by an index", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const id = `'${yield* uuid}'`
      // The adapters' queries, with literals for parameters.
      const queries = [
        `SELECT id, merchant_id, name FROM outlets WHERE id = 7 AND merchant_id = ${id}`,
        `SELECT * FROM qr_codes WHERE merchant_id = ${id} AND environment = 'test' AND id = ${id} FOR UPDATE`,
        `SELECT * FROM qr_codes WHERE merchant_id = ${id} AND environment = 'test' AND reference = 'r'`,
        "SELECT * FROM qr_codes WHERE qrid = 'LQ0123456789ABCDEFGHJKMN' AND environment = 'test' FOR UPDATE",
        `SELECT * FROM qr_codes WHERE merchant_id = ${id} AND environment = 'test'
               ORDER BY created_at DESC, position DESC LIMIT 25 OFFSET 50`,
        `SELECT * FROM qr_codes WHERE merchant_id = ${id} AND environment = 'test' AND type = 'STATIC'
               ORDER BY created_at DESC, position DESC LIMIT 25 OFFSET 0`,
        `SELECT * FROM qr_codes WHERE merchant_id = ${id} AND environment = 'test' AND outlet_id = 7
               AND type = 'DYNAMIC' ORDER BY created_at DESC, position DESC LIMIT 25 OFFSET 0`,
        `SELECT png FROM qr_images WHERE qr_code_id = ${id}`,
        `SELECT * FROM qr_payments WHERE qr_code_id = ${id} ORDER BY created_at DESC, position DESC`,
        "SELECT * FROM qr_payments WHERE qrid = 'LQ0123456789ABCDEFGHJKMN'"
      ]
      yield* sql.withTransaction(
        Effect.gen(function* () {
          // Tables here are small: forbid sequential scans so the plan shows whether an index serves.
          yield* sql`SET LOCAL enable_seqscan = off`
          for (const query of queries) {
            const plan = yield* sql.unsafe<Record<string, string>>(`EXPLAIN ${query}`)
            const text = plan.map((row) => row["QUERY PLAN"]).join("\n")
            expect(text, query).not.toContain("Seq Scan")
            // A sort on top of an index scan would mean the list index does not give the order.
            if (query.includes("ORDER BY") && query.includes("qr_codes"))
              expect(text, query).not.toContain("Sort")
          }
        })
      )
    })
  )

  it.effect("QrCodes with the server's renderer keeps a real PNG that decodes to the payload", () =>
    Effect.gen(function* () {
      const { outlet, tenant } = yield* merchantWithOutlet
      const qr = yield* QrCodes.QrCodes
      const created = yield* qr.create(tenant, {
        outletId: outlet.id,
        type: "STATIC",
        amount: null,
        expiresInMinutes: null,
        title: null,
        description: null,
        reference: null
      })
      const png = (yield* qr.image(created.id))!
      expect(png).toBeInstanceOf(Uint8Array)
      expect(Buffer.isBuffer(png)).toBe(false)
      expect(Buffer.from(png).equals(Buffer.from(yield* QrPng.renderPng(created.payload)))).toBe(true)
      const image = PNG.sync.read(Buffer.from(png))
      expect(jsQR(new Uint8ClampedArray(image.data), image.width, image.height)?.data).toBe(created.payload)
    }).pipe(Effect.provide(QrCodes.QrCodes.Default.pipe(Layer.provide(QrPng.layer))))
  )

  if (backend.name === "PostgreSQL")
    it.effect("a code locked by a payment (lockByQrid) holds a deactivation until the payment ends", () =>
      Effect.gen(function* () {
        const tx = yield* Store.Transactor
        const store = yield* Store.QrCodesStore
        const { outlet, tenant } = yield* merchantWithOutlet
        const locked = yield* code(tenant, outlet.id)
        yield* store.insert(locked)
        const held = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        const payment = yield* Effect.fork(
          tx.withTransaction(
            Effect.gen(function* () {
              expect((yield* store.lockByQrid("test", locked.qrid))?.id).toBe(locked.id)
              yield* Deferred.succeed(held, undefined)
              yield* Deferred.await(release)
            })
          )
        )
        yield* Deferred.await(held)
        const deactivation = yield* Effect.fork(
          tx.withTransaction(
            Effect.gen(function* () {
              const found = yield* store.find(tenant, Ids.lookup(locked.id), { forUpdate: true })
              yield* store.update({
                ...found!,
                status: "INACTIVE",
                deactivatedAt: at("2030-01-01T00:05:00Z")
              })
            })
          )
        )
        yield* Effect.sleep("300 millis")
        expect(deactivation.unsafePoll()).toBeNull()
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(payment)
        yield* Fiber.join(deactivation).pipe(Effect.timeout("5 seconds"))
        expect((yield* store.find(tenant, Ids.lookup(locked.id)))?.status).toBe("INACTIVE")
      })
    )
})

/** Migrates only `0001_init`, as a database deployed before QR codes would be. */
const migrateInitOnly = Migrator.make({})({
  loader: Migrator.fromRecord({ "0001_init": Migrations.migrations["0001_init"]! }),
  table: "effect_sql_migrations"
})

/** A database at 0001 with a merchant and outlets in it, migrated to the latest: QR codes then work. */
const upgrade = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  expect(yield* migrateInitOnly).toEqual([[1, "init"]])
  expect(yield* tables).not.toContain("qr_codes")
  const merchantId = yield* uuid
  const payerId = yield* uuid
  yield* sql`INSERT INTO customers ${sql.insert({
    id: payerId,
    environment: "test",
    phone: `+960 ${payerId}`,
    created_at: new Date()
  })}`
  yield* sql`INSERT INTO merchants ${sql.insert({
    id: merchantId,
    name: "Before QR",
    city: "Male",
    mcc: "5999",
    fee_bps: 100,
    mandates_live: false,
    subscriptions_live: false,
    sandbox_payer_id: payerId,
    created_at: new Date()
  })}`
  const outlets = yield* sql<{ id: number }>`INSERT INTO outlets ${sql.insert(
    ["A", "B"].map((name) => ({ merchant_id: merchantId, name, created_at: new Date() }))
  )} RETURNING id`
  // Every migration after 0001 applies: 0002 (QR codes) and whatever came after it.
  expect((yield* Migrations.run)[0]).toEqual([2, "qr_codes"])
  expect(yield* tables).toEqual(expect.arrayContaining(["qr_codes", "qr_images", "qr_payments"]))
  const store = yield* Store.QrCodesStore
  const tenant = { merchantId: merchantId as Ids.MerchantId, environment: "test" } as const
  const made = yield* code(tenant, outlets[1]!.id)
  yield* store.insert(made)
  expect((yield* store.find(tenant, Ids.lookup(made.id)))?.outletId).toBe(outlets[1]!.id)
  expect(yield* Migrations.run).toEqual([])
})

/** Just what `upgrade` needs over `client`, which must not migrate by itself. */
const unmigrated = (client: Layer.Layer<SqlClient.SqlClient, SqlError>) =>
  Layer.merge(qrCodesLayer, Crypto.layerWeb).pipe(Layer.provideMerge(client))

describe("migrating a database that predates QR codes", () => {
  it.live(
    "PGlite: 0002 applies over existing merchants and outlets",
    () => upgrade.pipe(Effect.provide(unmigrated(PgliteClient.layer({})))),
    60_000
  )

  it.live.skipIf(TestDatabase.postgresUrl === undefined)(
    "PostgreSQL: 0002 applies over existing merchants and outlets",
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
