/**
 * The schema, as migrations run by `@effect/sql`'s `Migrator` from a record, the same on PostgreSQL and
 * PGlite (`PgMigrator.run` would want `pg_dump`).
 *
 * Conventions: every table carries `merchant_id` where it has one (the distribution column, should the
 * database ever be Citus); money is `bigint` laari; instants are `timestamptz`; enums and non-negative
 * amounts are CHECK constraints; uniqueness is a constraint, never a check in code. Tables listed newest
 * first carry a `position` identity so rows created in the same instant keep their order.
 */
import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import * as M0001 from "./Migrations/0001_init.js"
import * as M0002 from "./Migrations/0002_qr_codes.js"
import * as M0003 from "./Migrations/0003_subscriptions.js"
import * as M0004 from "./Migrations/0004_code_hardening.js"
import * as M0005 from "./Migrations/0005_webhooks.js"
import * as M0006 from "./Migrations/0006_wallet_sign_in.js"
import * as M0007 from "./Migrations/0007_ledger_rollup.js"
import * as M0008 from "./Migrations/0008_oauth.js"
import * as M0009 from "./Migrations/0009_manual_clock.js"
import * as M0010 from "./Migrations/0010_notification_outbox.js"
import * as M0011 from "./Migrations/0011_conceal_webhook_secrets.js"
import * as M0012 from "./Migrations/0012_phone_e164.js"
import * as M0013 from "./Migrations/0013_webhook_leases.js"
import * as M0014 from "./Migrations/0014_ended_sessions.js"
import * as M0015 from "./Migrations/0015_refunds.js"
import * as M0016 from "./Migrations/0016_balance_transactions.js"
import * as M0017 from "./Migrations/0017_rate_buckets.js"
import * as M0018 from "./Migrations/0018_payment_references.js"
import * as M0019 from "./Migrations/0019_balanced_on_amounts.js"
import * as M0020 from "./Migrations/0020_customer_payments.js"
import * as M0021 from "./Migrations/0021_event_failures.js"
import * as M0022 from "./Migrations/0022_wallet_movements.js"
import * as M0023 from "./Migrations/0023_reconciliation.js"
import * as M0024 from "./Migrations/0024_wallet_movement_holds.js"
import * as M0025 from "./Migrations/0025_audit_events.js"
import * as M0026 from "./Migrations/0026_people.js"
import * as M0027 from "./Migrations/0027_people_notices.js"

/**
 * Each migration runs once, in order of its number; its file, `Migrations/<key>.ts`, holds what it runs.
 * Never edit one that has shipped, nor rename its key: add the next.
 */
export const migrations: Record<string, Effect.Effect<void, SqlError, SqlClient.SqlClient>> = {
  "0001_init": M0001.migration,
  "0002_qr_codes": M0002.migration,
  "0003_subscriptions": M0003.migration,
  "0004_code_hardening": M0004.migration,
  "0005_webhooks": M0005.migration,
  "0006_wallet_sign_in": M0006.migration,
  "0007_ledger_rollup": M0007.migration,
  "0008_oauth": M0008.migration,
  "0009_manual_clock": M0009.migration,
  "0010_notification_outbox": M0010.migration,
  "0011_conceal_webhook_secrets": M0011.migration,
  "0012_phone_e164": M0012.migration,
  "0013_webhook_leases": M0013.migration,
  "0014_ended_sessions": M0014.migration,
  "0015_refunds": M0015.migration,
  "0016_balance_transactions": M0016.migration,
  "0017_rate_buckets": M0017.migration,
  "0018_payment_references": M0018.migration,
  "0019_balanced_on_amounts": M0019.migration,
  "0020_customer_payments": M0020.migration,
  "0021_event_failures": M0021.migration,
  "0022_wallet_movements": M0022.migration,
  "0023_reconciliation": M0023.migration,
  "0024_wallet_movement_holds": M0024.migration,
  "0025_audit_events": M0025.migration,
  "0026_people": M0026.migration,
  "0027_people_notices": M0027.migration
}

/** The Migrator's bookkeeping table; created here first (see `run`). */
const table = "effect_sql_migrations"

/** Any fixed number: the key of the advisory lock that serializes migrating processes. */
const lockKey = 7_302_619

/**
 * Brings the schema up to date; a no-op when it is. One transaction holding an advisory lock, so
 * processes starting side by side against one PostgreSQL migrate one after the other. The bookkeeping
 * table is created up front because the Migrator probes for it with a statement that fails when it is
 * missing, which would abort the surrounding transaction.
 */
export const runWith = (
  /** Told as each migration starts, for progress. */
  onStart: (name: string) => Effect.Effect<void> = () => Effect.void
): Effect.Effect<
  ReadonlyArray<readonly [id: number, name: string]>,
  Migrator.MigrationError | SqlError,
  SqlClient.SqlClient
> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const announced = Object.fromEntries(
      Object.entries(migrations).map(([name, migration]) => [
        name,
        Effect.zipRight(
          Effect.suspend(() => onStart(name)),
          migration
        )
      ])
    )
    return yield* sql.withTransaction(
      Effect.gen(function* () {
        yield* sql`SELECT pg_advisory_xact_lock(${lockKey})`
        yield* sql`CREATE TABLE IF NOT EXISTS ${sql(table)} (
          migration_id integer PRIMARY KEY,
          created_at timestamptz NOT NULL DEFAULT now(),
          name text NOT NULL
        )`
        return yield* Migrator.make({})({ loader: Migrator.fromRecord(announced), table })
      })
    )
  })

export const run = runWith()
