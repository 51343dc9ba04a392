/**
 * The PostgreSQL connection pool, with every wait bounded: a request never waits on
 * the database longer than a few seconds, and then answers `503` with its transaction rolled back.
 *
 * - `statement_timeout`, `lock_timeout` and `idle_in_transaction_session_timeout` are set on each
 *   connection, so the server cancels what runs, waits or idles too long (and releases its locks).
 * - A connection that goes silent (a frozen network, a stopped server behind a proxy) cannot be helped by
 *   the server's timeouts: the client gives up reading after `queryTimeout` and destroys the socket, so
 *   the pool replaces it instead of queueing the next statement behind a reply that never comes.
 * - TCP keepalive finds dead idle connections; connecting and waiting for a free connection are bounded
 *   by `connectTimeout`.
 * - A `DATABASE_URL` of several hosts (`HostList`) follows the primary among them (`Primary`): the pool
 *   connects only to the host that takes writes, and finds it again after a failover.
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import { SqlError } from "@effect/sql/SqlError"
import { Context, Duration, Effect, Layer, Runtime } from "effect"
import pg from "pg"
import { PoolStats } from "../../Platform/PoolStats.js"
import * as HostList from "./HostList.js"
import * as PgBatch from "./PgBatch.js"
import * as Primary from "./Primary.js"

export interface Bounds {
  /** Longest a statement may run on the server. */
  readonly statementTimeout: Duration.DurationInput
  /** Longest a statement may wait for a row or table lock (also: a duplicate `Idempotency-Key`). */
  readonly lockTimeout: Duration.DurationInput
  /** Longest a transaction may sit idle between statements before the server ends it. */
  readonly idleInTransactionTimeout: Duration.DurationInput
  /** Longest the client waits for any reply before it gives the connection up. */
  readonly queryTimeout: Duration.DurationInput
  /** Longest to connect, or to wait for a free connection. */
  readonly connectTimeout: Duration.DurationInput
}

export const defaultBounds: Bounds = {
  statementTimeout: Duration.seconds(5),
  lockTimeout: Duration.seconds(3),
  idleInTransactionTimeout: Duration.seconds(10),
  queryTimeout: Duration.seconds(7),
  connectTimeout: Duration.seconds(5)
}

const millis = (d: Duration.DurationInput) => Math.round(Duration.toMillis(Duration.decode(d)))

/** pg's message when `query_timeout` fires (pg 8: `Client.query`). */
const ReadTimeout = "Query read timeout"

/**
 * A pg client that drops its connection when a reply does not come within `query_timeout`: pg answers
 * the caller but leaves the statement in flight, and every later statement on that connection would
 * wait behind it. Destroying the socket fails them at once and makes the pool discard the client.
 */
class BoundedClient extends pg.Client {
  // pg's `query` has many overloads; this one wraps whichever callback is last and passes all through.
  override query(...args: Array<unknown>): never {
    const last = args.length - 1
    const callback = args[last]
    if (typeof callback === "function")
      args[last] = (error: Error | null | undefined, result: unknown) => {
        if (error?.message === ReadTimeout) this.dropConnection()
        return callback(error, result)
      }
    return (super.query as (...a: Array<unknown>) => never).apply(this, args)
  }

  private dropConnection() {
    const connection = (
      this as unknown as { readonly connection?: { readonly stream?: { destroy(): void } } }
    ).connection
    connection?.stream?.destroy()
  }
}

export interface Options {
  readonly url: string
  readonly maxConnections: number
  readonly bounds: Bounds
}

/** The pool, and connections of their own outside it (LISTEN): to the one host, or to the primary. */
const open = (options: Options): { readonly pool: pg.Pool; readonly connect: () => Promise<pg.Client> } => {
  const { bounds } = options
  const connectMs = millis(bounds.connectTimeout)
  const session = {
    application_name: "laari",
    statement_timeout: millis(bounds.statementTimeout),
    lock_timeout: millis(bounds.lockTimeout),
    idle_in_transaction_session_timeout: millis(bounds.idleInTransactionTimeout),
    query_timeout: millis(bounds.queryTimeout),
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000
  }
  const list = HostList.parse(options.url)
  if (list !== undefined) {
    const finder = new Primary.Finder(list, session, connectMs)
    return Primary.make(
      finder,
      BoundedClient,
      { ...session, max: options.maxConnections, connectionTimeoutMillis: connectMs },
      connectMs
    )
  }
  const config = { ...session, connectionString: options.url, connectionTimeoutMillis: connectMs }
  return {
    pool: new pg.Pool({ ...config, Client: BoundedClient, max: options.maxConnections }),
    connect: async () => {
      const client = new BoundedClient(config)
      client.on("error", () => {})
      await client.connect()
      return client
    }
  }
}

/**
 * An error listener on each client of `pool` for its whole life, from the moment the pool first hands
 * it out: pg emits a connection's error (a FATAL such as `pg_terminate_backend`'s 57P01, a closed
 * socket) on the client when no query is under way, and an emitter without a listener throws it out of
 * the process. pg-pool listens only while the client is idle, and a holder's own listener may come a
 * moment late: a new client is handed to a waiting `pool.connect()` promise while pg still parses the
 * socket read that carried the startup's ReadyForQuery, and a FATAL in that same read is emitted before
 * the promise's holder can listen. The client itself is then unusable (pg marks it so), its next
 * statement fails as a lost connection, and the pool discards it on release.
 */
const watchClients = (pool: pg.Pool, lost: (error: Error) => void) =>
  pool.on("connect", (client) => {
    let reported = false
    client.on("error", (error) => {
      if (reported) return
      reported = true
      lost(error)
    })
  })

/** The bounded pool, ended with the scope; fails if the database cannot be reached. */
const acquire = (options: Options) =>
  Effect.flatMap(Effect.runtime<never>(), (runtime) =>
    Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          const opened = open(options)
          const { pool } = opened
          // An idle client that errors is dropped by the pool; without a listener the error would crash.
          pool.on("error", () => {})
          // The SQLSTATE and pg's message only: the error object links to the client and its password.
          watchClients(pool, (error) =>
            Runtime.runFork(runtime)(
              Effect.logWarning("PostgreSQL connection lost").pipe(
                Effect.annotateLogs({
                  code: (error as { readonly code?: unknown }).code ?? "none",
                  error: error.message
                })
              )
            )
          )
          // Fail the layer now if the database cannot be reached, as PgClient.layer does.
          await pool.query("SELECT 1").catch(async (error) => {
            await pool.end().catch(() => {})
            throw error
          })
          return opened
        },
        catch: (cause) => new SqlError({ cause, message: "PgClient: Failed to connect" })
      }).pipe(
        Effect.timeoutFail({
          duration: options.bounds.connectTimeout,
          onTimeout: () => new SqlError({ message: "PgClient: Connection timed out" })
        })
      ),
      ({ pool }) => Effect.promise(() => pool.end()).pipe(Effect.timeoutOption("2 seconds"))
    )
  )

/**
 * A connection of its own, outside the pool, to where the pool's connections go (the primary of a host
 * list): for `LISTEN`, which holds its connection. The caller ends it.
 */
export class Connector extends Context.Tag("laari/server/PgConnector")<
  Connector,
  { readonly connect: () => Promise<pg.Client> }
>() {}

/**
 * A connection of the pool lent to a transaction, and whether it is lost: an error it emits (pg does when
 * no statement is under way) or a batch that failed for want of it. A lost connection is handed back
 * with the error, so the pool discards it rather than lend it again.
 */
class Reserved implements PgBatch.Session {
  lost: Error | undefined
  private readonly onError = (error: Error) => {
    this.lost ??= error
  }
  /** Stops what the connection runs when a batch's caller is interrupted. */
  private readonly cancel: Effect.Effect<void>

  constructor(
    readonly client: pg.PoolClient,
    pool: pg.Pool
  ) {
    client.on("error", this.onError)
    this.cancel = canceller(pool, client)
  }

  run(statements: ReadonlyArray<PgBatch.Statement>) {
    return PgBatch.run(this.client, statements, this.cancel)
  }

  readonly release = Effect.sync(() => {
    this.client.off("error", this.onError)
    this.client.release(this.lost)
  })
}

/**
 * Reserves a connection. With the callback, not the promise, of `pool.connect`: the listener is on the
 * client before pg reads another message from its socket (`watchClients`).
 */
const reserve = (pool: pg.Pool) =>
  Effect.async<Reserved, SqlError>((resume) => {
    pool.connect((cause, client) => {
      if (client === undefined || (cause !== undefined && cause !== null))
        resume(Effect.fail(new SqlError({ cause, message: "Failed to acquire connection for transaction" })))
      else resume(Effect.succeed(new Reserved(client, pool)))
    })
  })

/** Cancels what the connection runs (best effort, bounded), from another connection of the pool. */
const canceller = (pool: pg.Pool, client: pg.PoolClient): Effect.Effect<void> => {
  const pid = (client as unknown as { readonly processID?: number }).processID
  if (pid === undefined) return Effect.void
  return Effect.async<void>((resume) => {
    if ((pool as unknown as { readonly ending?: boolean }).ending === true) return resume(Effect.void)
    pool.query("SELECT pg_cancel_backend($1)", [pid], () => resume(Effect.void))
  }).pipe(Effect.interruptible, Effect.timeoutOption("5 seconds"), Effect.asVoid)
}

/** The pool's connections, one per transaction, for the Transactor's batched transactions. */
export const sessions = (pool: pg.Pool): PgBatch.Sessions => ({ acquire: reserve(pool) })

/**
 * The SQL client over a bounded pool, closed with the layer, the pool's `PoolStats`, `Connector`, and
 * `PgBatch.BatchSessions` (its connections for the Transactor's batched transactions).
 */
export const layer = (options: Options) =>
  Layer.unwrapScoped(
    Effect.map(acquire(options), ({ pool, connect }) =>
      Layer.mergeAll(
        PgClient.layerFromPool({ applicationName: "laari", acquire: Effect.succeed(pool) }),
        Layer.succeed(PoolStats, {
          counts: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount })
        }),
        Layer.succeed(Connector, { connect }),
        Layer.succeed(PgBatch.BatchSessions, sessions(pool))
      )
    )
  )
