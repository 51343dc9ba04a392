/**
 * Every response carries a `Request-Id`, and every log line written while serving the request carries
 * it as `request_id`, so an operator can go from what a client saw to what the server logged. A
 * well-formed `Request-Id` sent by the client (a proxy's, say) is kept; anything else is replaced.
 */
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect } from "effect"

export const Header = "request-id"

/** What a client's id may look like to be kept: short, and nothing a log reader could trip on. */
const WellFormed = /^[A-Za-z0-9._:-]{8,128}$/

/** A new id: `req_` and 32 hex digits. */
export const make = (): string => `req_${crypto.randomUUID().replaceAll("-", "")}`

/** The id of a request: the client's own when well-formed, else a new one. */
export const of = (headers: Readonly<Record<string, string | undefined>>): string => {
  const sent = headers[Header]
  return sent !== undefined && WellFormed.test(sent) ? sent : make()
}

/** The server's outermost middleware (`HttpApiBuilder.serve(RequestId.middleware)`). */
export const middleware = <E, R>(app: HttpApp.HttpApp<HttpServerResponse.HttpServerResponse, E, R>) =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const id = of(request.headers)
    // Set before the app runs, so it lands on every response, the ones made of errors included.
    const tag = HttpApp.appendPreResponseHandler((_request, response) =>
      Effect.succeed(HttpServerResponse.setHeader(response, Header, id))
    )
    return Effect.zipRight(tag, app).pipe(Effect.annotateLogs("request_id", id))
  })
