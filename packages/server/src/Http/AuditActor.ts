/**
 * Who a request acts as, for the audit log: a merchant's API key or OAuth client, or the operator's token
 * (the CLI when its `User-Agent` says so; it holds the same token). A request with no credential (a
 * customer's approval, a health check) acts as no one the log records.
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Audit, type AuditEvent, type Auth } from "@laari/core"
import { Effect, FiberRef, HashMap, Option } from "effect"
import { CliAgent } from "./UserAgents.js"

/** The id an OAuth client's access token carries as its principal's key id (`Security.ts`). */
const OAuthPrefix = "oauth:"

/** The key id of a person's dashboard principal (`DashboardKit`): `user:<user id>`. */
export const UserPrefix = "user:"

/** Who called: a merchant's credential, a person signed in, the operator's token, or no one the log records. */
export type Caller = Auth.Principal | "operator" | undefined

/** The actor of a request from `caller`. */
export const actorOf = (caller: Caller, userAgent: string | undefined): AuditEvent.Actor | undefined => {
  if (caller === undefined) return undefined
  if (caller !== "operator" && caller.keyId.startsWith(UserPrefix))
    return { kind: "user", id: caller.keyId.slice(UserPrefix.length) }
  if (caller !== "operator")
    return caller.keyId.startsWith(OAuthPrefix)
      ? { kind: "oauth_client", id: caller.keyId.slice(OAuthPrefix.length) }
      : { kind: "api_key", id: caller.keyId }
  return userAgent?.startsWith(`${CliAgent}/`) === true
    ? { kind: "cli", id: "laari-cli" }
    : { kind: "ops_token", id: "LAARI_OPS_TOKEN" }
}

/** `effect`, run as the request's actor (`Audit.as`), with its address, agent and `Request-Id`. */
export const within = <A, E, R>(
  caller: Caller,
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E, R | HttpServerRequest.HttpServerRequest> =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const userAgent = request.headers["user-agent"]
    const actor = actorOf(caller, userAgent)
    if (actor === undefined) return effect
    return Effect.flatMap(FiberRef.get(FiberRef.currentLogAnnotations), (annotations) => {
      const requestId = HashMap.get(annotations, "request_id")
      return Audit.as({
        actor,
        address: Option.getOrNull(request.remoteAddress),
        userAgent: userAgent?.slice(0, 500) ?? null,
        requestId: Option.isSome(requestId) && typeof requestId.value === "string" ? requestId.value : null
      })(effect)
    })
  })
