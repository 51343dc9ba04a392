/**
 * The customer's approval API, used by the hosted approval page: a one-time code sent to the wallet app,
 * then approve or decline with it. No merchant key: the customer proves themselves with the code.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Mandate } from "@laari/core"
import { Schema } from "effect"
import * as Doc from "../Http/Documented.js"
import { Body, Text } from "../Http/Fields.js"
import { AddressRateLimit } from "../Http/RateLimit.js"
import { MandateRead } from "../Mandates/Api.js"

const IdPath = Schema.Struct({ id: Text })

export const MandateForApproval = Schema.Struct({
  id: Text,
  status: Mandate.Status,
  merchantName: Text,
  title: Text,
  description: Schema.NullOr(Text),
  currency: Schema.Literal("MVR"),
  perChargeCap: Schema.Int,
  periodCap: Schema.NullOr(Schema.Int),
  period: Schema.NullOr(Schema.Literal("MONTH")),
  expiresAt: Text,
  setupExpiresAt: Text,
  returnUrl: Schema.NullOr(Text)
})

export const SessionForPayment = Schema.Struct({
  id: Text,
  status: Text,
  mode: Text,
  merchantName: Text,
  title: Text,
  description: Schema.NullOr(Text),
  amount: Schema.Int,
  currency: Schema.Literal("MVR"),
  planName: Schema.NullOr(Text),
  interval: Schema.NullOr(Text),
  intervalCount: Schema.NullOr(Schema.Int),
  returnUrl: Schema.NullOr(Text),
  expiresAt: Text,
  subscriptionId: Schema.NullOr(Text)
})

export const ChallengeRequest = Body({ phone: Text.pipe(Schema.minLength(1)) })
export const ChallengeIssued = Schema.Struct({ challenge_id: Text, expires_at: Text })
export const Answer = Body({ challenge_id: Schema.UUID, otp: Text })

export class ApprovalsApi extends HttpApiGroup.make("approvals")
  .add(
    HttpApiEndpoint.get("mandate", "/approvals/mandates/:id")
      .setPath(IdPath)
      .addSuccess(MandateForApproval)
      .addError(Doc.NotFound)
      .annotate(OpenApi.Summary, "The terms of a mandate awaiting approval, as the approval page shows them")
  )
  .add(
    HttpApiEndpoint.post("challenge", "/approvals/mandates/:id/challenge")
      .setPath(IdPath)
      .setPayload(ChallengeRequest)
      .addSuccess(ChallengeIssued)
      .addError(Doc.NotFound)
      .addError(Doc.Conflict)
      .addError(Doc.TooManyAttempts)
      .annotate(
        OpenApi.Summary,
        "Send a six-digit one-time code to the customer's wallet app (5 minutes, 5 tries; codes and wrong guesses are capped per mandate and per phone, 429 with Retry-After)"
      )
  )
  .add(
    HttpApiEndpoint.post("approve", "/approvals/mandates/:id/approve")
      .setPath(IdPath)
      .setPayload(Answer)
      .addSuccess(MandateRead)
      .addError(Doc.NotFound)
      .addError(Doc.Conflict)
      .addError(Doc.Unprocessable)
      .addError(Doc.TooManyAttempts)
      .annotate(OpenApi.Summary, "Approve the mandate with the one-time code")
  )
  .add(
    HttpApiEndpoint.post("decline", "/approvals/mandates/:id/decline")
      .setPath(IdPath)
      .setPayload(Answer)
      .addSuccess(MandateRead)
      .addError(Doc.NotFound)
      .addError(Doc.Conflict)
      .addError(Doc.Unprocessable)
      .addError(Doc.TooManyAttempts)
      .annotate(OpenApi.Summary, "Decline the mandate with the one-time code")
  )
  .add(
    HttpApiEndpoint.get("checkout", "/approvals/checkout/:id")
      .setPath(IdPath)
      .addSuccess(SessionForPayment)
      .addError(Doc.NotFound)
      .annotate(OpenApi.Summary, "A checkout session as the hosted payment page shows it")
  )
  .add(
    HttpApiEndpoint.post("checkoutChallenge", "/approvals/checkout/:id/challenge")
      .setPath(IdPath)
      .setPayload(ChallengeRequest)
      .addSuccess(ChallengeIssued)
      .addError(Doc.NotFound)
      .addError(Doc.Conflict)
      .addError(Doc.TooManyAttempts)
      .annotate(
        OpenApi.Summary,
        "Send a one-time code to the paying customer's wallet app (capped per session and per phone, 429 with Retry-After)"
      )
  )
  .add(
    HttpApiEndpoint.post("checkoutPay", "/approvals/checkout/:id/pay")
      .setPath(IdPath)
      .setPayload(Answer)
      .addSuccess(SessionForPayment)
      .addError(Doc.PaymentRequired)
      .addError(Doc.NotFound)
      .addError(Doc.Conflict)
      .addError(Doc.Unprocessable)
      .addError(Doc.TooManyAttempts)
      .annotate(
        OpenApi.Summary,
        "Pay the session with the one-time code; a SUBSCRIPTION session starts the subscription"
      )
  )
  .middleware(AddressRateLimit)
  .annotate(OpenApi.Title, "Customer approvals") {}
