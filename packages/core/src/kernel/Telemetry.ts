/**
 * Spans on the services' methods. Each method is `Effect.fn("<Service>.<method>")`, which names it for a
 * reader, in a failure's trace and as its span; `withTenant`, in the pipeline of a method whose first
 * argument is the tenant, puts that tenant on the span. The span reaches someone only when a tracer is
 * installed by the host (`Layer.setTracer`, `@effect/opentelemetry`; the server does it with
 * `OTEL_EXPORTER_OTLP_ENDPOINT`) and enabled; bench/src/library.ts measures what it costs when nobody
 * listens.
 */
import { Effect, FiberRef } from "effect"

/** Effect's default tracer: spans made under it reach no exporter. */
const defaultTracer = Effect.runSync(Effect.tracer)

/** Who a call acts for: a `Tenant`, or a resource that carries its owner. */
export interface Owner {
  readonly merchantId: string
  readonly environment: string
}

/**
 * For `Effect.fn`'s pipeline, `Effect.fn(name)(body, Telemetry.withTenant)`: `self` with the call's first
 * argument, its tenant, as attributes of the method's span. Nobody listening, nothing is annotated.
 */
export const withTenant = <A, E, R>(self: Effect.Effect<A, E, R>, tenant: Owner): Effect.Effect<A, E, R> =>
  Effect.withFiberRuntime<A, E, R>((fiber) =>
    fiber.currentTracer === defaultTracer || !fiber.getFiberRef(FiberRef.currentTracerEnabled)
      ? self
      : Effect.zipRight(
          Effect.annotateCurrentSpan({
            "laari.merchant_id": tenant.merchantId,
            "laari.environment": tenant.environment
          }),
          self
        )
  )
