/**
 * Spans on the services' methods. Each method is `Telemetry.fn("<Service>.<method>")`, called and typed
 * as `Effect.fn(name)`: the function is named for a reader, a profile and a stack, and runs in a span of
 * that name when a tracer listens. `withTenant`, in the pipeline of a method whose first argument is the
 * tenant, puts that tenant on the span. A tracer listens when the host installs one (`Layer.setTracer`,
 * `@effect/opentelemetry`; the server does it with `OTEL_EXPORTER_OTLP_ENDPOINT`) and leaves it enabled;
 * bench/src/library.ts measures what a method costs when nobody listens.
 */
import { Effect, FiberRef, type Fiber, Utils } from "effect"

/** Effect's default tracer: spans made under it reach no exporter. */
const defaultTracer = Effect.runSync(Effect.tracer)

/** Whether a span made on this fiber reaches anyone: an installed tracer, enabled. */
const listening = (fiber: Fiber.RuntimeFiber<unknown, unknown>): boolean =>
  fiber.currentTracer !== defaultTracer && fiber.getFiberRef(FiberRef.currentTracerEnabled)

type Body = (...args: Array<unknown>) => unknown
type Pipeable = (effect: unknown, ...args: Array<unknown>) => unknown

/** The body and its pipeline, run bare: what `Effect.fn` runs inside its span. */
const bare = (body: Body, pipeables: ReadonlyArray<Pipeable>): Body =>
  Utils.isGeneratorFunction(body)
    ? (Effect.fnUntraced as (body: Body, ...pipeables: ReadonlyArray<Pipeable>) => Body)(body, ...pipeables)
    : function (this: unknown, ...args) {
        let effect = body.apply(this, args)
        for (const pipeable of pipeables) effect = pipeable(effect, ...args)
        return effect
      }

/**
 * `Effect.fn(name)` that makes its span only when a tracer listens. `Effect.fn` makes one at every call
 * even when nobody listens (a no-op span, two changes of the fiber's context and a captured stack), about
 * 16 µs a call against under 1 µs bare, and a charge over HTTP makes several such calls. Under a tracer the
 * span is the one `Effect.fn` would make, but its `code.stacktrace` names where the method is defined,
 * not each call site: capturing a stack at every call is what costs when nobody listens.
 */
export const fn = (name: string): Effect.fn.Gen & Effect.fn.NonGen => {
  const definedAt = new Error() // read only if a span fails: its third line is the caller of `fn`
  const options = { captureStackTrace: () => definedAt.stack?.split("\n")[2]?.trim() }
  return ((body: Body, ...pipeables: ReadonlyArray<Pipeable>) => {
    const run = bare(body, pipeables)
    return {
      [name](this: unknown, ...args: Array<unknown>) {
        return Effect.withFiberRuntime<unknown, unknown, unknown>((fiber) => {
          const effect = run.apply(this, args) as Effect.Effect<unknown, unknown, unknown>
          return listening(fiber) ? Effect.withSpan(effect, name, options) : effect
        })
      }
    }[name]
  }) as unknown as Effect.fn.Gen & Effect.fn.NonGen
}

/** Who a call acts for: a `Tenant`, or a resource that carries its owner. */
export interface Owner {
  readonly merchantId: string
  readonly environment: string
}

/**
 * For a method's pipeline, `Telemetry.fn(name)(body, Telemetry.withTenant)`: `self` with the call's first
 * argument, its tenant, as attributes of the method's span. Nobody listening, nothing is annotated.
 */
export const withTenant = <A, E, R>(self: Effect.Effect<A, E, R>, tenant: Owner): Effect.Effect<A, E, R> =>
  Effect.withFiberRuntime<A, E, R>((fiber) =>
    !listening(fiber)
      ? self
      : Effect.zipRight(
          Effect.annotateCurrentSpan({
            "laari.merchant_id": tenant.merchantId,
            "laari.environment": tenant.environment
          }),
          self
        )
  )
