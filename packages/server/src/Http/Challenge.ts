/**
 * Authentication challenges (RFC 9110 section 11.6.1, RFC 6750 section 3): every `401` of a bearer
 * credential says how to authenticate, and a `403` for a missing scope names it, so a generic HTTP or
 * OAuth client knows whether to fetch a new token or ask for another scope.
 *
 * - no credential sent: `Bearer realm="laari"` (no error code, as RFC 6750 3.1 asks);
 * - a credential refused: `Bearer realm="laari", error="invalid_token"`;
 * - a scope missing: `403` with `Bearer realm="laari", error="insufficient_scope", scope="<scope>"`.
 *
 * Answers that carry their own challenge (the OAuth token endpoint's `Basic`) keep it.
 */
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type { Auth } from "@laari/core"
import { Effect, FiberRef } from "effect"

export const Realm = "laari"

/** The scope a request was refused for, set where the scope is checked and read once it is answered. */
export const refusedScope: FiberRef.FiberRef<Auth.Scope | undefined> = FiberRef.unsafeMake<
  Auth.Scope | undefined
>(undefined)

/** Records that the request lacks `scope`, for its `403`'s challenge. */
export const refuseScope = (scope: Auth.Scope): Effect.Effect<void> => FiberRef.set(refusedScope, scope)

/** The challenge for a `401` (`credentialSent`: whether the request had an `Authorization` header). */
export const unauthorized = (credentialSent: boolean): string =>
  credentialSent ? `Bearer realm="${Realm}", error="invalid_token"` : `Bearer realm="${Realm}"`

/** The challenge for a `403` that lacks `scope`. */
export const insufficientScope = (scope: Auth.Scope): string =>
  `Bearer realm="${Realm}", error="insufficient_scope", scope="${scope}"`

const Header = "www-authenticate"

const bodyType = (body: HttpServerResponse.HttpServerResponse["body"]): string | undefined =>
  "contentType" in body ? body.contentType : undefined

/**
 * Adds the challenge to every `401` and scope `403` the app answers without one. A pre-response handler,
 * as `RequestId`'s: answers made of failures are only made after the app.
 */
export const middleware = <E, R>(app: HttpApp.HttpApp<HttpServerResponse.HttpServerResponse, E, R>) =>
  Effect.zipRight(
    HttpApp.appendPreResponseHandler((request, response) =>
      Effect.map(FiberRef.get(refusedScope), (scope) => {
        if (response.status !== 401 && response.status !== 403) return response
        // A page's own sign-in form is not an HTTP authentication scheme.
        const contentType = response.headers["content-type"] ?? bodyType(response.body)
        if (response.headers[Header] !== undefined || contentType?.startsWith("text/html") === true)
          return response
        if (response.status === 401)
          return HttpServerResponse.setHeader(
            response,
            Header,
            unauthorized((request.headers.authorization ?? "").trim() !== "")
          )
        return scope === undefined
          ? response
          : HttpServerResponse.setHeader(response, Header, insufficientScope(scope))
      })
    ),
    app
  )
