/**
 * Handlers of the checkout session endpoints. Publishable keys may create sessions (with
 * `checkout:write`): a session moves no money until the customer pays it. Reading and cancelling need a
 * secret key: a publishable key is public, and must not read or cancel every session of the merchant.
 */
import { HttpApiBuilder } from "@effect/platform"
import { Auth, Checkout } from "@laari/core"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { ServerConfigTag } from "../Config.js"
import { idempotent } from "../Http/Idempotent.js"
import { withScope } from "../Http/Security.js"
import { CheckoutApi, type CreateSession } from "./Api.js"
import * as Json from "./Json.js"

const toRequest = (p: typeof CreateSession.Type) => ({
  mode: p.mode ?? null,
  reference: p.reference ?? null,
  title: p.title ?? null,
  description: p.description ?? null,
  returnUrl: p.return_url ?? null,
  amount: p.amount ?? null,
  priceData:
    p.price_data == null
      ? null
      : {
          name: p.price_data.name ?? null,
          amount: p.price_data.amount ?? null,
          interval: p.price_data.interval ?? null,
          intervalCount: p.price_data.interval_count ?? null
        }
})

/** Only `create` takes a publishable key (DESIGN section 9). */
const publishable = { publishableAllowed: true }

export const CheckoutLive = HttpApiBuilder.group(Api, "checkout", (handlers) =>
  Effect.gen(function* () {
    const checkout = yield* Checkout.Checkout
    const config = yield* ServerConfigTag
    return handlers
      .handle("create", ({ headers, payload }) =>
        withScope(
          "checkout:write",
          (principal) =>
            idempotent(
              CheckoutApi.endpoints.create,
              { principal, key: headers["idempotency-key"], payload },
              checkout
                .create(Auth.tenantOf(principal), toRequest(payload))
                .pipe(Effect.map((s) => Json.created(s, config.checkoutUrl)))
            ),
          publishable
        )
      )
      .handle("get", ({ path }) =>
        withScope("checkout:write", (principal) =>
          checkout
            .get(Auth.tenantOf(principal), path.id)
            .pipe(Effect.map((s) => Json.session(s, config.checkoutUrl)))
        )
      )
      .handle("cancel", ({ headers, path }) =>
        withScope("checkout:write", (principal) =>
          idempotent(
            CheckoutApi.endpoints.cancel,
            { principal, key: headers["idempotency-key"], payload: undefined },
            checkout
              .cancel(Auth.tenantOf(principal), path.id)
              .pipe(Effect.map((s) => Json.session(s, config.checkoutUrl)))
          )
        )
      )
  })
)
