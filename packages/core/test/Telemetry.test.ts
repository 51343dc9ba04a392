import { describe, expect, it } from "@effect/vitest"
import { Effect, Option, Tracer } from "effect"
import * as Telemetry from "../src/Telemetry.js"

const service = Telemetry.traced("Demo", {
  // The span this method runs in, if any.
  current: (_tenant: { merchantId: string; environment: string }) => Effect.option(Effect.currentSpan),
  plain: (n: number) => n + 1,
  job: { name: "not a function" }
})

/** A tracer that is not Effect's default: someone listens. */
const listening = Effect.map(Effect.tracer, (native) =>
  Tracer.make({ span: native.span, context: native.context })
)

describe("Telemetry.traced", () => {
  it.effect("under Effect's default tracer nobody listens: no span is made", () =>
    Effect.gen(function* () {
      expect(Option.isNone(yield* service.current({ merchantId: "m", environment: "test" }))).toBe(true)
    })
  )

  it.effect("under an installed tracer the method runs in `<Service>.<method>` with the tenant", () =>
    Effect.gen(function* () {
      const tracer = yield* listening
      const span = yield* service
        .current({ merchantId: "m-7", environment: "live" })
        .pipe(Effect.withTracer(tracer))
      expect(Option.isSome(span)).toBe(true)
      const s = Option.getOrThrow(span) as Tracer.Span
      expect(s.name).toBe("Demo.current")
      expect(s.attributes.get("laari.merchant_id")).toBe("m-7")
      expect(s.attributes.get("laari.environment")).toBe("live")
    })
  )

  it.effect("a disabled tracer makes no span either; members that are not effects are left as they are", () =>
    Effect.gen(function* () {
      const tracer = yield* listening
      const span = yield* service
        .current({ merchantId: "m", environment: "test" })
        .pipe(Effect.withTracer(tracer), Effect.withTracerEnabled(false))
      expect(Option.isNone(span)).toBe(true)
      expect(service.plain(1)).toBe(2)
      expect(service.job).toEqual({ name: "not a function" })
    })
  )
})
