/**
 * The API's descriptions for people: `/docs` renders `/openapi.json` with Scalar (the platform inlines its
 * bundle, and remote fonts are off, so the page works without internet access), and the operator API
 * has its own document at `/ops/openapi.json`, kept out of the merchants' contract.
 */
import {
  HttpApi,
  HttpApiBuilder,
  HttpApiScalar,
  HttpServerRequest,
  HttpServerResponse,
  OpenApi
} from "@effect/platform"
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

const opsDocument = HttpApiBuilder.Router.use((router) =>
  Effect.flatMap(HttpServerResponse.json(OpenApi.fromApi(OpsDocumentApi)), (response) =>
    router.get("/ops/openapi.json", Effect.succeed(response))
  ).pipe(Effect.orDie)
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

export const layer = Layer.mergeAll(
  HttpApiScalar.layer({ path: DocsPath, scalar: { withDefaultFonts: false, layout: "modern" } }),
  opsDocument,
  docsHeaders
)
