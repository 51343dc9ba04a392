/**
 * An Effect 3 `SqlClient` backed by PGlite (Postgres compiled to WASM, running in-process).
 *
 * `@effect/sql-pglite` only exists for Effect 4, so this is a small equivalent built on
 * `@effect/sql`'s `SqlClient.make` and the Postgres statement compiler of `@effect/sql-pg`:
 * placeholders are `$1..$n` and `sql.insert` / `sql.in` / `sql.update` / identifiers compile
 * exactly as with `PgClient`.
 *
 * PGlite is a single Postgres session. A transaction opened by one fiber would be visible to
 * every other fiber using the same instance, so all access goes through a one-permit semaphore:
 * a plain statement holds the permit while it runs, a transaction holds it from BEGIN until
 * COMMIT/ROLLBACK. Statements inside the transaction (the fiber's context carries the
 * transaction connection) run without taking the permit again. Consequence: a statement that
 * escapes the transaction's context (e.g. `Effect.forkDaemon` inside `withTransaction`) waits
 * for the transaction to finish, so it must not be awaited from inside that transaction. The
 * Transactor's transactions (`PgTransaction`, over the sessions provided here as `PgPool` provides its
 * connections on PostgreSQL: `PgBatch.BatchSessions`) take the same permit and send their statements in
 * batches (`PgliteBatch`).
 *
 * A statement with parameters goes to PGlite as one protocol message (Parse, Bind, Describe, Execute,
 * Sync), not through `PGlite.query`, which makes six calls into PostgreSQL per statement (it asks for the
 * parameters' types first, to serialize them). A text this process sends again and again is parsed and
 * planned once, as a named prepared statement, as on PostgreSQL (`PgPrepared`).
 *
 * Value mapping:
 * - parameters are sent as node-postgres sends them to PostgreSQL (`PgBatch.prepareValue`), so both
 *   databases receive the same text: `Date` -> timestamp with offset, `bigint` and numbers -> decimal,
 *   `boolean` -> true/false, `Uint8Array` -> binary, arrays -> array literal, other objects ->
 *   `JSON.stringify` (a JS string bound to jsonb is sent as-is, i.e. it must already be JSON text),
 *   `null`/`undefined` -> NULL.
 * - results (PGlite 0.5 parsers, text protocol): int2/int4/float -> number, int8 -> number when it is a safe integer, otherwise
 *   bigint (see `parseInt8`), numeric -> string, bool -> boolean, timestamptz/timestamp/date ->
 *   `Date` (`new Date(text)`: a `timestamp` without zone is read in the Node process's local
 *   time zone, `date` as UTC midnight), json/jsonb -> parsed value, bytea -> `Uint8Array`.
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as SqlClient from "@effect/sql/SqlClient"
import type { Connection } from "@effect/sql/SqlConnection"
import { SqlError } from "@effect/sql/SqlError"
import { PGlite, type Results, type RowMode, types } from "@electric-sql/pglite"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { mkdir } from "node:fs/promises"
import * as DataDir from "../../Platform/DataDir.js"
import * as PgBatch from "../Pg/PgBatch.js"
import * as PgliteBatch from "./PgliteBatch.js"

export interface PgliteClientConfig {
  /** Directory holding the database files (created if missing). `undefined` = in memory. */
  readonly dataDir?: string | undefined
}

export interface PgliteClient extends SqlClient.SqlClient {
  readonly config: PgliteClientConfig
  /**
   * The underlying PGlite instance, for things the SqlClient does not cover (e.g.
   * `dumpDataDir`). Queries sent through it bypass the client's semaphore and therefore
   * may run inside another fiber's open transaction.
   */
  readonly pglite: PGlite
  /** This instance's one session for the Transactor's transactions (`PgTransaction`), under the client's permit. */
  readonly sessions: PgBatch.Sessions
  /**
   * `effect`, a use of `pglite` itself (a `LISTEN`), under the client's permit: PGlite is one session,
   * and a call made beside a batch under way would mix its messages with the batch's.
   */
  readonly exclusive: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

export const PgliteClient = Context.GenericTag<PgliteClient>("@laari/server/Sql/Pglite/PgliteClient")

const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER)
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER)

/**
 * int8 (`count(*)`, bigserial, bigint columns) as a JS number when it fits exactly, otherwise
 * as a bigint so large values are never silently rounded. PGlite 0.5 happens to default to
 * the same rule; it is pinned here so callers can rely on it across PGlite upgrades.
 */
const parseInt8 = (value: string): number | bigint => {
  const n = BigInt(value)
  return n >= MIN_SAFE && n <= MAX_SAFE ? Number(n) : n
}

const open = (dataDir: string | undefined): Effect.Effect<PGlite, SqlError> =>
  Effect.tryPromise({
    try: async () => {
      // PGlite only creates the last path segment itself.
      if (dataDir !== undefined) await mkdir(dataDir, { recursive: true })
      // PostgreSQL's default 128 MB of shared buffers lives in the WebAssembly heap, which never shrinks:
      // an idle server held about 300 MB. A database one process serves needs far fewer, and the files
      // under them stay in the operating system's page cache.
      const db = await PGlite.create({
        dataDir,
        parsers: { [types.INT8]: parseInt8 },
        postgresqlconf: ["shared_buffers = 16MB"]
      })
      if (dataDir !== undefined) DataDir.privatize(dataDir)
      return db
    },
    catch: (cause) => new SqlError({ cause, message: "Failed to open PGlite database" })
  })

export const make = (
  options: PgliteClientConfig = {}
): Effect.Effect<PgliteClient, SqlError, Scope.Scope | Reactivity.Reactivity> =>
  Effect.gen(function* () {
    // One process at a time on a directory (the service takes it sooner, and this shares its hold).
    if (options.dataDir !== undefined) {
      const dir = options.dataDir
      yield* Effect.promise(() => mkdir(dir, { recursive: true }))
      yield* DataDir.lock(dir).pipe(
        Effect.mapError((cause) => new SqlError({ cause, message: cause.message }))
      )
    }
    // Closing matters: an open instance keeps the Node process alive. `close` waits for
    // queries PGlite has already accepted.
    const pglite = yield* Effect.acquireRelease(open(options.dataDir), (db) =>
      Effect.promise(() => db.close()).pipe(
        Effect.tap(() => Effect.sync(() => options.dataDir && DataDir.privatize(options.dataDir))),
        Effect.catchAllDefect((cause) => Effect.logWarning("Failed to close PGlite", cause))
      )
    )
    const semaphore = yield* Effect.makeSemaphore(1)

    // Without parameters the simple query protocol (`exec`) is used, which accepts several
    // statements (migrations); with them the extended protocol, one statement (`PgliteBatch`).
    // Uninterruptible because PGlite cannot cancel a running query: the caller (and with it
    // the permit) must stay until PGlite is really done with it.
    const run = (
      sql: string,
      params: ReadonlyArray<unknown>,
      rowMode: RowMode
    ): Effect.Effect<ReadonlyArray<Results>, SqlError> =>
      params.length === 0
        ? Effect.uninterruptible(
            Effect.tryPromise({
              try: () => pglite.exec(sql, { rowMode }),
              catch: (cause) => new SqlError({ cause, message: "Failed to execute statement" })
            })
          )
        : Effect.mapError(
            PgliteBatch.run(pglite, [
              { text: sql, params, rowMode: rowMode === "array" ? "array" : undefined }
            ]),
            (failed) => failed.error
          )

    // Like PgClient: one statement -> its rows, several statements -> one row array each.
    // Rows are objects, or arrays of column values with rowMode "array".
    const runRows = (
      sql: string,
      params: ReadonlyArray<unknown>,
      rowMode: RowMode
    ): Effect.Effect<ReadonlyArray<unknown>, SqlError> =>
      Effect.map(run(sql, params, rowMode), (results) =>
        results.length === 1 ? results[0]!.rows : results.map((result) => result.rows)
      )

    const connection: Connection = {
      execute: (sql, params, transformRows) =>
        Effect.map(runRows(sql, params, "object"), (rows) =>
          transformRows ? transformRows(rows as ReadonlyArray<object>) : rows
        ),
      executeRaw: (sql, params) =>
        Effect.map(run(sql, params, "object"), (results) => (results.length === 1 ? results[0] : results)),
      executeValues: (sql, params) =>
        runRows(sql, params, "array") as Effect.Effect<ReadonlyArray<ReadonlyArray<unknown>>, SqlError>,
      executeUnprepared: (sql, params, transformRows) => connection.execute(sql, params, transformRows),
      // PGlite has no cursors: run the query, then stream the materialized rows.
      executeStream: (sql, params, transformRows) =>
        Stream.fromIterableEffect(connection.execute(sql, params, transformRows))
    }

    // Takes the permit until the surrounding scope closes. Statements are run in a scope of
    // their own; for `withTransaction` / `reserve` the scope spans the whole transaction.
    const acquirer: Connection.Acquirer = Effect.uninterruptibleMask((restore) =>
      restore(semaphore.take(1)).pipe(
        Effect.zipRight(Effect.addFinalizer(() => semaphore.release(1))),
        Effect.as(connection)
      )
    )

    const client = yield* SqlClient.make({
      acquirer,
      // Same as `acquirer`, spelled out: the transaction keeps the permit; statements inside it
      // get `connection` from the transaction context and don't touch the semaphore.
      transactionAcquirer: acquirer,
      compiler: PgClient.makeCompiler(),
      spanAttributes: [["db.system.name", "postgresql"]]
    })

    // The Transactor's transactions (`Store`): the permit from BEGIN to COMMIT, and the statements in
    // as few calls into PGlite as on PostgreSQL in round trips (a keyed charge: two).
    const session = (): PgBatch.Session => ({
      lost: undefined,
      run: (statements) => PgliteBatch.run(pglite, statements),
      release: semaphore.release(1)
    })
    const sessions: PgBatch.Sessions = {
      acquire: Effect.map(semaphore.take(1), session),
      interruptible: true
    }

    return Object.assign(client, { config: options, pglite, sessions, exclusive: semaphore.withPermits(1) })
  })

/** Provides `SqlClient`, `PgliteClient` and `PgBatch.BatchSessions`; Reactivity is included. */
export const layer = (
  options: PgliteClientConfig = {}
): Layer.Layer<PgliteClient | SqlClient.SqlClient | PgBatch.BatchSessions, SqlError> =>
  Layer.scopedContext(
    Effect.map(make(options), (client) =>
      Context.make(PgliteClient, client).pipe(
        Context.add(SqlClient.SqlClient, client),
        Context.add(PgBatch.BatchSessions, client.sessions)
      )
    )
  ).pipe(Layer.provide(Reactivity.layer))
