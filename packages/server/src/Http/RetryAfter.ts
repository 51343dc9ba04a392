/**
 * Every `503` says when to come back: `Retry-After: 1` unless its maker set one. A 503 is a database
 * that cannot answer now (a failover, an outage within its bounds) or a process draining, all of which
 * pass in seconds; a client told so waits a second instead of retrying at once into the same switch.
 */
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect } from "effect"

export const Seconds = 1

/** `response`, with `Retry-After` when it is a `503` without one. */
export const onResponse = (response: HttpServerResponse.HttpServerResponse) =>
  response.status === 503 && response.headers["retry-after"] === undefined
    ? HttpServerResponse.setHeader(response, "retry-after", String(Seconds))
    : response

/** The header on every 503 of `app`, the ones made of errors included. */
export const middleware = <A, E, R>(app: Effect.Effect<A, E, R>) =>
  Effect.zipRight(
    HttpApp.appendPreResponseHandler((_request, response) => Effect.succeed(onResponse(response))),
    app
  )
