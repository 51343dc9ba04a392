/**
 * The server's clock: the system clock, or with `LAARI_CLOCK=manual` a clock that moves only when an
 * operator advances it, running every piece of work that became due on the way (DESIGN section 5).
 */
import { type Errors, Work } from "@laari/core"
import { Context, DateTime, Effect, Layer } from "effect"
import { ServerConfigTag } from "./Config.js"

export interface ClockworkService {
  readonly mode: "system" | "manual"
  /** Present in manual mode. */
  readonly manual: Work.ManualClock | undefined
  /** Moves a manual clock to `target` and runs all due work; `undefined` in system mode. */
  readonly advanceTo: (target: DateTime.Utc) => Effect.Effect<number, Errors.ServiceUnavailable> | undefined
}

export class Clockwork extends Context.Tag("laari/server/Clockwork")<Clockwork, ClockworkService>() {}

/** Installs the configured clock as every fiber's clock, and offers advancing it. */
export const layer = Layer.unwrapEffect(
  Effect.gen(function* () {
    const config = yield* ServerConfigTag
    if (config.clock === "system")
      return Layer.succeed(Clockwork, { mode: "system", manual: undefined, advanceTo: () => undefined })
    const manual = Work.makeManualClock(Date.now())
    const service = Layer.effect(
      Clockwork,
      Effect.map(Work.Jobs, (jobs) => ({
        mode: "manual" as const,
        manual,
        advanceTo: (target: DateTime.Utc) => Work.advanceTo(manual, jobs, target)
      }))
    )
    return Layer.merge(service, Layer.setClock(manual.clock))
  })
)
