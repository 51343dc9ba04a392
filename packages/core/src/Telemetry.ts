/**
 * Spans on the services' methods, named `<Service>.<method>`, with the tenant as attributes when the
 * first argument is one. They are made only when someone listens: a tracer installed by the host
 * (`Layer.setTracer`, `@effect/opentelemetry`; the server does it with `OTEL_EXPORTER_OTLP_ENDPOINT`)
 * and enabled. Under Effect's default tracer, which exports nowhere, or a disabled one, a method runs
 * bare (bench/src/library.ts measures what is left: about half a microsecond a call).
 */
import { Effect, FiberRef } from "effect"

/** Effect's default tracer: spans made under it reach no exporter. */
const defaultTracer = Effect.runSync(Effect.tracer)

const tenantAttributes = (first: unknown): Record<string, unknown> | undefined => {
  if (typeof first !== "object" || first === null) return undefined
  const { merchantId, environment } = first as { merchantId?: unknown; environment?: unknown }
  return typeof merchantId === "string" && typeof environment === "string"
    ? { "laari.merchant_id": merchantId, "laari.environment": environment }
    : undefined
}

/** `methods` with every function that returns an effect wrapped in a span; other members as they are. */
export const traced = <S extends Record<string, unknown>>(service: string, methods: S): S => {
  const out: Record<string, unknown> = {}
  for (const [name, member] of Object.entries(methods)) {
    if (typeof member !== "function") {
      out[name] = member
      continue
    }
    const span = `${service}.${name}`
    out[name] = (...args: ReadonlyArray<unknown>) => {
      const result = (member as (...a: ReadonlyArray<unknown>) => unknown)(...args)
      if (!Effect.isEffect(result)) return result
      // Nobody listening, no span at all: `withSpan` would still make and provide one.
      return Effect.withFiberRuntime<unknown, unknown, unknown>((fiber) => {
        if (fiber.currentTracer === defaultTracer || !fiber.getFiberRef(FiberRef.currentTracerEnabled))
          return result as Effect.Effect<unknown, unknown, unknown>
        const attributes = tenantAttributes(args[0])
        return Effect.withSpan(
          result as Effect.Effect<unknown, unknown, unknown>,
          span,
          attributes === undefined ? undefined : { attributes }
        )
      })
    }
  }
  return out as S
}
