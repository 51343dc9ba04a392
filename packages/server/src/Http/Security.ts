/**
 * Authentication (merchant keys and the operator token), the per-key rate limit, and scope checks.
 */
import { HttpApiMiddleware, HttpApiSchema, HttpApiSecurity, type HttpServerResponse } from "@effect/platform"
import { Auth, Crypto } from "@laari/core"
import { Context, Data, Effect, Layer, Redacted, Schema } from "effect"
import { ServerConfigTag } from "../Config.js"
import * as Keys from "../Keys.js"
import { Directory } from "../Sql/Directory.js"
import * as RateLimit from "./RateLimit.js"
import { message, type Reply, toResponse } from "./Reply.js"

/** `401` on every endpoint for a missing or unknown key (DESIGN section 9). */
export class Unauthorized extends Data.TaggedError("Unauthorized")<{ readonly message: string }> {
  static readonly invalidKey = new Unauthorized({ message: "Invalid API key" })
}

/** Encodes exactly `Unauthorized` values (checked with `instanceof`) as `{ message }`. */
const UnauthorizedBody = Schema.transform(
  Schema.Struct({ message: Schema.String }),
  Schema.declare((u): u is Unauthorized => u instanceof Unauthorized),
  { strict: true, decode: (body) => new Unauthorized(body), encode: (e) => ({ message: e.message }) }
).annotations({
  identifier: "Unauthorized",
  ...HttpApiSchema.annotations({ status: 401, description: "Missing or invalid key" })
})

/** The key could not be checked because the database is away: `503`, never a misleading `401`. */
export class KeyCheckUnavailable extends Data.TaggedError("KeyCheckUnavailable")<{
  readonly message: string
}> {}

const KeyCheckUnavailableBody = Schema.transform(
  Schema.Struct({ message: Schema.String, code: Schema.Literal("SERVICE_UNAVAILABLE") }),
  Schema.declare((u): u is KeyCheckUnavailable => u instanceof KeyCheckUnavailable),
  {
    strict: true,
    decode: (body) => new KeyCheckUnavailable({ message: body.message }),
    encode: (e) => ({ message: e.message, code: "SERVICE_UNAVAILABLE" as const })
  }
).annotations({
  identifier: "ServiceUnavailable",
  ...HttpApiSchema.annotations({ status: 503, description: "This service is temporarily unavailable; retry" })
})

export class CurrentPrincipal extends Context.Tag("laari/server/CurrentPrincipal")<
  CurrentPrincipal,
  Auth.Principal
>() {}

export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("laari/server/Authentication", {
  provides: CurrentPrincipal,
  failure: Schema.Union(UnauthorizedBody, KeyCheckUnavailableBody, RateLimit.RateLimitedBody),
  security: { bearer: HttpApiSecurity.bearer }
}) {}

/** The operator's token guards `/ops`. */
export class OpsAuthentication extends HttpApiMiddleware.Tag<OpsAuthentication>()(
  "laari/server/OpsAuthentication",
  {
    failure: UnauthorizedBody,
    security: { opsToken: HttpApiSecurity.bearer }
  }
) {}

export const AuthenticationLive = Layer.effect(
  Authentication,
  Effect.gen(function* () {
    const directory = yield* Directory
    const config = yield* ServerConfigTag
    const limitKey = RateLimit.perKey(config.rateLimit)
    return Authentication.of({
      bearer: (token) =>
        Effect.gen(function* () {
          const key = Redacted.value(token).trim()
          const shape = Auth.parseKeyPrefix(key)
          if (shape === undefined) return yield* Effect.fail(Unauthorized.invalidKey)
          const digest = Keys.hash(key)
          const found = yield* directory
            .findKeyByHash(digest)
            .pipe(Effect.mapError((e) => new KeyCheckUnavailable({ message: e.message })))
          if (
            found === undefined ||
            found.revokedAt !== null ||
            found.kind !== shape.kind ||
            found.environment !== shape.environment ||
            !Crypto.constantTimeEqual(found.keyHash, digest)
          )
            return yield* Effect.fail(Unauthorized.invalidKey)
          // Only once the key is known: an unknown key spends nobody's budget.
          yield* limitKey(found.id)
          return {
            merchantId: found.merchantId,
            environment: found.environment,
            keyId: found.id,
            kind: found.kind,
            scopes: found.scopes
          } satisfies Auth.Principal
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
          : Effect.fail(new Unauthorized({ message: "Invalid operator token" }))
    })
  })
)

/** `403` naming the scope, or for a publishable key on a secret-key endpoint. */
export const denial = (
  principal: Auth.Principal,
  scope: Auth.Scope,
  options: { readonly publishableAllowed?: boolean } = {}
): Reply | undefined => {
  switch (Auth.check(principal, scope, options)) {
    case "publishable-key":
      return message(403, "A publishable key cannot use this endpoint; use a secret key")
    case "missing-scope":
      return message(403, `This key lacks the ${scope} scope`)
    case undefined:
      return undefined
  }
}

/** Runs `f` with the caller's principal when it holds `scope`; a `403` otherwise. */
export const withScope = <R>(
  scope: Auth.Scope,
  f: (principal: Auth.Principal) => Effect.Effect<HttpServerResponse.HttpServerResponse, never, R>,
  options: { readonly publishableAllowed?: boolean } = {}
): Effect.Effect<HttpServerResponse.HttpServerResponse, never, R | CurrentPrincipal> =>
  Effect.flatMap(CurrentPrincipal, (principal) => {
    const denied = denial(principal, scope, options)
    return denied === undefined ? f(principal) : Effect.succeed(toResponse(denied))
  })

/** Sandbox-only endpoints: any secret `sk_test_` key; a live key is answered as if they did not exist. */
export const withSandbox = <R>(
  f: (principal: Auth.Principal) => Effect.Effect<HttpServerResponse.HttpServerResponse, never, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, never, R | CurrentPrincipal> =>
  Effect.flatMap(CurrentPrincipal, (principal) =>
    principal.environment !== "test"
      ? Effect.succeed(toResponse(message(404, "Not found")))
      : principal.kind !== "secret"
        ? Effect.succeed(
            toResponse(message(403, "A publishable key cannot use this endpoint; use a secret key"))
          )
        : f(principal)
  )
