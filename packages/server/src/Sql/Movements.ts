/**
 * Movements in the wallet provider's core: rows of `wallet_movements`, and core's `MovementsStoreService` over
 * them. A movement is inserted pending in the transaction that decides its payment, before any call
 * leaves; the resolver claims pending ones by their next look, skipping rows another process holds.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { type Ids, type Movement, Store } from "@laari/core"
import { type DateTime, Effect, Layer } from "effect"
import { Column, earliest, fromDate, int, json, one, repository, rows, toDate } from "./Repository.js"
import * as WriteBehind from "./WriteBehind.js"

const movements = rows<Movement.Movement>({
  id: Column.as("id"),
  merchantId: Column.as("merchant_id"),
  environment: Column.as("environment"),
  kind: Column.as("kind"),
  cause: Column.as("cause"),
  causeId: Column.as("cause_id"),
  holdKey: Column.as("hold_key"),
  customerId: Column.as("customer_id"),
  from: Column.as("from_wallet"),
  to: Column.as("to_wallet"),
  feeTo: Column.as("fee_wallet"),
  amount: Column.int("amount") as never,
  fee: Column.int("fee") as never,
  memo: Column.as("memo"),
  status: Column.as("status"),
  reason: Column.as("reason"),
  detail: {
    columns: ["detail"],
    // pg reads jsonb back as a value; PGlite too. Written as JSON text (`json`).
    read: (row) => (typeof row.detail === "string" ? JSON.parse(row.detail) : row.detail),
    write: (value, row) => {
      row.detail = json(value)
    }
  },
  createdAt: Column.date("created_at"),
  nextCheckAt: Column.dateOrNull("next_check_at"),
  checks: Column.int("checks"),
  settledAt: Column.dateOrNull("settled_at"),
  settledBy: Column.as("settled_by"),
  postedAt: Column.dateOrNull("posted_at")
})

/** The columns an update writes: what settling or a look changes. */
const changing = [
  "status",
  "reason",
  "next_check_at",
  "checks",
  "settled_at",
  "settled_by",
  "posted_at"
] as const

/**
 * Settled states and the resolver's postponements are a set (`WriteBehind.RowSet`): a resolver's round
 * writes a batch of them in one statement, a settlement with the rest of its writes.
 */
const updated = WriteBehind.updateOf(
  "wallet_movements_updated",
  "wallet_movements",
  ["id", ...changing],
  ["id"],
  ["id"]
)

// The two-key advisory lock a cause takes on a reference its pending movements carry (apart from the
// migrations' one-key lock and the webhook endpoints' `7_302_621`).
const ReferenceLock = 7_302_622

export const makeMovements = Effect.map(SqlClient.SqlClient, (sql) => {
  const fromRows = one(movements.fromRow)
  return repository({
    // Held until the transaction's next statement or its commit (`WriteBehind`): the movement is
    // committed pending with the rest of the transaction that decides it, before any call leaves.
    insert: (m: Movement.Movement) =>
      WriteBehind.hold(sql, [`movement:${m.id}`], () => [
        { alias: "v", statement: sql`INSERT INTO wallet_movements ${sql.insert(movements.toRow(m))}` }
      ]),
    lock: (id: string) =>
      sql`SELECT * FROM wallet_movements WHERE id = ${id} FOR UPDATE`.pipe(Effect.map(fromRows)),
    byCause: (cause: Movement.Cause, causeId: string) =>
      sql`SELECT * FROM wallet_movements WHERE cause = ${cause} AND cause_id = ${causeId}`.pipe(
        Effect.map(fromRows)
      ),
    held: (holdKey: string) =>
      sql<{ readonly n: number | string; readonly amount: number | string }>`SELECT count(*) AS n,
          coalesce(sum(amount), 0) AS amount FROM wallet_movements
          WHERE hold_key = ${holdKey} AND status = 'pending'`.pipe(
        Effect.map((found) => ({ count: int(found[0]?.n ?? 0), amount: int(found[0]?.amount ?? 0) }))
      ),
    referenceHeld: (tenant: Ids.Tenant, cause: Movement.Cause, reference: string) =>
      Effect.gen(function* () {
        yield* sql`SELECT pg_advisory_xact_lock(${ReferenceLock}::int,
          hashtext(${tenant.merchantId} || ':' || ${tenant.environment} || ':' || ${cause} || ':' || ${reference}))`
        const found = yield* sql<{ readonly held: boolean }>`SELECT EXISTS (SELECT 1 FROM wallet_movements
            WHERE merchant_id = ${tenant.merchantId} AND environment = ${tenant.environment}
              AND cause = ${cause} AND status = 'pending' AND detail->>'reference' = ${reference}) AS held`
        return found[0]?.held === true
      }),
    update: (m: Movement.Movement) => {
      const row = movements.toRow(m)
      return WriteBehind.holdRows(sql, [`movement:${m.id}`], [[updated, row]])
    },
    claimDue: (now: DateTime.Utc, limit: number) =>
      sql`SELECT * FROM wallet_movements
          WHERE status = 'pending' AND next_check_at <= ${toDate(now)}
          ORDER BY next_check_at LIMIT ${limit} FOR UPDATE SKIP LOCKED`.pipe(
        Effect.map((found) => found.map(movements.fromRow))
      ),
    nextDueAt: sql<{ readonly at: Date | null }>`SELECT min(next_check_at) AS at FROM wallet_movements
        WHERE status = 'pending'`.pipe(Effect.map(earliest)),
    pendingSummary: sql<{ readonly n: number | string; readonly oldest: Date | null }>`SELECT count(*) AS n,
        min(created_at) AS oldest FROM wallet_movements WHERE status = 'pending'`.pipe(
      Effect.map((found) => ({
        count: int(found[0]?.n ?? 0),
        oldest: found[0]?.oldest == null ? undefined : fromDate(found[0].oldest)
      }))
    )
  })
})

export const movementsLayer: Layer.Layer<Store.MovementsStore, never, SqlClient.SqlClient> = Layer.effect(
  Store.MovementsStore,
  makeMovements
)
