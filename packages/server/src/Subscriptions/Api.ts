/**
 * Subscriptions and their invoices. There is no `POST /subscriptions`: a subscription is
 * created by paying a `SUBSCRIPTION` checkout session.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Calendar, CheckoutSession, Fields, Ids, Invoice, Money, Subscription } from "@laari/core"
import { Schema } from "effect"
import { Body, IdOrReference, Laari, Paging, Text, Timestamp } from "../Http/Fields.js"
import * as Idempotent from "../Http/Idempotent.js"
import * as OptionalBody from "../Http/OptionalBody.js"
import * as SubscriptionsProblems from "./Problems.js"
import * as Declare from "../Http/Declare.js"
import * as Access from "../Http/Access.js"

const CancelAtPeriodEnd = Schema.Boolean.annotations({
  description: "`true`: it ends at `currentPeriodEnd` with no further charge"
})

export const SubscriptionRead = Schema.Struct({
  id: Ids.SubscriptionId,
  reference: Fields.Reference.annotations({
    description: "The reference of the checkout session that started it"
  }),
  status: Subscription.Status,
  planName: CheckoutSession.PlanName,
  amount: Money.Amount.annotations({ description: "Laari per cycle" }),
  currency: Money.CurrencyCode,
  interval: Calendar.Interval,
  intervalCount: CheckoutSession.IntervalCount,
  checkoutSessionId: Ids.CheckoutSessionId,
  billingCycleAnchor: Timestamp,
  currentPeriodStart: Timestamp,
  currentPeriodEnd: Timestamp,
  nextBillingAt: Schema.NullOr(Timestamp),
  cancelAtPeriodEnd: CancelAtPeriodEnd,
  cancelledAt: Schema.NullOr(Timestamp),
  cancellationInitiator: Schema.NullOr(Subscription.Initiator),
  metadata: Schema.NullOr(Schema.Record({ key: Text, value: Text })).annotations({
    description: "Key-value strings the merchant attached; no request sets them yet, so always `null`"
  }),
  createdAt: Timestamp
}).annotations({
  identifier: "Subscription",
  description: "A plan the customer pays every cycle, renewed by the service"
})

export const InvoiceRead = Schema.Struct({
  id: Ids.InvoiceId,
  subscriptionId: Ids.SubscriptionId,
  periodKey: Text.annotations({
    description:
      "The billing period's stable key, from its start in Maldives time: each period is charged at most once"
  }),
  periodStart: Timestamp,
  periodEnd: Timestamp,
  amount: Money.Amount,
  amountRefunded: Laari("Laari given back by refunds so far (`POST /refunds`); at most `amount`"),
  currency: Money.CurrencyCode,
  status: Invoice.Status,
  attemptCount: Schema.Number.pipe(Schema.int(), Schema.nonNegative()).annotations({
    description: "Charge attempts so far, the successful one included (at most 4)"
  }),
  nextRetryAt: Schema.NullOr(Timestamp),
  failureReason: Schema.NullOr(Invoice.FailureReason),
  paymentIntentId: Schema.NullOr(Text).annotations({
    description: "The id of the payment that paid it; `null` until `PAID`"
  }),
  paidAt: Schema.NullOr(Timestamp),
  createdAt: Timestamp
}).annotations({ identifier: "Invoice", description: "One cycle of a subscription and its payment" })

export const Cancelled = Schema.Struct({
  id: Ids.SubscriptionId,
  reference: Fields.Reference,
  status: Subscription.Status,
  cancelAtPeriodEnd: CancelAtPeriodEnd,
  cancelledAt: Schema.NullOr(Timestamp),
  cancellationInitiator: Schema.NullOr(Subscription.Initiator),
  currentPeriodEnd: Timestamp
}).annotations({ identifier: "SubscriptionCancelled" })

/** The optional body of a cancellation (`OptionalBody`). */
export const CancelBody = Body({
  at_period_end: Schema.optional(Schema.Boolean).annotations({
    description: "`true`: end at the end of the current period instead of now (default `false`)"
  })
})

const IdPath = IdOrReference("subscription (or its checkout session's reference)")

/** The URL parameters of the list, which the GraphQL read API takes as its arguments too. */
export const ListParams = Schema.Struct({
  status: Schema.optional(Subscription.Status).annotations({
    description: "Only subscriptions in this status"
  }),
  reference: Schema.optional(Fields.Reference),
  ...Paging
})

export class SubscriptionsApi extends HttpApiGroup.make("subscriptions")
  .add(
    HttpApiEndpoint.get("get", "/subscriptions/:id")
      .setPath(IdPath)
      .addSuccess(SubscriptionRead)
      .addError(SubscriptionsProblems.SubscriptionNotFound)
      .annotate(OpenApi.Summary, "Fetch a subscription")
      .annotate(OpenApi.Description, "By id or by the reference of its checkout session.")
  )
  .add(
    HttpApiEndpoint.get("list", "/subscriptions")
      .setUrlParams(ListParams)
      .addSuccess(Schema.Array(SubscriptionRead))
      .annotate(OpenApi.Summary, "List subscriptions")
      .annotate(OpenApi.Description, "Newest first, optionally by status or reference.")
  )
  .add(
    HttpApiEndpoint.get("invoices", "/subscriptions/:id/invoices")
      .setPath(IdPath)
      .setUrlParams(Schema.Struct(Paging))
      .addSuccess(Schema.Array(InvoiceRead))
      .addError(SubscriptionsProblems.SubscriptionNotFound)
      .annotate(OpenApi.Summary, "List a subscription's invoices")
      .annotate(OpenApi.Description, "One per cycle, newest first.")
  )
  .add(
    Idempotent.post("cancel", "/subscriptions/:id/cancel")
      .setPath(IdPath)
      .addSuccess(Cancelled)
      .addError(SubscriptionsProblems.SubscriptionNotFound)
      .addError(SubscriptionsProblems.SubscriptionNotCancellable)
      .annotate(OpenApi.Summary, "Cancel a subscription")
      .annotate(
        OpenApi.Description,
        "Ends it now, or with `at_period_end: true` at the end of the current period (nothing more is charged either way). The body is optional."
      )
      .annotate(OpenApi.Override, OptionalBody.document(CancelBody))
      .annotate(OptionalBody.Declared, CancelBody)
  )
  .pipe(
    Declare.merchant({
      access: Access.scoped("subscriptions:write"),
      title: "Subscriptions",
      description:
        "Created by paying a `SUBSCRIPTION` checkout session; renewed, retried and ended by the service"
    })
  ) {}
