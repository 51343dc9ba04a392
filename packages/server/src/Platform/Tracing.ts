/**
 * Traces over OTLP when `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set:
 * the HTTP server's request spans, `@effect/sql`'s statement spans and the services' method spans
 * (each an `Effect.fn` in core, with the tenant from `Telemetry.withTenant`), batched and sent as
 * OTLP/HTTP JSON by `@effect/opentelemetry`'s exporter. `OTEL_SERVICE_NAME` (default `laari`),
 * `OTEL_RESOURCE_ATTRIBUTES` and `OTEL_EXPORTER_OTLP_HEADERS` (`name=value,...`) are read as the
 * OpenTelemetry specification says. Unset, the tracer is disabled: spans are no-ops that record nothing,
 * and the exporter (OpenTelemetry's API and its semantic conventions, about a tenth of the service's
 * start-up) is not even loaded.
 *
 * Spans are timed by the wall clock (`wallTimed`), not the fiber's: with `LAARI_CLOCK=manual` that is
 * the service's clock, which stands still between advances and jumps by days in one.
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import { Clock, Config, Effect, Layer, Option, Tracer } from "effect"

const stripSlash = (url: string) => url.replace(/\/+$/, "")

/** `name=value,name2=value2`, values percent-decoded (OTLP exporter specification). */
export const parseHeaders = (text: string): Record<string, string> => {
  const headers: Record<string, string> = {}
  for (const pair of text.split(",")) {
    const at = pair.indexOf("=")
    if (at <= 0) continue
    headers[pair.slice(0, at).trim().toLowerCase()] = decodeURIComponent(pair.slice(at + 1).trim())
  }
  return headers
}

/** Where spans go: the traces endpoint as given, else `<endpoint>/v1/traces`; none when neither is set. */
export const tracesUrl = Effect.gen(function* () {
  const traces = yield* Config.option(Config.nonEmptyString("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
  if (Option.isSome(traces)) return traces
  const base = yield* Config.option(Config.nonEmptyString("OTEL_EXPORTER_OTLP_ENDPOINT"))
  return Option.map(base, (b) => `${stripSlash(b)}/v1/traces`)
})

const wall = Clock.make()

/** `tracer`, its spans started, ended and their events stamped by the wall clock whatever time it is given. */
export const wallTimed = (tracer: Tracer.Tracer): Tracer.Tracer =>
  Tracer.make({
    span: (name, parent, context, links, _startTime, kind, options) => {
      const span = tracer.span(name, parent, context, links, wall.unsafeCurrentTimeNanos(), kind, options)
      const end = span.end
      const event = span.event
      return Object.assign(span, {
        end: (_endTime: bigint, exit: Parameters<Tracer.Span["end"]>[1]) =>
          end.call(span, wall.unsafeCurrentTimeNanos(), exit),
        event: (eventName: string, _at: bigint, attributes?: Record<string, unknown>) =>
          event.call(span, eventName, wall.unsafeCurrentTimeNanos(), attributes)
      })
    },
    context: (f, fiber) => tracer.context(f, fiber)
  })

export const layer: Layer.Layer<never, never, never> = Layer.unwrapEffect(
  Effect.gen(function* () {
    const url = yield* tracesUrl
    if (Option.isNone(url)) return Layer.setTracerEnabled(false)
    const headers = yield* Config.string("OTEL_EXPORTER_OTLP_HEADERS").pipe(Config.withDefault(""))
    const serviceName = yield* Config.string("OTEL_SERVICE_NAME").pipe(Config.withDefault("laari"))
    const { OtlpSerialization, OtlpTracer } = yield* Effect.promise(() => import("@effect/opentelemetry"))
    const tracer = OtlpTracer.make({
      url: url.value,
      resource: { serviceName },
      headers: parseHeaders(headers),
      exportInterval: "1 second"
    })
    return Layer.unwrapScoped(Effect.map(tracer, (t) => Layer.setTracer(wallTimed(t)))).pipe(
      Layer.provide(FetchHttpClient.layer),
      Layer.provide(OtlpSerialization.layerJson)
    )
  }).pipe(Effect.orDie)
)
