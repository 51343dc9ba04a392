/**
 * Background workers: each job polls for due work. Claims use `FOR UPDATE SKIP LOCKED`, so any number of
 * server processes can run them side by side. On a manual clock nothing polls: advancing the clock
 * runs the work instead.
 *
 * Polls take turns (`Turns`): the processes in turn, and within a process each job at its own offset in
 * the second, so a charge meets at most one poll at a time instead of every job of every process at once.
 * A job that found work polls again a second later, whoever's turn it is.
 */
import { Store, Work } from "@laari/core"
import { DateTime, Duration, Effect, Layer, Schedule } from "effect"
import { Clockwork } from "./Clockwork.js"
import * as DailyReconciliation from "./Reconciliation.js"
import * as StallLog from "../Platform/StallLog.js"
import * as Ledger from "../Sql/Ledger.js"
import { PoolStats } from "../Platform/PoolStats.js"
import { guard } from "../Sql/Repository.js"
import * as Turns from "./Turns.js"

/** Each job is polled this often by the cluster as a whole, the ledger rolled up every `RollUpEvery`. */
const PollEveryMs = 1_000
const RollUpEveryMs = 2_000

/** Runs `run` now, then again a second after it did some work, else at this process's next turn. */
const polling = (
  slot: Turns.Slot,
  periodMs: number,
  offset: number,
  run: Effect.Effect<number>
): Effect.Effect<never> =>
  Effect.flatMap(run, (handled) =>
    handled > 0 ? Effect.sleep(PollEveryMs) : Turns.wait(slot, periodMs, offset)
  ).pipe(Effect.forever, Effect.interruptible)

const poll = (job: Work.Job) =>
  StallLog.span(job.name, job.runDue).pipe(
    Effect.catchAllCause((cause) =>
      Effect.as(Effect.logWarning(`job ${job.name} failed; retrying`, cause), 0)
    )
  )

/** Forgets idempotency keys past their retention, once an hour. */
const purgeIdempotencyKeys = Effect.gen(function* () {
  const store = yield* Store.IdempotencyStore
  yield* Effect.flatMap(DateTime.now, store.purge).pipe(
    Effect.catchAllCause((cause) => Effect.logWarning("idempotency purge failed", cause)),
    Effect.repeat(Schedule.spaced(Duration.hours(1)))
  )
})

/**
 * Folds the house accounts' new entries into their balances every few seconds (balances read exact
 * either way; this keeps reading them cheap).
 */
const rollUpLedger = (slot: Turns.Slot, offset: number) =>
  Effect.gen(function* () {
    const ledger = yield* Ledger.ofContext
    yield* StallLog.span("ledger roll-up", guard(Work.inBatches(5_000, ledger.rollUp(5_000)))).pipe(
      Effect.catchAllCause((cause) => Effect.as(Effect.logWarning("ledger roll-up failed", cause), 0)),
      // Rolled up or not, the next run waits for its turn: entries wait to be folded, nothing else does.
      Effect.zipRight(Turns.wait(slot, RollUpEveryMs, offset)),
      Effect.forever
    )
  })

export const layer = Layer.scopedDiscard(
  Effect.gen(function* () {
    const clockwork = yield* Clockwork
    if (clockwork.mode === "manual") return
    const jobs = yield* Work.Jobs
    const pool = yield* Effect.serviceOption(PoolStats)
    yield* Effect.acquireRelease(
      Effect.sync(() =>
        StallLog.start(() => (pool._tag === "Some" ? pool.value.counts().waiting : undefined))
      ),
      (stop) => Effect.sync(stop)
    )
    const slot = Turns.slot(process.env)
    const polled = jobs.filter((job) => job.ownWorker !== true)
    // The jobs and the roll-up share the second: each its own offset in it.
    const places = polled.length + 1
    yield* Effect.forEach(
      polled,
      (job, i) => Effect.forkScoped(polling(slot, PollEveryMs, i / places, poll(job))),
      { discard: true }
    )
    yield* Effect.forkScoped(purgeIdempotencyKeys)
    yield* Effect.forkScoped(rollUpLedger(slot, (places - 1) / places / 2))
    // With a wallet provider's core configured, yesterday is reconciled against it once it is over.
    yield* Effect.forkScoped(DailyReconciliation.daily)
  })
)
