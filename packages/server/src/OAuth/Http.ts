/**
 * The OAuth 2.0 endpoints, left out of the merchant API's OpenAPI document: the token endpoint
 * (RFC 6749, the client credentials grant), token revocation (RFC 7009) and the authorization server's
 * metadata (RFC 8414). Errors are RFC 6749 section 5.2's JSON, never a problem document. Wrong client
 * secrets lock their address, and the client, out for a while (`429`, `Retry-After`): no online guessing.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Auth, OAuthClient, OAuthClients } from "@laari/core"
import { DateTime, Effect, Option } from "effect"
import { ServerConfigTag } from "../Platform/Config.js"
import * as RateLimit from "../Http/RateLimit.js"
import * as RateLimits from "../Platform/RateLimits.js"
import * as Protocol from "./Protocol.js"

export const TokenPath = "/oauth/token"
export const RevokePath = "/oauth/revoke"
export const MetadataPath = "/.well-known/oauth-authorization-server"

export const isOAuthPath = (pathname: string): boolean => pathname === TokenPath || pathname === RevokePath

/** Token answers are never cached (RFC 6749 5.1). */
const noStore = { "cache-control": "no-store", pragma: "no-cache" } as const

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  HttpServerResponse.unsafeJson(body, { status, headers: { ...noStore, ...headers } })

const refuse = (e: Protocol.OAuthError) =>
  json(
    e.status,
    { error: e.error, error_description: e.description },
    // RFC 6749 5.2: a client that failed to authenticate is told how to, with 401.
    e.error === "invalid_client" ? { "www-authenticate": 'Basic realm="laari", charset="UTF-8"' } : {}
  )

/**
 * Locked out after failed guesses (`RateLimits.Lockout`): `429` with `Retry-After`, in RFC 6749's shape.
 * The code is `slow_down`, the OAuth error registry's code for a client asked to wait.
 */
class LockedOut {
  readonly _tag = "LockedOut"
  constructor(readonly decision: RateLimits.Decision) {}
}

const lockedOut = (e: LockedOut) =>
  json(
    429,
    {
      error: "slow_down",
      error_description: `Too many failed attempts to authenticate; retry after ${e.decision.retryAfterSeconds} seconds`
    },
    RateLimit.headers(e.decision)
  )

const unavailable = json(503, {
  error: "temporarily_unavailable",
  error_description: "The service cannot reach its database; try again shortly"
})

/** The request's form parameters and client credentials, or the error that ends it. */
const readRequest = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const type = (request.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase()
  if (type !== "application/x-www-form-urlencoded")
    return yield* Effect.fail(
      new Protocol.OAuthError("invalid_request", "Send the parameters as application/x-www-form-urlencoded")
    )
  const body = yield* request.text.pipe(
    Effect.mapError(() => new Protocol.OAuthError("invalid_request", "The request body could not be read"))
  )
  const params = Protocol.parseForm(body)
  if (params instanceof Protocol.OAuthError) return yield* Effect.fail(params)
  const credentials = Protocol.clientCredentials(request.headers.authorization, params)
  if (credentials instanceof Protocol.OAuthError) return yield* Effect.fail(credentials)
  return { params, credentials }
})

/** Runs `handle`; an OAuth error answers as RFC 6749 says, an unreachable database `503`. */
const endpoint = <R>(handle: Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, R>) =>
  handle.pipe(
    Effect.catchAll((e) =>
      Effect.succeed(
        e instanceof Protocol.OAuthError ? refuse(e) : e instanceof LockedOut ? lockedOut(e) : unavailable
      )
    )
  )

export const layer = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function* () {
    const clients = yield* OAuthClients.OAuthClients
    const config = yield* ServerConfigTag

    const limits = yield* RateLimits.RateLimits
    const byAddress = limits.secretGuessesByAddress
    const byClient = limits.secretGuessesByClient

    /**
     * The client, if its secret is right. Wrong secrets lock their address out (for every client), and a
     * client id guessed at from many addresses is locked out past its ceiling (`RateLimit.GuessesPerClient`);
     * each attempt takes its tries before the secret is checked, so guesses sent at once are counted too.
     */
    const authenticate = (credentials: Protocol.ClientCredentials | undefined) =>
      Effect.gen(function* () {
        if (credentials === undefined)
          return yield* Effect.fail(new Protocol.OAuthError("invalid_client", "The client must authenticate"))
        const request = yield* HttpServerRequest.HttpServerRequest
        const address = RateLimit.addressKey(Option.getOrElse(request.remoteAddress, () => "unknown"))
        const checked = yield* RateLimit.guarded(
          [
            [byAddress, address],
            [byClient, `client:${credentials.clientId}`]
          ],
          clients.authenticate(credentials.clientId, credentials.clientSecret)
        )
        if (checked._tag === "Locked") return yield* Effect.fail(new LockedOut(checked.decision))
        if (checked.value === undefined)
          return yield* Effect.fail(
            new Protocol.OAuthError("invalid_client", "Unknown client, or the wrong secret")
          )
        return checked.value
      })

    yield* router.post(
      TokenPath,
      endpoint(
        Effect.gen(function* () {
          const { params, credentials } = yield* readRequest
          const grant = Protocol.grant(params.get("grant_type"))
          // The grant type is checked before the client only when it is missing or unknown; otherwise
          // the client authenticates first, so its errors do not depend on the grant asked for.
          if (
            grant instanceof Protocol.OAuthError &&
            grant.error !== "unauthorized_client" &&
            grant.error !== "invalid_grant"
          )
            return yield* Effect.fail(grant)
          const client = yield* authenticate(credentials)
          if (grant instanceof Protocol.OAuthError) return yield* Effect.fail(grant)
          const scopes = Protocol.grantedScopes(params.get("scope"), client.scopes)
          if (scopes instanceof Protocol.OAuthError) return yield* Effect.fail(scopes)
          const issued = yield* clients.issue(client, scopes)
          const now = yield* DateTime.now
          return json(200, {
            access_token: issued.token,
            token_type: "Bearer",
            expires_in: Math.round(
              (DateTime.toEpochMillis(issued.expiresAt) - DateTime.toEpochMillis(now)) / 1000
            ),
            scope: scopes.join(" ")
          })
        })
      )
    )

    yield* router.post(
      RevokePath,
      endpoint(
        Effect.gen(function* () {
          const { params, credentials } = yield* readRequest
          const client = yield* authenticate(credentials)
          const token = params.get("token")
          if (token === undefined || token === "")
            return yield* Effect.fail(new Protocol.OAuthError("invalid_request", "token is required"))
          // RFC 7009 2.2: an unknown token, or another client's, is answered the same, 200.
          if (OAuthClient.accessTokenEnvironment(token) !== undefined)
            yield* clients.revokeToken(client, token)
          return HttpServerResponse.empty({ status: 200, headers: noStore })
        })
      )
    )

    const metadata = {
      issuer: config.baseUrl,
      token_endpoint: `${config.baseUrl}${TokenPath}`,
      revocation_endpoint: `${config.baseUrl}${RevokePath}`,
      grant_types_supported: ["client_credentials"],
      response_types_supported: [],
      token_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post"],
      revocation_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post"],
      scopes_supported: Auth.allScopes,
      service_documentation: `${config.baseUrl}/docs`
    }
    yield* router.get(MetadataPath, Effect.succeed(HttpServerResponse.unsafeJson(metadata)))
  })
)
