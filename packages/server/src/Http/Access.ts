/**
 * Who may use each operation, declared once, on its endpoint (or its group, for every endpoint of it that
 * declares nothing): a scope (and whether a publishable key may use it), the sandbox, the operator, or
 * anyone. The handlers' wrapper (`Operation.group`) enforces it on every REST request; GraphQL's fields and
 * the dashboard's sections ask the REST operation they mirror (`scopeOf`), so a scope is written once.
 *
 * Annotations only: the API's definition, which the CLI's typed client loads, stays free of the server.
 */
import type * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
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
