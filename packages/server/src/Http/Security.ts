/**
 * Authentication (merchant keys and the operator token), the per-key rate limit, and scope checks.
 */
import { HttpApiMiddleware, HttpApiSecurity } from "@effect/platform"
import { Auth, Crypto, Errors } from "@laari/core"
import { Context, Effect, FiberRef, HashMap, Layer, Redacted, Schema } from "effect"
import { ServerConfigTag } from "../Config.js"
import * as Keys from "../Keys.js"
import { Directory } from "../Sql/Directory.js"
import * as Problems from "./Problems.js"
import * as RateLimit from "./RateLimit.js"

export class CurrentPrincipal extends Context.Tag("laari/server/CurrentPrincipal")<
  CurrentPrincipal,
  Auth.Principal
>() {}

export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("laari/server/Authentication", {
  provides: CurrentPrincipal,
  failure: Schema.Union(
    Problems.UnauthorizedProblem,
    Problems.ServiceUnavailable,
    Problems.RateLimitedProblem
  ),
  security: { bearer: HttpApiSecurity.bearer }
}) {}

/** The operator's token guards `/ops`. */
export class OpsAuthentication extends HttpApiMiddleware.Tag<OpsAuthentication>()(
  "laari/server/OpsAuthentication",
  {
    failure: Problems.UnauthorizedProblem,
    security: { opsToken: HttpApiSecurity.bearer }
  }
) {}

/**
 * The principal of a key: its prefix says kind and environment, its hash finds it, and it must not be
 * revoked; `undefined` for any other text. A key that could not be checked is `ServiceUnavailable`.
 */
export const principalOf = (
  directory: Context.Tag.Service<typeof Directory>,
  text: string
): Effect.Effect<Auth.Principal | undefined, Errors.ServiceUnavailable> =>
  Effect.gen(function* () {
    const key = text.trim()
    const shape = Auth.parseKeyPrefix(key)
    if (shape === undefined) return undefined
    const digest = yield* directory.keyDigest(key)
    let found = yield* directory.findKeyByHash(digest)
    if (found === undefined) {
      // Stored before keys were hashed keyed: found by its plain hash once, then hashed keyed.
      const plain = Keys.hash(key)
      const old = yield* directory.findKeyByHash(plain)
      if (old !== undefined && Crypto.constantTimeEqual(old.keyHash, plain)) {
        yield* directory.upgradeKeyHash(old.id, plain, digest)
        found = { ...old, keyHash: digest }
      }
    }
    if (
      found === undefined ||
      found.revokedAt !== null ||
      found.kind !== shape.kind ||
      found.environment !== shape.environment ||
      !Crypto.constantTimeEqual(found.keyHash, digest)
    )
      return undefined
    return {
      merchantId: found.merchantId,
      environment: found.environment,
      keyId: found.id,
      kind: found.kind,
      scopes: found.scopes
    }
  })

/**
 * The rest of the request logs as the key's merchant (`merchant_id`, `environment`): set on the request's
 * fiber, which runs the handler next, within `RequestId`'s annotations, which end with the request.
 */
const annotateMerchant = (principal: Auth.Principal) =>
  FiberRef.update(FiberRef.currentLogAnnotations, (annotations) =>
    HashMap.set(
      HashMap.set(annotations, "merchant_id", principal.merchantId as unknown),
      "environment",
      principal.environment as unknown
    )
  )

export const AuthenticationLive = Layer.effect(
  Authentication,
  Effect.gen(function* () {
    const directory = yield* Directory
    const config = yield* ServerConfigTag
    const limitKey = RateLimit.perKey(config.rateLimit)
    return Authentication.of({
      bearer: (token) =>
        Effect.gen(function* () {
          const found = yield* principalOf(directory, Redacted.value(token))
          if (found === undefined) return yield* Effect.fail(Problems.Unauthorized.invalidKey)
          // Only once the key is known: an unknown key spends nobody's budget.
          yield* limitKey(found.keyId)
          yield* annotateMerchant(found)
          return found
        })
    })
  })
)

export const OpsAuthenticationLive = Layer.effect(
  OpsAuthentication,
  Effect.gen(function* () {
    const config = yield* ServerConfigTag
    const expected = config.opsToken ?? ""
    return OpsAuthentication.of({
      opsToken: (token) =>
        expected !== "" && Keys.secretsEqual(Redacted.value(token).trim(), expected)
          ? Effect.void
          : Effect.fail(new Problems.Unauthorized({ message: "Invalid operator token" }))
    })
  })
)

/** Runs `f` with the caller's principal when it holds `scope`; `403` naming the scope otherwise. */
export const withScope = <A, E, R>(
  scope: Auth.Scope,
  f: (principal: Auth.Principal) => Effect.Effect<A, E, R>,
  options: { readonly publishableAllowed?: boolean } = {}
): Effect.Effect<A, E | Auth.Forbidden, R | CurrentPrincipal> =>
  Effect.flatMap(CurrentPrincipal, (principal): Effect.Effect<A, E | Auth.Forbidden, R> => {
    const denial = Auth.check(principal, scope, options)
    return denial === undefined ? f(principal) : Effect.fail(Auth.Forbidden.of(denial, scope))
  })

/** Sandbox-only endpoints: any secret `sk_test_` key; a live key is answered as if they did not exist. */
export const withSandbox = <A, E, R>(
  f: (principal: Auth.Principal) => Effect.Effect<A, E, R>
): Effect.Effect<A, E | Auth.Forbidden | Problems.NotFound, R | CurrentPrincipal> =>
  Effect.flatMap(
    CurrentPrincipal,
    (principal): Effect.Effect<A, E | Auth.Forbidden | Problems.NotFound, R> =>
      principal.environment !== "test"
        ? Effect.fail(new Problems.NotFound())
        : principal.kind !== "secret"
          ? Effect.fail(
              new Auth.Forbidden({ message: "A publishable key cannot use this endpoint; use a secret key" })
            )
          : f(principal)
  )
