/**
 * Reconciliation's rows (`0023_reconciliation`): a day's run and its breaks, and laari's side of a day read
 * from `wallet_movements`. A run is claimed by one process (a row in `running`, taken over only once it
 * is stale) and finished by whoever claimed it, its breaks replaced with it in one transaction, so a
 * reader sees one run's result whole or the run under way, never two runs' breaks mixed.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type * as Statement from "@effect/sql/Statement"
import { type Balance, type Movement, Reconciliation } from "@laari/core"
import { DateTime, Effect } from "effect"
import { fromDate, fromDateOrNull, guard, int, toDate } from "./Repository.js"

/** How many ids one look-up of movements names: a statement of a busy day lists many thousands. */
const IdsPerQuery = 1_000

/** How many breaks one INSERT writes. */
const BreaksPerInsert = 500

/**
 * Who claims: an operator re-runs any day not under way; the daily job runs a day never run, one whose
 * run was left stale, or one whose run failed a while ago.
 */
export type Claimant = "operator" | "daily"

/** What a finished run stores: its result, or why it failed. */
export type Outcome =
  | { readonly _tag: "done"; readonly result: Reconciliation.Result }
  | { readonly _tag: "failed"; readonly error: string }

interface RunRow {
  readonly date: string
  readonly status: Reconciliation.RunStatus
  readonly started_at: Date
  readonly finished_at: Date | null
  readonly laari_count: number | string | null
  readonly laari_amount: number | string | null
  readonly laari_fee: number | string | null
  readonly core_count: number | string | null
  readonly core_amount: number | string | null
  readonly core_fee: number | string | null
  readonly break_count: number | string
  readonly error: string | null
}

interface BreakRow {
  readonly transfer_id: string
  readonly kind: Reconciliation.Kind
  readonly laari_amount: number | string | null
  readonly core_amount: number | string | null
  readonly laari_fee: number | string | null
  readonly core_fee: number | string | null
  readonly laari_status: Movement.Status | null
  readonly core_status: Movement.Status | null
}

const totalsOf = (
  count: number | string | null,
  amount: number | string | null,
  fee: number | string | null
): Reconciliation.Totals | null =>
  count === null ? null : { count: int(count), amount: int(amount ?? 0), fee: int(fee ?? 0) }

const runOf = (r: RunRow): Reconciliation.Run => ({
  date: r.date,
  status: r.status,
  startedAt: fromDate(r.started_at),
  finishedAt: fromDateOrNull(r.finished_at),
  laari: totalsOf(r.laari_count, r.laari_amount, r.laari_fee),
  core: totalsOf(r.core_count, r.core_amount, r.core_fee),
  breakCount: int(r.break_count),
  error: r.error
})

const side = (
  amount: number | string | null,
  fee: number | string | null,
  status: Movement.Status | null
): Reconciliation.Figures | null =>
  status === null ? null : { amount: int(amount ?? 0), fee: int(fee ?? 0), status }

const breakOf = (r: BreakRow): Reconciliation.Break => ({
  transferId: r.transfer_id,
  kind: r.kind,
  laari: side(r.laari_amount, r.laari_fee, r.laari_status),
  core: side(r.core_amount, r.core_fee, r.core_status)
})

const breakRow = (date: string, b: Reconciliation.Break) => ({
  date,
  transfer_id: b.transferId,
  kind: b.kind,
  laari_amount: b.laari?.amount ?? null,
  core_amount: b.core?.amount ?? null,
  laari_fee: b.laari?.fee ?? null,
  core_fee: b.core?.fee ?? null,
  laari_status: b.laari?.status ?? null,
  core_status: b.core?.status ?? null
})

const chunks = <A>(items: ReadonlyArray<A>, size: number): ReadonlyArray<ReadonlyArray<A>> =>
  Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, (i + 1) * size))

const minutesBefore = (t: DateTime.Utc, minutes: number) => toDate(DateTime.subtract(t, { minutes }))

// `date` is read as text: pg makes a `date` column a JavaScript Date at the host's local midnight.
const runColumns = `to_char(date, 'YYYY-MM-DD') AS date, status, started_at, finished_at, laari_count,
  laari_amount, laari_fee, core_count, core_amount, core_fee, break_count, error`

export const make = Effect.map(SqlClient.SqlClient, (sql) => {
  const heldRows = (where: Statement.Fragment) =>
    sql<{
      readonly id: string
      readonly status: Movement.Status
      readonly amount: number | string
      readonly fee: number | string
      readonly posted_at: Date | null
    }>`SELECT id::text AS id, status, amount, fee, posted_at FROM wallet_movements WHERE ${where}`.pipe(
      Effect.map((rows) =>
        rows.map(
          (r): Reconciliation.Held => ({
            id: r.id,
            status: r.status,
            amount: int(r.amount),
            fee: int(r.fee),
            postedAt: fromDateOrNull(r.posted_at)
          })
        )
      )
    )

  /** laari's side of `day`: its movements posted on it, and any movement of `ids` whatever its status. */
  const held = (day: Balance.Day, ids: ReadonlyArray<string>) =>
    guard(
      Effect.gen(function* () {
        const posted = yield* heldRows(
          sql`status = 'posted' AND posted_at >= ${toDate(day.from)} AND posted_at < ${toDate(day.to)}`
        )
        const have = new Set(posted.map((m) => m.id))
        const wanted = ids.filter((id) => !have.has(id))
        const listed = yield* Effect.forEach(chunks(wanted, IdsPerQuery), (some) =>
          heldRows(sql`id IN ${sql.in(some)}`)
        )
        return [...posted, ...listed.flat()]
      })
    )

  /**
   * Takes `date`'s run for this process at `now`, as `running`; `false` when another holds it (or, for the
   * daily job, when the day needs no run). What the claim replaces is kept until the run finishes.
   */
  const claim = (date: string, now: DateTime.Utc, claimant: Claimant) => {
    const stale = minutesBefore(now, Reconciliation.StaleAfterMinutes)
    const takeable =
      claimant === "operator"
        ? sql`reconciliation_runs.status <> 'running' OR reconciliation_runs.started_at <= ${stale}`
        : sql`(reconciliation_runs.status = 'running' AND reconciliation_runs.started_at <= ${stale})
            OR (reconciliation_runs.status = 'failed'
              AND reconciliation_runs.finished_at <= ${minutesBefore(now, Reconciliation.RetryFailedAfterMinutes)})`
    return guard(
      sql<{ readonly date: string }>`INSERT INTO reconciliation_runs (date, status, started_at)
        VALUES (${date}, 'running', ${toDate(now)})
        ON CONFLICT (date) DO UPDATE SET status = 'running', started_at = EXCLUDED.started_at,
          finished_at = NULL, laari_count = NULL, laari_amount = NULL, laari_fee = NULL, core_count = NULL,
          core_amount = NULL, core_fee = NULL, break_count = 0, error = NULL
        WHERE ${takeable}
        RETURNING to_char(date, 'YYYY-MM-DD') AS date`.pipe(Effect.map((rows) => rows.length === 1))
    )
  }

  /**
   * Finishes the run of `date` claimed at `startedAt`, its breaks replacing the day's in the same
   * transaction; `false` when the claim was taken over since (that run's result stands).
   */
  const finish = (date: string, startedAt: DateTime.Utc, outcome: Outcome, now: DateTime.Utc) =>
    guard(
      sql.withTransaction(
        Effect.gen(function* () {
          const result = outcome._tag === "done" ? outcome.result : undefined
          const breaks = result?.breaks ?? []
          const status = result === undefined ? "failed" : breaks.length === 0 ? "clean" : "breaks"
          const updated = yield* sql`UPDATE reconciliation_runs SET ${sql.update({
            status,
            finished_at: toDate(now),
            laari_count: result?.laari.count ?? null,
            laari_amount: result?.laari.amount ?? null,
            laari_fee: result?.laari.fee ?? null,
            core_count: result?.core.count ?? null,
            core_amount: result?.core.amount ?? null,
            core_fee: result?.core.fee ?? null,
            break_count: breaks.length,
            error: outcome._tag === "failed" ? outcome.error : null
          })}
            WHERE date = ${date} AND status = 'running' AND started_at = ${toDate(startedAt)}
            RETURNING status`
          if (updated.length === 0) return false
          yield* sql`DELETE FROM reconciliation_breaks WHERE date = ${date}`
          yield* Effect.forEach(
            chunks(breaks, BreaksPerInsert),
            (some) =>
              sql`INSERT INTO reconciliation_breaks ${sql.insert(some.map((b) => breakRow(date, b)))}`,
            { discard: true }
          )
          return true
        })
      )
    )

  /** The run of `date` with its breaks (none while it runs, or when it failed); `undefined` when never run. */
  const get = (date: string) =>
    guard(
      Effect.gen(function* () {
        const runs = yield* sql<RunRow>`SELECT ${sql.unsafe(runColumns)} FROM reconciliation_runs
          WHERE date = ${date}`
        const row = runs[0]
        if (row === undefined) return undefined
        const run = runOf(row)
        if (run.status !== "breaks") return { run, breaks: [] } satisfies Reconciliation.RunWithBreaks
        const breaks = yield* sql<BreakRow>`SELECT transfer_id::text AS transfer_id, kind, laari_amount,
            core_amount, laari_fee, core_fee, laari_status, core_status
          FROM reconciliation_breaks WHERE date = ${date} ORDER BY transfer_id::text`
        return { run, breaks: breaks.map(breakOf) } satisfies Reconciliation.RunWithBreaks
      })
    )

  /**
   * The breaks of each kind of the latest day whose run finished with a result (clean or with breaks);
   * none of any kind before the first such run.
   */
  const latestBreaks = sql<{
    readonly kind: Reconciliation.Kind
    readonly n: number | string
  }>`SELECT b.kind, count(*) AS n FROM reconciliation_breaks b
      JOIN (SELECT date FROM reconciliation_runs WHERE status IN ('clean', 'breaks')
        ORDER BY date DESC LIMIT 1) latest ON latest.date = b.date
      GROUP BY b.kind`.pipe(Effect.map((rows) => rows.map((r) => [r.kind, int(r.n)] as const)))

  return { held, claim, finish, get, latestBreaks }
})

export type Store = Effect.Effect.Success<typeof make>
