/**
 * Subscriptions and their invoices (spec 4.3). There is no `POST /subscriptions`: a subscription is
 * created by paying a `SUBSCRIPTION` checkout session.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Invoice, Subscription } from "@laari/core"
import { Schema } from "effect"
import * as Doc from "../Http/Documented.js"
import { Body, Paging, Text } from "../Http/Fields.js"
import { Authentication } from "../Http/Security.js"

export const SubscriptionRead = Schema.Struct({
  id: Text,
  reference: Text,
  status: Subscription.Status,
  planName: Text,
  amount: Schema.Int,
  currency: Schema.Literal("MVR"),
  interval: Schema.Literal("WEEK", "MONTH"),
  intervalCount: Schema.Int,
  checkoutSessionId: Text,
  billingCycleAnchor: Text,
  currentPeriodStart: Text,
  currentPeriodEnd: Text,
  nextBillingAt: Schema.NullOr(Text),
  cancelAtPeriodEnd: Schema.Boolean,
  cancelledAt: Schema.NullOr(Text),
  cancellationInitiator: Schema.NullOr(Subscription.Initiator),
  metadata: Schema.NullOr(Schema.Record({ key: Text, value: Text })),
  createdAt: Text
}).annotations({ identifier: "Subscription" })

export const InvoiceRead = Schema.Struct({
  id: Text,
  subscriptionId: Text,
  periodKey: Text,
  periodStart: Text,
  periodEnd: Text,
  amount: Schema.Int,
  currency: Schema.Literal("MVR"),
  status: Invoice.Status,
  attemptCount: Schema.Int,
  nextRetryAt: Schema.NullOr(Text),
  failureReason: Schema.NullOr(Invoice.FailureReason),
  paymentIntentId: Schema.NullOr(Text),
  paidAt: Schema.NullOr(Text),
  createdAt: Text
}).annotations({ identifier: "Invoice" })

export const Cancelled = Schema.Struct({
  id: Text,
  reference: Text,
  status: Subscription.Status,
  cancelAtPeriodEnd: Schema.Boolean,
  cancelledAt: Schema.NullOr(Text),
  cancellationInitiator: Schema.NullOr(Subscription.Initiator),
  currentPeriodEnd: Text
}).annotations({ identifier: "SubscriptionCancelled" })

const IdPath = Schema.Struct({
  id: Text.annotations({
    description: "The subscription UUID or the reference of its checkout session"
  })
})

export class SubscriptionsApi extends HttpApiGroup.make("subscriptions")
  .add(
    HttpApiEndpoint.get("get", "/subscriptions/:id")
      .setPath(IdPath)
      .addSuccess(SubscriptionRead)
      .addError(Doc.Forbidden)
      .addError(Doc.NotFound)
      .annotate(OpenApi.Summary, "Fetch a subscription (scope subscriptions:write)")
  )
  .add(
    HttpApiEndpoint.get("list", "/subscriptions")
      .setUrlParams(
        Schema.Struct({
          status: Schema.optional(Subscription.Status),
          reference: Schema.optional(Text),
          ...Paging
        })
      )
      .addSuccess(Schema.Array(SubscriptionRead))
      .addError(Doc.Forbidden)
      .addError(Doc.Unprocessable)
      .annotate(OpenApi.Summary, "List subscriptions, newest first (scope subscriptions:write)")
  )
  .add(
    HttpApiEndpoint.get("invoices", "/subscriptions/:id/invoices")
      .setPath(IdPath)
      .setUrlParams(Schema.Struct(Paging))
      .addSuccess(Schema.Array(InvoiceRead))
      .addError(Doc.Forbidden)
      .addError(Doc.NotFound)
      .addError(Doc.Unprocessable)
      .annotate(
        OpenApi.Summary,
        "A subscription's invoices, one per cycle, newest first (scope subscriptions:write)"
      )
  )
  .add(
    HttpApiEndpoint.post("cancel", "/subscriptions/:id/cancel")
      .setPath(IdPath)
      .setHeaders(Doc.IdempotencyHeaders)
      .addSuccess(Cancelled)
      .addError(Doc.Forbidden)
      .addError(Doc.NotFound)
      .addError(Doc.Conflict)
      .addError(Doc.Unprocessable)
      .annotate(
        OpenApi.Summary,
        'Cancel now, or with `{"at_period_end": true}` at the end of the current period (scope subscriptions:write)'
      )
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Subscriptions") {}

/** The optional body of a cancellation; read by hand because an empty body is allowed. */
export const CancelBody = Body({ at_period_end: Schema.optional(Schema.Boolean) })
