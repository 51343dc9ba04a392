import { describe, expect, it } from "@effect/vitest"
import { Work } from "@laari/core"
import { DateTime, Effect, Layer } from "effect"
import { ControllableClock, DefaultStart, layer } from "../src/ControllableClock.js"
import * as Testkit from "../src/Testkit.js"

/** A job with work due at fixed moments; it records the clock's time whenever it handles one. */
const scheduled = (dues: ReadonlyArray<string>) => {
  const pending = dues.map((d) => DateTime.toEpochMillis(DateTime.unsafeMake(d))).sort((a, b) => a - b)
  const handled: Array<string> = []
  const job: Work.Job = {
    name: "scheduled",
    runDue: Effect.gen(function* () {
      const now = DateTime.toEpochMillis(yield* DateTime.now)
      let n = 0
      while (pending.length > 0 && pending[0]! <= now) {
        pending.shift()
        handled.push(DateTime.formatIso(yield* DateTime.now))
        n++
      }
      return n
    }),
    nextDueAt: Effect.sync(() => (pending.length === 0 ? undefined : DateTime.unsafeMake(pending[0]!)))
  }
  return { job, handled, pending }
}

const withJobs = (jobs: ReadonlyArray<Work.Job>, start: string) =>
  Effect.provide(layer({ start }).pipe(Layer.provide(Layer.succeed(Work.Jobs, jobs))))

describe("ControllableClock", () => {
  it.effect("advance stops at every due moment on the way, in order, and ends at the target", () => {
    const s = scheduled([
      "2026-01-03T00:00:00Z",
      "2026-01-01T12:00:00.500Z",
      "2026-01-02T00:00:00Z",
      "2026-02-01T00:00:00Z"
    ])
    return Effect.gen(function* () {
      const clock = yield* ControllableClock
      const handled = yield* clock.advance("3 days")
      expect(handled).toBe(3)
      expect(s.handled).toEqual([
        "2026-01-01T12:00:00.500Z",
        "2026-01-02T00:00:00.000Z",
        "2026-01-03T00:00:00.000Z"
      ])
      expect(DateTime.formatIso(yield* clock.now)).toBe("2026-01-04T00:00:00.000Z")
      expect(s.pending).toHaveLength(1)
    }).pipe(withJobs([s.job], "2026-01-01T00:00:00Z"))
  })

  it.effect("skip moves time without running jobs; runDue catches up at the current time", () => {
    const s = scheduled(["2026-01-01T01:00:00Z"])
    return Effect.gen(function* () {
      const clock = yield* ControllableClock
      yield* clock.skip("2 hours")
      expect(s.handled).toEqual([])
      expect(yield* clock.runDue).toBe(1)
      expect(s.handled).toEqual(["2026-01-01T02:00:00.000Z"])
    }).pipe(withJobs([s.job], "2026-01-01T00:00:00Z"))
  })

  it.effect("advanceTo never moves backwards", () =>
    Effect.gen(function* () {
      const clock = yield* ControllableClock
      yield* clock.advanceTo(DateTime.unsafeMake("2025-01-01T00:00:00Z"))
      expect(DateTime.formatIso(yield* clock.now)).toBe("2026-01-01T00:00:00.000Z")
    }).pipe(withJobs([], "2026-01-01T00:00:00Z"))
  )

  it.effect("the layer installs the manual clock as the default Clock, replacing it.effect's TestClock", () =>
    Effect.gen(function* () {
      // Outside the layer: the TestClock at 1970.
      expect(DateTime.toEpochMillis(yield* DateTime.now)).toBe(0)
      const inside = yield* Effect.gen(function* () {
        const clock = yield* ControllableClock
        const before = yield* DateTime.now
        yield* clock.advance("90 minutes")
        return [before, yield* DateTime.now] as const
      }).pipe(Effect.provide(Testkit.layer()))
      expect(inside.map(DateTime.formatIso)).toEqual([
        DateTime.formatIso(DefaultStart),
        "2026-03-31T11:30:00.000Z"
      ])
    })
  )

  it.effect("Effect.withClock runs any effect on the manual clock", () =>
    Effect.gen(function* () {
      const clock = yield* ControllableClock
      const now = yield* DateTime.now.pipe(Effect.withClock(clock.clock))
      expect(DateTime.formatIso(now)).toBe("2030-06-01T00:00:00.000Z")
    }).pipe(withJobs([], "2030-06-01T00:00:00Z"))
  )
})
