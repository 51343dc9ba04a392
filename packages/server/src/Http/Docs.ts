/**
 * The API's descriptions for people: `/docs` renders `/openapi.json` with Scalar (the platform inlines its
 * bundle, and remote fonts are off, so the page works without internet access). Which other documents
 * are served, and where (the operator API's at `/ops/openapi.json`), is `Routes`' to say.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import type * as HttpApiScalar from "@effect/platform/HttpApiScalar"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as OpenApi from "@effect/platform/OpenApi"
import { Effect, Layer } from "effect"

/**
 * The OpenAPI document of `api`, generated on its first request and kept: generating the two documents
 * took ~0.3 s of every start-up, for files most starts never serve. Uninterruptible, so a first reader
 * who goes away does not leave the interruption cached.
 */
const lazyDocument = <Id extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(
  api: HttpApi.HttpApi<Id, Groups, E, R>
) =>
  Effect.cached(
    Effect.suspend(() => HttpServerResponse.json(OpenApi.fromApi(api))).pipe(
      Effect.orDie,
      Effect.uninterruptible
    )
  )

/** `GET /openapi.json`: the merchants' contract (what `HttpApiBuilder.middlewareOpenApi` serves, made lazily). */
export const apiDocument = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function* () {
    const { api } = yield* HttpApi.Api
    yield* router.get("/openapi.json", yield* lazyDocument(api))
  })
)

/** `GET path`: the OpenAPI document of another API than the one served (the operator API's). */
export const document = <Id extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(
  path: `/${string}`,
  api: HttpApi.HttpApi<Id, Groups, E, R>
) =>
  HttpApiBuilder.Router.use((router) =>
    Effect.flatMap(lazyDocument(api), (response) => router.get(path, response))
  )

/**
 * What the reference page may load: only this origin. Scalar's bundle and the document are inline
 * scripts written by the service itself (no request data reaches the page), hence `'unsafe-inline'`,
 * and it compiles WebAssembly (`'wasm-unsafe-eval'`, not `'unsafe-eval'`);
 * `connect-src 'self'` lets "Try it" call this API.
 */
export const DocsContentSecurityPolicy = [
  "default-src 'self'",
  "script-src 'self' 'unsafe-inline' 'wasm-unsafe-eval'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'"
].join("; ")

const DocsPath = "/docs"

/** The security headers of the reference page. */
export const headers = HttpApiBuilder.middleware((app) =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
    new URL(request.url, "http://laari").pathname === DocsPath
      ? Effect.map(app, (response) =>
          HttpServerResponse.setHeaders(response, {
            "content-security-policy": DocsContentSecurityPolicy,
            "x-content-type-options": "nosniff",
            "referrer-policy": "no-referrer",
            "cache-control": "no-cache"
          })
        )
      : app
  )
)

const scalarOptions: Parameters<typeof HttpApiScalar.layer>[0] = {
  path: DocsPath,
  scalar: { withDefaultFonts: false, layout: "modern" }
}

/**
 * The reference page, made on its first request: it inlines Scalar's bundle, 3.4 MB of JavaScript that
 * a process holds (16 MiB) and parses (~0.2 s) once the module is loaded, so a server nobody reads the
 * docs of never loads it. The platform's own `HttpApiScalar.layer` makes the page, on a router of its
 * own, which then answers each request; uninterruptible, so a first reader who goes away does not leave
 * the interruption cached.
 */
export const page = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function* () {
    const api = yield* HttpApi.Api
    const page = yield* Effect.cached(
      Effect.promise(() => import("@effect/platform/HttpApiScalar")).pipe(
        Effect.flatMap((Scalar) =>
          HttpApiBuilder.Router.router.pipe(
            Effect.provide(Scalar.layer(scalarOptions).pipe(Layer.provideMerge(HttpApiBuilder.Router.Live)))
          )
        ),
        Effect.provideService(HttpApi.Api, api),
        Effect.uninterruptible
      )
    )
    yield* router.get(DocsPath, Effect.orDie(Effect.flatten(page)))
  })
)
