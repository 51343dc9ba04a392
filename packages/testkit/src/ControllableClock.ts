/**
 * A clock that moves only when told to, and runs the background work that falls due on the way.
 *
 * Built on core's `Work.makeManualClock` and `Work.advanceTo`: `advance` steps from one due moment to
 * the next, running every `Work.Jobs` job to quiescence at each, so expiries (and later renewals and
 * retries) happen at their exact instants.
 *
 * Using it in a test. `layer` also installs the manual clock as the default `Clock` of every effect it
 * is provided to, so `DateTime.now` inside the services reads it:
 *
 * ```ts
 * it.effect("expires", () =>
 *   Effect.gen(function* () {
 *     const clock = yield* ControllableClock
 *     yield* clock.advance("24 hours") // runs the expiry job at each due moment
 *   }).pipe(Effect.provide(Testkit.layer()))
 * )
 * ```
 *
 * `it.effect` runs the test on a `TestClock` at 1970; providing the layer *inside* the test (as above,
 * or through `@effect/vitest`'s `layer(Testkit.layer())`) replaces it. To run something on the manual
 * clock without the layer, use `Effect.withClock(clock.clock)`.
 */
import { type Errors, Work } from "@laari/core"
import { Clock, Context, DateTime, Duration, Effect, Layer } from "effect"

export interface ControllableClockService {
  /** The manual clock itself, for `Effect.withClock`. */
  readonly clock: Clock.Clock
  readonly now: Effect.Effect<DateTime.Utc>
  /** Moves time forward by `duration`, running due work at every due moment on the way. */
  readonly advance: (duration: Duration.DurationInput) => Effect.Effect<number, Errors.ServiceUnavailable>
  /** Moves time forward to `target` (never backwards), running due work on the way. */
  readonly advanceTo: (target: DateTime.DateTime) => Effect.Effect<number, Errors.ServiceUnavailable>
  /** Runs every job until quiet at the current time. */
  readonly runDue: Effect.Effect<number, Errors.ServiceUnavailable>
  /**
   * Moves time without running any job, as if the workers were down: for testing what a request sees
   * before a sweep has caught up.
   */
  readonly skip: (duration: Duration.DurationInput) => Effect.Effect<void>
}

export class ControllableClock extends Context.Tag("laari/testkit/ControllableClock")<
  ControllableClock,
  ControllableClockService
>() {}

/** Where tests start unless told otherwise: a realistic moment, the last day of a month. */
export const DefaultStart: DateTime.Utc = DateTime.unsafeMake("2026-03-31T10:00:00Z")

export const make = (manual: Work.ManualClock, jobs: ReadonlyArray<Work.Job>): ControllableClockService => {
  const now = Effect.sync(() => DateTime.unsafeMake(manual.now()))
  const advanceTo = (target: DateTime.DateTime) => Work.advanceTo(manual, jobs, DateTime.toUtc(target))
  return {
    clock: manual.clock,
    now,
    advanceTo,
    advance: (duration) =>
      Effect.suspend(() => advanceTo(DateTime.unsafeMake(manual.now() + Duration.toMillis(duration)))),
    runDue: Work.runUntilQuiet(jobs).pipe(Effect.withClock(manual.clock)),
    skip: (duration) => Effect.sync(() => manual.set(manual.now() + Duration.toMillis(duration)))
  }
}

/**
 * The controllable clock over the process's `Work.Jobs`, starting at `start`; it also becomes the
 * default `Clock` of whatever this layer is provided to.
 */
export const layer = (
  options: { readonly start?: DateTime.DateTime.Input } = {}
): Layer.Layer<ControllableClock, never, Work.Jobs> =>
  Layer.unwrapEffect(
    Effect.map(Work.Jobs, (jobs) => {
      const manual = Work.makeManualClock(
        DateTime.toEpochMillis(DateTime.unsafeMake(options.start ?? DefaultStart))
      )
      return Layer.merge(Layer.succeed(ControllableClock, make(manual, jobs)), Layer.setClock(manual.clock))
    })
  )
