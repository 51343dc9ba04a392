/**
 * The GraphQL engine behind `Http.ts`: the schema, graphql-http's handler and the limits every query
 * is held to. Loaded by the route on its first request (`graphql` and the schema are about a tenth of
 * the service's modules), so nothing else may import it at start-up.
 */
import { Cause, Effect, Exit, Runtime } from "effect"
import * as G from "graphql"
import { createHandler } from "graphql-http"
import { createComplexityRule, simpleEstimator } from "graphql-query-complexity"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as Schema from "./Schema.js"

/** How deep a selection may nest: `mandates { charges { id } }` is 3. Introspection does not count. */
export const MaxDepth = 8

/** How deep any selection may nest, introspection included (a full introspection query nests 13). */
export const MaxTotalDepth = 16

/** The largest estimated cost of one query: about as many objects as ten full pages of lists of lists. */
export const MaxCost = 10_000

/**
 * The longest query, in tokens, refused while parsing, before any rule walks it: a client's queries
 * and a full introspection query are a few hundred; a fan-out of thousands of aliases is refused here.
 */
export const MaxTokens = 2_000

/**
 * What each introspection root field (`__schema`, `__type`) costs: answered from memory, but each copy
 * serialises the schema again, so a thousand aliased copies must not be free.
 */
export const IntrospectionCost = 1_000

const isIntrospection = (name: string) => name.startsWith("__") && name !== "__typename"

/** Refuses an operation whose selections of the fields `counted` nest deeper than `max`, fragments included. */
export const depthLimit =
  (max: number, counted: (field: string) => boolean = (f) => !isIntrospection(f)): G.ValidationRule =>
  (context) => {
    const depth = (set: G.SelectionSetNode | undefined, seen: ReadonlySet<string>): number => {
      if (set === undefined) return 0
      let deepest = 0
      for (const s of set.selections) {
        if (s.kind === G.Kind.FIELD) {
          if (counted(s.name.value)) deepest = Math.max(deepest, 1 + depth(s.selectionSet, seen))
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
 * A list field costs its page size (`limit`, default 25, at most 100) times what each item costs. An
 * introspection root field costs `IntrospectionCost`, what it selects nothing more.
 */
const listEstimator = (options: {
  readonly type: G.GraphQLCompositeType
  readonly field: G.GraphQLField<unknown, unknown>
  readonly args: Record<string, unknown>
  readonly childComplexity: number
}): number | undefined => {
  if (options.field.name === "__schema" || options.field.name === "__type") return IntrospectionCost
  if (isIntrospection(options.field.name) || options.type.name.startsWith("__")) return 0
  if (!G.isListType(G.getNullableType(options.field.type))) return undefined
  const limit = typeof options.args.limit === "number" ? Math.min(Math.max(options.args.limit, 1), 100) : 25
  return limit * (1 + options.childComplexity)
}

/** Parses with the token limit; its refusal says what to do, not how the parser stopped. */
const parse = (source: string | G.Source, options?: G.ParseOptions): G.DocumentNode => {
  try {
    return G.parse(source, { ...options, maxTokens: MaxTokens })
  } catch (e) {
    if (e instanceof Error && /contains more th(?:an|at) \d+ tokens/.test(e.message))
      throw new G.GraphQLError(
        `The query is longer than ${MaxTokens} tokens: ask for fewer fields or aliases, or split it`
      )
    throw e
  }
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

/**
 * The handler, over the schema built in the caller's context, with the loaders of each request and the
 * runner its resolvers use: an effect's failure becomes the `GraphQLError` the client sees.
 */
export const make = (runtime: Runtime.Runtime<never>) =>
  Effect.map(Schema.make, ({ schema, loaders }) => {
    const run = <A>(effect: Effect.Effect<A, unknown>): Promise<A> =>
      Runtime.runPromiseExit(runtime)(effect).then((exit) => {
        if (Exit.isSuccess(exit)) return exit.value
        if (Cause.isDie(exit.cause))
          Runtime.runFork(runtime)(Effect.logError("graphql resolver defect", exit.cause))
        throw toGraphQLError(exit.cause)
      })

    const handler = createHandler<HttpServerRequest.HttpServerRequest, Schema.Context, Schema.Context>({
      schema,
      parse,
      context: (req) => req.context,
      validationRules: (_req, args, specified) => [
        ...specified,
        depthLimit(MaxDepth),
        depthLimit(MaxTotalDepth, () => true),
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
    return { handler, run, loaders }
  })
