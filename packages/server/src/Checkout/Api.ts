/**
 * Checkout sessions: a one-off payment, or the first payment of a subscription.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Calendar, CheckoutSession, Fields, Ids, Money } from "@laari/core"
import { Schema } from "effect"
import { Body, IdOrReference, optionalNullable, Text, Timestamp } from "../Http/Fields.js"
import * as Idempotent from "../Http/Idempotent.js"
import * as JsonSchema from "../Http/JsonSchema.js"
import * as CheckoutProblems from "./Problems.js"
import * as Declare from "../Http/Declare.js"
import * as Access from "../Http/Access.js"

/** One request of each mode, in the document. */
const examples = [
  {
    mode: "SUBSCRIPTION",
    reference: "sub-7731",
    title: "Island Fibre 100",
    price_data: { name: "Fibre 100 Mbps", amount: 65_000, interval: "MONTH" },
    return_url: "https://isp.example/subscribed"
  },
  { reference: "order-5521", title: "Order 5521", amount: 23_900 }
] as const

/**
 * The first decode of a request: each field's own rule is core's; which fields a mode requires, the interval span and `amount` equal to
 * `price_data.amount` are `CheckoutSession.validate`'s, so those fields stay optional here.
 */
export const CreateSession = Body({
  mode: optionalNullable(CheckoutSession.Mode).annotations({
    description: "`PAYMENT` (default): a one-off payment; `SUBSCRIPTION`: the first payment of a plan"
  }),
  price_data: optionalNullable(
    Schema.Struct({
      name: optionalNullable(CheckoutSession.PlanName),
      amount: optionalNullable(Money.Amount).annotations({ description: "Laari per cycle" }),
      interval: optionalNullable(Calendar.Interval).annotations({ description: "`WEEK` or `MONTH`" }),
      interval_count: optionalNullable(CheckoutSession.IntervalCount)
    }).annotations({ description: "The plan sold, required in `SUBSCRIPTION` mode" })
  ),
  title: optionalNullable(Fields.Title),
  reference: optionalNullable(Fields.Reference),
  description: optionalNullable(Fields.Description),
  return_url: optionalNullable(Fields.ReturnUrl),
  amount: optionalNullable(Money.Amount).annotations({
    description:
      "Laari to pay in `PAYMENT` mode; in `SUBSCRIPTION` mode, if sent, equal to `price_data.amount`"
  })
}).annotations({ examples: [...examples] })

/**
 * The same request as the two modes it really is: what each mode requires, as the document shows it and
 * as the handler decodes every request it accepts (`Checkout/Http`). `CreateSession` stays the first,
 * lenient decode so that a refusal lists every problem in `CheckoutSession.validate`'s words; a request
 * that passed it and this union's rules both is the only one that creates a session. The interval span and
 * `amount` equal to `price_data.amount` are not JSON Schema rules: `validate` alone decides them.
 */
const commonFields = {
  title: Fields.Title,
  reference: Fields.Reference,
  description: optionalNullable(Fields.Description),
  return_url: optionalNullable(Fields.ReturnUrl)
}

export const PaymentSession = Body({
  mode: optionalNullable(Schema.Literal("PAYMENT")).annotations({
    description: "`PAYMENT`, or omitted: a one-off payment"
  }),
  ...commonFields,
  amount: Money.Amount.annotations({ description: "Laari to pay" }),
  // Sent as `null` it is absent, which the lenient decode accepts too.
  price_data: Schema.optional(
    Schema.Null.annotations({ description: "Not used in `PAYMENT` mode: omit it, or send `null`" })
  )
}).annotations({ title: "PaymentSession", description: "A one-off payment" })

export const SubscriptionSession = Body({
  mode: Schema.Literal("SUBSCRIPTION").annotations({
    description: "`SUBSCRIPTION`: the first payment of a plan"
  }),
  ...commonFields,
  price_data: Body({
    name: CheckoutSession.PlanName,
    amount: Money.Amount.annotations({ description: "Laari per cycle" }),
    interval: Calendar.Interval.annotations({ description: "`WEEK` or `MONTH`" }),
    interval_count: optionalNullable(CheckoutSession.IntervalCount)
  }).annotations({ description: "The plan sold" }),
  amount: optionalNullable(Money.Amount).annotations({
    description: "Ignored; if sent, equal to `price_data.amount`"
  })
}).annotations({
  title: "SubscriptionSession",
  description: "The first payment of a plan; paying it starts the subscription"
})

export const CreateSessionByMode = Schema.Union(PaymentSession, SubscriptionSession)

/**
 * The request body of the document: `CreateSessionByMode`'s own JSON Schema. Its branches exclude each
 * other (`mode` is `SUBSCRIPTION` in one, absent, `null` or `PAYMENT` in the other), so the `anyOf` Effect
 * writes for a union is exactly a `oneOf`, which generators turn into a discriminated union.
 */
const documentedBody = (): unknown => {
  const { anyOf, ...rest } = JsonSchema.standalone(CreateSessionByMode) as { readonly anyOf: unknown }
  return {
    ...rest,
    oneOf: anyOf,
    description: "`PAYMENT` mode (the default) or `SUBSCRIPTION` mode, each with its own required fields",
    examples
  }
}

export const SessionCreated = Schema.Struct({
  id: Ids.CheckoutSessionId,
  reference: Fields.Reference,
  url: Text.annotations({ description: "The hosted page where the customer pays" })
}).annotations({ identifier: "CheckoutSessionCreated" })

export const SessionRead = Schema.Struct({
  id: Ids.CheckoutSessionId,
  reference: Fields.Reference,
  url: Text.annotations({ description: "The hosted page where the customer pays" }),
  mode: CheckoutSession.Mode,
  status: CheckoutSession.Status,
  title: Text.annotations({ description: "Shown to the customer on the payment page" }),
  description: Schema.NullOr(Text).annotations({
    description: "Shown to the customer on the payment page; `null` if none was sent"
  }),
  amount: Money.Amount,
  currency: Money.CurrencyCode,
  priceData: Schema.NullOr(
    Schema.Struct({
      name: CheckoutSession.PlanName,
      amount: Money.Amount,
      interval: Calendar.Interval,
      intervalCount: CheckoutSession.IntervalCount
    })
  ).annotations({ description: "The plan sold (`SUBSCRIPTION` mode); `null` in `PAYMENT` mode" }),
  returnUrl: Schema.NullOr(Text).annotations({
    description: "Where the customer is sent after paying; `null` if none was sent"
  }),
  subscriptionId: Schema.NullOr(Ids.SubscriptionId).annotations({
    description: "The subscription its payment started (`SUBSCRIPTION` mode, once paid); otherwise `null`"
  }),
  expiresAt: Timestamp,
  completedAt: Schema.NullOr(Timestamp),
  createdAt: Timestamp
}).annotations({
  identifier: "CheckoutSession",
  description: "A hosted payment page for one payment or a plan"
})

const IdPath = IdOrReference("checkout session")

export class CheckoutApi extends HttpApiGroup.make("checkout")
  .add(
    Idempotent.post("create", "/checkout/sessions")
      .setPayload(CreateSession)
      .annotate(OpenApi.Override, {
        requestBody: { required: true, content: { "application/json": { schema: documentedBody() } } }
      })
      .addSuccess(SessionCreated)
      .addError(CheckoutProblems.SubscriptionsNotEnabled)
      .addError(CheckoutProblems.CheckoutReferenceTaken)
      // A session moves no money until the customer pays it: a publishable key may create one.
      .annotate(Access.Access, Access.publishable("checkout:write"))
      .annotate(OpenApi.Summary, "Create a checkout session")
      // What a publishable key may do is this operation's to say: `Access.sentence` says nothing here.
      .annotate(
        OpenApi.Description,
        "Returns the `url` of the hosted page where the customer pays. `SUBSCRIPTION` mode sells a plan: paying starts the subscription, which renews by itself. Scope `checkout:write`; a publishable key may create sessions."
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/checkout/sessions/:id")
      .setPath(IdPath)
      .addSuccess(SessionRead)
      .addError(CheckoutProblems.CheckoutSessionNotFound)
      .annotate(OpenApi.Summary, "Fetch a checkout session")
      .annotate(OpenApi.Description, "By id or by the merchant's reference.")
  )
  .add(
    Idempotent.post("cancel", "/checkout/sessions/:id/cancel")
      .setPath(IdPath)
      .addSuccess(SessionRead)
      .addError(CheckoutProblems.CheckoutSessionNotFound)
      .addError(CheckoutProblems.CheckoutSessionClosed)
      .annotate(OpenApi.Summary, "Cancel a checkout session")
      .annotate(OpenApi.Description, "Withdraws an open session; it can no longer be paid.")
  )
  .pipe(
    Declare.merchant({
      access: Access.scoped("checkout:write"),
      title: "Checkout",
      description: "Hosted pages where customers pay once or subscribe to a plan"
    })
  ) {}

/** The decoded body as core's request: what core's `CheckoutSession.validate` judges. */
export const toRequest = (p: typeof CreateSession.Type): CheckoutSession.Request => ({
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
