/**
 * `POST /graphql` and `GET /graphql`, per the GraphQL-over-HTTP specification (`graphql-http`),
 * outside the OpenAPI document (GraphQL describes itself by introspection). Authenticated and
 * rate limited like the merchant API: a key or an OAuth access token, `401` without one. Read only:
 * the schema has no mutations. One query cannot load the service without bound: it is at most
 * `MaxTokens` long, nests at most `MaxDepth` levels (`MaxTotalDepth` with introspection), and its
 * estimated cost (every field 1, a list its page size times its items, an introspection
 * `IntrospectionCost`) may not pass `MaxCost` (`Engine.ts`). The engine loads on the first request.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect } from "effect"
import * as Answers from "../Http/Answers.js"
import * as RateLimits from "../Platform/RateLimits.js"
import * as Security from "../Http/Security.js"
import type * as Schema from "./Schema.js"

export const Path = "/graphql"

export const layer = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function* () {
    const credentials = yield* Security.credentials
    const limitKey = (yield* RateLimits.RateLimits).perKey
    const runtime = yield* Effect.runtime<never>()
    // `graphql` and the schema are built on the first request, once, in the services of this layer: a
    // server nobody asks by GraphQL never loads them (about 0.3 s of start-up and 15 MiB). Uninterruptible,
    // so a first client that goes away does not leave the interruption cached for the next ones.
    const services = yield* Effect.context<Effect.Effect.Context<typeof Schema.make>>()
    const engine = yield* Effect.cached(
      Effect.promise(() => import("./Engine.js")).pipe(
        Effect.flatMap((Engine) => Engine.make(runtime)),
        Effect.provide(services),
        Effect.uninterruptible
      )
    )

    const serve = Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      // The key or token read as the merchant API reads it, refused in the same words.
      const principal = yield* Security.authenticate(credentials, request.headers.authorization)
      yield* limitKey(principal.keyId)
      const body = request.method === "POST" ? yield* Effect.orElseSucceed(request.text, () => "") : null
      const { handler, run, loaders } = yield* engine
      const context: Schema.Context = { principal, run, ...loaders(run, principal) }
      const [text, init] = yield* Effect.promise(() =>
        handler({
          method: request.method,
          url: request.url,
          headers: { get: (name: string) => request.headers[name.toLowerCase()] ?? null },
          body,
          raw: request,
          context
        })
      )
      return HttpServerResponse.text(text ?? "", {
        status: init.status,
        headers: { ...init.headers, "cache-control": "no-store" }
      })
    }).pipe(
      Effect.catchTags({
        Unauthorized: (e) => Effect.succeed(Answers.edge.respond(e)),
        RateLimited: (e) => Effect.succeed(Answers.edge.respond(e)),
        ServiceUnavailable: (e) => Effect.succeed(Answers.edge.respond(e))
      })
    )

    yield* router.post(Path, serve)
    yield* router.get(Path, serve)
  })
)
