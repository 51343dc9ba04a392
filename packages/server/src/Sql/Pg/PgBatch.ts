/**
 * Several statements in one round trip to PostgreSQL: node-postgres sends one statement and
 * waits for its answer before the next; a batch writes every statement's Parse, Bind, Describe and
 * Execute and one Sync in a single write, and reads the answers in order. The server runs them one
 * after the other, exactly as if sent one by one, except that after an error it skips the rest of the
 * batch (up to the Sync): a failed statement never lets a later one run.
 *
 * A statement the process sends again and again goes as a named prepared statement, parsed once per
 * connection (`PgPrepared`); the others as before, unnamed.
 *
 * It is a node-postgres `Submittable` (as pg-cursor is): the client queues it like any query, routes
 * every message of its answer to it until ReadyForQuery, and applies its `query_timeout` to it.
 */
import { SqlError } from "@effect/sql/SqlError"
import { Context, Effect } from "effect"
import pg from "pg"
import * as PgPrepared from "./PgPrepared.js"

/** One statement: text with `$n` placeholders, and its parameters. */
export interface Statement {
  readonly text: string
  readonly params: ReadonlyArray<unknown>
  /** Rows as arrays of values rather than objects (`executeValues`). */
  readonly rowMode?: "array"
}

/** What a statement of a batch answered: its rows (pg's `QueryResult`, or PGlite's `Results`). */
export interface Result {
  readonly rows: ReadonlyArray<object>
}

/**
 * A batch that failed: which statement PostgreSQL's error answered (`undefined`: none), and whether the
 * connection is lost (a FATAL of the server, a closed socket, no answer in time), so that nothing more
 * can be sent on it and the server ends its transaction itself.
 */
export class BatchError {
  constructor(
    readonly error: SqlError,
    readonly statement: number | undefined,
    readonly lost: boolean,
    /** The results of the statements that completed before `statement`. */
    readonly completed: ReadonlyArray<Result> = []
  ) {}
}

/**
 * Where one transaction's batches run, lent to it for the transaction: a connection of the pool, or
 * PGlite's one session. Given back with `release`.
 */
export interface Session {
  /** An error that ended the session (then nothing more is sent on it, not even ROLLBACK). */
  lost: Error | undefined
  /** `statements` in one batch: each after the one before it, none after one that failed. */
  run(statements: ReadonlyArray<Statement>): Effect.Effect<ReadonlyArray<Result>, BatchError>
  /** Gives the session back to the database: the pool discards a lost connection rather than lend it again. */
  readonly release: Effect.Effect<void>
}

/**
 * How a database lends a transaction its session. `acquire` may wait: it is interruptible when
 * `interruptible` says an interruption cannot lose what it acquires.
 */
export interface Sessions {
  readonly acquire: Effect.Effect<Session, SqlError>
  readonly interruptible?: boolean
}

/**
 * The sessions of the database in use, for the Transactor's batched transactions (`PgTransaction`):
 * provided by the pool (`PgPool`) and by PGlite (`PgliteClient`).
 */
export class BatchSessions extends Context.Tag("laari/server/BatchSessions")<BatchSessions, Sessions>() {}

/** An error of the connection rather than of a statement: no server answer, or one that ends the session. */
const isConnectionLoss = (error: Error): boolean => {
  const severity = (error as { readonly severity?: unknown }).severity
  return typeof severity !== "string" || severity === "FATAL" || severity === "PANIC"
}

/** What pg's `Result` does beyond its declared type (pg/lib/result.js). */
interface Rows extends pg.QueryResult {
  addFields(fields: ReadonlyArray<unknown>): void
  parseRow(fields: ReadonlyArray<unknown>): unknown
  addRow(row: unknown): void
  addCommandComplete(message: unknown): void
}

/** The messages a batch writes (pg/lib/connection.js; @types/pg declares other signatures). */
interface Wire {
  readonly stream: { cork?: () => void; uncork?: () => void }
  parse(message: {
    readonly name: string
    readonly text: string
    readonly types: ReadonlyArray<number>
  }): void
  bind(message: {
    readonly portal: string
    readonly statement: string
    readonly values: ReadonlyArray<string | Buffer | null>
  }): void
  describe(message: { readonly type: "P"; readonly name: string }): void
  execute(message: { readonly portal: string }): void
  sync(): void
  sendCopyFail(message: string): void
}

/**
 * pg's own mapping of a parameter to the wire (dates, arrays, JSON objects, buffers), as `client.query`
 * does; PGlite's batches map theirs with it too (`PgliteBatch`), so both databases receive the same text.
 */
export const prepareValue = (
  pg as unknown as { readonly utils: { prepareValue: (v: unknown) => string | Buffer | null } }
).utils.prepareValue

const newResult = (rowMode: "array" | undefined) => new pg.Result(rowMode ?? "", pg.types) as unknown as Rows

type Callback = (error: Error | null, results?: ReadonlyArray<Rows>) => void

/** The submittable: see the module's comment. */
class Batch implements pg.Submittable {
  callback: Callback | undefined
  readonly results: Array<Rows> = []
  /** The statement an ErrorResponse answered: every one before it completed, none after it ran. */
  failedAt: number | undefined
  private current: Rows | undefined
  /** A row pg could not parse: the batch ran to its end, the connection is fine. */
  rowError: Error | undefined
  private done = false
  /** The connection the batch was written to, and how each statement went (`PgPrepared`). */
  private connection: object | undefined
  private plans: ReadonlyArray<PgPrepared.Plan> = []

  constructor(
    private readonly statements: ReadonlyArray<Statement>,
    private readonly values: ReadonlyArray<ReadonlyArray<string | Buffer | null>>
  ) {}

  submit(connection: pg.Connection) {
    const wire = connection as unknown as Wire
    this.connection = connection
    this.plans = PgPrepared.plan(connection, this.texts())
    // Every message into one write (pg's own Query corks the same way).
    wire.stream.cork?.()
    try {
      this.statements.forEach((statement, i) => {
        const plan = this.plans[i]!
        if (plan.parse) wire.parse({ name: plan.name, text: statement.text, types: [] })
        wire.bind({ portal: "", statement: plan.name, values: this.values[i]! })
        wire.describe({ type: "P", name: "" })
        wire.execute({ portal: "" })
      })
      wire.sync()
    } finally {
      wire.stream.uncork?.()
    }
  }

  private texts() {
    return this.statements.map((s) => s.text)
  }

  /** The statements that completed parsed what they named: the connection holds those now. */
  private settle(error?: Error) {
    if (this.connection === undefined) return
    PgPrepared.settle(this.connection, this.texts(), this.plans, this.results.length, error)
  }

  private result() {
    this.current ??= newResult(this.statements[this.results.length]?.rowMode)
    return this.current
  }

  private complete(message?: unknown) {
    const result = this.result()
    if (message !== undefined) result.addCommandComplete(message)
    this.results.push(result)
    this.current = undefined
  }

  handleRowDescription(message: { readonly fields: ReadonlyArray<unknown> }) {
    this.result().addFields(message.fields)
  }

  handleDataRow(message: { readonly fields: ReadonlyArray<unknown> }) {
    if (this.rowError !== undefined) return
    try {
      const result = this.result()
      result.addRow(result.parseRow(message.fields))
    } catch (error) {
      this.rowError = error as Error
    }
  }

  handleCommandComplete(message: unknown) {
    this.complete(message)
  }

  handleEmptyQuery() {
    this.complete()
  }

  handlePortalSuspended() {}

  handleCopyInResponse(connection: pg.Connection) {
    ;(connection as unknown as Wire).sendCopyFail("No source stream defined")
  }

  handleCopyData() {}

  handleError(error: Error) {
    if (this.done) return
    this.done = true
    // An ErrorResponse of the server answers the statement under way; a connection error answers none.
    if (typeof (error as { readonly severity?: unknown }).severity === "string")
      this.failedAt = this.results.length
    this.settle(error)
    this.callback?.(error)
  }

  handleReadyForQuery() {
    if (this.done) return
    this.done = true
    this.settle()
    if (this.rowError !== undefined) this.callback?.(this.rowError)
    else this.callback?.(null, this.results)
  }
}

/**
 * Runs `statements` on `client` in one round trip; the results in order. `cancel` stops the batch
 * when the caller is interrupted (pg_cancel_backend: the batch then fails and the caller rolls back).
 */
export const run = (
  client: pg.ClientBase,
  statements: ReadonlyArray<Statement>,
  cancel: Effect.Effect<void>
): Effect.Effect<ReadonlyArray<pg.QueryResult>, BatchError> =>
  Effect.suspend(() => {
    let values: Array<Array<string | Buffer | null>>
    try {
      // Mapped before anything is written: a value pg cannot send fails the batch, not half of it.
      // One argument: pg's second is its own list of objects seen (circular `toPostgres`), not an index.
      values = statements.map((s) => s.params.map((p) => prepareValue(p)))
    } catch (cause) {
      return Effect.fail(
        new BatchError(new SqlError({ cause, message: "Failed to execute statement" }), undefined, false)
      )
    }
    return Effect.async<ReadonlyArray<pg.QueryResult>, BatchError>((resume) => {
      const batch = new Batch(statements, values)
      // The callback as query's argument, as pg documents for a submittable: `PgPool`'s client wraps it
      // to drop a connection whose answer never comes.
      ;(client as unknown as { query(batch: Batch, callback: Callback): void }).query(
        batch,
        (error, results) => {
          if (error !== null && error !== undefined)
            resume(
              Effect.fail(
                new BatchError(
                  new SqlError({ cause: error, message: "Failed to execute statement" }),
                  batch.failedAt,
                  error !== batch.rowError && isConnectionLoss(error),
                  batch.results
                )
              )
            )
          else resume(Effect.succeed(results ?? []))
        }
      )
      return cancel
    })
  })
