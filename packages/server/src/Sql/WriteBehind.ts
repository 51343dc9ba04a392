/**
 * Write-behind inside a command's transaction: writes whose result nobody reads (inserting a charge, a
 * notification, an event; updating a mandate; booking a transfer; storing an idempotent response) are
 * held back and sent together, as one statement of data-modifying CTEs, when the transaction next
 * runs any other statement or commits. A charge is then one round trip of writes instead of six.
 *
 * What keeps this exactly equivalent to running each write in turn:
 * - every other statement of the transaction flushes what is held first (the transaction's connection
 *   is wrapped), so a read sees every earlier write, and statements keep their order;
 * - two held writes never touch the same row: each names the rows it changes (`keys`), and a write
 *   that names a row already held flushes first (in one statement, a second change would be lost);
 * - held writes return nothing to their callers; a constraint they break fails the flush, and with it
 *   the transaction, as it would have failed the write.
 * Outside a transaction opened by `Store.Transactor` (no `Pending` in context) a write simply runs.
 *
 * A write is either CTE parts of its own (`hold`) or rows added to sets (`holdRows`, `RowSet`): a set is
 * one CTE over a JSON array of rows, whatever the number of writes, which is what lets the renewal
 * engine write a batch of a hundred subscriptions in one statement the planner reads once.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { Connection } from "@effect/sql/SqlConnection"
import type { SqlError } from "@effect/sql/SqlError"
import type * as Statement from "@effect/sql/Statement"
import { Context, Effect, Exit, Option, Stream } from "effect"

/** One part of a held write: a CTE `name AS (text)`; `select` parts must be read to run (pg_notify). */
interface Part {
  readonly name: string
  readonly text: string
  readonly params: ReadonlyArray<unknown>
  readonly select: boolean
}

/**
 * A write over a set of rows: one CTE `name AS (text)` in the flush, however many writes add rows to
 * it, where `$1` in `text` is the JSON array of their rows (`json_populate_recordset`); a set without
 * `$1` reads other sets (the deliveries of the events inserted). Planning one statement of a thousand
 * CTEs costs as much as a thousand statements; a set is planned once whatever its size.
 */
export interface RowSet {
  readonly name: string
  readonly text: string
  /** The columns its text reads of a row, where it names them: a row's others are not sent. */
  readonly columns?: ReadonlyArray<string>
  /** Must be read to run (pg_notify). */
  readonly select?: boolean
}

interface Buffer {
  parts: Array<Part>
  sets: Map<string, { readonly set: RowSet; readonly rows: Array<unknown> }>
  keys: Set<string>
  count: number
  /** Parameters held: a flush stays well under PostgreSQL's 65,535 per statement. */
  params: number
  /** Rows this transaction has locked and read, as read, until it writes them (`Locked`). */
  readonly locked: Map<string, unknown>
  /**
   * A statement announced ahead (`Ahead`), to go with the transaction's next one; only where the
   * transaction batches its statements (`pipelined`, `PgTransaction`).
   */
  ahead: AheadStatement | undefined
  readonly pipelined: boolean
}

/** A statement as its connection receives it: compiled text and parameters. */
export interface AheadStatement {
  readonly text: string
  readonly params: ReadonlyArray<unknown>
  /**
   * The keys (as writes name them, `hold`) of every row the statement reads, when they are known: a
   * held write that names none of them cannot change its answer.
   */
  readonly reads?: ReadonlyArray<string> | undefined
}

/**
 * Whether a statement announced ahead still answers as if run now: nothing held, or, where the rows it
 * reads are known, no held write names one of them.
 */
export const untouched = (buffer: Buffer, statement: AheadStatement): boolean =>
  isEmpty(buffer) || statement.reads?.every((key) => !buffer.keys.has(key)) === true

export const emptyBuffer = (options?: { readonly pipelined?: boolean }): Buffer => ({
  parts: [],
  sets: new Map(),
  keys: new Set(),
  count: 0,
  params: 0,
  locked: new Map(),
  ahead: undefined,
  pipelined: options?.pipelined === true
})

/** Whether no write is held. */
export const isEmpty = (buffer: Buffer): boolean => buffer.parts.length === 0 && buffer.sets.size === 0

/** The writes held by the current transaction. */
export class Pending extends Context.Tag("laari/server/PendingWrites")<Pending, Buffer>() {}

/** Shifts `$n` placeholders by `offset`: the parts' parameters are numbered anew in the flush. */
const renumber = (text: string, offset: number) =>
  offset === 0 ? text : text.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + offset}`)

/** ISO text of instants already formatted: a batch repeats a few (its `now`, its periods' edges). */
const isoTexts = new Map<number, string>()
const isoText = (d: Date): string | null => {
  const ms = d.getTime()
  let text = isoTexts.get(ms)
  if (text === undefined) {
    // `toJSON`'s answers: `null` for an invalid date.
    if (Number.isNaN(ms)) return null
    if (isoTexts.size >= 256) isoTexts.clear()
    text = d.toISOString()
    isoTexts.set(ms, text)
  }
  return text
}

/** `value`, a `Date` as its JSON text. */
const plainValue = (value: unknown): unknown => (value instanceof Date ? isoText(value) : value)

/**
 * A set's rows as `JSON.stringify` writes them, only the `columns` of each where given, with each
 * top-level `Date` formatted once: reached through its `toJSON`, a `Date` costs `JSON.stringify` several
 * times its text, and the JSON of a renewal batch's rows, mostly timestamps and columns no statement
 * read, was a seventh of a renewal's server CPU.
 */
export const rowsJson = (rows: ReadonlyArray<unknown>, columns?: ReadonlyArray<string>): string =>
  JSON.stringify(
    rows.map((row) => {
      if (row instanceof Date) return isoText(row)
      if (row === null || typeof row !== "object") return row
      const proto: unknown = Object.getPrototypeOf(row)
      if (proto !== Object.prototype && proto !== null) return row
      // No prototype: a key `__proto__` stays a key.
      const plain: Record<string, unknown> = Object.create(null)
      const fields = row as Record<string, unknown>
      if (columns === undefined) for (const key of Object.keys(fields)) plain[key] = plainValue(fields[key])
      else for (const key of columns) if (Object.hasOwn(fields, key)) plain[key] = plainValue(fields[key])
      return plain
    })
  )

/** The held writes as one statement, and the buffer emptied. Sets come after the parts: they may read earlier sets. */
const combine = (buffer: Buffer): readonly [string, Array<unknown>] => {
  const params: Array<unknown> = []
  const ctes = buffer.parts.map((part) => {
    const text = renumber(part.text, params.length)
    params.push(...part.params)
    return `${part.name} AS (${text})`
  })
  const reads = buffer.parts.filter((p) => p.select).map((p) => `(SELECT count(*) FROM ${p.name})`)
  for (const { set, rows } of buffer.sets.values()) {
    // A set that reads only other sets has no `$1`: nothing to renumber, no parameter.
    ctes.push(`${set.name} AS (${renumber(set.text, params.length)})`)
    if (set.text.includes("$1")) params.push(rowsJson(rows, set.columns))
    if (set.select === true) reads.push(`(SELECT count(*) FROM ${set.name})`)
  }
  const text = `WITH ${ctes.join(",\n")}\nSELECT ${reads.length === 0 ? "1" : reads.join(", ")}`
  buffer.parts = []
  buffer.sets = new Map()
  buffer.keys = new Set()
  buffer.params = 0
  return [text, params]
}

/**
 * The held writes as one statement, and the buffer emptied; `undefined` when nothing is held. For a
 * connection that sends them itself, in one round trip with what follows (`PgTransaction`).
 */
export const drain = (buffer: Buffer): readonly [string, Array<unknown>] | undefined =>
  isEmpty(buffer) ? undefined : combine(buffer)

const flushOn = (conn: Connection, buffer: Buffer): Effect.Effect<void, SqlError> =>
  Effect.suspend(() => {
    if (isEmpty(buffer)) return Effect.void
    const [text, params] = combine(buffer)
    return Effect.asVoid(conn.execute(text, params, undefined))
  })

/** The connection with every statement preceded by a flush of what is held. */
const wrap = (conn: Connection, buffer: Buffer): Connection => ({
  execute: (sql, params, transform) =>
    Effect.zipRight(flushOn(conn, buffer), conn.execute(sql, params, transform)),
  executeRaw: (sql, params) => Effect.zipRight(flushOn(conn, buffer), conn.executeRaw(sql, params)),
  executeStream: (sql, params, transform) =>
    Stream.unwrap(Effect.as(flushOn(conn, buffer), conn.executeStream(sql, params, transform))),
  executeValues: (sql, params) => Effect.zipRight(flushOn(conn, buffer), conn.executeValues(sql, params)),
  executeUnprepared: (sql, params, transform) =>
    Effect.zipRight(flushOn(conn, buffer), conn.executeUnprepared(sql, params, transform))
})

/** The transaction's connection (always there where `sql.withTransaction` or `Pending` is). */
const currentConnection = Effect.map(
  Effect.serviceOption(SqlClient.TransactionConnection),
  Option.match({
    onNone: (): never => {
      throw new Error("write-behind outside a transaction")
    },
    onSome: ([conn, id]) => [conn as unknown as Connection, id] as const
  })
)

/**
 * How the current write-behind transaction runs a part of itself that can fail alone
 * (`Transactor.savepoint`): a failure undoes the part's writes, held or sent, and the transaction goes on.
 */
export class Savepoints extends Context.Tag("laari/server/Savepoints")<
  Savepoints,
  { readonly run: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | SqlError, R> }
>() {}

/**
 * Drops what is held (the writes of a part rolled back to its savepoint), and what the transaction
 * remembers of the rows it locked: a lock taken since the savepoint is released with it.
 */
export const discard = (buffer: Buffer): void => {
  buffer.parts = []
  buffer.sets = new Map()
  buffer.keys = new Set()
  buffer.params = 0
  buffer.locked.clear()
  buffer.ahead = undefined
}

/** A savepoint's name, unique in its transaction. */
export const savepointName = (n: number): string => `laari_part_${n}`

/** Savepoints on `conn`, one statement each: what is held goes first, the part's writes after. */
const savepointsOn = (conn: Connection, buffer: Buffer): Savepoints["Type"] => {
  let made = 0
  return {
    run: (effect) =>
      Effect.suspend(() => {
        const name = savepointName(++made)
        return flushOn(conn, buffer).pipe(
          Effect.zipRight(conn.executeUnprepared(`SAVEPOINT ${name}`, [], undefined)),
          Effect.zipRight(Effect.exit(effect)),
          Effect.flatMap((exit) =>
            Exit.isSuccess(exit)
              ? exit
              : Effect.suspend(() => {
                  discard(buffer)
                  return Effect.zipRight(
                    conn.executeUnprepared(`ROLLBACK TO SAVEPOINT ${name}`, [], undefined),
                    exit
                  )
                })
          )
        )
      })
  }
}

/**
 * Runs `effect` in a new transaction with write-behind: held writes are flushed before any other
 * statement and before the commit; on failure they are dropped with the rollback.
 */
export const transaction =
  (sql: SqlClient.SqlClient) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | SqlError, R> =>
    sql.withTransaction(
      Effect.flatMap(currentConnection, ([conn, id]) => {
        const buffer = emptyBuffer()
        return effect.pipe(
          Effect.tap(() => flushOn(conn, buffer)),
          Effect.provideService(SqlClient.TransactionConnection, [
            wrap(conn, buffer) as unknown as (typeof SqlClient.TransactionConnection.Service)[0],
            id
          ]),
          Effect.provideService(Pending, buffer),
          Effect.provideService(Savepoints, savepointsOn(conn, buffer))
        ) as Effect.Effect<A, E | SqlError, R>
      })
    )

/** Parameters held before a flush is forced; PostgreSQL takes at most 65,535 in one statement. */
export const MaxParams = 30_000

/** A part of a write: a CTE named through `name(alias)`; `select` for a part that only reads (pg_notify). */
export interface WritePart {
  readonly alias: string
  readonly statement: Statement.Statement<unknown>
  readonly select?: boolean
}

/**
 * A write built of CTE parts: `build(name)` returns them, naming each part, and referring to an
 * earlier one, through `name(alias)`, unique in the flush. `keys` name the rows it changes (a key
 * already held flushes first). Held in a write-behind transaction; else run at once, as one statement.
 */
export const hold = (
  sql: SqlClient.SqlClient,
  keys: ReadonlyArray<string>,
  build: (name: (alias: string) => string) => ReadonlyArray<WritePart>
): Effect.Effect<void, SqlError> =>
  Effect.flatMap(Effect.serviceOption(Pending), (pending) => {
    const buffer = Option.getOrElse(pending, emptyBuffer)
    const prefix = `w${buffer.count++}_`
    const name = (alias: string) => `${prefix}${alias}`
    const parts: Array<Part> = build(name).map((part) => {
      const [text, params] = part.statement.compile()
      return { name: name(part.alias), text, params, select: part.select === true }
    })
    const size = parts.reduce((n, part) => n + part.params.length, 0)
    return enqueue(sql, pending, buffer, keys, buffer.params + size > MaxParams, () => {
      buffer.parts.push(...parts)
      buffer.params += size
    })
  })

/**
 * Puts a write into the transaction's buffer, after a flush when it names a row already held (or the
 * buffer is full); outside a write-behind transaction, runs it at once.
 */
const enqueue = (
  sql: SqlClient.SqlClient,
  pending: Option.Option<Buffer>,
  buffer: Buffer,
  keys: ReadonlyArray<string>,
  full: boolean,
  put: () => void
): Effect.Effect<void, SqlError> => {
  const add = Effect.sync(() => {
    put()
    for (const k of keys) {
      buffer.keys.add(k)
      buffer.locked.delete(k)
    }
  })
  if (Option.isNone(pending))
    return Effect.flatMap(add, () => {
      const [text, params] = combine(buffer)
      return Effect.asVoid(sql.unsafe(text, params))
    })
  return full || keys.some((k) => buffer.keys.has(k))
    ? Effect.zipRight(
        Effect.flatMap(currentConnection, ([conn]) => flushOn(conn, buffer)),
        add
      )
    : add
}

/**
 * Inserts the set's rows into `table`, in the order they were held (so identity columns count as they
 * would one statement at a time). `columns` are the rows' keys; `suffix` follows (ON CONFLICT, RETURNING).
 */
export const insertInto = (
  name: string,
  table: string,
  columns: ReadonlyArray<string>,
  suffix = ""
): RowSet => ({
  name,
  columns,
  text: `INSERT INTO ${table} (${columns.join(", ")})
    SELECT ${columns.map((c) => `v.${c}`).join(", ")}
    FROM json_populate_recordset(NULL::${table}, $1) WITH ORDINALITY AS v ORDER BY v.ordinality ${suffix}`
})

/**
 * A `pg_notify(channel, payload)` when the set `after` wrote any row: sent on commit, so whoever it wakes
 * sees the rows.
 */
export const wakeAfter = (name: string, after: string, channel: string, payload: string): RowSet => ({
  name,
  select: true,
  text: `SELECT pg_notify('${channel}', '${payload}') FROM (SELECT count(*) AS n FROM ${after}) q WHERE q.n > 0`
})

/** Updates the rows of `table` matching each row's `match` columns, setting the rest of its `columns`. */
export const updateOf = (
  name: string,
  table: string,
  columns: ReadonlyArray<string>,
  fixed: ReadonlyArray<string>,
  match: ReadonlyArray<string>
): RowSet => {
  const set = columns.filter((c) => !fixed.includes(c))
  return {
    name,
    columns: [...new Set([...match, ...set])],
    text: `UPDATE ${table} t SET ${set.map((c) => `${c} = v.${c}`).join(", ")}
    FROM json_populate_recordset(NULL::${table}, $1) v
    WHERE ${match.map((c) => `t.${c} = v.${c}`).join(" AND ")}`
  }
}

/**
 * A write of rows into sets (`RowSet`): each `[set, row]` adds `row` to `set`'s rows, a `[set]` only
 * makes sure the set is in the flush. `keys` as for `hold`. Held in a write-behind transaction; else
 * run at once, as one statement.
 */
export const holdRows = (
  sql: SqlClient.SqlClient,
  keys: ReadonlyArray<string>,
  writes: ReadonlyArray<readonly [RowSet, unknown?]>
): Effect.Effect<void, SqlError> =>
  Effect.flatMap(Effect.serviceOption(Pending), (pending) => {
    const buffer = Option.getOrElse(pending, emptyBuffer)
    return enqueue(sql, pending, buffer, keys, false, () => {
      for (const write of writes) {
        const [set] = write
        let held = buffer.sets.get(set.name)
        if (held === undefined) {
          held = { set, rows: [] }
          buffer.sets.set(set.name, held)
        }
        if (write.length > 1) held.rows.push(write[1])
      }
    })
  })

/**
 * Rows a write-behind transaction has locked (`FOR UPDATE`) and read: while it holds the lock and has
 * not written the row (a held write naming the row's key forgets it), the row read is the row, so a
 * later step of the same command need not lock and read it again.
 */
export const Locked = {
  /** Whether this runs in a write-behind transaction (where a read may lock and be remembered). */
  active: Effect.map(Effect.serviceOption(Pending), Option.isSome),
  remember: (key: string, row: unknown) =>
    Effect.flatMap(Effect.serviceOption(Pending), (pending) =>
      Effect.sync(() => {
        if (Option.isSome(pending)) pending.value.locked.set(key, row)
      })
    ),
  recall: <A>(key: string): Effect.Effect<A | undefined> =>
    Effect.map(Effect.serviceOption(Pending), (pending) =>
      Option.isSome(pending) ? (pending.value.locked.get(key) as A | undefined) : undefined
    ),
  forget: (key: string) =>
    Effect.flatMap(Effect.serviceOption(Pending), (pending) =>
      Effect.sync(() => {
        if (Option.isSome(pending)) pending.value.locked.delete(key)
      })
    )
}

/**
 * A statement the command will run next, announced before the statement that comes first (a
 * keyed charge's mandate lock, announced before the key's claim). Where the transaction batches its
 * statements, the announced one goes in the same round trip, right after the next statement, and its
 * answer is kept for the command: served if the command's next statement is exactly it (same text and
 * parameters) with nothing written in between, else dropped (it ran; what it locked stays locked). It
 * only runs earlier, in the same transaction, with none of the transaction's statements between: the
 * same outcome as running it when asked. Elsewhere (one statement a round trip), announcing does nothing.
 *
 * `reads`, the keys of the rows the statement reads (a lock by primary key reads one row), lets its
 * answer be served after writes held meanwhile that name other rows (`untouched`).
 */
export const Ahead = {
  send: (statement: Statement.Statement<unknown>, reads?: ReadonlyArray<string>): Effect.Effect<void> =>
    Effect.flatMap(Effect.serviceOption(Pending), (pending) =>
      Effect.sync(() => {
        if (Option.isNone(pending) || !pending.value.pipelined) return
        const [text, params] = statement.compile()
        pending.value.ahead = { text, params, reads }
      })
    )
}
