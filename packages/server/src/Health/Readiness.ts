/**
 * Whether the service has finished starting: migrations, the demo merchant's seeding, and the start-up
 * lines. The socket opens before the seeding (the seed needs the whole service), so `/readyz` waits for
 * this as well as for the database: a load balancer or a script that sees `200` finds the service whole.
 */
import { Context, Deferred, Effect, Layer } from "effect"

export interface ReadinessService {
  /** Says start-up is done; later calls change nothing. */
  readonly done: Effect.Effect<void>
  readonly isDone: Effect.Effect<boolean>
  /** Waits until start-up is done. */
  readonly awaitDone: Effect.Effect<void>
}

export class Readiness extends Context.Tag("laari/server/Readiness")<Readiness, ReadinessService>() {}

const make = (startedDone: boolean) =>
  Effect.gen(function* () {
    const done = yield* Deferred.make<void>()
    if (startedDone) yield* Deferred.succeed(done, undefined)
    return {
      done: Deferred.succeed(done, undefined).pipe(Effect.asVoid),
      isDone: Deferred.isDone(done),
      awaitDone: Deferred.await(done)
    }
  })

/** Not ready until `done` is called: the standalone service, which says it after seeding (`Serve.ts`). */
export const pending: Layer.Layer<Readiness> = Layer.effect(Readiness, make(false))

/** Ready once its layers are built: a server embedded in tests, which nothing seeds. */
export const immediate: Layer.Layer<Readiness> = Layer.effect(Readiness, make(true))
