/**
 * The API's descriptions for people: `/docs` renders `/openapi.json` with Scalar (the platform inlines its
 * bundle, and remote fonts are off, so the page works without internet access), and the operator API
 * has its own document at `/ops/openapi.json`, kept out of the merchants' contract.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import type * as HttpApiScalar from "@effect/platform/HttpApiScalar"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as OpenApi from "@effect/platform/OpenApi"
import { EventType } from "@laari/core"
import { Effect, Layer } from "effect"
import { OpsApi } from "../Ops/Api.js"
import { OpsWebhooksApi } from "../Webhooks/Api.js"
import * as OpenApiDocument from "./OpenApiDocument.js"
import * as Problems from "./Problems.js"

/** The operator API alone; the main `Api` excludes the group from its document. */
export class OpsDocumentApi extends HttpApi.make("laari-operator")
  .add(OpsApi.annotate(OpenApi.Exclude, false))
  .add(OpsWebhooksApi.annotate(OpenApi.Exclude, false))
  // As on the main `Api`: an empty or dot path parameter matches no route, answered `NOT_FOUND`.
  .addError(Problems.NotFoundProblem)
  .annotate(OpenApi.Title, "laari operator API")
  .annotate(OpenApi.Version, EventType.ApiVersion)
  .annotate(OpenApi.Transform, OpenApiDocument.finish({ internal: true }))
  .annotate(
    OpenApi.Description,
    "Merchants, outlets, keys, feature gates, customers, suspensions, recorded events and the manual clock. Authenticate with `Authorization: Bearer <LAARI_OPS_TOKEN>`. Not part of the merchant API's contract."
  ) {}

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

const opsDocument = HttpApiBuilder.Router.use((router) =>
  Effect.flatMap(lazyDocument(OpsDocumentApi), (document) => router.get("/ops/openapi.json", document))
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
const docsHeaders = HttpApiBuilder.middleware((app) =>
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
const docsPage = HttpApiBuilder.Router.use((router) =>
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

export const layer = Layer.mergeAll(docsPage, opsDocument, docsHeaders)
