/**
 * What every SQL adapter shares: how a failed statement meets the ports (`ServiceUnavailable` or a
 * defect), how a command joins the caller's transaction, and how columns map to the model (`rows`).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { Row } from "@effect/sql/SqlConnection"
import { SqlError } from "@effect/sql/SqlError"
import { Errors, Ids } from "@laari/core"
import { DateTime, Effect, Option } from "effect"

// ---------------------------------------------------------------------------------------------------
// Failures
// ---------------------------------------------------------------------------------------------------

/** SQLSTATEs that say "try again later" rather than "this statement is wrong". */
const transientStates = new Set([
  "25006", // read_only_sql_transaction: a primary turned standby, until the pool finds the new one
  "40001", // serialization_failure
  "40P01", // deadlock_detected
  "55P03", // lock_not_available
  "57014", // query_canceled (statement timeout)
  "57P01", // admin_shutdown
  "57P02", // crash_shutdown
  "57P03" // cannot_connect_now (starting up)
])
/** 08: connection exception; 53: insufficient resources (too many connections, disk full). */
const transientClasses = new Set(["08", "53"])

/**
 * Whether the database could not answer (unreachable, restarting, overloaded), so the same request
 * works once it is back. A database that answered carries `severity` and a SQLSTATE `code` (pg and
 * PGlite both use pg-protocol's `DatabaseError`); socket errors, connect timeouts and a closed PGlite
 * do not.
 */
export const isUnavailable = (error: SqlError): boolean => {
  const cause = error.cause as { readonly severity?: unknown; readonly code?: unknown } | null | undefined
  if (typeof cause?.severity !== "string" || typeof cause.code !== "string") return true
  return transientStates.has(cause.code) || transientClasses.has(cause.code.slice(0, 2))
}

const unavailable = (error: SqlError) => new Errors.ServiceUnavailable({ cause: error })

/**
 * `transaction` with a COMMIT that fails for want of the database told apart (`OutcomeUnknown`): the
 * SQL client turns a failed COMMIT into a defect, and one after the command succeeded is the COMMIT's
 * (or, rarer, a ROLLBACK after a failed flush: then `OutcomeUnknown` is merely cautious).
 */
export const committing =
  (transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | SqlError, R>) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | SqlError | Errors.OutcomeUnknown, R> =>
    Effect.suspend(() => {
      let succeeded = false
      return transaction(Effect.tap(effect, () => Effect.sync(() => (succeeded = true)))).pipe(
        Effect.catchSomeDefect((defect) =>
          succeeded && defect instanceof SqlError && isUnavailable(defect)
            ? Option.some(Effect.fail(Errors.OutcomeUnknown.of(defect)))
            : Option.none()
        )
      )
    })

/**
 * The one rule for SQL failures: a database that cannot answer is `ServiceUnavailable` (a 503 for
 * callers); any other `SqlError` is a bug in a statement and dies. Connection losses that the SQL client
 * turns into defects (a failed COMMIT or ROLLBACK) become `ServiceUnavailable` too.
 */
export const guard = <A, E, R>(
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, Exclude<E, SqlError> | Errors.ServiceUnavailable, R> =>
  effect.pipe(
    Effect.catchAll(
      (e): Effect.Effect<never, Exclude<E, SqlError> | Errors.ServiceUnavailable> =>
        !(e instanceof SqlError)
          ? Effect.fail(e as Exclude<E, SqlError>)
          : isUnavailable(e)
            ? Effect.fail(unavailable(e))
            : Effect.die(e)
    ),
    Effect.catchSomeDefect((defect) =>
      defect instanceof SqlError && isUnavailable(defect)
        ? Option.some(Effect.fail(unavailable(defect)))
        : Option.none()
    )
  )

type Guarded<T> = {
  readonly [K in keyof T]: T[K] extends (...args: infer P) => Effect.Effect<infer A, infer E, infer R>
    ? (...args: P) => Effect.Effect<A, Exclude<E, SqlError> | Errors.ServiceUnavailable, R>
    : T[K] extends Effect.Effect<infer A, infer E, infer R>
      ? Effect.Effect<A, Exclude<E, SqlError> | Errors.ServiceUnavailable, R>
      : T[K]
}

/** Applies `guard` to every method (and every effect-valued field) of a repository. */
export const repository = <T extends object>(methods: T): Guarded<T> =>
  Object.fromEntries(
    Object.entries(methods).map(([name, member]) => [
      name,
      Effect.isEffect(member)
        ? guard(member)
        : typeof member === "function"
          ? (...args: Array<unknown>) => guard(member(...args) as Effect.Effect<unknown, unknown, unknown>)
          : member
    ])
  ) as Guarded<T>

// ---------------------------------------------------------------------------------------------------
// Transactions
// ---------------------------------------------------------------------------------------------------

/**
 * Runs `effect` in the caller's transaction when there is one (joining it: no savepoint, so a nested
 * failure the caller recovers from keeps its writes, as the in-memory adapters do), else in a new one
 * opened by `begin` (a plain transaction, or the Transactor's `WriteBehind.transaction`).
 */
export const inTransaction =
  (
    sql: SqlClient.SqlClient,
    begin: <A, E, R>(
      effect: Effect.Effect<A, E, R>
    ) => Effect.Effect<A, E | SqlError, R> = sql.withTransaction
  ) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | SqlError, R> =>
    Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (open) =>
      Option.isSome(open) ? effect : begin(effect)
    )

/** Dies when called outside a transaction: for work that must commit with its caller's. */
export const insideTransaction = (what: string): Effect.Effect<void> =>
  Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (open) =>
    Option.isNone(open) ? Effect.dieMessage(`${what} must run inside a transaction`) : Effect.void
  )

// ---------------------------------------------------------------------------------------------------
// Column values
// ---------------------------------------------------------------------------------------------------

/** `bigint` columns and `count(*)`: pg returns text, PGlite a number. Amounts are safe integers. */
export const int = (value: unknown): number => {
  const n = Number(value)
  if (!Number.isSafeInteger(n))
    throw new Error(`Expected a safe integer from the database, got ${String(value)}`)
  return n
}

export const intOrNull = (value: unknown): number | null =>
  value === null || value === undefined ? null : int(value)

export const toDate = (t: DateTime.Utc): Date => DateTime.toDateUtc(t)
export const toDateOrNull = (t: DateTime.Utc | null): Date | null =>
  t === null ? null : DateTime.toDateUtc(t)
export const fromDate = (d: Date): DateTime.Utc => DateTime.unsafeFromDate(d)
export const fromDateOrNull = (d: Date | null): DateTime.Utc | null =>
  d === null ? null : DateTime.unsafeFromDate(d)

/** The earliest time a `SELECT min(...) AS at` found, or `undefined` when it found none. */
export const earliest = (rows: ReadonlyArray<{ readonly at: Date | null }>): DateTime.Utc | undefined => {
  const at = rows[0]?.at
  return at === undefined || at === null ? undefined : fromDate(at)
}

/** The first row mapped with `f`, or `undefined` when there is none. */
export const one =
  <Row, A>(f: (row: Row) => A) =>
  (rows: ReadonlyArray<Row>): A | undefined =>
    rows[0] === undefined ? undefined : f(rows[0])

/** Every row mapped with `f`. */
export const all =
  <Row, A>(f: (row: Row) => A) =>
  (rows: ReadonlyArray<Row>): ReadonlyArray<A> =>
    rows.map(f)

/** jsonb/json parameters are sent as JSON text: both drivers pass a string through as-is. */
export const json = (value: unknown): string => JSON.stringify(value)

// ---------------------------------------------------------------------------------------------------
// Lookups
// ---------------------------------------------------------------------------------------------------

/** Text PostgreSQL can hold: no NUL character. A lookup by anything else finds nothing. */
export const isStorable = (text: string): boolean => !text.includes("\u0000")

/** The row lock a find asks for, as literal SQL. */
export const lockClause = (options?: { readonly forUpdate?: boolean }): string =>
  options?.forUpdate ? "FOR UPDATE" : ""

/**
 * The WHERE condition of a path `{id}` (a UUID as the id, anything else as the reference), or
 * `undefined` when no row could match.
 */
export const lookupKey = (sql: SqlClient.SqlClient, lookup: Ids.Lookup) =>
  lookup._tag === "ByReference"
    ? isStorable(lookup.reference)
      ? sql`reference = ${lookup.reference}`
      : undefined
    : Ids.isUuid(lookup.id)
      ? sql`id = ${lookup.id}`
      : undefined

// ---------------------------------------------------------------------------------------------------
// Rows
// ---------------------------------------------------------------------------------------------------

/**
 * How one field of a model is kept: the columns it writes, and how it is read from a row and written
 * into one. Most fields are one column (`Column`); one kept in several (a price, a refund's source) says
 * so itself.
 */
export interface Field<T> {
  readonly columns: ReadonlyArray<string>
  readonly read: (row: Row) => T
  readonly write: (value: T, row: Record<string, unknown>) => void
}

/** Every field of the model `A`, each with how it is kept; an optional one may be kept nowhere. */
export type Fields<A> = { readonly [K in keyof A]: Field<A[K]> }

/**
 * A table's mapping to its model, written once, field by field (`rows`), where each adapter once had a
 * row type and two functions that had to agree with it. A plain loop over the fields, without a schema
 * to decode: a charge reads and writes its mandate on every call.
 */
export interface Rows<A> {
  readonly fromRow: (row: Row) => A
  /** The row of `a`, its columns in the order the fields are declared (a statement's text never varies). */
  readonly toRow: (a: A) => Record<string, unknown>
  /** The columns `toRow` writes, in that order. */
  readonly columns: ReadonlyArray<string>
}

export const rows = <A>(fields: Fields<A>): Rows<A> => {
  const keys = Object.keys(fields)
  const each = keys.map((key) => (fields as Record<string, Field<unknown>>)[key]!)
  const columns = each.flatMap((field) => field.columns)
  // Every object made from a copy of one with all its keys already in place: filling in values keeps
  // one shape, close to what a hand-written literal costs (a charge maps its mandate both ways).
  const model = Object.fromEntries(keys.map((key) => [key, undefined]))
  const row = Object.fromEntries(columns.map((column) => [column, undefined]))
  const n = keys.length
  return {
    fromRow: (from) => {
      const a: Record<string, unknown> = { ...model }
      for (let i = 0; i < n; i++) a[keys[i]!] = each[i]!.read(from)
      return a as A
    },
    toRow: (a) => {
      const to: Record<string, unknown> = { ...row }
      for (let i = 0; i < n; i++) each[i]!.write((a as Record<string, unknown>)[keys[i]!], to)
      return to
    },
    columns
  }
}

const kept = <T>(name: string, read: (value: unknown) => T, write: (value: T) => unknown): Field<T> => ({
  columns: [name],
  read: (row) => read(row[name]),
  write: (value, row) => {
    row[name] = write(value)
  }
})

const same = (value: unknown) => value

/**
 * A payment's `amount_refunded`: written only by a refund (`Refunds`), never with the payment's row, so
 * read (0 where a statement does not select it) and not written here.
 */
const refunded: Field<number> = { columns: [], read: (row) => int(row.amount_refunded ?? 0), write: () => {} }

/** The fields kept in one column each. */
export const Column = {
  /** Kept as it is (text, uuid, boolean, integer, text[], jsonb read back), typed as the field. */
  as: <T>(name: string): Field<T> => kept(name, (value) => value as T, same),
  /** A `bigint` (pg returns text) or an integer checked as one: `int`. */
  int: (name: string): Field<number> => kept(name, int, same),
  intOrNull: (name: string): Field<number | null> => kept(name, intOrNull, same),
  date: (name: string): Field<DateTime.Utc> => kept(name, (value) => fromDate(value as Date), toDate),
  dateOrNull: (name: string): Field<DateTime.Utc | null> =>
    kept(name, (value) => fromDateOrNull(value as Date | null), toDateOrNull),
  refunded
}
