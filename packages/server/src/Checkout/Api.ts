/**
 * Checkout sessions (spec 4.3): a one-off payment, or the first payment of a subscription.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { CheckoutSession } from "@laari/core"
import { Schema } from "effect"
import * as Doc from "../Http/Documented.js"
import { Body, optionalNullable, Text } from "../Http/Fields.js"
import { Authentication } from "../Http/Security.js"

/** Loose shapes: every rule of spec 4.3 is checked by the domain and reported per field. */
export const CreateSession = Body({
  mode: optionalNullable(Text),
  price_data: optionalNullable(
    Schema.Struct({
      name: optionalNullable(Text),
      amount: optionalNullable(Schema.Number),
      interval: optionalNullable(Text),
      interval_count: optionalNullable(Schema.Number)
    })
  ),
  title: optionalNullable(Text),
  reference: optionalNullable(Text),
  description: optionalNullable(Text),
  return_url: optionalNullable(Text),
  amount: optionalNullable(Schema.Number)
})

export const SessionCreated = Schema.Struct({
  id: Text,
  reference: Text,
  url: Text
})

export const SessionRead = Schema.Struct({
  id: Text,
  reference: Text,
  url: Text,
  mode: CheckoutSession.Mode,
  status: CheckoutSession.Status,
  title: Text,
  description: Schema.NullOr(Text),
  amount: Schema.Int,
  currency: Schema.Literal("MVR"),
  priceData: Schema.NullOr(
    Schema.Struct({
      name: Text,
      amount: Schema.Int,
      interval: Text,
      intervalCount: Schema.Int
    })
  ),
  returnUrl: Schema.NullOr(Text),
  subscriptionId: Schema.NullOr(Text),
  expiresAt: Text,
  completedAt: Schema.NullOr(Text),
  createdAt: Text
}).annotations({ identifier: "CheckoutSession" })

const IdPath = Schema.Struct({ id: Text })

export class CheckoutApi extends HttpApiGroup.make("checkout")
  .add(
    HttpApiEndpoint.post("create", "/checkout/sessions")
      .setPayload(CreateSession)
      .setHeaders(Doc.IdempotencyHeaders)
      .addSuccess(SessionCreated)
      .addError(Doc.Forbidden)
      .addError(Doc.Conflict)
      .addError(Doc.Unprocessable)
      .annotate(
        OpenApi.Summary,
        "Create a checkout session; SUBSCRIPTION mode sells a plan (scope checkout:write; a publishable key may)"
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/checkout/sessions/:id")
      .setPath(IdPath)
      .addSuccess(SessionRead)
      .addError(Doc.Forbidden)
      .addError(Doc.NotFound)
      .annotate(OpenApi.Summary, "Fetch a checkout session (a secret key with scope checkout:write)")
  )
  .add(
    HttpApiEndpoint.post("cancel", "/checkout/sessions/:id/cancel")
      .setPath(IdPath)
      .setHeaders(Doc.IdempotencyHeaders)
      .addSuccess(SessionRead)
      .addError(Doc.Forbidden)
      .addError(Doc.NotFound)
      .addError(Doc.Conflict)
      .annotate(OpenApi.Summary, "Cancel an open checkout session (a secret key with scope checkout:write)")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Checkout") {}
