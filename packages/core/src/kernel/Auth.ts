/**
 * Who is calling: a merchant's key in one environment, with its kind and scopes.
 */
import { Schema } from "effect"
import type { Environment, MerchantId, Tenant } from "./Ids.js"

export const Scope = Schema.Literal(
  "mandates:write",
  "payments:write",
  "qr:write",
  "subscriptions:write",
  "checkout:write",
  "webhooks:write",
  "audit:read"
).annotations({
  description:
    "What a key may do: each `:write` scope allows the writes of one area of the API; `audit:read` reads the audit log"
})
export type Scope = typeof Scope.Type

export const allScopes: ReadonlyArray<Scope> = Scope.literals

export const KeyKind = Schema.Literal("secret", "publishable").annotations({
  description:
    "`secret`: for the merchant's server; `publishable`: safe in a browser, limited to the endpoints that allow it"
})
export type KeyKind = typeof KeyKind.Type

export interface Principal extends Tenant {
  readonly merchantId: MerchantId
  readonly environment: Environment
  readonly keyId: string
  readonly kind: KeyKind
  readonly scopes: ReadonlyArray<Scope>
}

/** Key prefixes carry kind and environment: `sk_test_`, `sk_live_`, `pk_test_`, `pk_live_`. */
export const keyPrefix = (kind: KeyKind, environment: Environment): string =>
  `${kind === "secret" ? "sk" : "pk"}_${environment}_`

export const parseKeyPrefix = (key: string): { kind: KeyKind; environment: Environment } | undefined => {
  const m = /^(sk|pk)_(test|live)_[A-Za-z0-9]+$/.exec(key)
  if (!m) return undefined
  return { kind: m[1] === "sk" ? "secret" : "publishable", environment: m[2] as Environment }
}

export type Denial = "missing-scope" | "publishable-key"

/** Whether `principal` may use an endpoint that needs `scope` (secret keys only, unless `publishableAllowed`). */
export const check = (
  principal: Principal,
  scope: Scope,
  options: { readonly publishableAllowed?: boolean } = {}
): Denial | undefined => {
  if (principal.kind === "publishable" && !options.publishableAllowed) return "publishable-key"
  if (!principal.scopes.includes(scope)) return "missing-scope"
  return undefined
}

/** The caller may not use this endpoint (`403`): the message names the scope or the key kind. */
export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", { message: Schema.String }) {
  static of(denial: Denial, scope: Scope): Forbidden {
    return new Forbidden({
      message:
        denial === "publishable-key"
          ? "A publishable key cannot use this endpoint; use a secret key"
          : `This key lacks the ${scope} scope`
    })
  }
}

export const tenantOf = (p: Principal): Tenant => ({ merchantId: p.merchantId, environment: p.environment })
