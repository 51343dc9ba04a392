/**
 * Checkout sessions (spec 4.3): a one-off payment, or the first payment of a subscription.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Calendar, CheckoutSession, Fields, Money } from "@laari/core"
import { Schema } from "effect"
import * as Doc from "../Http/Documented.js"
import { Body, optionalNullable, Text } from "../Http/Fields.js"
import { Authentication } from "../Http/Security.js"

/**
 * Each field's own rule is core's; which fields a mode requires, the interval span and `amount` equal to
 * `price_data.amount` are `CheckoutSession.validate`'s, so those fields stay optional here.
 */
export const CreateSession = Body({
  mode: optionalNullable(CheckoutSession.Mode),
  price_data: optionalNullable(
    Schema.Struct({
      name: optionalNullable(CheckoutSession.PlanName),
      amount: optionalNullable(Money.Amount),
      interval: optionalNullable(Calendar.Interval),
      interval_count: optionalNullable(CheckoutSession.IntervalCount)
    })
  ),
  title: optionalNullable(Fields.Title),
  reference: optionalNullable(Fields.Reference),
  description: optionalNullable(Fields.Description),
  return_url: optionalNullable(Text),
  amount: optionalNullable(Money.Amount)
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
