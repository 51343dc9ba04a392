/**
 * Handlers of the subscription endpoints.
 */
import { Subscriptions } from "@laari/core"
import { Effect } from "effect"
import { page } from "../Http/Fields.js"
import * as Operation from "../Http/Operation.js"
import * as OptionalBody from "../Http/OptionalBody.js"
import { CancelBody, SubscriptionsApi } from "./Api.js"
import * as Json from "./Json.js"

export const SubscriptionsLive = Operation.handlers(SubscriptionsApi, (handlers) =>
  Effect.gen(function* () {
    const subscriptions = yield* Subscriptions.Subscriptions
    return handlers
      .handle("get", ({ path }) =>
        Operation.tenant.pipe(
          Effect.flatMap((tenant) => subscriptions.get(tenant, path.id)),
          Effect.map(Json.subscription)
        )
      )
      .handle("list", ({ urlParams }) =>
        Operation.tenant.pipe(
          Effect.flatMap((tenant) =>
            subscriptions.list(tenant, {
              status: urlParams.status,
              reference: urlParams.reference,
              ...page(urlParams)
            })
          ),
          Effect.map((list) => list.map(Json.subscription))
        )
      )
      .handle("invoices", ({ path, urlParams }) =>
        Operation.tenant.pipe(
          Effect.flatMap((tenant) => subscriptions.listInvoices(tenant, path.id, page(urlParams))),
          Effect.map((list) => list.map(Json.invoice))
        )
      )
      .handle("cancel", ({ path }) =>
        Effect.all([Operation.tenant, OptionalBody.read(CancelBody)]).pipe(
          Effect.flatMap(([tenant, body]) =>
            subscriptions.cancel(tenant, path.id, body.at_period_end ?? false)
          ),
          Effect.map(Json.cancelled)
        )
      )
  })
)
