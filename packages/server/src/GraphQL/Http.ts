/**
 * `POST /graphql` and `GET /graphql`, per the GraphQL-over-HTTP specification (`graphql-http`),
 * outside the OpenAPI document (spec 9.5: GraphQL describes itself by introspection). Authenticated and
 * rate limited like the merchant API: a key or an OAuth access token, `401` without one. Read only:
 * the schema has no mutations. One query cannot load the database without bound: it may nest at most
 * `MaxDepth` levels, and its estimated cost (every field 1, a list its page size times its items) may
 * not pass `MaxCost`.
 */
import { HttpApiBuilder, HttpApiSecurity, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Cause, Effect, Exit, Redacted, Runtime } from "effect"
import * as G from "graphql"
import { createHandler } from "graphql-http"
import { createComplexityRule, simpleEstimator } from "graphql-query-complexity"
import { ServerConfigTag } from "../Config.js"
import * as Problems from "../Http/Problems.js"
import * as RateLimit from "../Http/RateLimit.js"
import { principalOf, refusalOf } from "../Http/Security.js"
import { Directory } from "../Sql/Directory.js"
import { OAuthClients } from "../Sql/OAuthClients.js"
import * as Schema from "./Schema.js"

export const Path = "/graphql"

/** How deep a selection may nest: `mandates { charges { id } }` is 3. */
export const MaxDepth = 8

/** The largest estimated cost of one query: about as many objects as ten full pages of lists of lists. */
export const MaxCost = 10_000

/** Refuses an operation whose selections nest deeper than `max`, fragments included. */
export const depthLimit =
  (max: number): G.ValidationRule =>
  (context) => {
    const depth = (set: G.SelectionSetNode | undefined, seen: ReadonlySet<string>): number => {
      if (set === undefined) return 0
      let deepest = 0
      for (const s of set.selections) {
        // Introspection (`__schema`, `__type`) is answered from memory: tools nest it deep.
        if (s.kind === G.Kind.FIELD) {
          if (!s.name.value.startsWith("__")) deepest = Math.max(deepest, 1 + depth(s.selectionSet, seen))
        } else if (s.kind === G.Kind.INLINE_FRAGMENT) deepest = Math.max(deepest, depth(s.selectionSet, seen))
        else if (!seen.has(s.name.value)) {
          const fragment = context.getFragment(s.name.value)
          deepest = Math.max(deepest, depth(fragment?.selectionSet, new Set([...seen, s.name.value])))
        }
      }
      return deepest
    }
    return {
      OperationDefinition(node) {
        const found = depth(node.selectionSet, new Set())
        if (found > max)
          context.reportError(
            new G.GraphQLError(`The query nests ${found} levels deep; at most ${max} are allowed`, {
              nodes: [node]
            })
          )
      }
    }
  }

/**
 * A list field costs its page size (`limit`, default 25, at most 100) times what each item costs.
 * Introspection costs nothing: it is answered from memory.
 */
const listEstimator = (options: {
  readonly type: G.GraphQLCompositeType
  readonly field: G.GraphQLField<unknown, unknown>
  readonly args: Record<string, unknown>
  readonly childComplexity: number
}): number | undefined => {
  if (options.field.name.startsWith("__") || options.type.name.startsWith("__")) return 0
  if (!G.isListType(G.getNullableType(options.field.type))) return undefined
  const limit = typeof options.args.limit === "number" ? Math.min(Math.max(options.args.limit, 1), 100) : 25
  return limit * (1 + options.childComplexity)
}

/** GraphQL's errors as the client sees them: the message of a domain refusal, never a stack. */
const toGraphQLError = (cause: Cause.Cause<unknown>): G.GraphQLError => {
  const failure = Cause.squash(cause)
  if (failure instanceof G.GraphQLError) return failure
  const tagged = failure as { readonly _tag?: string; readonly message?: string }
  if (tagged._tag === "ServiceUnavailable")
    return new G.GraphQLError("The service is temporarily unavailable; try again shortly", {
      extensions: { code: "SERVICE_UNAVAILABLE" }
    })
  return new G.GraphQLError("Internal error", { extensions: { code: "INTERNAL" } })
}

export const layer = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function* () {
    const { schema, loaders } = yield* Schema.make
    const credentials = { directory: yield* Directory, oauth: yield* OAuthClients }
    const config = yield* ServerConfigTag
    const limitKey = RateLimit.perKey(config.rateLimit)
    const runtime = yield* Effect.runtime<never>()

    const run = <A>(effect: Effect.Effect<A, unknown>): Promise<A> =>
      Runtime.runPromiseExit(runtime)(effect).then((exit) => {
        if (Exit.isSuccess(exit)) return exit.value
        if (Cause.isDie(exit.cause))
          Runtime.runFork(runtime)(Effect.logError("graphql resolver defect", exit.cause))
        throw toGraphQLError(exit.cause)
      })

    const handler = createHandler<HttpServerRequest.HttpServerRequest, Schema.Context, Schema.Context>({
      schema,
      context: (req) => req.context,
      validationRules: (_req, args, specified) => [
        ...specified,
        depthLimit(MaxDepth),
        createComplexityRule({
          maximumComplexity: MaxCost,
          variables: (args.variableValues ?? {}) as Record<string, unknown>,
          operationName: args.operationName ?? undefined,
          estimators: [listEstimator as never, simpleEstimator({ defaultComplexity: 1 })],
          createError: (max, actual) =>
            new G.GraphQLError(
              `The query would cost ${actual}, over the limit of ${max}: ask for smaller pages (limit) or fewer nested lists`
            )
        })
      ]
    })

    const serve = Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      // The key or token read as the merchant API reads it.
      const token = yield* HttpApiBuilder.securityDecode(HttpApiSecurity.bearer)
      const principal = yield* principalOf(credentials, Redacted.value(token))
      if (principal === undefined) return Problems.respond(refusalOf(Redacted.value(token)))
      yield* limitKey(principal.keyId)
      const body = request.method === "POST" ? yield* Effect.orElseSucceed(request.text, () => "") : null
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
        RateLimited: (e) => Effect.succeed(Problems.respond(e)),
        ServiceUnavailable: (e) => Effect.succeed(Problems.respond(e))
      })
    )

    yield* router.post(Path, serve)
    yield* router.get(Path, serve)
  })
)
