/**
 * Sandbox test helpers (a `sk_test_` secret key; live keys get `404`): the customer's side simulated.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Ids, QrCode } from "@laari/core"
import { Schema } from "effect"
import { Body, IdOrReference, Laari, TimeZone, Text, TextUpTo, Timestamp } from "../Http/Fields.js"
import * as CheckoutProblems from "../Checkout/Problems.js"
import * as MandatesProblems from "../Mandates/Problems.js"
import * as QrCodesProblems from "../QrCodes/Problems.js"
import * as SubscriptionsProblems from "../Subscriptions/Problems.js"
import * as Idempotent from "../Http/Idempotent.js"
import * as Problems from "../Http/Problems.js"
import * as Declare from "../Http/Declare.js"
import * as Access from "../Http/Access.js"
import { SessionRead } from "../Checkout/Api.js"
import { MandateRead } from "../Mandates/Api.js"
import { SubscriptionRead } from "../Subscriptions/Api.js"

export const PayerRead = Schema.Struct({
  customerId: Ids.CustomerId,
  balance: Laari("Laari in the sandbox payer's wallet"),
  walletLimit: Schema.NullOr(Laari("The largest payment the wallet allows, in laari")).annotations({
    description: "The largest payment the wallet allows, in laari; `null`: no limit"
  }),
  frozen: Schema.Boolean.annotations({ description: "`true`: the wallet refuses every payment" }),
  blockedByRules: Schema.Boolean.annotations({
    description: "`true`: the wallet's rules block every payment"
  }),
  timeZone: Text.annotations({
    description: "The payer's IANA time zone, which sets the mandate period boundaries"
  })
}).annotations({ identifier: "SandboxPayer", description: "The merchant's sandbox payer wallet" })

export const SetPayer = Body({
  balance: Schema.optional(
    Schema.Number.pipe(
      Schema.int(),
      Schema.nonNegative(),
      Schema.lessThanOrEqualTo(Number.MAX_SAFE_INTEGER, {
        message: () => `must be at most ${Number.MAX_SAFE_INTEGER}`
      })
    ).annotations({
      description: "The wallet's balance in laari"
    })
  ),
  wallet_limit: Schema.optional(
    Schema.NullOr(
      Schema.Number.pipe(
        Schema.int(),
        Schema.nonNegative(),
        Schema.lessThanOrEqualTo(Number.MAX_SAFE_INTEGER)
      )
    )
  ).annotations({
    description: "A per-payment limit in laari that refuses larger payments; `null` for none"
  }),
  frozen: Schema.optional(Schema.Boolean).annotations({
    description: "A frozen wallet refuses every payment"
  }),
  blocked_by_rules: Schema.optional(Schema.Boolean).annotations({
    description: "The wallet's rules block every payment"
  }),
  time_zone: Schema.optional(TimeZone).annotations({
    description: "The payer's IANA time zone, which sets the mandate period boundaries"
  })
})

export const PayQrCode = Body({
  payload: TextUpTo(512).annotations({
    description: "The QR payload, as a camera reads it"
  }),
  amount: Schema.optional(Schema.NullOr(QrCode.Amount)).annotations({
    description: "Laari, for a static code (a dynamic code carries its amount)"
  })
})

export const QrPaymentRead = Schema.Struct({
  id: Schema.UUID.annotations({ description: "The QR payment's id (a UUID)" }),
  qrid: Text.annotations({
    description:
      "The national QR standard's identifier tying the code to this payment; the field to reconcile on"
  }),
  qrCodeId: Schema.UUID.annotations({ description: "The id of the QR code that was paid" }),
  amount: QrCode.Amount,
  fee: Laari("The platform's fee, in laari"),
  netAmount: Laari("What the merchant receives, in laari: `amount - fee`"),
  amountRefunded: Laari("Laari given back by refunds so far (`POST /refunds`); at most `amount`"),
  createdAt: Timestamp
}).annotations({ identifier: "QrPayment" })

export const CheckoutSettled = Schema.Struct({
  session: SessionRead,
  subscription: Schema.NullOr(SubscriptionRead)
}).annotations({ identifier: "CheckoutSettled" })

export class TestHelpersApi extends HttpApiGroup.make("testHelpers")
  .add(
    HttpApiEndpoint.get("payer", "/test-helpers/payer")
      .addSuccess(PayerRead)
      .annotate(OpenApi.Summary, "The sandbox payer")
      .annotate(OpenApi.Description, "The merchant's sandbox payer wallet.")
  )
  .add(
    Problems.post("setPayer", "/test-helpers/payer")
      .setPayload(SetPayer)
      .addSuccess(PayerRead)
      .annotate(OpenApi.Summary, "Set up the sandbox payer")
      .annotate(
        OpenApi.Description,
        "Sets the sandbox payer's balance, limit, frozen and rule-block state and time zone, to reproduce each refusal."
      )
  )
  .add(
    Problems.post("revokeMandateAsCustomer", "/test-helpers/mandates/:id/revoke-as-customer")
      .setPath(IdOrReference("mandate"))
      .addSuccess(MandateRead)
      .addError(MandatesProblems.MandateNotFound)
      .addError(MandatesProblems.MandateNotRevocable)
      .annotate(OpenApi.Summary, "Revoke a mandate as the customer")
      .annotate(OpenApi.Description, "As the customer would from the wallet app.")
  )
  .add(
    Idempotent.post("payQrCode", "/test-helpers/qr-codes/pay")
      .setPayload(PayQrCode)
      .addSuccess(QrPaymentRead, { status: 201 })
      .addError(QrCodesProblems.QrCodeNotFound)
      .addError(QrCodesProblems.QrPayloadInvalid)
      .addError(QrCodesProblems.QrPaymentRefused.Conflict)
      .addError(QrCodesProblems.QrPaymentRefused.Unprocessable)
      .addError(QrCodesProblems.QrPaymentDeclined.PaymentRequired)
      .addError(QrCodesProblems.QrPaymentDeclined.Unprocessable)
      .annotate(OpenApi.Summary, "Pay a QR code as the sandbox payer")
      .annotate(OpenApi.Description, "Pays a scanned payload from the sandbox payer's wallet.")
  )
  .add(
    Idempotent.post("payCheckoutSession", "/test-helpers/checkout/sessions/:id/pay")
      .setPath(IdOrReference("checkout session"))
      .addSuccess(CheckoutSettled)
      .addError(CheckoutProblems.CheckoutSessionNotFound)
      .addError(CheckoutProblems.CheckoutSessionClosed)
      .addError(CheckoutProblems.CheckoutPaymentDeclined.PaymentRequired)
      .addError(CheckoutProblems.CheckoutPaymentDeclined.Unprocessable)
      .annotate(OpenApi.Summary, "Pay a checkout session as the sandbox payer")
      .annotate(OpenApi.Description, "Completes the session without a one-time code.")
  )
  .add(
    Problems.post("cancelSubscriptionAsCustomer", "/test-helpers/subscriptions/:id/cancel-as-customer")
      .setPath(IdOrReference("subscription"))
      .addSuccess(SubscriptionRead)
      .addError(SubscriptionsProblems.SubscriptionNotFound)
      .addError(SubscriptionsProblems.SubscriptionNotCancellable)
      .annotate(OpenApi.Summary, "Cancel a subscription as the customer")
      .annotate(OpenApi.Description, "As the customer would from the wallet app.")
  )
  // A live key is answered as if the endpoint did not exist.
  .addError(Problems.NotFoundProblem)
  .pipe(
    Declare.merchant({
      access: Access.sandbox,
      title: "Sandbox test helpers",
      description:
        "The customer's side, simulated in the sandbox: a payer wallet to set up, and the customer's actions"
    })
  ) {}
