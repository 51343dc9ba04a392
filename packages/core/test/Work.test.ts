import { describe, expect, it } from "@effect/vitest"
import { DateTime, Effect } from "effect"
import * as Work from "../src/kernel/Work.js"

const ms = (iso: string) => DateTime.toEpochMillis(DateTime.unsafeMake(iso))

/**
 * A job with work due at given moments. Handling an item may schedule a follow-up (like a retry),
 * `followUpMs` later, up to `followUps` times.
 */
const job = (
  name: string,
  dues: Array<number>,
  log: Array<string>,
  followUps = 0,
  followUpMs = 3_600_000
): Work.Job => {
  let left = followUps
  return {
    name,
    runDue: Effect.gen(function* () {
      const now = DateTime.toEpochMillis(yield* DateTime.now)
      const due = dues.filter((d) => d <= now)
      for (const d of due) {
        dues.splice(dues.indexOf(d), 1)
        log.push(`${name}@${DateTime.formatIso(DateTime.unsafeMake(now))}`)
        if (left-- > 0) dues.push(now + followUpMs)
      }
      return due.length
    }),
    nextDueAt: Effect.sync(() => (dues.length === 0 ? undefined : DateTime.unsafeMake(Math.min(...dues))))
  }
}

describe("advanceTo", () => {
  it.effect("stops at each due moment in order, across jobs, and runs each at its own moment", () =>
    Effect.gen(function* () {
      const log: Array<string> = []
      const manual = Work.makeManualClock(ms("2026-01-01T00:00:00Z"))
      const a = job(
        "a",
        [ms("2026-01-03T00:00:00Z"), ms("2026-01-01T06:00:00Z"), ms("2026-02-01T00:00:00Z")],
        log
      )
      const b = job("b", [ms("2026-01-02T00:00:00Z")], log)
      const handled = yield* Work.advanceTo(manual, [a, b], DateTime.unsafeMake("2026-01-10T00:00:00Z"))
      expect(handled).toBe(3)
      expect(log).toEqual([
        "a@2026-01-01T06:00:00.000Z",
        "b@2026-01-02T00:00:00.000Z",
        "a@2026-01-03T00:00:00.000Z"
      ])
      expect(manual.now()).toBe(ms("2026-01-10T00:00:00Z"))
    })
  )

  it.effect("follows work that handling schedules on the way (retries)", () =>
    Effect.gen(function* () {
      const log: Array<string> = []
      const manual = Work.makeManualClock(ms("2026-01-01T00:00:00Z"))
      const retries = job("r", [ms("2026-01-01T01:00:00Z")], log, 3)
      yield* Work.advanceTo(manual, [retries], DateTime.unsafeMake("2026-01-01T03:30:00Z"))
      // The third follow-up (04:00) lies beyond the target and waits.
      expect(log).toEqual([
        "r@2026-01-01T01:00:00.000Z",
        "r@2026-01-01T02:00:00.000Z",
        "r@2026-01-01T03:00:00.000Z"
      ])
      yield* Work.advanceTo(manual, [retries], DateTime.unsafeMake("2026-01-02T00:00:00Z"))
      expect(log.slice(3)).toEqual(["r@2026-01-01T04:00:00.000Z"])
    })
  )

  it.effect("work already due runs at once; a target in the past moves nothing", () =>
    Effect.gen(function* () {
      const log: Array<string> = []
      const manual = Work.makeManualClock(ms("2026-01-01T00:00:00Z"))
      const late = job("late", [ms("2025-12-31T00:00:00Z")], log)
      yield* Work.advanceTo(manual, [late], DateTime.unsafeMake("2025-01-01T00:00:00Z"))
      expect(log).toEqual(["late@2026-01-01T00:00:00.000Z"])
      expect(manual.now()).toBe(ms("2026-01-01T00:00:00Z"))
    })
  )
})

describe("runUntilQuiet", () => {
  it.effect("repeats the jobs until none handles anything", () =>
    Effect.gen(function* () {
      let left = 3
      const chatty: Work.Job = {
        name: "chatty",
        runDue: Effect.sync(() => {
          if (left === 0) return 0
          left--
          return 1
        }),
        nextDueAt: Effect.succeed(undefined)
      }
      expect(yield* Work.runUntilQuiet([chatty])).toBe(3)
    })
  )

  it.effect("dies when work never settles", () =>
    Effect.gen(function* () {
      const endless: Work.Job = {
        name: "endless",
        runDue: Effect.succeed(1),
        nextDueAt: Effect.succeed(undefined)
      }
      const exit = yield* Effect.exit(Work.runUntilQuiet([endless], 5))
      expect(exit._tag).toBe("Failure")
    })
  )
})

describe("makeManualClock", () => {
  it.effect("moves only when set, never backwards, and is what effects see", () =>
    Effect.gen(function* () {
      const manual = Work.makeManualClock(1_000)
      manual.set(5_000)
      manual.set(2_000)
      expect(manual.now()).toBe(5_000)
      const seen = yield* DateTime.now.pipe(Effect.withClock(manual.clock))
      expect(DateTime.toEpochMillis(seen)).toBe(5_000)
      expect(manual.clock.unsafeCurrentTimeNanos()).toBe(5_000_000_000n)
    })
  )
})
