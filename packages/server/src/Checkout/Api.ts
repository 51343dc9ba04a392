/**
 * Checkout sessions (spec 4.3): a one-off payment, or the first payment of a subscription.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { CheckoutSession } from "@laari/core"
import { Schema } from "effect"
import * as Doc from "../Http/Documented.js"
import { optionalNullable } from "../Http/Fields.js"
import { Authentication } from "../Http/Security.js"

/** Loose shapes: every rule of spec 4.3 is checked by the domain and reported per field. */
export const CreateSession = Schema.Struct({
  mode: optionalNullable(Schema.String),
  price_data: optionalNullable(
    Schema.Struct({
      name: optionalNullable(Schema.String),
      amount: optionalNullable(Schema.Number),
      interval: optionalNullable(Schema.String),
      interval_count: optionalNullable(Schema.Number)
    })
  ),
  title: optionalNullable(Schema.String),
  reference: optionalNullable(Schema.String),
  description: optionalNullable(Schema.String),
  return_url: optionalNullable(Schema.String),
  amount: optionalNullable(Schema.Number)
})

export const SessionCreated = Schema.Struct({
  id: Schema.String,
  reference: Schema.String,
  url: Schema.String
})

export const SessionRead = Schema.Struct({
  id: Schema.String,
  reference: Schema.String,
  url: Schema.String,
  mode: CheckoutSession.Mode,
  status: CheckoutSession.Status,
  title: Schema.String,
  description: Schema.NullOr(Schema.String),
  amount: Schema.Int,
  currency: Schema.Literal("MVR"),
  priceData: Schema.NullOr(
    Schema.Struct({
      name: Schema.String,
      amount: Schema.Int,
      interval: Schema.String,
      intervalCount: Schema.Int
    })
  ),
  returnUrl: Schema.NullOr(Schema.String),
  subscriptionId: Schema.NullOr(Schema.String),
  expiresAt: Schema.String,
  completedAt: Schema.NullOr(Schema.String),
  createdAt: Schema.String
}).annotations({ identifier: "CheckoutSession" })

const IdPath = Schema.Struct({ id: Schema.String })

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
        "Create a checkout session; SUBSCRIPTION mode sells a plan (scope checkout:write)"
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/checkout/sessions/:id")
      .setPath(IdPath)
      .addSuccess(SessionRead)
      .addError(Doc.Forbidden)
      .addError(Doc.NotFound)
      .annotate(OpenApi.Summary, "Fetch a checkout session (scope checkout:write)")
  )
  .add(
    HttpApiEndpoint.post("cancel", "/checkout/sessions/:id/cancel")
      .setPath(IdPath)
      .setHeaders(Doc.IdempotencyHeaders)
      .addSuccess(SessionRead)
      .addError(Doc.Forbidden)
      .addError(Doc.NotFound)
      .addError(Doc.Conflict)
      .annotate(OpenApi.Summary, "Cancel an open checkout session (scope checkout:write)")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Checkout") {}
