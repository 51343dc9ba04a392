import { describe, expect, it } from "@effect/vitest"
import { Effect, Option, Tracer } from "effect"
import * as Telemetry from "../src/kernel/Telemetry.js"

/** A method as the services write them; it returns the span it runs in. */
const current = Telemetry.fn("Demo.current")(
  (_tenant: { merchantId: string; environment: string }) => Effect.option(Effect.currentSpan),
  Telemetry.withTenant
)

/** A tracer that is not Effect's default: someone listens. */
const listening = Effect.map(Effect.tracer, (native) =>
  Tracer.make({ span: native.span, context: native.context })
)

const spanOf = (found: Option.Option<Tracer.Span>) => Option.getOrThrow(found) as Tracer.Span

describe("Telemetry.fn and withTenant", () => {
  it.effect("under an installed tracer the method runs in its span, with the tenant", () =>
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
    "nobody listening, under Effect's default tracer or a disabled one, the method makes no span",
    () =>
      Effect.gen(function* () {
        const tenant = { merchantId: "m", environment: "test" }
        expect(yield* current(tenant)).toEqual(Option.none())
        const outer = spanOf(yield* current(tenant).pipe(Effect.withSpan("outer")))
        expect(outer.name).toBe("outer")
        expect(outer.attributes.has("laari.merchant_id")).toBe(false)
        const tracer = yield* listening
        const disabled = yield* current(tenant).pipe(
          Effect.withTracer(tracer),
          Effect.withTracerEnabled(false)
        )
        expect(disabled).toEqual(Option.none())
      })
  )

  it.effect("a generator method too, and its function carries the method's name", () =>
    Effect.gen(function* () {
      const method = Telemetry.fn("Demo.gen")(function* (_t: Telemetry.Owner, n: number) {
        const span = yield* Effect.option(Effect.currentSpan)
        return { n: n * 2, span }
      }, Telemetry.withTenant)
      expect(method.name).toBe("Demo.gen")
      expect(current.name).toBe("Demo.current")
      const tenant = { merchantId: "m-9", environment: "live" }
      const unheard = yield* method(tenant, 4)
      expect(unheard).toEqual({ n: 8, span: Option.none() })
      const heard = yield* method(tenant, 5).pipe(Effect.withTracer(yield* listening))
      expect(heard.n).toBe(10)
      expect(spanOf(heard.span).name).toBe("Demo.gen")
      expect(spanOf(heard.span).attributes.get("laari.merchant_id")).toBe("m-9")
    })
  )

  it.effect("a failed span under a tracer names where the method is defined", () =>
    Effect.gen(function* () {
      const ended: Array<Tracer.Span> = []
      const native = yield* Effect.tracer
      const tracer = Tracer.make({
        span: (...args) => {
          const span = native.span(...args)
          const end = span.end.bind(span)
          span.end = (time, exit) => {
            ended.push(span)
            end(time, exit)
          }
          return span
        },
        context: native.context
      })
      const boom = Telemetry.fn("Demo.fails")((_t: Telemetry.Owner) => Effect.fail("boom"))
      yield* Effect.flip(boom({ merchantId: "m", environment: "test" }).pipe(Effect.withTracer(tracer)))
      const span = ended.find((s) => s.name === "Demo.fails")
      expect(span?.status._tag).toBe("Ended")
      expect(String(span?.attributes.get("code.stacktrace"))).toContain("Telemetry.test.ts")
    })
  )

  it.effect("the method's result and failure pass through unchanged", () =>
    Effect.gen(function* () {
      const tracer = yield* listening
      const ok = Telemetry.fn("Demo.ok")(
        (_t: Telemetry.Owner, n: number) => Effect.succeed(n + 1),
        Telemetry.withTenant
      )
      const boom = Telemetry.fn("Demo.boom")(
        (_t: Telemetry.Owner) => Effect.fail("boom"),
        Telemetry.withTenant
      )
      const tenant = { merchantId: "m", environment: "test" }
      expect(yield* ok(tenant, 1).pipe(Effect.withTracer(tracer))).toBe(2)
      expect(yield* Effect.flip(boom(tenant).pipe(Effect.withTracer(tracer)))).toBe("boom")
    })
  )
})
