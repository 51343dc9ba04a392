/**
 * Background work and the controllable clock. Each kind of background work (expiries, renewals,
 * deliveries) is a `Job`: it does what is due at the clock's now and says when more becomes due. Workers
 * poll jobs in real time; a manual clock instead steps from one due moment to the next, running every
 * job to quiescence at each, so a month of renewals and retries happens at the right instants.
 */
import { Clock, Context, DateTime, Duration, Effect, Layer } from "effect"
import type { ServiceUnavailable } from "./Errors.js"
import type { Claim } from "./Storage.js"
import { type TransactorService } from "./Transactor.js"

export interface Job {
  readonly name: string
  /** Does all work due at the clock's now; returns how many items it handled. */
  readonly runDue: Effect.Effect<number, ServiceUnavailable>
  /** The earliest moment at which work becomes due, if any is scheduled. */
  readonly nextDueAt: Effect.Effect<DateTime.Utc | undefined, ServiceUnavailable>
  /** Set when the job runs its own real-time worker, so the pollers leave it to the manual clock. */
  readonly ownWorker?: boolean
  /**
   * Runs `effect` with the job's own real-time worker stood aside, nothing it started still in flight.
   * An advance of a manual clock holds it throughout: an item the worker leased at one moment would
   * otherwise look free once the clock jumped past its lease (and go out twice), and an item in flight
   * would hide the due work behind it from the advance.
   */
  readonly exclusive?: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

/**
 * The jobs a process runs, provided once from the process's one list of them (`layer`), never extended
 * by reading it and providing it again: the last such layer in an order would silently drop the others.
 */
export class Jobs extends Context.Tag("laari/Jobs")<Jobs, ReadonlyArray<Job>>() {}

/**
 * A job as its feature gives it: made from the services it runs on, `undefined` where the process is
 * not configured to run it.
 */
export type Entry<R> = Effect.Effect<Job | undefined, never, R>

/** `Jobs` from a process's list of every job it runs, each listed once, in the order they run. */
export const layer = <const L extends ReadonlyArray<Entry<unknown>>>(
  entries: L
): Layer.Layer<Jobs, never, Effect.Effect.Context<L[number]>> =>
  Layer.effect(
    Jobs,
    Effect.map(
      Effect.forEach(entries as ReadonlyArray<Entry<Effect.Effect.Context<L[number]>>>, (entry) => entry),
      (jobs) => jobs.filter((job): job is Job => job !== undefined)
    )
  )

/** Runs every job until none has anything left to do at the current time. */
export const runUntilQuiet = (
  jobs: ReadonlyArray<Job>,
  maxRounds = 10_000
): Effect.Effect<number, ServiceUnavailable> =>
  Effect.gen(function* () {
    let total = 0
    for (let round = 0; round < maxRounds; round++) {
      const done = yield* Effect.reduce(jobs, 0, (n, job) => Effect.map(job.runDue, (k) => n + k))
      if (done === 0) return total
      total += done
    }
    return yield* Effect.dieMessage(`background work did not settle after ${maxRounds} rounds`)
  })

/**
 * Runs `batch` (which handles up to `size` items and returns how many) until a run handles fewer than
 * `size`, so a sweep drains everything due in bounded transactions; returns the total.
 */
export const inBatches = <E, R>(
  size: number,
  batch: Effect.Effect<number, E, R>
): Effect.Effect<number, E, R> =>
  Effect.gen(function* () {
    let total = 0
    for (;;) {
      const n = yield* batch
      total += n
      if (n < size) return total
    }
  })

/** How many items a sweep claims in one transaction when not told otherwise. */
export const Batch = 100

/**
 * A sweep over what a port claims (`Storage.Claim`): at the clock's now, claims up to `size` due items
 * and writes each one's next state (`settle`), a transaction a batch, until a batch comes back short
 * (`inBatches`); returns how many it handled.
 */
export const sweep =
  <A, E, R>(
    tx: TransactorService,
    claim: Claim<A>,
    settle: (item: A, now: DateTime.Utc) => Effect.Effect<unknown, E, R>
  ) =>
  (size: number): Effect.Effect<number, E | ServiceUnavailable, R> =>
    inBatches(
      size,
      tx.withTransaction(
        Effect.gen(function* () {
          const now = yield* DateTime.now
          const due = yield* claim(now, size)
          yield* Effect.forEach(due, (item) => settle(item, now), { discard: true })
          return due.length
        })
      )
    )

/**
 * The job that runs `run` (a sweep, a batch at a time) with the default `Batch`. Unnamed, unlike the
 * service's method over `run`: a span per poll would bury the traces.
 */
export const job = (
  name: string,
  run: (batch: number) => Effect.Effect<number, ServiceUnavailable>,
  nextDueAt: Job["nextDueAt"]
): Job => ({ name, runDue: run(Batch), nextDueAt })

/** A clock whose time only moves when told to. Sleeping still takes real time, so pollers keep polling. */
export interface ManualClock {
  readonly clock: Clock.Clock
  readonly now: () => number
  /** Moves the clock to `millis`; never backwards. */
  readonly set: (millis: number) => void
}

export const makeManualClock = (startMillis: number): ManualClock => {
  let current = startMillis
  const real = Clock.make()
  const clock: Clock.Clock = {
    [Clock.ClockTypeId]: Clock.ClockTypeId,
    unsafeCurrentTimeMillis: () => current,
    currentTimeMillis: Effect.sync(() => current),
    unsafeCurrentTimeNanos: () => BigInt(current) * 1_000_000n,
    currentTimeNanos: Effect.sync(() => BigInt(current) * 1_000_000n),
    sleep: (duration: Duration.Duration) => real.sleep(duration)
  }
  return {
    clock,
    now: () => current,
    set: (millis) => {
      current = Math.max(current, millis)
    }
  }
}

/**
 * Moves `manual` forward to `target`, stopping at every moment work becomes due on the way and running
 * all jobs to quiescence there, each job's real-time worker stood aside (`Job.exclusive`). `reached` is
 * told each moment before the clock shows it or any work runs at it, so a host can keep the clock where
 * a crash part way finds it no earlier than the work committed. Returns how many items were handled.
 */
export const advanceTo = <E = never>(
  manual: ManualClock,
  jobs: ReadonlyArray<Job>,
  target: DateTime.Utc,
  reached: (millis: number) => Effect.Effect<void, E> = () => Effect.void
): Effect.Effect<number, ServiceUnavailable | E> => {
  const advance = Effect.gen(function* () {
    const goal = DateTime.toEpochMillis(target)
    let total = yield* runUntilQuiet(jobs)
    for (;;) {
      const dues = yield* Effect.forEach(jobs, (job) => job.nextDueAt)
      const next = dues.reduce<number | undefined>((min, d) => {
        if (d === undefined) return min
        const ms = DateTime.toEpochMillis(d)
        return ms > manual.now() && ms <= goal && (min === undefined || ms < min) ? ms : min
      }, undefined)
      const at = Math.max(manual.now(), next ?? goal)
      yield* reached(at)
      manual.set(at)
      total += yield* runUntilQuiet(jobs)
      if (next === undefined) return total
    }
  })
  const held = jobs.reduce<Effect.Effect<number, ServiceUnavailable | E>>(
    (effect, job) => (job.exclusive === undefined ? effect : job.exclusive(effect)),
    advance
  )
  return held.pipe(Effect.withClock(manual.clock))
}
