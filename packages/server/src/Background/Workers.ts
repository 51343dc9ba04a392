/**
 * Background workers: each job polls for due work. Claims use `FOR UPDATE SKIP LOCKED`, so any number of
 * server processes can run them side by side. On a manual clock nothing polls: advancing the clock
 * runs the work instead.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Idempotency, Work } from "@laari/core"
import { DateTime, Duration, Effect, Layer, Schedule } from "effect"
import { Clockwork } from "./Clockwork.js"
import * as Ledger from "../Sql/Ledger.js"
import { guard } from "../Sql/Repository.js"

const PollEvery = Duration.seconds(1)

const poll = (job: Work.Job) =>
  job.runDue.pipe(
    Effect.catchAllCause((cause) => Effect.logWarning(`job ${job.name} failed; retrying`, cause)),
    Effect.repeat(Schedule.spaced(PollEvery)),
    Effect.interruptible
  )

/** Forgets idempotency keys past their retention, once an hour. */
const purgeIdempotencyKeys = Effect.gen(function* () {
  const store = yield* Idempotency.IdempotencyStore
  yield* Effect.flatMap(DateTime.now, store.purge).pipe(
    Effect.catchAllCause((cause) => Effect.logWarning("idempotency purge failed", cause)),
    Effect.repeat(Schedule.spaced(Duration.hours(1)))
  )
})

/**
 * Folds the house accounts' new entries into their balances every few seconds (balances read exact
 * either way; this keeps reading them cheap).
 */
const rollUpLedger = Effect.gen(function* () {
  const ledger = Ledger.make(yield* SqlClient.SqlClient)
  yield* guard(Work.inBatches(5_000, ledger.rollUp(5_000))).pipe(
    Effect.catchAllCause((cause) => Effect.logWarning("ledger roll-up failed", cause)),
    Effect.repeat(Schedule.spaced(Duration.seconds(2)))
  )
})

export const layer = Layer.scopedDiscard(
  Effect.gen(function* () {
    const clockwork = yield* Clockwork
    if (clockwork.mode === "manual") return
    const jobs = yield* Work.Jobs
    yield* Effect.forEach(
      jobs.filter((job) => job.ownWorker !== true),
      (job) => Effect.forkScoped(poll(job)),
      { discard: true }
    )
    yield* Effect.forkScoped(purgeIdempotencyKeys)
    yield* Effect.forkScoped(rollUpLedger)
  })
)
