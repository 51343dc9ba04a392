/**
 * Metrics over HTTP: `GET /metrics` for Prometheus, behind the operator token, and the middleware that
 * times every request and writes its access log line (`Logs.AccessLog`). The route is added to the router directly, not to the `HttpApi`, so it stays out
 * of `/openapi.json`, the merchants' contract.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiSecurity from "@effect/platform/HttpApiSecurity"
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Chunk, Context, Effect, FiberRef, type HashMap, Layer } from "effect"
import * as Logs from "../Platform/Logs.js"
import { Metrics } from "./Metrics.js"
import * as Answers from "../Http/Answers.js"
import { OpsAuthentication, OpsAuthenticationLive } from "../Http/Security.js"
import * as RouteOf from "../Http/RouteOf.js"

export const Path = "/metrics"

/** The route label of a request no route matches: raw paths would make a series per id. */
export const Unmatched = "unmatched"

/** Methods outside these share one label, so a client cannot make a series per made-up method. */
const Methods = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])

/** find-my-way's `:id` as OpenAPI's `{id}`: `/mandates/:id/charges` is `/mandates/{id}/charges`. */
export const template = RouteOf.template

const TemplateHeader = "x-laari-route"

/**
 * Records a request's duration under its method, route template and status, and logs it in one line
 * with the log annotations it was served under (`request_id`, `merchant_id` once authenticated). Only
 * the template is written, never the raw path or its query, which may carry ids or tokens.
 */
export class RequestMetrics extends Context.Tag("laari/server/RequestMetrics")<
  RequestMetrics,
  {
    readonly record: (
      request: HttpServerRequest.HttpServerRequest,
      status: number,
      seconds: number,
      annotations: HashMap.HashMap<string, unknown> | undefined
    ) => Effect.Effect<void>
  }
>() {}

/**
 * The route a request matches is only known inside the router, under the middleware. So the middleware
 * asks a twin of the router (the same routes and configuration, each answering with its own path) on
 * the first request built, when every layer has added its routes: the same match, ids never in labels.
 */
const requestMetrics = Layer.effect(
  RequestMetrics,
  Effect.gen(function* () {
    const metrics = yield* Metrics
    const accessLog = yield* Logs.AccessLog
    const router = yield* HttpApiBuilder.Router
    const config = yield* FiberRef.get(HttpRouter.currentRouterConfig)
    const twin = yield* Effect.cached(
      Effect.flatMap(router.router, (r) =>
        HttpRouter.toHttpApp(
          HttpRouter.fromIterable(
            Chunk.map(r.routes, (route) =>
              HttpRouter.makeRoute(
                route.method,
                route.path,
                Effect.map(HttpRouter.RouteContext, (context) =>
                  HttpServerResponse.empty({ headers: { [TemplateHeader]: template(context.route.path) } })
                )
              )
            )
          )
        ).pipe(HttpRouter.withRouterConfig(config))
      )
    )
    const routeOf = (request: HttpServerRequest.HttpServerRequest) => {
      // Told by the operation that served it (`RouteOf`): the same template, without routing again.
      const known = RouteOf.get(request)
      return known !== undefined ? Effect.succeed(known) : routed(request)
    }
    const routed = (request: HttpServerRequest.HttpServerRequest) =>
      twin.pipe(
        Effect.flatMap((app) => Effect.provideService(app, HttpServerRequest.HttpServerRequest, request)),
        Effect.map((response) => response.headers[TemplateHeader] ?? Unmatched),
        Effect.orElseSucceed(() => Unmatched)
      )
    return {
      record: (request, status, seconds, annotations) =>
        Effect.flatMap(routeOf(request), (route) => {
          const method = Methods.has(request.method) ? request.method : "OTHER"
          metrics.observeRequest({ method, route, status }, seconds)
          if (!accessLog) return Effect.void
          const line = Effect.logInfo(`${method} ${route} ${status}`).pipe(
            Effect.annotateLogs({ method, route, status, duration_ms: Math.round(seconds * 10_000) / 10 })
          )
          return annotations === undefined
            ? line
            : Effect.locally(line, FiberRef.currentLogAnnotations, annotations)
        })
    }
  })
).pipe(Layer.provide(HttpApiBuilder.Router.Live))

/**
 * Times and logs every request the app answers, until its response head (`RequestId.middleware` wraps
 * it). The edge's own refusals (`Edge`: a declared body over the limit) never reach the app and are not
 * counted.
 */
export const middleware = <E, R>(app: HttpApp.HttpApp<HttpServerResponse.HttpServerResponse, E, R>) =>
  Effect.flatMap(RequestMetrics, (metrics) =>
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      // Real time, not the clock's: a manual clock stands still while requests take time.
      const started = performance.now()
      // The response head is made after the request's log annotations have ended (`RequestId`'s, and
      // the merchant's once authenticated): kept as the app left them, for the access log line.
      let annotations: HashMap.HashMap<string, unknown> | undefined
      const keep = Effect.map(FiberRef.get(FiberRef.currentLogAnnotations), (a) => {
        annotations = a
      })
      const observe = HttpApp.appendPreResponseHandler((_request, response) =>
        Effect.as(
          metrics.record(request, response.status, (performance.now() - started) / 1000, annotations),
          response
        )
      )
      return Effect.zipRight(observe, app).pipe(Effect.ensuring(keep))
    })
  )

/** `GET /metrics` with the operator token; `401` as `/ops` answers it otherwise. */
const route = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function* () {
    const metrics = yield* Metrics
    const ops = yield* OpsAuthentication
    yield* router.get(
      Path,
      Effect.gen(function* () {
        // The token read as HttpApi reads it for `/ops`.
        yield* ops.opsToken(yield* HttpApiBuilder.securityDecode(HttpApiSecurity.bearer))
        const text = yield* metrics.scrape
        return HttpServerResponse.text(text, {
          contentType: metrics.registry.contentType,
          headers: { "cache-control": "no-store" }
        })
      }).pipe(
        Effect.catchTags({
          Unauthorized: (e) => Effect.succeed(Answers.edge.respond(e)),
          // Locked out after wrong tokens (`Security.OpsAuthenticationLive`).
          RateLimited: (e) => Effect.succeed(Answers.edge.respond(e))
        })
      )
    )
  })
).pipe(Layer.provide(OpsAuthenticationLive))

/** The route and the request timing, over a `Metrics` registry. */
export const layer = Layer.merge(route, requestMetrics)
