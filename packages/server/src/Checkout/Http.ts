/**
 * Handlers of the checkout session endpoints. Publishable keys may create sessions (with
 * `checkout:write`, as `CheckoutApi` declares): a session moves no money until the customer pays it.
 * Reading and cancelling need a secret key: a publishable key is public, and must not read or cancel
 * every session of the merchant.
 */
import { Checkout, CheckoutSession, Errors } from "@laari/core"
import { Effect, Either, ParseResult, Schema } from "effect"
import { ServerConfigTag } from "../Platform/Config.js"
import * as Operation from "../Http/Operation.js"
import { CheckoutApi, CreateSession, CreateSessionByMode, toRequest } from "./Api.js"
import * as Json from "./Json.js"

const byMode = Schema.decodeUnknownEither(CreateSessionByMode)
const encode = Schema.encodeSync(CreateSession)

/**
 * The terms of a new session, only from a request that `CreateSessionByMode`, the documented body, decodes:
 * what the document promises is what is enforced. A refusal is `CheckoutSession.validate`'s, which names
 * every problem in the words the API has always used; the union's own issues are the refusal only of a
 * request `validate` would pass (none known: a test holds the two to the same verdict).
 */
const byModeOrRefusal = (
  payload: typeof CreateSession.Type
): Effect.Effect<CheckoutSession.Request, Errors.InvalidRequest> =>
  Either.match(byMode(encode(payload)), {
    onRight: () => Effect.succeed(toRequest(payload)),
    onLeft: (error) =>
      Either.match(CheckoutSession.validate(toRequest(payload)), {
        onLeft: (problems) => Errors.InvalidRequest.of(problems),
        onRight: () =>
          Errors.InvalidRequest.of(
            ParseResult.ArrayFormatter.formatErrorSync(error).map((i) => ({
              field: i.path.join("."),
              message: i.message
            }))
          )
      })
  })

export const CheckoutLive = Operation.handlers(CheckoutApi, (handlers) =>
  Effect.gen(function* () {
    const checkout = yield* Checkout.Checkout
    const config = yield* ServerConfigTag
    return handlers
      .handle("create", ({ payload }) =>
        Effect.all([Operation.tenant, byModeOrRefusal(payload)]).pipe(
          Effect.flatMap(([tenant, request]) => checkout.create(tenant, request)),
          Effect.map((s) => Json.created(s, config.checkoutUrl))
        )
      )
      .handle("get", ({ path }) =>
        Operation.tenant.pipe(
          Effect.flatMap((tenant) => checkout.get(tenant, path.id)),
          Effect.map((s) => Json.session(s, config.checkoutUrl))
        )
      )
      .handle("cancel", ({ path }) =>
        Operation.tenant.pipe(
          Effect.flatMap((tenant) => checkout.cancel(tenant, path.id)),
          Effect.map((s) => Json.session(s, config.checkoutUrl))
        )
      )
  })
)
