/**
 * Sandbox test helpers (a `sk_test_` secret key; live keys get `404`): the customer's side simulated.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import * as Doc from "../Http/Documented.js"
import { Body, TimeZone, Text } from "../Http/Fields.js"
import { Authentication } from "../Http/Security.js"
import { SessionRead } from "../Checkout/Api.js"
import { MandateRead } from "../Mandates/Api.js"
import { SubscriptionRead } from "../Subscriptions/Api.js"

export const PayerRead = Schema.Struct({
  customerId: Text,
  balance: Schema.Int,
  walletLimit: Schema.NullOr(Schema.Int),
  frozen: Schema.Boolean,
  blockedByRules: Schema.Boolean,
  timeZone: Text
}).annotations({ identifier: "SandboxPayer" })

export const SetPayer = Body({
  balance: Schema.optional(
    Schema.Int.pipe(Schema.nonNegative(), Schema.lessThanOrEqualTo(Number.MAX_SAFE_INTEGER))
  ),
  wallet_limit: Schema.optional(Schema.NullOr(Schema.Int.pipe(Schema.nonNegative()))),
  frozen: Schema.optional(Schema.Boolean),
  blocked_by_rules: Schema.optional(Schema.Boolean),
  time_zone: Schema.optional(TimeZone)
})

export const PayQrCode = Body({
  payload: Text,
  amount: Schema.optional(Schema.NullOr(Schema.Int))
})

export const QrPaymentRead = Schema.Struct({
  id: Text,
  qrid: Text,
  qrCodeId: Text,
  amount: Schema.Int,
  fee: Schema.Int,
  netAmount: Schema.Int,
  createdAt: Text
}).annotations({ identifier: "QrPayment" })

export const CheckoutSettled = Schema.Struct({
  session: SessionRead,
  subscription: Schema.NullOr(SubscriptionRead)
}).annotations({ identifier: "CheckoutSettled" })

export class TestHelpersApi extends HttpApiGroup.make("testHelpers")
  .add(HttpApiEndpoint.get("payer", "/test-helpers/payer").addSuccess(PayerRead).addError(Doc.NotFound))
  .add(
    HttpApiEndpoint.post("setPayer", "/test-helpers/payer")
      .setPayload(SetPayer)
      .addSuccess(PayerRead)
      .addError(Doc.NotFound)
      .addError(Doc.Unprocessable)
  )
  .add(
    HttpApiEndpoint.post("revokeMandateAsCustomer", "/test-helpers/mandates/:id/revoke-as-customer")
      .setPath(Schema.Struct({ id: Text }))
      .addSuccess(MandateRead)
      .addError(Doc.NotFound)
      .addError(Doc.Conflict)
  )
  .add(
    HttpApiEndpoint.post("payQrCode", "/test-helpers/qr-codes/pay")
      .setPayload(PayQrCode)
      .addSuccess(QrPaymentRead, { status: 201 })
      .addError(Doc.PaymentRequired)
      .addError(Doc.NotFound)
      .addError(Doc.Conflict)
      .addError(Doc.Unprocessable)
      .annotate(OpenApi.Summary, "Pay a scanned QR payload as the sandbox payer")
  )
  .add(
    HttpApiEndpoint.post("payCheckoutSession", "/test-helpers/checkout/sessions/:id/pay")
      .setPath(Schema.Struct({ id: Text }))
      .addSuccess(CheckoutSettled)
      .addError(Doc.PaymentRequired)
      .addError(Doc.NotFound)
      .addError(Doc.Conflict)
      .annotate(OpenApi.Summary, "Pay a checkout session as the sandbox payer")
  )
  .add(
    HttpApiEndpoint.post("cancelSubscriptionAsCustomer", "/test-helpers/subscriptions/:id/cancel-as-customer")
      .setPath(Schema.Struct({ id: Text }))
      .addSuccess(SubscriptionRead)
      .addError(Doc.NotFound)
      .addError(Doc.Conflict)
      .annotate(OpenApi.Summary, "Cancel a subscription as the sandbox payer would in the wallet app")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Sandbox test helpers") {}
