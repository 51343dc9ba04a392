/**
 * Who may use each operation, declared once, on its endpoint (or its group, for every endpoint of it that
 * declares nothing): a scope (and whether a publishable key may use it), the sandbox, the operator, or
 * anyone. The handlers' wrapper (`Operation.group`) enforces it on every REST request; GraphQL's fields and
 * the dashboard's sections ask the REST operation they mirror (`scopeOf`), so a scope is written once; the
 * sentence that ends each endpoint's description is written from it too (`documented`).
 *
 * Annotations only: the API's definition, which the CLI's typed client loads, stays free of the server.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import type * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import type { Auth } from "@laari/core"
import { Context, Option } from "effect"

export type Rule =
  /** A merchant's key or access token holding `scope`; a publishable key only if `publishableAllowed`. */
  | { readonly _tag: "Scoped"; readonly scope: Auth.Scope; readonly publishableAllowed: boolean }
  /** Any secret `sk_test_` key; a live key is answered as if the endpoint did not exist. */
  | { readonly _tag: "Sandbox" }
  /** The operator's token, which the group's `OpsAuthentication` checks. */
  | { readonly _tag: "Operator" }
  /** No credential: health, the customer's approval pages, QR images. */
  | { readonly _tag: "Anyone" }

/** The annotation that carries an endpoint's (or a group's) rule. */
export class Access extends Context.Tag("laari/server/Access")<Access, Rule>() {}

/** Secret keys holding `scope`. */
export const scoped = (scope: Auth.Scope): Rule => ({ _tag: "Scoped", scope, publishableAllowed: false })

/** Secret or publishable keys holding `scope`. */
export const publishable = (scope: Auth.Scope): Rule => ({ _tag: "Scoped", scope, publishableAllowed: true })

export const sandbox: Rule = { _tag: "Sandbox" }
export const operator: Rule = { _tag: "Operator" }
export const anyone: Rule = { _tag: "Anyone" }

/** The rule of `endpoint` of `group`: its own, else its group's; `undefined` when neither declares one. */
export const ruleOf = (
  group: { readonly annotations: Context.Context<never> },
  endpoint: { readonly annotations: Context.Context<never> }
): Rule | undefined =>
  Option.getOrUndefined(
    Option.orElse(Context.getOption(endpoint.annotations, Access), () =>
      Context.getOption(group.annotations, Access)
    )
  )

/**
 * The rule of each route of `api` by method and path (`/mandates/:id`), for what runs before a request
 * is routed to its handler: the authentication, which refuses a key the rule refuses whatever it sends.
 */
export const rules = (api: HttpApi.HttpApi.Any): ((method: string, path: string) => Rule | undefined) => {
  const table = new Map<string, Rule>()
  HttpApi.reflect(api as unknown as HttpApi.HttpApi.AnyWithProps, {
    onGroup: () => {},
    onEndpoint: ({ group, endpoint }) => {
      const rule = ruleOf(group, endpoint)
      if (rule !== undefined) table.set(`${endpoint.method} ${endpoint.path}`, rule)
    }
  })
  return (method, path) => table.get(`${method} ${path}`)
}

/** The endpoints of `group` that declare no rule, as `group.endpoint` (a test holds the API to none). */
export const undeclared = (group: HttpApiGroup.HttpApiGroup.Any): ReadonlyArray<string> => {
  const g = group as unknown as HttpApiGroup.HttpApiGroup.AnyWithProps
  return Object.values(g.endpoints)
    .filter((e) => ruleOf(g, e) === undefined)
    .map((e) => `${g.identifier}.${e.name}`)
}

type Name<G extends HttpApiGroup.HttpApiGroup.Any> = HttpApiEndpoint.HttpApiEndpoint.Name<
  HttpApiGroup.HttpApiGroup.Endpoints<G>
>

/**
 * The rule of the operation `name` of `group`, for those that mirror it (GraphQL, the dashboard).
 * An operation without a declared rule is a programming error, found when the module loads.
 */
export const of = <G extends HttpApiGroup.HttpApiGroup.Any>(group: G, name: Name<G>): Rule => {
  const g = group as unknown as HttpApiGroup.HttpApiGroup.AnyWithProps
  const endpoint = g.endpoints[name]
  const rule = endpoint === undefined ? undefined : ruleOf(g, endpoint)
  if (rule === undefined) throw new Error(`${g.identifier}.${name} declares no access rule`)
  return rule
}

/** The scope of a scoped operation: what GraphQL and the dashboard check for the same reads and actions. */
export const scopeOf = <G extends HttpApiGroup.HttpApiGroup.Any>(group: G, name: Name<G>): Auth.Scope => {
  const rule = of(group, name)
  if (rule._tag !== "Scoped") throw new Error(`${name} is not scoped (${rule._tag})`)
  return rule.scope
}

/**
 * The sentence that ends the description of `endpoint` of `group`: what its rule asks of the caller, so the
 * documents cannot name another scope than the one enforced. Where an operation of the group accepts
 * publishable keys, its secret-only siblings say so. A publishable operation says in its own words what such
 * a key may do (the rule cannot), and the operator's and everyone's operations need no sentence.
 */
export const sentence = (
  group: HttpApiGroup.HttpApiGroup.AnyWithProps,
  endpoint: HttpApiEndpoint.HttpApiEndpoint.AnyWithProps
): string | undefined => {
  const rule = ruleOf(group, endpoint)
  if (rule?._tag === "Sandbox") return "Sandbox only: any `sk_test_` secret key; a live key gets `404`."
  if (rule?._tag !== "Scoped" || rule.publishableAllowed) return undefined
  const publishableSibling = Object.values(group.endpoints).some((e) => {
    const r = ruleOf(group, e)
    return r?._tag === "Scoped" && r.publishableAllowed
  })
  return publishableSibling ? `A secret key with scope \`${rule.scope}\`.` : `Scope \`${rule.scope}\`.`
}

/** `group` with each endpoint's description ended by its `sentence`: applied once its rule is declared. */
export const documented = <G extends HttpApiGroup.HttpApiGroup.Any>(group: G): G => {
  type Any = HttpApiGroup.HttpApiGroup.AnyWithProps
  const g = group as unknown as Any
  return Object.values(g.endpoints).reduce((done, endpoint) => {
    const said = sentence(g, endpoint)
    if (said === undefined) return done
    const own = Context.getOption(endpoint.annotations, OpenApi.Description)
    const description = Option.match(own, { onNone: () => said, onSome: (d) => `${d} ${said}` })
    // `add` under the same name replaces the endpoint where it stands; an annotation changes no type.
    return done.add(endpoint.annotate(OpenApi.Description, description)) as Any
  }, g) as unknown as G
}
