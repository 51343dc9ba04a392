/**
 * The customer's approval API, used by the hosted approval page: a one-time code sent to the wallet app,
 * then approve or decline with it. No merchant key: the customer proves themselves with the code.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Calendar, CheckoutSession, Ids, Mandate, Money } from "@laari/core"
import { Schema } from "effect"
import { Body, Text, TextUpTo, Timestamp, Uuid } from "../Http/Fields.js"
import * as ApprovalsProblems from "./Problems.js"
import * as CheckoutProblems from "../Checkout/Problems.js"
import * as MandatesProblems from "../Mandates/Problems.js"
import * as Problems from "../Http/Problems.js"
import { AddressRateLimit } from "../Http/RateLimit.js"
import * as Access from "../Http/Access.js"
import { MandateRead, TermsFields } from "../Mandates/Api.js"

const IdPath = Schema.Struct({
  id: Uuid.annotations({ description: "The mandate's or session's id" })
})

const MerchantName = Text.annotations({ description: "The merchant's name, shown to the customer" })
const ReturnUrl = Schema.NullOr(Text).annotations({
  description: "Where the customer is sent afterwards; `null` if the merchant gave none"
})

export const MandateForApproval = Schema.Struct({
  id: Ids.MandateId,
  status: Mandate.Status,
  merchantName: MerchantName,
  ...TermsFields,
  expiresAt: Timestamp,
  setupExpiresAt: Timestamp,
  returnUrl: ReturnUrl
}).annotations({ identifier: "MandateForApproval", description: "What the approval page shows the customer" })

export const SessionForPayment = Schema.Struct({
  id: Ids.CheckoutSessionId,
  status: CheckoutSession.Status,
  mode: CheckoutSession.Mode,
  merchantName: MerchantName,
  title: Text.annotations({ description: "What the customer pays for" }),
  description: Schema.NullOr(Text).annotations({
    description: "More about it; `null` if the merchant gave none"
  }),
  amount: Money.Amount,
  currency: Money.CurrencyCode,
  planName: Schema.NullOr(CheckoutSession.PlanName),
  interval: Schema.NullOr(Calendar.Interval).annotations({
    description: "The plan's billing unit, `WEEK` or `MONTH`; `null` in `PAYMENT` mode"
  }),
  intervalCount: Schema.NullOr(CheckoutSession.IntervalCount),
  returnUrl: ReturnUrl,
  expiresAt: Timestamp,
  subscriptionId: Schema.NullOr(Ids.SubscriptionId).annotations({
    description: "The subscription its payment started, once paid in `SUBSCRIPTION` mode; otherwise `null`"
  })
}).annotations({ identifier: "SessionForPayment", description: "What the payment page shows the customer" })

export const ChallengeRequest = Body({
  phone: Text.pipe(
    Schema.minLength(1),
    Schema.maxLength(32, { message: () => "must be at most 32 characters" })
  ).annotations({
    description: "The customer's wallet phone number"
  })
})
export const ChallengeIssued = Schema.Struct({
  challenge_id: Ids.ChallengeId,
  expires_at: Timestamp.annotations({ description: "The code works until then (5 minutes)" })
}).annotations({ identifier: "ChallengeIssued" })
export const Answer = Body({
  challenge_id: Uuid.annotations({ description: "From the challenge that sent the code" }),
  otp: TextUpTo(32).annotations({ description: "The six-digit one-time code" })
})

/** The customer's answer to a mandate, with the code: approve or decline. */
const answer = <const Name extends "approve" | "decline">(name: Name, summary: string) =>
  Problems.post(name, `/approvals/mandates/:id/${name}`)
    .setPath(IdPath)
    .setPayload(Answer)
    .addSuccess(MandateRead)
    .addError(MandatesProblems.MandateNotFound)
    .addError(MandatesProblems.MandateNotPending)
    .addError(ApprovalsProblems.ChallengeNotFound)
    .addError(ApprovalsProblems.ApprovalRefused.Unprocessable)
    .addError(ApprovalsProblems.ApprovalRefused.Locked)
    .addError(ApprovalsProblems.ApprovalLimited)
    .annotate(OpenApi.Summary, summary)

export class ApprovalsApi extends HttpApiGroup.make("approvals")
  .add(
    HttpApiEndpoint.get("mandate", "/approvals/mandates/:id")
      .setPath(IdPath)
      .addSuccess(MandateForApproval)
      .addError(MandatesProblems.MandateNotFound)
      .annotate(OpenApi.Summary, "A mandate awaiting approval")
      .annotate(OpenApi.Description, "The terms of a mandate as the hosted approval page shows them.")
  )
  .add(
    Problems.post("challenge", "/approvals/mandates/:id/challenge")
      .setPath(IdPath)
      .setPayload(ChallengeRequest)
      .addSuccess(ChallengeIssued)
      .addError(MandatesProblems.MandateNotFound)
      .addError(MandatesProblems.MandateNotPending)
      .addError(MandatesProblems.CustomerNotFound)
      .addError(ApprovalsProblems.ApprovalLimited)
      .annotate(OpenApi.Summary, "Send a one-time code for a mandate")
      .annotate(
        OpenApi.Description,
        "Sends a six-digit code to the customer's wallet app (valid 5 minutes, 5 tries). Codes and wrong guesses are capped per mandate and per phone: `429` with `Retry-After`."
      )
  )
  .add(
    answer("approve", "Approve a mandate").annotate(
      OpenApi.Description,
      "With the one-time code; the mandate becomes `ACTIVE` on the customer's wallet."
    )
  )
  .add(
    answer("decline", "Decline a mandate").annotate(
      OpenApi.Description,
      "With the one-time code; the mandate becomes `DECLINED` and is never chargeable."
    )
  )
  .add(
    HttpApiEndpoint.get("checkout", "/approvals/checkout/:id")
      .setPath(IdPath)
      .addSuccess(SessionForPayment)
      .addError(CheckoutProblems.CheckoutSessionNotFound)
      .annotate(OpenApi.Summary, "A checkout session awaiting payment")
      .annotate(OpenApi.Description, "The session as the hosted payment page shows it.")
  )
  .add(
    Problems.post("checkoutChallenge", "/approvals/checkout/:id/challenge")
      .setPath(IdPath)
      .setPayload(ChallengeRequest)
      .addSuccess(ChallengeIssued)
      .addError(CheckoutProblems.CheckoutSessionNotFound)
      .addError(CheckoutProblems.CheckoutSessionClosed)
      .addError(CheckoutProblems.PayerNotFound)
      .addError(ApprovalsProblems.ApprovalLimited)
      .annotate(OpenApi.Summary, "Send a one-time code for a checkout")
      .annotate(
        OpenApi.Description,
        "Sends a code to the paying customer's wallet app; capped per session and per phone (`429` with `Retry-After`)."
      )
  )
  .add(
    Problems.post("checkoutPay", "/approvals/checkout/:id/pay")
      .setPath(IdPath)
      .setPayload(Answer)
      .addSuccess(SessionForPayment)
      .addError(CheckoutProblems.CheckoutSessionNotFound)
      .addError(CheckoutProblems.CheckoutSessionClosed)
      .addError(ApprovalsProblems.ChallengeNotFound)
      .addError(ApprovalsProblems.ApprovalRefused.Unprocessable)
      .addError(ApprovalsProblems.ApprovalRefused.Locked)
      .addError(ApprovalsProblems.ApprovalLimited)
      .addError(CheckoutProblems.CheckoutPaymentDeclined.PaymentRequired)
      .addError(CheckoutProblems.CheckoutPaymentDeclined.Unprocessable)
      .annotate(OpenApi.Summary, "Pay a checkout session")
      .annotate(
        OpenApi.Description,
        "With the one-time code; a `SUBSCRIPTION` session starts the subscription and pays its first invoice."
      )
  )
  .addError(Problems.InvalidRequest)
  .addError(Problems.ServiceUnavailable)
  .middleware(AddressRateLimit)
  .annotate(Access.Access, Access.anyone)
  .annotate(OpenApi.Title, "Customer approvals")
  .annotate(
    OpenApi.Description,
    "Used by the hosted pages: no merchant key, the customer proves themselves with a one-time code sent to the wallet app. Rate-limited per address."
  ) {}
