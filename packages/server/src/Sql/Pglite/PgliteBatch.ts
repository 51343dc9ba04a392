/**
 * Several statements in one call into PGlite, as `PgBatch` sends them to PostgreSQL in one
 * round trip: each statement's Parse (only the first time a recurring text is sent: `PgPrepared`), Bind,
 * Describe and Execute, then one Sync, as one protocol message. PostgreSQL runs them one after the
 * other and, after an error, skips the rest up to the Sync; PGlite runs the whole message synchronously,
 * so nothing else of PGlite's runs in between.
 *
 * `PGlite.query` makes six calls into PostgreSQL for one statement (it first asks for the parameters'
 * types, to serialize them); this makes one for the whole batch. Parameters are sent as node-postgres
 * sends them to PostgreSQL (`PgBatch.prepareValue`), so both databases receive the same text.
 */
import { SqlError } from "@effect/sql/SqlError"
import { parse, type PGlite, protocol, type Results } from "@electric-sql/pglite"
import { Effect } from "effect"
import * as PgBatch from "../Pg/PgBatch.js"
import * as PgPrepared from "../Pg/PgPrepared.js"

const describePortal = protocol.serialize.describe({ type: "P" })
const executePortal = protocol.serialize.execute({})
const sync = protocol.serialize.sync()

const concat = (parts: ReadonlyArray<Uint8Array>): Uint8Array => {
  const message = new Uint8Array(parts.reduce((n, part) => n + part.length, 0))
  let at = 0
  for (const part of parts) {
    message.set(part, at)
    at += part.length
  }
  return message
}

const failed = (cause: unknown, statement?: number, completed: ReadonlyArray<Results> = []) =>
  new PgBatch.BatchError(
    new SqlError({ cause, message: "Failed to execute statement" }),
    statement,
    false,
    completed
  )

/**
 * Runs `statements` on `pglite` in one call; the results in order. A database error fails the batch with
 * the statement it answered (`BatchError.statement`) and the results of those before it. The session is
 * never lost: PGlite lives in this process.
 */
export const run = (
  pglite: PGlite,
  statements: ReadonlyArray<PgBatch.Statement>
): Effect.Effect<ReadonlyArray<Results>, PgBatch.BatchError> =>
  Effect.suspend(() => {
    const texts = statements.map((s) => s.text)
    let message: Uint8Array
    let plans: ReadonlyArray<PgPrepared.Plan>
    try {
      // Mapped before anything runs: a value pg cannot send fails the batch, not half of it.
      const values = statements.map((s) => s.params.map((p) => PgBatch.prepareValue(p)))
      plans = PgPrepared.plan(pglite, texts, { evict: true })
      // Statements dropped to make room (or left unrecorded by a failure) are closed first: Close of a
      // name the session does not hold is no error.
      const parts: Array<Uint8Array> = PgPrepared.dropped(pglite).map((name) =>
        protocol.serialize.close({ type: "S", name })
      )
      statements.forEach((statement, i) => {
        const plan = plans[i]!
        if (plan.parse)
          parts.push(protocol.serialize.parse({ name: plan.name, text: statement.text, types: [] }))
        parts.push(
          protocol.serialize.bind({ statement: plan.name, values: values[i]! }),
          describePortal,
          executePortal
        )
      })
      parts.push(sync)
      message = concat(parts)
    } catch (cause) {
      return Effect.fail(failed(cause))
    }
    // PGlite cannot stop a statement it runs: the caller stays until it is done.
    return Effect.uninterruptible(
      Effect.tryPromise({
        try: () => pglite.execProtocolStream(message, { syncToFs: false, throwOnError: false }),
        catch: (cause) => failed(cause)
      })
    ).pipe(
      Effect.flatMap((messages) => {
        // Each statement's answer ends in CommandComplete (or EmptyQueryResponse); an ErrorResponse
        // answers the statement under way, and nothing after it ran.
        const results: Array<Results> = []
        let from = 0
        let error: unknown
        for (let i = 0; i < messages.length && error === undefined; i++) {
          const name = messages[i]!.name
          if (name === "error") error = messages[i]
          else if (name === "commandComplete" || name === "emptyQuery") {
            const rowMode = statements[results.length]?.rowMode ?? "object"
            results.push(parse.parseResults(messages.slice(from, i + 1), pglite.parsers, { rowMode })[0]!)
            from = i + 1
          }
        }
        PgPrepared.settle(pglite, texts, plans, results.length, error)
        return error === undefined
          ? Effect.succeed(results)
          : Effect.fail(failed(error, results.length, results))
      })
    )
  })
