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
import { createCodeKey } from "./Challenges.js"
import * as MigrationSql from "./MigrationSql.js"
import * as MigrationSqlLater from "./MigrationSqlLater.js"
import * as OAuthClients from "./OAuthClients.js"

/** Each migration runs once, in order of its number. Never edit one that has shipped: add the next. */
export const migrations: Record<string, Effect.Effect<void, SqlError, SqlClient.SqlClient>> = {
  "0001_init": Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(MigrationSql.init)),
  "0002_qr_codes": Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(MigrationSql.qrCodes)),
  "0003_subscriptions": Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(MigrationSql.subscriptions)),
  "0004_code_hardening": Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.zipRight(sql.unsafe(MigrationSqlLater.codeHardening), createCodeKey(sql))
  ),
  "0005_webhooks": Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(MigrationSqlLater.webhooks)),
  // Sign-in codes of the wallet app are challenges whose subject is the customer's wallet; the dashboard
  // lists a merchant's checkout sessions.
  "0006_wallet_sign_in": Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.unsafe(`ALTER TABLE challenges DROP CONSTRAINT challenges_subject_kind_check,
      ADD CONSTRAINT challenges_subject_kind_check CHECK (subject_kind IN ('mandate', 'checkout', 'wallet'));
      CREATE INDEX checkout_sessions_merchant ON checkout_sessions (merchant_id, environment, created_at DESC, position DESC);`)
  ),
  // House accounts (merchant, fee, funding) are no longer moved inside a payment: their entries wait,
  // `rolled = false`, until `Ledger.rollUp` folds them into the balance. Every entry so far is folded.
  "0007_ledger_rollup": Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.unsafe(`ALTER TABLE ledger_entries ADD COLUMN rolled boolean NOT NULL DEFAULT true;
      CREATE INDEX ledger_entries_unrolled ON ledger_entries (account_id) WHERE NOT rolled;`)
  ),
  "0008_oauth": Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(OAuthClients.schema)),
  // The manual clock's time (LAARI_CLOCK=manual), so a restart goes on from it: one row.
  "0009_manual_clock": Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.unsafe(`CREATE TABLE manual_clock (
      id boolean PRIMARY KEY DEFAULT true CHECK (id),
      now_ms bigint NOT NULL
    );`)
  ),
  // Customer notices on their way to the wallet provider's notification service (`Notify`).
  "0010_notification_outbox": Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.unsafe(MigrationSqlLater.notificationOutbox)
  ),
  // Stored responses keep no webhook signing secret (issue 23, item 2); the endpoints' own secrets are
  // sealed by the first process to start, which has the master key (`Webhooks/Sql.layer`).
  "0011_conceal_webhook_secrets": Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.unsafe(MigrationSqlLater.scrubStoredResponses)
  ),
  // Phones were kept as typed (`+960 7771234`); lookups now compare E.164 (`Phone.normalize`), so the
  // numbers already kept are rewritten the same way (this is `Phone`'s rule of the day, frozen as SQL).
  // Of two spellings of one number in an environment the older customer gets it; the other keeps its
  // spelling (the unique key forbids two), for an operator to resolve.
  "0012_phone_e164": Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(MigrationSqlLater.phoneE164)),
  // Each webhook claim counts the attempts in flight (leased) per endpoint and merchant, and reads each
  // endpoint's earliest due attempts (issue 23, item 8).
  "0013_webhook_leases": Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.unsafe(`CREATE INDEX webhook_deliveries_leased ON webhook_deliveries (leased_until, endpoint_id)
      WHERE status = 'PENDING' AND leased_until IS NOT NULL;
      CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (endpoint_id, due_at, position)
      WHERE status = 'PENDING';`)
  ),
  // Dashboard sessions ended by signing out, by the SHA-256 of their id, until they would have expired.
  "0014_ended_sessions": Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`CREATE TABLE ended_sessions (
      id_hash text PRIMARY KEY,
      expires_at timestamptz NOT NULL
    )`
  ),
  // Refunds of charges, QR payments and paid invoices, and the ledger's `refund` transfers (issue 26).
  "0015_refunds": Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(MigrationSqlLater.refunds)),
  // A merchant's balance transactions and settlement days read its transfers newest first or by day
  // (`Sql/Balance`); ties in time in byte order of the id.
  "0016_balance_transactions": Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.unsafe(MigrationSqlLater.balanceTransactions)
  ),
  // The rate limits' buckets and lock-outs, shared by every process and host (`RateBuckets`, issue 24).
  "0017_rate_buckets": Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.unsafe(MigrationSqlLater.rateBuckets)
  ),
  // A refund names a charge or a QR payment by the merchant's reference (issue 26).
  "0018_payment_references": Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.unsafe(MigrationSqlLater.paymentReferences)
  ),
  // A transfer's entries are checked to sum to zero when one is written or its amount or transfer
  // changes, not when the roll-up marks it folded: two checks of every payment's three were of that
  // (issue 27).
  "0019_balanced_on_amounts": Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.unsafe(`DROP TRIGGER ledger_entries_balanced ON ledger_entries;
      CREATE CONSTRAINT TRIGGER ledger_entries_balanced AFTER INSERT OR UPDATE OF transfer_id, amount
        ON ledger_entries DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ledger_transfer_balanced();`)
  ),
  // The wallet app lists a customer's payments newest first (`Sql/Balance`), whatever paid them.
  "0020_customer_payments": Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.unsafe(`CREATE INDEX ledger_transfers_customer
      ON ledger_transfers (customer_id, created_at DESC, id COLLATE "C" DESC) WHERE kind = 'payment';`)
  ),
  // The dashboard lists a mandate's refused charges and a subscription's missed renewals from their
  // events (`Sql/Events` failuresAbout): indexed for those two types only, so other events cost nothing more.
  "0021_event_failures": Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.unsafe(`CREATE INDEX events_failures ON events (subject, position DESC)
      WHERE type IN ('mandate.charge.failed', 'invoice.payment_failed');`)
  ),
  // Movements in the wallet provider's core (`Movement`): each committed pending before its call, settled
  // after; one per cause. The resolver claims pending ones by their next look; reconciliation reads a
  // Maldives day's posted ones. A customer found in the core by phone keeps its wallet id.
  "0022_wallet_movements": Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.unsafe(`ALTER TABLE customers ADD COLUMN wallet_id text;
      CREATE TABLE wallet_movements (
        id uuid PRIMARY KEY,
        merchant_id uuid NOT NULL,
        environment text NOT NULL CHECK (environment IN ('test', 'live')),
        kind text NOT NULL CHECK (kind IN ('payment', 'reversal')),
        cause text NOT NULL CHECK (cause IN ('mandate-charge', 'qr-payment', 'checkout', 'invoice', 'refund')),
        cause_id text NOT NULL,
        customer_id uuid NOT NULL,
        from_wallet text NOT NULL,
        to_wallet text NOT NULL,
        fee_wallet text,
        amount bigint NOT NULL CHECK (amount > 0),
        fee bigint NOT NULL CHECK (fee >= 0 AND fee <= amount),
        memo text NOT NULL,
        status text NOT NULL CHECK (status IN ('pending', 'posted', 'refused', 'cancelled')),
        reason text,
        detail jsonb NOT NULL,
        created_at timestamptz NOT NULL,
        next_check_at timestamptz,
        checks integer NOT NULL DEFAULT 0,
        settled_at timestamptz,
        settled_by text CHECK (settled_by IN ('answer', 'status', 'resend', 'cancel')),
        posted_at timestamptz,
        CONSTRAINT wallet_movements_cause UNIQUE (cause, cause_id),
        CONSTRAINT wallet_movements_pending CHECK ((status = 'pending') = (next_check_at IS NOT NULL))
      );
      CREATE INDEX wallet_movements_due ON wallet_movements (next_check_at) WHERE status = 'pending';
      CREATE INDEX wallet_movements_posted ON wallet_movements (posted_at) WHERE status = 'posted';`)
  ),
  // Reconciliation of a Maldives day against the core's statement (`Sql/Reconciliation`): the day's run,
  // claimed as `running` by one process, and its breaks, both replaced whole by a re-run. A run's totals
  // stay null until it is done, and when it failed.
  "0023_reconciliation": Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.unsafe(`CREATE TABLE reconciliation_runs (
        date date PRIMARY KEY,
        status text NOT NULL CHECK (status IN ('running', 'clean', 'breaks', 'failed')),
        started_at timestamptz NOT NULL,
        finished_at timestamptz,
        laari_count integer CHECK (laari_count >= 0),
        laari_amount bigint CHECK (laari_amount >= 0),
        laari_fee bigint CHECK (laari_fee >= 0),
        core_count integer CHECK (core_count >= 0),
        core_amount bigint CHECK (core_amount >= 0),
        core_fee bigint CHECK (core_fee >= 0),
        break_count integer NOT NULL DEFAULT 0 CHECK (break_count >= 0),
        error text,
        CONSTRAINT reconciliation_runs_finished CHECK ((status = 'running') = (finished_at IS NULL)),
        CONSTRAINT reconciliation_runs_failed CHECK ((status = 'failed') = (error IS NOT NULL))
      );
      CREATE TABLE reconciliation_breaks (
        date date NOT NULL REFERENCES reconciliation_runs (date) ON DELETE CASCADE,
        transfer_id uuid NOT NULL,
        kind text NOT NULL
          CHECK (kind IN ('missing_in_core', 'missing_in_laari', 'amount_mismatch', 'status_mismatch')),
        laari_amount bigint,
        core_amount bigint,
        laari_fee bigint,
        core_fee bigint,
        laari_status text CHECK (laari_status IN ('pending', 'posted', 'refused', 'cancelled')),
        core_status text CHECK (core_status IN ('pending', 'posted', 'refused', 'cancelled')),
        PRIMARY KEY (date, transfer_id)
      );`)
  ),
  // What a pending movement holds beside a cap (`Movement.holdKey`): a dynamic QR code or a checkout
  // session it pays, the payment it refunds; counted under the key by the cause, holding its lock.
  "0024_wallet_movement_holds": Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.unsafe(`ALTER TABLE wallet_movements ADD COLUMN hold_key text;
      CREATE INDEX wallet_movements_held ON wallet_movements (hold_key) WHERE status = 'pending';`)
  )
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
