/**
 * Handlers of the subscription endpoints.
 */
import { HttpApiBuilder, HttpServerRequest } from "@effect/platform"
import { Auth, Errors, Subscriptions } from "@laari/core"
import { Effect, ParseResult, Schema } from "effect"
import { Api } from "../Api.js"
import { page } from "../Http/Fields.js"
import { idempotent } from "../Http/Idempotent.js"
import * as Problems from "../Http/Problems.js"
import { withScope } from "../Http/Security.js"
import { CancelBody, SubscriptionsApi } from "./Api.js"
import * as Json from "./Json.js"

/** The cancel body is optional: empty means `{}`; anything else must be the JSON object of `CancelBody`. */
const readCancelBody = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const text = yield* request.text.pipe(Effect.orElseSucceed(() => ""))
  if (text.trim() === "") return {}
  const json = yield* Effect.try({
    try: () => JSON.parse(text) as unknown,
    catch: () => new Problems.MalformedBody({ message: "The request body is not valid JSON" })
  })
  return yield* Schema.decodeUnknown(CancelBody)(json).pipe(
    Effect.mapError((e) =>
      Errors.InvalidRequest.of(
        ParseResult.ArrayFormatter.formatErrorSync(e).map((i) => ({
          field: i.path.join("."),
          message: i.message
        }))
      )
    )
  )
})

export const SubscriptionsLive = HttpApiBuilder.group(Api, "subscriptions", (handlers) =>
  Effect.gen(function* () {
    const subscriptions = yield* Subscriptions.Subscriptions
    return handlers
      .handle("get", ({ path }) =>
        withScope("subscriptions:write", (principal) =>
          subscriptions.get(Auth.tenantOf(principal), path.id).pipe(Effect.map(Json.subscription))
        )
      )
      .handle("list", ({ urlParams }) =>
        withScope("subscriptions:write", (principal) =>
          subscriptions
            .list(Auth.tenantOf(principal), {
              status: urlParams.status,
              reference: urlParams.reference,
              ...page(urlParams)
            })
            .pipe(Effect.map((list) => list.map(Json.subscription)))
        )
      )
      .handle("invoices", ({ path, urlParams }) =>
        withScope("subscriptions:write", (principal) =>
          subscriptions
            .listInvoices(Auth.tenantOf(principal), path.id, page(urlParams))
            .pipe(Effect.map((list) => list.map(Json.invoice)))
        )
      )
      .handle("cancel", ({ headers, path }) =>
        withScope("subscriptions:write", (principal) =>
          Effect.flatMap(readCancelBody, (body) =>
            idempotent(
              SubscriptionsApi.endpoints.cancel,
              { principal, key: headers["idempotency-key"], payload: body },
              subscriptions
                .cancel(Auth.tenantOf(principal), path.id, body.at_period_end ?? false)
                .pipe(Effect.map(Json.cancelled))
            )
          )
        )
      )
  })
)
