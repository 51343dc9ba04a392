/**
 * Leased work sent over the network, shared by webhook deliveries and customer notices: due items are
 * leased from their outbox (`FOR UPDATE SKIP LOCKED`, so any number of processes share the work), each
 * sent and recorded by `send`. In real time the worker is woken by the outbox's `NOTIFY` (and a
 * one-second poll as a fallback, so retries fall due without one) and keeps up to `concurrency` items in
 * flight, at most `perGroup` per group (a webhook endpoint), so a slow or dead receiver holds a few slots
 * and never the whole worker. On a manual clock, advancing the clock runs the same items through the `Job`,
 * with the real-time worker stood aside meanwhile (`Job.exclusive`): it claims nothing, and what it
 * started has finished, so no attempt is sent by both and nothing of the worker's hides due work.
 */
import type { Errors, Work } from "@laari/core"
import { DateTime, Effect, FiberSet, Queue, type Scope, Stream } from "effect"
import * as StallLog from "../Platform/StallLog.js"
import * as Wakeup from "../Sql/Wakeup.js"
import * as Turns from "./Turns.js"

export interface Limits {
  /** Items in flight per process. */
  readonly concurrency: number
  /** Items in flight per group and process. */
  readonly perGroup: number
}

export interface Source<A> {
  /** What the job and the logs call it. */
  readonly name: string
  /** Leases up to `limit` items due at `now`, none of the groups in `busy`. */
  readonly claim: (
    now: DateTime.Utc,
    limit: number,
    busy: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlyArray<A>, Errors.ServiceUnavailable>
  /** Sends one leased item and records its outcome; never fails (a failure to record leaves the lease to run out). */
  readonly send: (item: A) => Effect.Effect<void>
  readonly group: (item: A) => string
  readonly nextDueAt: Work.Job["nextDueAt"]
}

export interface Dispatcher {
  /** The job the manual clock runs: every due item, each waited for. */
  readonly job: Work.Job
  /** Claims what fits in the free slots and starts it without waiting (the real-time worker). */
  readonly fill: Effect.Effect<number>
  /** Resolves once something finished or was asked for. */
  readonly wakeups: Queue.Queue<void>
}

export const make = <A>(source: Source<A>, limits: Limits): Effect.Effect<Dispatcher, never, Scope.Scope> =>
  Effect.gen(function* () {
    const fibers = yield* FiberSet.make()
    const wakeups = yield* Queue.sliding<void>(1)
    const inFlight = new Map<string, number>()
    let total = 0
    // The worker claims holding `claiming`, and each item it starts holds one of `flying`'s permits until
    // it is recorded: whoever holds `claiming` and every permit has the items to itself.
    const claiming = yield* Effect.makeSemaphore(1)
    const flying = yield* Effect.makeSemaphore(limits.concurrency)

    const busy = () => [...inFlight].flatMap(([id, n]) => (n >= limits.perGroup ? [id] : []))

    const track = (group: string, delta: number) => {
      const n = (inFlight.get(group) ?? 0) + delta
      if (n === 0) inFlight.delete(group)
      else inFlight.set(group, n)
      total += delta
    }

    const fill = Effect.gen(function* () {
      let started = 0
      for (;;) {
        const free = limits.concurrency - total
        if (free <= 0) return started
        const now = yield* DateTime.now
        const claimed = yield* source.claim(now, Math.min(free, limits.perGroup * 4), busy())
        if (claimed.length === 0) return started
        for (const item of claimed) {
          const group = source.group(item)
          track(group, 1)
          // At most `concurrency` are in flight, so a permit is free.
          yield* flying.take(1)
          yield* FiberSet.run(
            fibers,
            source.send(item).pipe(
              Effect.ensuring(
                Effect.suspend(() => {
                  track(group, -1)
                  return Effect.zipRight(flying.release(1), wakeups.offer(undefined))
                })
              )
            )
          )
        }
        started += claimed.length
      }
    }).pipe(
      claiming.withPermits(1),
      Effect.catchAllCause((cause) =>
        Effect.as(Effect.logWarning(`claiming ${source.name} failed`, cause), 0)
      )
    )

    const job: Work.Job = {
      name: source.name,
      ownWorker: true,
      runDue: Effect.gen(function* () {
        let handled = 0
        for (;;) {
          const now = yield* DateTime.now
          const claimed = yield* source.claim(now, 100, [])
          if (claimed.length === 0) return handled
          yield* Effect.forEach(claimed, source.send, { concurrency: limits.concurrency, discard: true })
          handled += claimed.length
        }
      }),
      nextDueAt: source.nextDueAt,
      exclusive: (effect) =>
        claiming
          .withPermits(1)(flying.withPermits(limits.concurrency)(effect))
          .pipe(Effect.ensuring(wakeups.offer(undefined)))
    }

    return { job, fill, wakeups }
  })

/**
 * The real-time worker: fills the slots whenever `channel` is notified, an item finishes, or a second
 * passes (`Turns`: a second for the cluster as a whole). It runs on a manual clock too, where what is due at the clock's now (a new item's first
 * attempt) goes out at once and retries wait for the clock. Without a channel it only polls: for rare
 * items a second's wait is nothing, and a `LISTEN` holds a connection of its own.
 */
export const work = (
  channel: string | undefined,
  dispatcher: Dispatcher,
  /** Where in the second its fallback poll comes (a share of it), apart from the other pollers'. */
  offset = 0.1
): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function* () {
    if (channel !== undefined) {
      const notified = yield* Wakeup.listen(channel)
      yield* Effect.forkScoped(Stream.runForEach(notified, () => dispatcher.wakeups.offer(undefined)))
    }
    // The fallback poll takes turns with the other processes (`Turns`), between the jobs' polls.
    const slot = Turns.slot(process.env)
    yield* Effect.forkScoped(
      Effect.forever(Effect.zipRight(dispatcher.wakeups.offer(undefined), Turns.wait(slot, 1_000, offset)))
    )
    yield* Effect.forkScoped(
      Effect.forever(
        Effect.zipRight(
          dispatcher.wakeups.take,
          StallLog.span(`${dispatcher.job.name} claim`, dispatcher.fill)
        )
      )
    )
  })
