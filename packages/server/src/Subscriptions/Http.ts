/**
 * Handlers of the subscription endpoints.
 */
import { HttpApiBuilder, HttpServerRequest } from "@effect/platform"
import { Auth, Subscriptions } from "@laari/core"
import { Effect, Either, ParseResult, Schema } from "effect"
import { Api } from "../Api.js"
import { page } from "../Http/Fields.js"
import { idempotent } from "../Http/Idempotent.js"
import { message, reply, respond, run, toResponse } from "../Http/Reply.js"
import { withScope } from "../Http/Security.js"
import { CancelBody } from "./Api.js"
import * as Json from "./Json.js"

/** The cancel body is optional: empty means `{}`; anything else must be the JSON object of `CancelBody`. */
const readCancelBody = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const text = yield* request.text.pipe(Effect.orElseSucceed(() => ""))
  if (text.trim() === "") return Either.right<typeof CancelBody.Type>({})
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return Either.left(toResponse(message(400, "The request body is not valid JSON")))
  }
  return Either.mapLeft(Schema.decodeUnknownEither(CancelBody)(json), (e) => {
    const errors = ParseResult.ArrayFormatter.formatErrorSync(e).map((i) => ({
      field: i.path.join("."),
      message: i.message
    }))
    return toResponse(message(422, `${errors[0]?.field}: ${errors[0]?.message}`, { errors }))
  })
})

export const SubscriptionsLive = HttpApiBuilder.group(Api, "subscriptions", (handlers) =>
  Effect.gen(function* () {
    const subscriptions = yield* Subscriptions.Subscriptions
    return handlers
      .handle("get", ({ path }) =>
        withScope("subscriptions:write", (principal) =>
          respond(subscriptions.get(Auth.tenantOf(principal), path.id), (s) =>
            reply(200, Json.subscription(s))
          )
        )
      )
      .handle("list", ({ urlParams }) =>
        withScope("subscriptions:write", (principal) =>
          respond(
            subscriptions.list(Auth.tenantOf(principal), {
              status: urlParams.status,
              reference: urlParams.reference,
              ...page(urlParams)
            }),
            (list) => reply(200, list.map(Json.subscription))
          )
        )
      )
      .handle("invoices", ({ path, urlParams }) =>
        withScope("subscriptions:write", (principal) =>
          respond(subscriptions.listInvoices(Auth.tenantOf(principal), path.id, page(urlParams)), (list) =>
            reply(200, list.map(Json.invoice))
          )
        )
      )
      .handle("cancel", ({ path }) =>
        withScope("subscriptions:write", (principal) =>
          Effect.gen(function* () {
            const body = yield* readCancelBody
            if (Either.isLeft(body)) return body.left
            return yield* idempotent(
              principal,
              body.right,
              run(
                subscriptions.cancel(Auth.tenantOf(principal), path.id, body.right.at_period_end ?? false),
                (s) => reply(200, Json.cancelled(s))
              )
            )
          })
        )
      )
  })
)
