/**
 * Authentication (merchant keys and the operator token) and the per-key rate limit. Scopes are checked
 * where each operation declares its own (`Access`, `Operation`).
 */
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { ApiKeys, Auth, Errors, OAuthClient, OAuthClients } from "@laari/core"
import { Effect, FiberRef, HashMap, Layer, Option, Redacted } from "effect"
import { ServerConfigTag } from "../Platform/Config.js"
import * as Keys from "../Platform/Keys.js"
import * as Problems from "./Problems.js"
import * as RateLimit from "./RateLimit.js"
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

/** The `401` for a credential that found no principal: a key's, or an access token's. */
export const refusalOf = (text: string): Problems.Unauthorized =>
  OAuthClient.accessTokenEnvironment(text.trim()) === undefined
    ? Problems.Unauthorized.invalidKey
    : Problems.Unauthorized.invalidToken

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
    const services = yield* credentials
    const limits = yield* RateLimit.RateLimits
    return Authentication.of({
      bearer: (token) =>
        Effect.gen(function* () {
          const text = Redacted.value(token)
          const found = yield* principalOf(services, text)
          if (found === undefined) return yield* Effect.fail(refusalOf(text))
          // Only once the key is known: an unknown key spends nobody's budget.
          yield* limits.perKey(found.keyId)
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
    const guesses = (yield* RateLimit.RateLimits).opsGuesses
    return OpsAuthentication.of({
      opsToken: (token) =>
        Effect.gen(function* () {
          const request = yield* HttpServerRequest.HttpServerRequest
          const address = RateLimit.addressKey(Option.getOrElse(request.remoteAddress, () => "unknown"))
          const locked = yield* guesses.locked(address)
          if (locked !== undefined) {
            yield* HttpApp.appendPreResponseHandler((_request, response) =>
              Effect.succeed(HttpServerResponse.setHeaders(response, RateLimit.headers(locked)))
            )
            return yield* Effect.fail(new Problems.RateLimited({ message: RateLimit.refusalMessage(locked) }))
          }
          if (expected !== "" && Keys.secretsEqual(Redacted.value(token).trim(), expected)) return
          yield* guesses.failed(address)
          return yield* Effect.fail(new Problems.Unauthorized({ message: "Invalid operator token" }))
        })
    })
  })
)
