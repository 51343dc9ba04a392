/**
 * Subscriptions and their invoices (spec 4.3). There is no `POST /subscriptions`: a subscription is
 * created by paying a `SUBSCRIPTION` checkout session.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Invoice, Subscription } from "@laari/core"
import { Schema } from "effect"
import * as Doc from "../Http/Documented.js"
import { Paging } from "../Http/Fields.js"
import { Authentication } from "../Http/Security.js"

export const SubscriptionRead = Schema.Struct({
  id: Schema.String,
  reference: Schema.String,
  status: Subscription.Status,
  planName: Schema.String,
  amount: Schema.Int,
  currency: Schema.Literal("MVR"),
  interval: Schema.Literal("WEEK", "MONTH"),
  intervalCount: Schema.Int,
  checkoutSessionId: Schema.String,
  billingCycleAnchor: Schema.String,
  currentPeriodStart: Schema.String,
  currentPeriodEnd: Schema.String,
  nextBillingAt: Schema.NullOr(Schema.String),
  cancelAtPeriodEnd: Schema.Boolean,
  cancelledAt: Schema.NullOr(Schema.String),
  cancellationInitiator: Schema.NullOr(Subscription.Initiator),
  metadata: Schema.NullOr(Schema.Record({ key: Schema.String, value: Schema.String })),
  createdAt: Schema.String
}).annotations({ identifier: "Subscription" })

export const InvoiceRead = Schema.Struct({
  id: Schema.String,
  subscriptionId: Schema.String,
  periodKey: Schema.String,
  periodStart: Schema.String,
  periodEnd: Schema.String,
  amount: Schema.Int,
  currency: Schema.Literal("MVR"),
  status: Invoice.Status,
  attemptCount: Schema.Int,
  nextRetryAt: Schema.NullOr(Schema.String),
  failureReason: Schema.NullOr(Invoice.FailureReason),
  paymentIntentId: Schema.NullOr(Schema.String),
  paidAt: Schema.NullOr(Schema.String),
  createdAt: Schema.String
}).annotations({ identifier: "Invoice" })

export const Cancelled = Schema.Struct({
  id: Schema.String,
  reference: Schema.String,
  status: Subscription.Status,
  cancelAtPeriodEnd: Schema.Boolean,
  cancelledAt: Schema.NullOr(Schema.String),
  cancellationInitiator: Schema.NullOr(Subscription.Initiator),
  currentPeriodEnd: Schema.String
}).annotations({ identifier: "SubscriptionCancelled" })

const IdPath = Schema.Struct({
  id: Schema.String.annotations({
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
          reference: Schema.optional(Schema.String),
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
export const CancelBody = Schema.Struct({ at_period_end: Schema.optional(Schema.Boolean) })
