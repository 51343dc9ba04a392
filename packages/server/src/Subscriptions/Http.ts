/**
 * Handlers of the subscription endpoints.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Auth, Subscriptions } from "@laari/core"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { page } from "../Http/Fields.js"
import { idempotent } from "../Http/Idempotent.js"
import * as OptionalBody from "../Http/OptionalBody.js"
import { withScope } from "../Http/Security.js"
import { CancelBody, SubscriptionsApi } from "./Api.js"
import * as Json from "./Json.js"

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
          Effect.flatMap(OptionalBody.read(CancelBody), (body) =>
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
