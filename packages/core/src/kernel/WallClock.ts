/**
 * Wall time, beside the service's clock. The service's clock (Effect's `Clock`) dates everything laari
 * decides: due times, expiries, events. It may be a manual clock that moves only when told to, in tests
 * and demos. What a receiver checks against its own clock, the timestamp a webhook or a notice is signed
 * with, must be the real time even then, so it is read from this port instead. A port, like `Crypto`, so
 * core reads no ambient clock: the host brings its system clock (the server's `Platform/WallClock`), a
 * test a stopped one (`fixed`).
 */
import { Context, Effect, Layer } from "effect"

export interface WallClockService {
  /** Seconds since the epoch, whole, as the Standard Webhooks timestamp counts them. */
  readonly nowSeconds: Effect.Effect<number>
  /** Milliseconds since the epoch: when a person or a credential did something (the audit log). */
  readonly nowMillis: Effect.Effect<number>
}

export class WallClock extends Context.Tag("laari/WallClock")<WallClock, WallClockService>() {}

/** Wall time as `millis` reads it, in milliseconds since the epoch (a host passes its system clock). */
export const make = (millis: () => number): WallClockService => ({
  nowSeconds: Effect.sync(() => Math.floor(millis() / 1000)),
  nowMillis: Effect.sync(millis)
})

export const layer = (millis: () => number): Layer.Layer<WallClock> => Layer.succeed(WallClock, make(millis))

/** A wall clock stopped at `seconds`, for tests that check what was signed. */
export const fixed = (seconds: number): Layer.Layer<WallClock> => layer(() => seconds * 1000)
