import { describe, expect, it } from "@effect/vitest"
import { Effect, Option, Tracer } from "effect"
import * as Telemetry from "../src/kernel/Telemetry.js"

/** A method as the services write them; it returns the span it runs in. */
const current = Effect.fn("Demo.current")(
  (_tenant: { merchantId: string; environment: string }) => Effect.option(Effect.currentSpan),
  Telemetry.withTenant
)

/** A tracer that is not Effect's default: someone listens. */
const listening = Effect.map(Effect.tracer, (native) =>
  Tracer.make({ span: native.span, context: native.context })
)

const spanOf = (found: Option.Option<Tracer.Span>) => Option.getOrThrow(found) as Tracer.Span

describe("Telemetry.withTenant", () => {
  it.effect("under an installed tracer the method runs in its `Effect.fn` span, with the tenant", () =>
    Effect.gen(function* () {
      const tracer = yield* listening
      const span = spanOf(
        yield* current({ merchantId: "m-7", environment: "live" }).pipe(Effect.withTracer(tracer))
      )
      expect(span.name).toBe("Demo.current")
      expect(span.attributes.get("laari.merchant_id")).toBe("m-7")
      expect(span.attributes.get("laari.environment")).toBe("live")
    })
  )

  it.effect(
    "nobody listening, under Effect's default tracer or a disabled one, the tenant is not written",
    () =>
      Effect.gen(function* () {
        const unheard = spanOf(yield* current({ merchantId: "m", environment: "test" }))
        expect(unheard.name).toBe("Demo.current")
        expect(unheard.attributes.has("laari.merchant_id")).toBe(false)
        const tracer = yield* listening
        const disabled = spanOf(
          yield* current({ merchantId: "m", environment: "test" }).pipe(
            Effect.withTracer(tracer),
            Effect.withTracerEnabled(false)
          )
        )
        expect(disabled.attributes.has("laari.merchant_id")).toBe(false)
      })
  )

  it.effect("the method's result and failure pass through unchanged", () =>
    Effect.gen(function* () {
      const tracer = yield* listening
      const ok = Effect.fn("Demo.ok")(
        (_t: Telemetry.Owner, n: number) => Effect.succeed(n + 1),
        Telemetry.withTenant
      )
      const boom = Effect.fn("Demo.boom")((_t: Telemetry.Owner) => Effect.fail("boom"), Telemetry.withTenant)
      const tenant = { merchantId: "m", environment: "test" }
      expect(yield* ok(tenant, 1).pipe(Effect.withTracer(tracer))).toBe(2)
      expect(yield* Effect.flip(boom(tenant).pipe(Effect.withTracer(tracer)))).toBe("boom")
    })
  )
})
