/**
 * The Transactor's transaction on PostgreSQL, in as few round trips as the command allows.
 * A charge used to be five: BEGIN, the idempotency claim, the mandate's lock, the writes (held back by
 * `WriteBehind`), COMMIT. Here it is two, with nothing else changed:
 *
 * - BEGIN is not sent alone: it goes, in one batch (`PgBatch`), with the transaction's first statement;
 * - the held writes go with the statement that needs them flushed, as today, but in the same batch;
 * - a statement announced ahead (`WriteBehind.Ahead`: the charge's lock) goes after the next one, in
 *   its batch, and answers the statement after it if that is the same (with no write held meanwhile
 *   on a row it read);
 * - at the end, the writes still held and COMMIT go as one batch.
 *
 * The statements run in the order they were issued, each after the one before it completed, as when
 * sent one by one; after an error PostgreSQL runs nothing more of the batch. So a read still sees every
 * earlier write, a failed write still fails its transaction, and COMMIT never follows a failed write.
 * A transaction that sent nothing (a command refused before any statement) sends nothing at all.
 *
 * Failures keep their meaning (`Repository.committing`): a write that fails in the last batch is the
 * command's failure, rolled back; COMMIT's own failure, or a connection lost during that batch before
 * the server answered a statement ahead of COMMIT, is a defect, as @effect/sql makes it, since the
 * transaction may have committed. A connection lost before COMMIT is sent, or whose FATAL answered a
 * write ahead of it, committed nothing: a failure, and no ROLLBACK is sent (the session is over).
 *
 * A savepoint (`WriteBehind.Savepoints`) is not a round trip of its own either: SAVEPOINT, after the
 * writes held before it, goes with the next batch; a part rolled back drops its held writes, and only
 * what it sent is undone by a ROLLBACK TO in the next batch (nothing, when SAVEPOINT was not yet sent).
 *
 * It runs on whichever session the database lends (`PgBatch.BatchSessions`): a connection of the pool
 * (`PgPool`), or PGlite's one session (`PgliteClient`), where a batch is one call into the in-process
 * PostgreSQL instead of a round trip (`PgliteBatch`).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { Connection } from "@effect/sql/SqlConnection"
import { SqlError } from "@effect/sql/SqlError"
import { Context, Effect, Exit, Stream, Tracer } from "effect"
import * as PgBatch from "./Pg/PgBatch.js"
import * as PgPrepared from "./Pg/PgPrepared.js"
import * as WriteBehind from "./WriteBehind.js"

const Begin: PgBatch.Statement = { text: "BEGIN", params: [] }
const Commit: PgBatch.Statement = { text: "COMMIT", params: [] }
const Rollback: PgBatch.Statement = { text: "ROLLBACK", params: [] }

/** The Transactor's transactions over a database's sessions (`PgBatch.BatchSessions`). */
export interface Transactions {
  readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | SqlError, R>
}

/** Whether two statements are the same text with the same parameters (dates by their instant). */
const sameStatement = (a: WriteBehind.AheadStatement, b: PgBatch.Statement): boolean =>
  b.rowMode === undefined &&
  a.text === b.text &&
  a.params.length === b.params.length &&
  a.params.every((p, i) => {
    const q = b.params[i]
    return p === q || (p instanceof Date && q instanceof Date && p.getTime() === q.getTime())
  })

/** One transaction's state on its connection. */
class Transaction {
  /** Whether BEGIN has been sent (alone or in a batch): from then on, the server has a transaction. */
  begun = false
  /** Whether a statement failed because the connection's named statements were stale (`PgPrepared`). */
  stale = false
  readonly buffer = WriteBehind.emptyBuffer({ pipelined: true })
  /** The answer of the statement announced ahead, until the next statement (`last`). */
  private kept:
    | { readonly statement: WriteBehind.AheadStatement; readonly result: PgBatch.Result }
    | undefined
  /**
   * The error of a statement announced ahead: the server aborted the transaction, so every later
   * statement, and COMMIT, fails with it (rather than with "current transaction is aborted", or a
   * COMMIT that PostgreSQL answers by rolling back).
   */
  private aborted: SqlError | undefined
  /**
   * Statements due before the next one, after BEGIN and before the writes held: the writes held when a
   * savepoint was made, then its SAVEPOINT (`savepoint`, its name) or a ROLLBACK TO it (`mark`).
   */
  private queued: Array<{
    readonly statement: PgBatch.Statement
    readonly mark: boolean
    readonly savepoint?: string
  }> = []
  private savepoints = 0

  constructor(private readonly session: PgBatch.Session) {}

  /** BEGIN if not yet sent, what is queued and the writes held: what must precede any other statement. */
  private prelude(): Array<PgBatch.Statement> {
    const statements: Array<PgBatch.Statement> = []
    if (!this.begun) {
      statements.push(Begin)
      this.begun = true
    }
    for (const queued of this.queued) statements.push(queued.statement)
    this.queued = []
    const writes = WriteBehind.drain(this.buffer)
    if (writes !== undefined) statements.push({ text: writes[0], params: writes[1] })
    return statements
  }

  private run(statements: ReadonlyArray<PgBatch.Statement>) {
    return this.session.run(statements).pipe(
      Effect.tapError((failed) =>
        Effect.sync(() => {
          if (failed.lost) this.session.lost ??= failed.error
          if (PgPrepared.isStale(failed.error.cause)) this.stale = true
        })
      )
    )
  }

  /**
   * `statement` after the prelude, in one round trip: its result. A statement announced ahead
   * (`WriteBehind.Ahead`) goes last in the same round trip, and its answer is kept (`kept`) for the
   * transaction's next statement if that is the same one, with nothing written in between.
   */
  private last(statement: PgBatch.Statement): Effect.Effect<PgBatch.Result, SqlError> {
    return Effect.suspend(() => {
      if (this.aborted !== undefined) return Effect.fail(this.aborted)
      const kept = this.kept
      this.kept = undefined
      if (
        kept !== undefined &&
        WriteBehind.untouched(this.buffer, kept.statement) &&
        this.queued.every((q) => q.mark) &&
        sameStatement(kept.statement, statement)
      )
        return Effect.succeed(kept.result)
      const ahead = this.buffer.ahead
      this.buffer.ahead = undefined
      const statements = [...this.prelude(), statement]
      const at = statements.length - 1
      if (ahead !== undefined) statements.push({ text: ahead.text, params: ahead.params })
      return this.run(statements).pipe(
        Effect.map((results) => {
          if (ahead !== undefined) this.kept = { statement: ahead, result: results[at + 1]! }
          return results[at]!
        }),
        Effect.catchAll((failed) => {
          // Only the statement announced ahead failed: this one's answer stands, and the failure is the
          // next statement's, or COMMIT's (`aborted`).
          if (ahead === undefined || failed.statement !== at + 1) return Effect.fail(failed.error)
          this.aborted = failed.error
          return Effect.succeed(failed.completed[at]!)
        })
      )
    })
  }

  /** The connection the transaction's statements run on (`SqlClient.TransactionConnection`). */
  readonly connection: Connection = {
    execute: (text, params, transform) =>
      Effect.map(this.last({ text, params }), (r) => (transform ? transform(r.rows) : r.rows)),
    executeUnprepared: (text, params, transform) =>
      Effect.map(this.last({ text, params }), (r) => (transform ? transform(r.rows) : r.rows)),
    executeRaw: (text, params) => this.last({ text, params }),
    executeValues: (text, params) =>
      Effect.map(
        this.last({ text, params, rowMode: "array" }),
        (r) => r.rows as unknown as ReadonlyArray<never>
      ),
    // Nothing streams inside a command's transaction; a stream is served from one result.
    executeStream: (text, params, transform) =>
      Stream.flatMap(Stream.fromEffect(this.last({ text, params })), (r) =>
        Stream.fromIterable(transform ? transform(r.rows) : r.rows)
      )
  }

  /** A savepoint after what is held, to go with the next batch: its name. */
  private savepoint(): string {
    const name = WriteBehind.savepointName(++this.savepoints)
    const writes = WriteBehind.drain(this.buffer)
    if (writes !== undefined)
      this.queued.push({ statement: { text: writes[0], params: writes[1] }, mark: false })
    this.queued.push({ statement: { text: `SAVEPOINT ${name}`, params: [] }, mark: true, savepoint: name })
    return name
  }

  /**
   * Back to savepoint `name`: what is held since is dropped, with what the transaction remembers of rows
   * it locked (`WriteBehind.discard`) and an answer kept; what was sent is undone by ROLLBACK TO in the
   * next batch, or, SAVEPOINT not yet sent, it is dropped with all that came after it.
   */
  private rollbackTo(name: string): void {
    WriteBehind.discard(this.buffer)
    this.kept = undefined
    const at = this.queued.findIndex((q) => q.savepoint === name)
    if (at >= 0) this.queued.length = at
    else this.queued.push({ statement: { text: `ROLLBACK TO SAVEPOINT ${name}`, params: [] }, mark: true })
  }

  /** The transaction's savepoints (`WriteBehind.Savepoints`), sent with the batches around them. */
  readonly parts: WriteBehind.Savepoints["Type"] = {
    run: (effect) =>
      Effect.suspend(() => {
        const name = this.savepoint()
        return Effect.onExit(effect, (exit) =>
          Exit.isSuccess(exit) ? Effect.void : Effect.sync(() => this.rollbackTo(name))
        )
      })
  }

  /**
   * The held writes and COMMIT in one round trip. A write's error fails (typed: nothing committed) after
   * a ROLLBACK; COMMIT's error or a lost connection dies (the outcome is unknown).
   */
  commit(): Effect.Effect<void, SqlError> {
    return Effect.suspend(() => {
      this.kept = undefined
      this.buffer.ahead = undefined
      // A statement announced ahead failed: the server aborted the transaction.
      if (this.aborted !== undefined) return Effect.zipRight(this.rollback(), Effect.fail(this.aborted))
      const writes = WriteBehind.drain(this.buffer)
      const queued = this.queued.map((q) => q.statement)
      const wrote = writes !== undefined || this.queued.some((q) => !q.mark)
      this.queued = []
      if (!this.begun && !wrote) return Effect.void
      // Lost before COMMIT was sent: the server ends the transaction with the session, nothing committed.
      const lost = this.session.lost
      if (lost !== undefined)
        return Effect.fail(
          lost instanceof SqlError ? lost : new SqlError({ cause: lost, message: "Connection lost" })
        )
      const statements = [
        ...(this.begun ? [] : [Begin]),
        ...queued,
        ...(writes === undefined ? [] : [{ text: writes[0], params: writes[1] }]),
        Commit
      ]
      this.begun = true
      const commitAt = statements.length - 1
      return this.run(statements).pipe(
        Effect.asVoid,
        Effect.catchAll((failed) =>
          failed.statement !== undefined && failed.statement < commitAt
            ? Effect.zipRight(this.rollback(), Effect.fail(failed.error))
            : Effect.die(failed.error)
        )
      )
    })
  }

  /**
   * ROLLBACK when BEGIN was sent; a defect if it fails (as @effect/sql makes it). Not on a lost
   * connection: its session, and so its transaction, ends on the server without it.
   */
  rollback(): Effect.Effect<void> {
    return Effect.suspend(() => {
      this.queued = []
      return this.begun && this.session.lost === undefined
        ? this.run([Rollback]).pipe(
            Effect.asVoid,
            Effect.catchAll((failed) => Effect.die(failed.error))
          )
        : Effect.void
    })
  }
}

/**
 * Transactions over `sessions`: `effect` in a transaction of its own, its statements batched (see the
 * module's comment), with write-behind (`WriteBehind.Pending`). Like @effect/sql's `withTransaction`: a
 * span, only the command interruptible, COMMIT on success and ROLLBACK on failure, the session given back
 * after either.
 *
 * A transaction that failed on a stale named statement (a migration changed a table under a running
 * service: `PgPrepared.Stale`) committed nothing, and its connection's names are forgotten: it runs once
 * more, so the request does not fail for it.
 */
export const over = (sessions: PgBatch.Sessions): Transactions => ({
  transaction: <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | SqlError, R> => {
    const stale = { seen: false }
    return Effect.flatMap(Effect.exit(attempt(sessions, effect, stale)), (exit) =>
      Exit.isFailure(exit) && stale.seen ? attempt(sessions, effect, { seen: false }) : exit
    )
  }
})

/** One run of `effect` in a transaction; `stale.seen` once a statement of it failed as stale. */
const attempt = <A, E, R>(
  sessions: PgBatch.Sessions,
  effect: Effect.Effect<A, E, R>,
  stale: { seen: boolean }
): Effect.Effect<A, E | SqlError, R> =>
  Effect.uninterruptibleMask((restore) =>
    Effect.useSpan("sql.transaction", { kind: "client", captureStackTrace: false }, (span) =>
      // Not a Scope and its finalizer: a finalizer diffs the fiber's whole state twice when it runs.
      Effect.acquireUseRelease(
        sessions.interruptible === true ? restore(sessions.acquire) : sessions.acquire,
        (session) => {
          span.attribute("db.system.name", "postgresql")
          const tx = new Transaction(session)
          // The connection, the write-behind buffer and the span, provided as one change of context.
          const services = Context.make(SqlClient.TransactionConnection, [
            tx.connection as unknown as (typeof SqlClient.TransactionConnection.Service)[0],
            0
          ]).pipe(
            Context.add(WriteBehind.Pending, tx.buffer),
            Context.add(WriteBehind.Savepoints, tx.parts),
            Context.add(Tracer.ParentSpan, span)
          )
          return restore(effect).pipe(
            Effect.mapInputContext((context: Context.Context<R>) => Context.merge(context, services)),
            Effect.exit,
            Effect.flatMap(
              (exit): Effect.Effect<A, E | SqlError> =>
                Exit.isSuccess(exit)
                  ? Effect.as(tx.commit(), exit.value)
                  : Effect.zipRight(tx.rollback(), exit)
            ),
            Effect.ensuring(
              Effect.sync(() => {
                stale.seen = tx.stale
              })
            )
          )
        },
        (session) => session.release
      )
    )
  )
