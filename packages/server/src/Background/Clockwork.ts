/**
 * The server's clock: the system clock, or with `LAARI_CLOCK=manual` a clock that moves only when an
 * operator advances it, running every piece of work that became due on the way.
 * The manual clock's time is kept in the database, so a restart goes on from it (events stay in order,
 * pending retries keep their due times); a new database starts it at wall time. An advance keeps each
 * moment it stops at before any work runs there, so a crash part way never leaves the kept time behind
 * work already committed.
 */
import { type Errors, Work } from "@laari/core"
import { Context, DateTime, Effect, Layer } from "effect"
import { ServerConfigTag } from "../Platform/Config.js"
import * as ManualClock from "../Sql/ManualClock.js"

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
    const { saved, save } = yield* Effect.orDie(ManualClock.make)
    const manual = Work.makeManualClock(saved ?? Date.now())
    // The clock never goes back, here or in the database.
    yield* Effect.orDie(save(manual.now()))
    const service = Layer.effect(
      Clockwork,
      Effect.map(Work.Jobs, (jobs) => ({
        mode: "manual" as const,
        manual,
        advanceTo: (target: DateTime.Utc) => Work.advanceTo(manual, jobs, target, save)
      }))
    )
    return Layer.merge(service, Layer.setClock(manual.clock))
  })
)
