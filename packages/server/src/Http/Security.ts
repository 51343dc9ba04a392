/**
 * Authentication (merchant keys and the operator token) and the per-key rate limit. Scopes are checked
 * where each operation declares its own (`Access`, `Operation`).
 */
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { ApiKeys, Auth, Errors, OAuthClient, OAuthClients } from "@laari/core"
import { Effect, FiberRef, HashMap, Layer, Option, Redacted } from "effect"
import { ServerConfigTag } from "../Platform/Config.js"
import * as Keys from "../Platform/Keys.js"
import * as Access from "./Access.js"
import * as Challenge from "./Challenge.js"
import * as Problems from "./Problems.js"
import * as RateLimit from "./RateLimit.js"
import * as RateLimits from "../Platform/RateLimits.js"
import { Authentication, CurrentPrincipal, OpsAuthentication } from "./Authentication.js"

export { Authentication, CurrentPrincipal, OpsAuthentication }

/** What finds a principal: the merchants' API keys, and the OAuth clients' access tokens (core's services). */
export interface Credentials {
  readonly keys: ApiKeys.ApiKeys
  readonly oauth: OAuthClients.OAuthClients
}

/** The `Credentials` of the services in scope, for each front end that authenticates (REST, GraphQL, pages). */
export const credentials: Effect.Effect<Credentials, never, ApiKeys.ApiKeys | OAuthClients.OAuthClients> =
  Effect.all({ keys: ApiKeys.ApiKeys, oauth: OAuthClients.OAuthClients })

/**
 * An access token's principal: a secret key's powers with exactly the token's scopes, its client's
 * merchant and environment. Its client's id is its key id: rate limits count per client.
 */
const tokenPrincipal = (oauth: Credentials["oauth"], token: string) =>
  Effect.map(oauth.grantOf(token), (grant): Auth.Principal | undefined =>
    grant === undefined || grant.client.environment !== OAuthClient.accessTokenEnvironment(token)
      ? undefined
      : {
          merchantId: grant.client.merchantId,
          environment: grant.client.environment,
          keyId: `oauth:${grant.client.id}`,
          kind: "secret",
          scopes: grant.scopes
        }
  )

/**
 * The principal of a key or an access token; `undefined` for any other text. A credential that could
 * not be checked is `ServiceUnavailable` (`503`, never a misleading `401`).
 */
export const principalOf = (
  credentials: Credentials,
  text: string
): Effect.Effect<Auth.Principal | undefined, Errors.ServiceUnavailable> => {
  const credential = text.trim()
  return OAuthClient.accessTokenEnvironment(credential) !== undefined
    ? tokenPrincipal(credentials.oauth, credential)
    : credentials.keys.authenticate(credential)
}

/** Base64 as RFC 4648 writes it (what `curl -u` sends), padded or not. */
const base64 = /^[A-Za-z0-9+/]+={0,2}$/

/**
 * The key of an HTTP Basic credential: its user name, as Stripe reads `curl -u sk_test_...:` (the
 * password, which `-u` leaves empty, is not looked at); `undefined` when there is no user name.
 */
const basicUser = (encoded: string): string | undefined => {
  if (!base64.test(encoded)) return undefined
  const decoded = Buffer.from(encoded, "base64").toString("utf8")
  const colon = decoded.indexOf(":")
  const user = (colon === -1 ? decoded : decoded.slice(0, colon)).trim()
  return user === "" ? undefined : user
}

/**
 * What the `Authorization` header presents: the credential to check (`Bearer <key or token>`, or Basic
 * with the key as the user name), or the `401` that says what to send instead.
 */
export const presented = (header: string | undefined): string | Problems.Unauthorized => {
  const [scheme = "", ...rest] = (header ?? "").trim().split(/\s+/)
  if (scheme === "") return Problems.Unauthorized.noKey
  const credential = rest.join(" ")
  switch (scheme.toLowerCase()) {
    case "bearer":
      return credential === "" ? Problems.Unauthorized.emptyBearer : credential
    case "basic":
      return basicUser(credential) ?? Problems.Unauthorized.basicWithoutKey
    default:
      return Problems.Unauthorized.notBearer
  }
}

/**
 * The principal of a presented key or access token, or the `401` that says what was wrong with it: an
 * unknown key, a revoked one, an expired or revoked token. A credential that could not be checked is
 * `ServiceUnavailable` (`503`, never a misleading `401`).
 */
export const identify = (
  credentials: Credentials,
  text: string
): Effect.Effect<Auth.Principal | Problems.Unauthorized, Errors.ServiceUnavailable> => {
  const credential = text.trim()
  if (OAuthClient.accessTokenEnvironment(credential) !== undefined)
    return Effect.map(
      tokenPrincipal(credentials.oauth, credential),
      (p) => p ?? Problems.Unauthorized.invalidToken
    )
  return Effect.map(credentials.keys.identify(credential), (verdict) =>
    verdict._tag === "Valid"
      ? verdict.principal
      : verdict._tag === "Revoked"
        ? Problems.Unauthorized.revokedKey
        : Problems.Unauthorized.invalidKey
  )
}

/** The principal of the request's `Authorization` header, for every front end that takes a key. */
export const authenticate = (
  credentials: Credentials,
  header: string | undefined
): Effect.Effect<Auth.Principal, Problems.Unauthorized | Errors.ServiceUnavailable> => {
  const credential = presented(header)
  if (credential instanceof Problems.Unauthorized) return Effect.fail(credential)
  return Effect.flatMap(identify(credentials, credential), (found) =>
    found instanceof Problems.Unauthorized ? Effect.fail(found) : Effect.succeed(found)
  )
}

/**
 * The refusal of `principal` by `rule` that needs no decoded request: a publishable key, or a missing
 * scope, on a scoped endpoint; a publishable key on a sandbox endpoint (a live key there is answered
 * `404` by the handler's guard, as if the endpoint did not exist). Answered before the body is read, so
 * a publishable key gets its `403` whatever body it sent.
 */
const refusalBefore = (
  rule: Access.Rule | undefined,
  principal: Auth.Principal
): Effect.Effect<void, Auth.Forbidden> => {
  if (rule?._tag === "Sandbox" && principal.environment === "test" && principal.kind !== "secret")
    return Effect.fail(
      new Auth.Forbidden({ message: "A publishable key cannot use this endpoint; use a secret key" })
    )
  if (rule?._tag !== "Scoped") return Effect.void
  const denial = Auth.check(principal, rule.scope, rule)
  if (denial === undefined) return Effect.void
  return Effect.zipRight(
    denial === "missing-scope" ? Challenge.refuseScope(rule.scope) : Effect.void,
    Effect.fail(Auth.Forbidden.of(denial, rule.scope))
  )
}

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

/**
 * The merchant API's authentication, told each route's access rule (`Access.rules` of the API) so that
 * a key its rule refuses whatever it sends is refused before the request is decoded.
 */
export const authenticationLive = (
  rules: (method: string, path: string) => Access.Rule | undefined
): Layer.Layer<Authentication, never, Credentials["keys"] | Credentials["oauth"] | RateLimits.RateLimits> =>
  Layer.effect(
    Authentication,
    Effect.gen(function* () {
      const services = yield* credentials
      const limits = yield* RateLimits.RateLimits
      return Authentication.of({
        // The header is read whole, not as the bearer scheme's slice of it: Basic is accepted too, and a
        // refusal says what was wrong with what was sent.
        bearer: () =>
          Effect.gen(function* () {
            const request = yield* HttpServerRequest.HttpServerRequest
            const found = yield* authenticate(services, request.headers.authorization)
            // Only once the key is known: an unknown key spends nobody's budget.
            yield* limits.perKey(found.keyId)
            yield* annotateMerchant(found)
            const route = yield* Effect.serviceOption(HttpRouter.RouteContext)
            if (Option.isSome(route))
              yield* refusalBefore(rules(route.value.route.method, route.value.route.path), found)
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
    const guesses = (yield* RateLimits.RateLimits).opsGuesses
    return OpsAuthentication.of({
      opsToken: (token) =>
        Effect.gen(function* () {
          const request = yield* HttpServerRequest.HttpServerRequest
          const address = RateLimit.addressKey(Option.getOrElse(request.remoteAddress, () => "unknown"))
          // The try is taken before the token is compared, so wrong tokens sent at once are counted too.
          const checked = yield* RateLimit.guarded(
            [[guesses, address]],
            Effect.sync(() =>
              expected !== "" && Keys.secretsEqual(Redacted.value(token).trim(), expected) ? true : undefined
            )
          )
          if (checked._tag === "Locked") {
            const locked = checked.decision
            yield* HttpApp.appendPreResponseHandler((_request, response) =>
              Effect.succeed(HttpServerResponse.setHeaders(response, RateLimit.headers(locked)))
            )
            return yield* Effect.fail(new Problems.RateLimited({ message: RateLimit.refusalMessage(locked) }))
          }
          if (checked.value) return
          return yield* Effect.fail(new Problems.Unauthorized({ message: "Invalid operator token" }))
        })
    })
  })
)
