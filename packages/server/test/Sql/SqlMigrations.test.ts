/**
 * Migrations: run at start, a no-op when run again, safe when processes migrate side by side; and how
 * long a PGlite database takes to start and migrate.
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import * as Migrations from "../../src/Sql/Migrations.js"
import * as PgliteClient from "../../src/Sql/Pglite/PgliteClient.js"
import * as TestDatabase from "../support/TestDatabase.js"

const applied = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) =>
    sql<{
      migration_id: number
      name: string
    }>`SELECT migration_id, name FROM effect_sql_migrations ORDER BY migration_id`
)

const tables = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(
    sql<{
      name: string
    }>`SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`,
    (rows) => rows.map((r) => r.name)
  )
)

const schema = [
  "api_keys",
  "audit_events",
  "audit_heads",
  "challenges",
  "checkout_sessions",
  "customers",
  "effect_sql_migrations",
  "ended_sessions",
  "event_sequences",
  "events",
  "idempotency_keys",
  "invitations",
  "invoices",
  "ledger_accounts",
  "ledger_entries",
  "ledger_transfers",
  "mandate_charges",
  "mandates",
  "manual_clock",
  "memberships",
  "merchants",
  "notification_outbox",
  "notifications",
  "oauth_clients",
  "oauth_tokens",
  "outlets",
  "people_notices",
  "qr_codes",
  "qr_images",
  "qr_payments",
  "rate_buckets",
  "reconciliation_breaks",
  "reconciliation_runs",
  "recovery_codes",
  "refunds",
  "server_secrets",
  "subscriptions",
  "user_sessions",
  "users",
  "wallet_movements",
  "webhook_deliveries",
  "webhook_endpoints"
]

const all = [
  [1, "init"],
  [2, "qr_codes"],
  [3, "subscriptions"],
  [4, "code_hardening"],
  [5, "webhooks"],
  [6, "wallet_sign_in"],
  [7, "ledger_rollup"],
  [8, "oauth"],
  [9, "manual_clock"],
  [10, "notification_outbox"],
  [11, "conceal_webhook_secrets"],
  [12, "phone_e164"],
  [13, "webhook_leases"],
  [14, "ended_sessions"],
  [15, "refunds"],
  [16, "balance_transactions"],
  [17, "rate_buckets"],
  [18, "payment_references"],
  [19, "balanced_on_amounts"],
  [20, "customer_payments"],
  [21, "event_failures"],
  [22, "wallet_movements"],
  [23, "reconciliation"],
  [24, "wallet_movement_holds"],
  [25, "audit_events"],
  [26, "people"],
  [27, "people_notices"]
]

describe("PGlite", () => {
  it.live(
    "starts and migrates (timings are printed)",
    () =>
      Effect.gen(function* () {
        const started = performance.now()
        const context = yield* Layer.build(PgliteClient.layer({}))
        const ready = performance.now()
        const first = yield* Effect.provide(Migrations.run, context)
        const migrated = performance.now()
        const second = yield* Effect.provide(Migrations.run, context)
        const again = performance.now()
        console.info(
          `PGlite in memory: start ${Math.round(ready - started)} ms, first migration ${Math.round(migrated - ready)} ms, ` +
            `second (no-op) ${Math.round(again - migrated)} ms`
        )
        expect(first).toEqual(all)
        expect(second).toEqual([])
        expect(yield* Effect.provide(tables, context)).toEqual(schema)
      }).pipe(Effect.scoped),
    60_000
  )
})

TestDatabase.eachBackend("migrations", (it) => {
  it.effect("ran at start; running them again is a no-op", () =>
    Effect.gen(function* () {
      const rows = all.map(([migration_id, name]) => ({ migration_id, name }))
      expect(yield* applied).toEqual(rows)
      expect(yield* Migrations.run).toEqual([])
      expect(yield* Migrations.run).toEqual([])
      expect(yield* applied).toEqual(rows)
      expect(yield* tables).toEqual(schema)
    })
  )
})

describe.skipIf(TestDatabase.postgresUrl === undefined)("PostgreSQL", () => {
  it.live(
    "processes migrating one fresh database side by side: one migrates, the others wait and find nothing to do",
    () =>
      Effect.gen(function* () {
        const url = yield* TestDatabase.createDatabase(TestDatabase.postgresUrl!)
        const process = Effect.provide(
          Migrations.run,
          PgClient.layer({ url: Redacted.make(url), maxConnections: 1 })
        )
        const results = yield* Effect.all([process, process, process, process], { concurrency: "unbounded" })
        expect(results.filter((r) => r.length > 0)).toEqual([all])
        expect(results.filter((r) => r.length === 0)).toHaveLength(3)
      }).pipe(Effect.scoped),
    60_000
  )
})
