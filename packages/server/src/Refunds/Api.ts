/**
 * The refund endpoints: give back all or part of a mandate charge, a QR payment or a paid
 * invoice, from the merchant's balance to the paying wallet.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Fields, Money, Refund } from "@laari/core"
import { Schema } from "effect"
import { Body, IdOrReference, optionalNullable, Paging, Text, Timestamp, Uuid } from "../Http/Fields.js"
import * as Idempotent from "../Http/Idempotent.js"
import * as RefundsProblems from "./Problems.js"
import * as Declare from "../Http/Declare.js"
import * as Access from "../Http/Access.js"

/** What a refund does with the fee, said wherever a refund is documented. */
export const FeePolicy =
  "laari keeps its fee (as Stripe does): a refund takes the refunded amount from the merchant's balance in full and gives no fee back, so payments minus refunds equals the merchant's balance plus fees."

/** The request fields that name the payment; a request gives exactly one. */
export const selectorFields = [
  "charge_id",
  "charge_reference",
  "qr_payment_id",
  "qr_payment_reference",
  "invoice_id"
] as const

const oneOf = `exactly one of ${selectorFields.map((f) => `\`${f}\``).join(", ")}`

const PaymentId = (what: string) => Uuid.annotations({ description: `The ${what} to refund; ${oneOf}` })

const PaymentReference = (what: string) =>
  Fields.Reference.annotations({
    description: `The merchant's reference of the ${what} to refund; ${oneOf}. It must name one payment of the merchant in this environment: when several carry it, \`409\` \`PAYMENT_REFERENCE_AMBIGUOUS\`.`
  })

export const RefundRead = Schema.Struct({
  id: Refund.RefundId,
  amount: Schema.Number.pipe(Schema.int(), Schema.positive()).annotations({
    description: "Laari given back"
  }),
  currency: Money.CurrencyCode,
  status: Schema.Literal("SUCCEEDED").annotations({
    description: "Always `SUCCEEDED`: a refund is made at once, or refused with an error answer"
  }),
  chargeId: Schema.NullOr(Schema.UUID).annotations({
    description: "The mandate charge refunded; `null` if the refund is of another payment"
  }),
  qrPaymentId: Schema.NullOr(Schema.UUID).annotations({
    description: "The QR payment refunded; `null` if the refund is of another payment"
  }),
  invoiceId: Schema.NullOr(Schema.UUID).annotations({
    description: "The paid invoice refunded; `null` if the refund is of another payment"
  }),
  reason: Schema.NullOr(Refund.Reason),
  reference: Schema.NullOr(Text).annotations({
    description: "The merchant's own identifier of the refund; `null` if none was sent"
  }),
  description: Schema.NullOr(Text).annotations({
    description: "The merchant's note on the refund; `null` if none was sent"
  }),
  createdAt: Timestamp
}).annotations({
  identifier: "Refund",
  description: `Money given back to the wallet that paid: one of \`chargeId\`, \`qrPaymentId\`, \`invoiceId\` names the payment. ${FeePolicy}`
})

export const CreateRefund = Body({
  charge_id: Schema.optional(PaymentId("mandate charge")),
  charge_reference: Schema.optional(
    PaymentReference("mandate charge (its `reference`; by default its mandate's)")
  ),
  qr_payment_id: Schema.optional(PaymentId("QR payment")),
  qr_payment_reference: Schema.optional(PaymentReference("QR payment (the `reference` of the code it paid)")),
  invoice_id: Schema.optional(PaymentId("paid invoice")),
  amount: Schema.optional(
    Schema.Number.pipe(Schema.int(), Schema.greaterThanOrEqualTo(Refund.MinAmount)).annotations({
      title: "RefundAmount",
      description: `Laari, at least ${Refund.MinAmount} and at most what remains to be refunded of the payment (default: all that remains)`,
      message: () => ({
        message: `must be a whole number of laari of at least ${Refund.MinAmount}`,
        override: true
      })
    })
  ),
  reason: optionalNullable(Refund.Reason).annotations({
    description: "Why the money goes back: `requested_by_customer`, `duplicate` or `fraudulent`"
  }),
  reference: optionalNullable(Fields.Reference),
  description: optionalNullable(Fields.Description)
}).annotations({
  examples: [
    { charge_id: "5e0b9f1a-1c2d-4e3f-8a9b-0c1d2e3f4a5b", amount: 2_500, reason: "requested_by_customer" }
  ]
})

/** The URL parameters of the list. */
export const ListParams = Schema.Struct({
  charge_id: Schema.optional(Schema.UUID).annotations({ description: "Only refunds of this charge" }),
  qr_payment_id: Schema.optional(Schema.UUID).annotations({ description: "Only refunds of this QR payment" }),
  invoice_id: Schema.optional(Schema.UUID).annotations({ description: "Only refunds of this invoice" }),
  ...Paging
})

export class RefundsApi extends HttpApiGroup.make("refunds")
  .add(
    Idempotent.post("create", "/refunds")
      .setPayload(CreateRefund)
      .addSuccess(RefundRead, { status: 201 })
      .addError(RefundsProblems.PaymentNotFound)
      .addError(RefundsProblems.PaymentReferenceAmbiguous)
      .addError(RefundsProblems.RefundReferenceTaken)
      .addError(RefundsProblems.RefundRefused.Conflict)
      .addError(RefundsProblems.RefundRefused.Unprocessable)
      .addError(RefundsProblems.RefundRefused.PaymentRequired)
      .annotate(OpenApi.Summary, "Refund a payment")
      .annotate(
        OpenApi.Description,
        `Gives back \`amount\` laari (default: all that remains) of a mandate charge, a QR payment or a paid invoice to the wallet that paid (named by ${oneOf}; an invoice has no reference of its own), from the merchant's balance, with the \`refund.created\` event; the customer is notified. Where the environment's money lives in the wallet provider's core, the refund is a reversal sent there, recorded once the core posts it: until its answer is known the request answers \`503\` \`OUTCOME_UNKNOWN\` (retry with the same \`Idempotency-Key\`), and a refusal by the core is \`402\` \`INSUFFICIENT_MERCHANT_BALANCE\` or \`409\` \`PAYMENT_NOT_REFUNDABLE\`. Several partial refunds may follow one another up to the amount paid. A refusal moves nothing and carries its \`code\`. ${FeePolicy}`
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/refunds/:id")
      .setPath(IdOrReference("refund"))
      .addSuccess(RefundRead)
      .addError(RefundsProblems.RefundNotFound)
      .annotate(OpenApi.Summary, "Fetch a refund")
      .annotate(OpenApi.Description, "By id or by the merchant's reference.")
  )
  .add(
    HttpApiEndpoint.get("list", "/refunds")
      .setUrlParams(ListParams)
      .addSuccess(Schema.Array(RefundRead))
      .annotate(OpenApi.Summary, "List refunds")
      .annotate(OpenApi.Description, "Newest first, optionally of one payment.")
  )
  .pipe(
    Declare.merchant({
      access: Access.scoped("payments:write"),
      title: "Refunds",
      description: `Money given back from the merchant's balance to the paying wallet. ${FeePolicy}`
    })
  ) {}
