/**
 * The edges of every request, applied inside HttpApi (before it encodes errors): decode failures become
 * `422` with the fields (DESIGN section 9), a body that is not JSON `400`, an unknown route a JSON `404`,
 * and a defect a JSON `500` that leaks no stack trace (and is logged).
 */
import { HttpApiBuilder, HttpApiError, HttpServerError } from "@effect/platform"
import { Cause, Effect, Option } from "effect"
import { Api } from "../Api.js"
import { message, toResponse } from "./Reply.js"

const fieldOf = (path: ReadonlyArray<PropertyKey>) => path.map(String).join(".")

const isServerError = (u: unknown, tag: string) => HttpServerError.isServerError(u) && u._tag === tag

export const ErrorMapping = HttpApiBuilder.middleware(Api, (app) =>
  Effect.catchAllCause(app, (cause) => {
    // The middleware's type says nothing fails here, but decode failures and security refusals do.
    const failure: unknown = Option.getOrUndefined(Cause.failureOption(cause))
    if (failure instanceof HttpApiError.HttpApiDecodeError) {
      const errors = failure.issues.map((i) => ({ field: fieldOf(i.path), message: i.message }))
      const first = errors[0]
      return Effect.succeed(
        toResponse(
          message(422, first === undefined ? "Invalid request" : `${first.field}: ${first.message}`, {
            errors
          })
        )
      )
    }
    if (isServerError(failure, "RouteNotFound")) return Effect.succeed(toResponse(message(404, "Not found")))
    if (failure !== undefined || Cause.isInterruptedOnly(cause)) return Effect.failCause(cause)
    // HttpApi reads a JSON body with `orDie`: a body that does not parse arrives here as a defect.
    const defect = Option.getOrUndefined(Cause.dieOption(cause))
    if (isServerError(defect, "RequestError"))
      return Effect.succeed(toResponse(message(400, "The request body is not valid JSON")))
    return Effect.logError("unhandled defect", cause).pipe(
      Effect.as(toResponse(message(500, "Internal error")))
    )
  })
)
