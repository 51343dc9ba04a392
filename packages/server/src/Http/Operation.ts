/**
 * The handlers of a group, wrapped with what their endpoints declare (`Access`, `Idempotent.Keyed`,
 * `OptionalBody.Declared`): `group` is `HttpApiBuilder.group` whose every handler first passes its
 * operation's access rule (the same `403` bodies and challenges as ever), and, on a keyed endpoint, runs
 * once per `Idempotency-Key` (`Idempotent.idempotent`). Handlers name neither a scope nor the header.
 *
 * The checks run where handlers ran them before: after HttpApi decoded the request (a body that does not
 * decode is `422` whoever sends it), before anything of the request is done. An endpoint that declares no
 * access rule stops the group's layer from building: no operation can be served unchecked.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type * as HttpApi from "@effect/platform/HttpApi"
import type * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import { Auth, type KeyedCommands } from "@laari/core"
import { Chunk, Context, Effect, type Layer, type Schema, type Scope } from "effect"
import * as Access from "./Access.js"
import * as Answers from "./Answers.js"
import * as AuditActor from "./AuditActor.js"
import { CurrentPrincipal } from "./Authentication.js"
import * as Challenge from "./Challenge.js"
import * as Idempotent from "./Idempotent.js"
import * as OptionalBody from "./OptionalBody.js"
import * as Problems from "./Problems.js"
import * as RouteOf from "./RouteOf.js"

/** The caller's principal, for a handler of a merchant's operation. */
export const principal = CurrentPrincipal

/** The caller's merchant and environment, which most handlers hand the service. */
export const tenant = Effect.map(CurrentPrincipal, Auth.tenantOf)

/** What a handler gets: HttpApi's decoded request (`path`, `payload`, `headers`, `urlParams`) and `request`. */
export type Request = {
  readonly path?: unknown
  readonly payload?: unknown
  readonly headers?: unknown
  /** The `HttpServerRequest`. */
  readonly request?: unknown
}

/** For a keyed response that shows a secret: how it is kept, from the caller and the request. */
export type Conceal = (principal: Auth.Principal, request: Request) => Idempotent.Concealed

/**
 * For a keyed operation: what its command will lock first, announced before the key's claim so that the
 * two travel in one round trip (`WriteBehind.Ahead`), as a keyed charge's do.
 */
export type Ahead = (principal: Auth.Principal, request: Request) => Effect.Effect<void>

/**
 * What some of a group's keyed endpoints add to their handlers, by endpoint name: a name that is not an
 * endpoint of the group does not compile, and one that is not keyed stops the group's layer from building.
 */
export interface Extras<Name extends string = string> {
  readonly conceal?: Partial<Record<Name, Conceal>>
  readonly ahead?: Partial<Record<Name, Ahead>>
  readonly resume?: Partial<Record<Name, Resume>>
}

/**
 * For a keyed operation whose handler can end `Idempotent.Later` (a payment pending in the wallet
 * provider's core): a retry's answer, from the pending movement's outcome now.
 */
export type Resume = (principal: Auth.Principal, movementId: string) => Effect.Effect<unknown, unknown>

/** The names of `G`'s endpoints. */
type EndpointName<G extends HttpApiGroup.HttpApiGroup.Any> = HttpApiEndpoint.HttpApiEndpoint.Name<
  HttpApiGroup.HttpApiGroup.Endpoints<G>
>

/** Extras only for keyed endpoints: on any other they would be silently ignored. */
const checkExtras = (group: HttpApiGroup.HttpApiGroup.AnyWithProps, extras: Extras): void => {
  const endpoints = Object.values(
    group.endpoints
  ) as ReadonlyArray<HttpApiEndpoint.HttpApiEndpoint.AnyWithProps>
  const keyed = new Set(endpoints.filter(Idempotent.isKeyed).map((e) => e.name))
  for (const [kind, byName] of Object.entries(extras))
    for (const name of Object.keys(byName ?? {}))
      if (!keyed.has(name))
        throw new Error(
          `${group.identifier}: ${kind} for ${name}, which is not a keyed endpoint of the group`
        )
}

type Refusal = Auth.Forbidden | Problems.NotFound

/** The caller, when `rule` admits it (a merchant's principal, or none for the operator and anyone). */
const admit = (rule: Access.Rule): Effect.Effect<Auth.Principal | undefined, Refusal, CurrentPrincipal> => {
  switch (rule._tag) {
    case "Anyone":
    case "Operator":
      return Effect.succeed(undefined)
    case "Scoped":
      return Effect.flatMap(CurrentPrincipal, (p): Effect.Effect<Auth.Principal, Refusal> => {
        const denial = Auth.check(p, rule.scope, rule)
        return denial === undefined
          ? Effect.succeed(p)
          : Effect.zipRight(
              Challenge.refuseScope(rule.scope),
              Effect.fail(Auth.Forbidden.of(denial, rule.scope))
            )
      })
    case "Sandbox":
      // A live key is answered as if the endpoint did not exist.
      return Effect.flatMap(
        CurrentPrincipal,
        (p): Effect.Effect<Auth.Principal, Refusal> =>
          p.environment !== "test"
            ? Effect.fail(new Problems.NotFound())
            : p.kind !== "secret"
              ? Effect.fail(
                  new Auth.Forbidden({
                    message: "A publishable key cannot use this endpoint; use a secret key"
                  })
                )
              : Effect.succeed(p)
      )
  }
}

type Handler = (request: Request) => Effect.Effect<unknown, unknown, unknown>

/** `handler` behind what `endpoint` of `group` declares. */
const guard = (
  api: HttpApi.HttpApi.AnyWithProps,
  group: HttpApiGroup.HttpApiGroup.AnyWithProps,
  endpoint: HttpApiEndpoint.HttpApiEndpoint.AnyWithProps,
  handler: Handler,
  conceal: Conceal | undefined,
  ahead: Ahead | undefined,
  resume: Resume | undefined
): Handler => {
  const rule = Access.ruleOf(group, endpoint)
  if (rule === undefined) throw new Error(`${group.identifier}.${endpoint.name} declares no access rule`)
  const keyed = Idempotent.isKeyed(endpoint)
  if (keyed && (rule._tag === "Anyone" || rule._tag === "Operator"))
    throw new Error(`${group.identifier}.${endpoint.name} is keyed per merchant but has no merchant`)
  const optional = Context.getOption(endpoint.annotations, OptionalBody.Declared)
  const route = RouteOf.template(endpoint.path)
  // A keyed command's refusal is stored as answered, by the schemas its endpoint lists; made once.
  const keyedEndpoint = keyed
    ? {
        successSchema: endpoint.successSchema as Schema.Schema.AnyNoContext,
        answers: Answers.ofEndpoint(api, group, endpoint)
      }
    : undefined
  const run = (request: Request, principal: Auth.Principal | undefined) => {
    if (keyedEndpoint === undefined || principal === undefined) return handler(request)
    // The decoded body is the request's fingerprint; an optional one is read (and refused) first, as ever.
    const payload =
      optional._tag === "Some" ? OptionalBody.read(optional.value) : Effect.succeed(request.payload)
    return Effect.flatMap(payload, (body) =>
      Idempotent.idempotent(
        keyedEndpoint,
        {
          principal,
          key: Idempotent.keyOf(request),
          payload: body,
          ahead: ahead?.(principal, request),
          resume: resume === undefined ? undefined : (movementId) => resume(principal, movementId)
        },
        handler(request),
        conceal?.(principal, request)
      )
    )
  }
  return (request) => {
    if (typeof request.request === "object" && request.request !== null) RouteOf.set(request.request, route)
    return Effect.flatMap(admit(rule), (principal) =>
      // The audit log records each change the handler makes as this caller's.
      AuditActor.within(rule._tag === "Operator" ? "operator" : principal, run(request, principal))
    )
  }
}

/**
 * `HttpApiBuilder.group`, every handler behind its endpoint's declarations. `extras` names the keyed
 * endpoints whose responses show a secret (`Idempotent.Concealed`) or whose command's first lock is
 * announced ahead (`Ahead`), and is built with the handlers.
 */
export const group = <
  ApiId extends string,
  Groups extends HttpApiGroup.HttpApiGroup.Any,
  ApiError,
  ApiR,
  const Name extends HttpApiGroup.HttpApiGroup.Name<Groups>,
  Return
>(
  api: HttpApi.HttpApi<ApiId, Groups, ApiError, ApiR>,
  groupName: Name,
  build: (
    handlers: HttpApiBuilder.Handlers.FromGroup<
      ApiError,
      ApiR,
      HttpApiGroup.HttpApiGroup.WithName<Groups, Name>
    >
  ) => HttpApiBuilder.Handlers.ValidateReturn<Return>,
  extras: Extras = {}
): Layer.Layer<
  HttpApiGroup.ApiGroup<ApiId, Name>,
  HttpApiBuilder.Handlers.Error<Return>,
  | Exclude<
      HttpApiBuilder.Handlers.Context<Return> | HttpApiGroup.HttpApiGroup.MiddlewareWithName<Groups, Name>,
      Scope.Scope
    >
  | KeyedCommands.KeyedCommands
> =>
  HttpApiBuilder.group(api, groupName, (handlers) => {
    const result = build(handlers) as unknown
    const built: Effect.Effect<
      HttpApiBuilder.Handlers<unknown, unknown, unknown, never>,
      unknown,
      unknown
    > = Effect.isEffect(result)
      ? (result as Effect.Effect<HttpApiBuilder.Handlers<unknown, unknown, unknown, never>>)
      : Effect.succeed(result as HttpApiBuilder.Handlers<unknown, unknown, unknown, never>)
    return Effect.map(built, (done) => {
      const group = (api.groups as unknown as Record<string, HttpApiGroup.HttpApiGroup.AnyWithProps>)[
        groupName
      ]!
      checkExtras(group, extras)
      const items = Chunk.map(done.handlers, (item) => {
        const endpoint = item.endpoint as HttpApiEndpoint.HttpApiEndpoint.AnyWithProps
        const handler = item.handler as Handler
        const name = endpoint.name
        return {
          ...item,
          handler: guard(
            api as unknown as HttpApi.HttpApi.AnyWithProps,
            group,
            endpoint,
            handler,
            extras.conceal?.[name],
            extras.ahead?.[name],
            extras.resume?.[name]
          )
        }
      })
      return Object.assign(Object.create(Object.getPrototypeOf(done)), done, { handlers: items })
    }) as never
  }) as never

/** What any endpoint of the API may also answer (`Api.ts`'s `addError`s: a body over the limit, an empty path segment). */
export type ApiError =
  | Schema.Schema.Type<typeof Problems.BodyTooLargeProblem>
  | Schema.Schema.Type<typeof Problems.NotFoundProblem>

/**
 * A feature's handlers, built against its own group: features never import the composed `Api` (which imports
 * every feature's group), and the composition root mounts them (`mount`), so no folder imports another back.
 */
export interface Handlers<G extends HttpApiGroup.HttpApiGroup.Any, Return> {
  readonly group: G
  readonly build: (
    handlers: HttpApiBuilder.Handlers.FromGroup<ApiError, never, G>
  ) => HttpApiBuilder.Handlers.ValidateReturn<Return>
  readonly extras: Extras<EndpointName<G>>
}

export const handlers = <G extends HttpApiGroup.HttpApiGroup.Any, Return>(
  group: G,
  build: (
    handlers: HttpApiBuilder.Handlers.FromGroup<ApiError, never, G>
  ) => HttpApiBuilder.Handlers.ValidateReturn<Return>,
  extras: Extras<EndpointName<G>> = {}
): Handlers<G, Return> => ({ group, build, extras })

/** `group` for a feature's `Handlers`, in the API that holds its group. */
export const mount = <
  ApiId extends string,
  Groups extends HttpApiGroup.HttpApiGroup.Any,
  E,
  R,
  G extends Groups,
  Return
>(
  api: HttpApi.HttpApi<ApiId, Groups, E, R>,
  spec: Handlers<G, Return>
) =>
  group<ApiId, Groups, E, R, HttpApiGroup.HttpApiGroup.Name<G>, Return>(
    api,
    (spec.group as unknown as HttpApiGroup.HttpApiGroup.AnyWithProps)
      .identifier as HttpApiGroup.HttpApiGroup.Name<G>,
    spec.build as never,
    spec.extras
  )
