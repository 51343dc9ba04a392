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
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { Connection } from "@effect/sql/SqlConnection"
import type { SqlError } from "@effect/sql/SqlError"
import type * as Statement from "@effect/sql/Statement"
import { Context, Effect, Option, Stream } from "effect"

/** One part of a held write: a CTE `name AS (text)`; `select` parts must be read to run (pg_notify). */
interface Part {
  readonly name: string
  readonly text: string
  readonly params: ReadonlyArray<unknown>
  readonly select: boolean
}

interface Buffer {
  parts: Array<Part>
  keys: Set<string>
  count: number
  /** Rows this transaction has locked and read, as read, until it writes them (`Locked`). */
  readonly locked: Map<string, unknown>
}

/** The writes held by the current transaction. */
export class Pending extends Context.Tag("laari/server/PendingWrites")<Pending, Buffer>() {}

/** Shifts `$n` placeholders by `offset`: the parts' parameters are numbered anew in the flush. */
const renumber = (text: string, offset: number) =>
  offset === 0 ? text : text.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + offset}`)

/** The held writes as one statement, and the buffer emptied. */
const combine = (buffer: Buffer): readonly [string, Array<unknown>] => {
  const params: Array<unknown> = []
  const ctes = buffer.parts.map((part) => {
    const text = renumber(part.text, params.length)
    params.push(...part.params)
    return `${part.name} AS (${text})`
  })
  const reads = buffer.parts.filter((p) => p.select).map((p) => `(SELECT count(*) FROM ${p.name})`)
  const text = `WITH ${ctes.join(",\n")}\nSELECT ${reads.length === 0 ? "1" : reads.join(", ")}`
  buffer.parts = []
  buffer.keys = new Set()
  return [text, params]
}

const flushOn = (conn: Connection, buffer: Buffer): Effect.Effect<void, SqlError> =>
  Effect.suspend(() => {
    if (buffer.parts.length === 0) return Effect.void
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
 * Runs `effect` in a new transaction with write-behind: held writes are flushed before any other
 * statement and before the commit; on failure they are dropped with the rollback.
 */
export const transaction =
  (sql: SqlClient.SqlClient) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | SqlError, R> =>
    sql.withTransaction(
      Effect.flatMap(currentConnection, ([conn, id]) => {
        const buffer: Buffer = { parts: [], keys: new Set(), count: 0, locked: new Map() }
        return effect.pipe(
          Effect.tap(() => flushOn(conn, buffer)),
          Effect.provideService(SqlClient.TransactionConnection, [
            wrap(conn, buffer) as unknown as (typeof SqlClient.TransactionConnection.Service)[0],
            id
          ]),
          Effect.provideService(Pending, buffer)
        ) as Effect.Effect<A, E | SqlError, R>
      })
    )

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
    const buffer: Buffer = Option.getOrElse(pending, () => ({
      parts: [],
      keys: new Set<string>(),
      count: 0,
      locked: new Map<string, unknown>()
    }))
    const add = Effect.sync(() => {
      const prefix = `w${buffer.count++}_`
      const name = (alias: string) => `${prefix}${alias}`
      for (const part of build(name)) {
        const [text, params] = part.statement.compile()
        buffer.parts.push({ name: name(part.alias), text, params, select: part.select === true })
      }
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
    const clash = keys.some((k) => buffer.keys.has(k))
    return clash
      ? Effect.zipRight(
          Effect.flatMap(currentConnection, ([conn]) => flushOn(conn, buffer)),
          add
        )
      : add
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
