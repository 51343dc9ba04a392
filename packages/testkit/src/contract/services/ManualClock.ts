/**
 * The clocks of the service tests: a service reads `DateTime.now`, so each test pins it on a manual clock
 * of its own (the store tests pass their moments explicitly and run on the real clock).
 */
import { Work } from "@laari/core"
import { Effect } from "effect"

export const Now = Date.parse("2026-03-15T10:00:00Z")
export const iso = (millis: number) => new Date(millis).toISOString()
/** Runs `test` on a manual clock set to `Now`, which the test moves. */
export const onManualClock = <A, E, R>(test: (clock: Work.ManualClock) => Effect.Effect<A, E, R>) => {
  const clock = Work.makeManualClock(Now)
  return Effect.withClock(test(clock), clock.clock)
}

/** Runs an effect on a manual clock pinned at `iso`. */
export const at = (iso: string) => Effect.withClock(Work.makeManualClock(Date.parse(iso)).clock)
