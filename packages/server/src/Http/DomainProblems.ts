/**
 * The answers of the domain's errors (core's), one schema per error and status, each written once: an
 * endpoint lists the ones it can fail with (`addError`), and `Answers` lists them all.
 */
import {
  Approvals,
  Balances,
  Checkout,
  Mandate,
  Mandates,
  QrCodes,
  Reconciliation,
  Refunds,
  Subscriptions,
  Webhook
} from "@laari/core"
import { Schema } from "effect"
import * as Problem from "./Problem.js"
import * as Problems from "./Problems.js"

/**
 * The schemas of an error answered with several statuses, one per status (`<name><status>`), each
 * accepting only the codes listed (`codeOf`, within `Codes`).
 */
const perStatus =
  <E extends { readonly message: string }, Codes extends string = string>(
    Class: Problem.ErrorClass<E>,
    name: string,
    codeOf: (e: E) => Codes
  ) =>
  <const Code extends Codes>(status: number, description: string, codes: readonly [Code, ...Array<Code>]) =>
    Problem.coded(Class, codeOf, `${name}${status}`, status, description, codes)

/** A kebab-case `reason` as the code: `already-paid` is `ALREADY_PAID`. */
const byReason = (e: { readonly reason: string }) => Problem.codeOfReason(e.reason)

// ---------------------------------------------------------------------------------------------------------
// Mandates: charge refusals and the other mandate errors.

const refusal = perStatus(Mandates.ChargeRefused, "ChargeRefused", (e): Mandate.RefusalCode => e.code)

/** The charge refusals, one schema per status. */
export const ChargeRefused = {
  NotFound: refusal(404, "No mandate with that id or reference", ["MANDATE_NOT_FOUND"]),
  Conflict: refusal(409, "The mandate is not active, or has expired", [
    "MANDATE_INACTIVE",
    "MANDATE_EXPIRED"
  ]),
  Unprocessable: refusal(422, "The charge breaks a cap or was refused by the wallet", [
    "PER_CHARGE_CAP_EXCEEDED",
    "PERIOD_CAP_EXCEEDED",
    "MANDATE_CHARGE_AMOUNT_INVALID",
    "WALLET_LIMIT_EXCEEDED",
    "MANDATE_CHARGE_FAILED"
  ]),
  PaymentRequired: refusal(402, "The wallet cannot cover the charge now", ["INSUFFICIENT_FUNDS"]),
  /** Retry with the same key; the schema every `503` shares. */
  Unavailable: Problems.ServiceUnavailable
}

export const MandateNotFound = Problem.plain(
  Mandates.MandateNotFound,
  "MandateNotFound",
  404,
  "Mandate not found",
  "MANDATE_NOT_FOUND"
)
/**
 * The spec fixes no words for this `403`, so the message says how an operator turns the feature on (the
 * merchant reading it cannot, and would otherwise have to ask what to ask for).
 */
export const MandatesNotEnabled = Problem.problem(
  "MandatesNotEnabled",
  403,
  "A live key before mandates are enabled for the merchant",
  [Mandates.MandatesNotEnabled._tag],
  Problem.isInstance(Mandates.MandatesNotEnabled),
  Schema.Struct({ message: Problem.Message, code: Problem.Code("MANDATES_NOT_ENABLED") }),
  (e) => {
    const id = e.merchantId ?? "{merchant_id}"
    return {
      message: `${e.message}. An operator enables them with POST /ops/merchants/${id}/features {"mandates_live": true}, or pnpm laari merchants features --merchant ${id} --mandates-live true`,
      code: "MANDATES_NOT_ENABLED" as const
    }
  }
)
export const MandateNotRevocable = Problem.plain(
  Mandates.MandateNotRevocable,
  "MandateNotRevocable",
  409,
  "The mandate cannot be revoked in its state",
  "MANDATE_NOT_REVOCABLE"
)
export const MandateReferenceTaken = Problem.plain(
  Mandates.MandateReferenceTaken,
  "MandateReferenceTaken",
  409,
  "A mandate with this reference already exists",
  "REFERENCE_TAKEN"
)
export const MandateNotPending = Problem.plain(
  Mandates.MandateNotPending,
  "MandateNotPending",
  409,
  "The mandate is not waiting for the customer's approval",
  "MANDATE_NOT_PENDING"
)
export const MandateNotSuspendable = Problem.plain(
  Mandates.MandateNotSuspendable,
  "MandateNotSuspendable",
  409,
  "Only an active mandate can be suspended",
  "MANDATE_NOT_SUSPENDABLE"
)
export const CustomerNotFound = Problem.plain(
  Mandates.CustomerNotFound,
  "CustomerNotFound",
  404,
  "No wallet is registered to this phone number",
  "CUSTOMER_NOT_FOUND"
)

// ---------------------------------------------------------------------------------------------------------
// Approvals (one-time codes).

export const ChallengeNotFound = Problem.plain(
  Approvals.ChallengeNotFound,
  "ChallengeNotFound",
  404,
  "No such approval in progress",
  "CHALLENGE_NOT_FOUND"
)

const approvalRefusal = perStatus(Approvals.ApprovalRefused, "ApprovalRefused", byReason)

export const ApprovalRefused = {
  Unprocessable: approvalRefusal(422, "The code is incorrect, used or expired", [
    "INCORRECT",
    "USED",
    "EXPIRED"
  ]),
  Locked: approvalRefusal(429, "Too many incorrect codes for this approval", ["LOCKED"])
}

/** `TOO_MANY_CODES` for one mandate or session, `..._FOR_PHONE` across a phone's approvals. */
export const approvalLimitCode = (e: Pick<Approvals.ApprovalLimited, "limit" | "scope">) =>
  `TOO_MANY_${e.limit === "codes" ? "CODES" : "GUESSES"}${e.scope === "customer" ? "_FOR_PHONE" : ""}`

export const ApprovalLimited = Problem.coded(
  Approvals.ApprovalLimited,
  approvalLimitCode,
  "ApprovalLimited",
  429,
  "Too many codes sent or wrong codes tried for this approval or phone; retry after `Retry-After` seconds",
  ["TOO_MANY_CODES", "TOO_MANY_CODES_FOR_PHONE", "TOO_MANY_GUESSES", "TOO_MANY_GUESSES_FOR_PHONE"]
)

// ---------------------------------------------------------------------------------------------------------
// QR codes.

export const QrCodeNotFound = Problem.plain(
  QrCodes.QrCodeNotFound,
  "QrCodeNotFound",
  404,
  "QR code not found",
  "QR_CODE_NOT_FOUND"
)
export const OutletNotFound = Problem.plain(
  QrCodes.OutletNotFound,
  "OutletNotFound",
  404,
  "`outlet_id` is unknown or another merchant's",
  "OUTLET_NOT_FOUND"
)
export const QrReferenceTaken = Problem.plain(
  QrCodes.QrReferenceTaken,
  "QrReferenceTaken",
  409,
  "A QR code with this reference already exists",
  "REFERENCE_TAKEN"
)
export const QrCodeAlreadyInactive = Problem.plain(
  QrCodes.QrCodeAlreadyInactive,
  "QrCodeAlreadyInactive",
  400,
  "The QR code is already deactivated",
  "QR_CODE_ALREADY_INACTIVE"
)
export const QrPayloadInvalid = Problem.plain(
  QrCodes.QrPayloadInvalid,
  "QrPayloadInvalid",
  422,
  "The payload does not parse or fails its checksum",
  "QR_PAYLOAD_INVALID"
)

const qrRefusal = perStatus(QrCodes.QrPaymentRefused, "QrPaymentRefused", byReason)

export const QrPaymentRefused = {
  Conflict: qrRefusal(409, "The code is inactive, expired or already paid", [
    "INACTIVE",
    "EXPIRED",
    "ALREADY_PAID"
  ]),
  Unprocessable: qrRefusal(422, "The payment does not match the code", [
    "PAYLOAD_MISMATCH",
    "AMOUNT_MISMATCH",
    "AMOUNT_REQUIRED"
  ])
}

/** The wallet's refusals of a payment, shared by QR payments and checkout. */
const declined = <E extends { readonly message: string; readonly reason: string }>(
  Class: Problem.ErrorClass<E>,
  name: string
) => {
  const at = perStatus(Class, name, byReason)
  return {
    PaymentRequired: at(402, "The wallet cannot cover the payment", ["INSUFFICIENT_BALANCE"]),
    Unprocessable: at(422, "The wallet refused the payment: a limit, a frozen wallet, a rule, or an error", [
      "WALLET_LIMIT",
      "WALLET_FROZEN",
      "BLOCKED_BY_RULES",
      "EXECUTOR_ERROR"
    ])
  }
}

export const QrPaymentDeclined = declined(QrCodes.QrPaymentDeclined, "QrPaymentDeclined")

// ---------------------------------------------------------------------------------------------------------
// Checkout and subscriptions.

export const CheckoutSessionNotFound = Problem.plain(
  Checkout.CheckoutSessionNotFound,
  "CheckoutSessionNotFound",
  404,
  "Checkout session not found",
  "CHECKOUT_SESSION_NOT_FOUND"
)
export const PayerNotFound = Problem.plain(
  Checkout.PayerNotFound,
  "PayerNotFound",
  404,
  "No wallet is registered to this phone number",
  "PAYER_NOT_FOUND"
)
export const SubscriptionsNotEnabled = Problem.plain(
  Checkout.SubscriptionsNotEnabled,
  "SubscriptionsNotEnabled",
  403,
  "A live key before subscriptions are enabled for the merchant",
  "SUBSCRIPTIONS_NOT_ENABLED"
)
export const CheckoutReferenceTaken = Problem.plain(
  Checkout.CheckoutReferenceTaken,
  "CheckoutReferenceTaken",
  409,
  "A checkout session with this reference already exists",
  "REFERENCE_TAKEN"
)
export const CheckoutSessionClosed = Problem.coded(
  Checkout.CheckoutSessionClosed,
  byReason,
  "CheckoutSessionClosed",
  409,
  "The session is already paid, expired or cancelled, or cannot be completed this way",
  ["ALREADY_COMPLETE", "EXPIRED", "CANCELLED", "MODE_MISMATCH"]
)
export const CheckoutPaymentDeclined = declined(Checkout.CheckoutPaymentDeclined, "CheckoutPaymentDeclined")

export const SubscriptionNotFound = Problem.plain(
  Subscriptions.SubscriptionNotFound,
  "SubscriptionNotFound",
  404,
  "Subscription not found",
  "SUBSCRIPTION_NOT_FOUND"
)
export const SubscriptionNotCancellable = Problem.plain(
  Subscriptions.SubscriptionNotCancellable,
  "SubscriptionNotCancellable",
  409,
  "Subscription cannot be cancelled",
  "SUBSCRIPTION_NOT_CANCELLABLE"
)

export const WebhookEndpointNotFound = Problem.plain(
  Webhook.WebhookEndpointNotFound,
  "WebhookEndpointNotFound",
  404,
  "Webhook endpoint not found",
  "WEBHOOK_ENDPOINT_NOT_FOUND"
)
export const EventNotFound = Problem.plain(
  Webhook.EventNotFound,
  "EventNotFound",
  404,
  "Event not found",
  "EVENT_NOT_FOUND"
)
export const WebhookEndpointLimitReached = Problem.coded(
  Webhook.EndpointLimitReached,
  () => "WEBHOOK_ENDPOINT_LIMIT_REACHED",
  "WebhookEndpointLimitReached",
  409,
  `The merchant already has ${Webhook.MaxEndpoints} webhook endpoints in this environment; delete one first`,
  ["WEBHOOK_ENDPOINT_LIMIT_REACHED"]
)

// ---------------------------------------------------------------------------------------------------------
// Refunds.

export const RefundNotFound = Problem.plain(
  Refunds.RefundNotFound,
  "RefundNotFound",
  404,
  "Refund not found",
  "REFUND_NOT_FOUND"
)
export const PaymentNotFound = Problem.coded(
  Refunds.PaymentNotFound,
  (e) => `${e.kind.toUpperCase()}_NOT_FOUND`,
  "PaymentNotFound",
  404,
  "No charge, QR payment or invoice of the merchant in this environment with that id",
  ["CHARGE_NOT_FOUND", "QR_PAYMENT_NOT_FOUND", "INVOICE_NOT_FOUND"]
)
export const PaymentReferenceAmbiguous = Problem.plain(
  Refunds.PaymentReferenceAmbiguous,
  "PaymentReferenceAmbiguous",
  409,
  "Several of the merchant's charges (or QR payments) carry that reference: name the one to refund by its id",
  "PAYMENT_REFERENCE_AMBIGUOUS"
)
export const RefundReferenceTaken = Problem.plain(
  Refunds.RefundReferenceTaken,
  "RefundReferenceTaken",
  409,
  "A refund with this reference already exists",
  "REFERENCE_TAKEN"
)

const refundRefusal = perStatus(Refunds.RefundRefused, "RefundRefused", (e) => e.code)

/** A refused refund moves nothing; one schema per status. */
export const RefundRefused = {
  Conflict: refundRefusal(409, "The payment is not settled, or has been refunded in full", [
    "PAYMENT_NOT_REFUNDABLE",
    "PAYMENT_ALREADY_REFUNDED"
  ]),
  Unprocessable: refundRefusal(422, "The amount is more than remains to be refunded, or not an amount", [
    "REFUND_EXCEEDS_PAYMENT",
    "REFUND_AMOUNT_INVALID"
  ]),
  PaymentRequired: refundRefusal(402, "The merchant's balance cannot cover the refund now", [
    "INSUFFICIENT_MERCHANT_BALANCE"
  ])
}

// ---------------------------------------------------------------------------------------------------------
// Balance.

export const BalanceTransactionNotFound = Problem.plain(
  Balances.BalanceTransactionNotFound,
  "BalanceTransactionNotFound",
  404,
  "`starting_after` names no balance transaction of this merchant in this environment",
  "BALANCE_TRANSACTION_NOT_FOUND"
)

export const InvalidReportDate = Problem.plain(
  Balances.InvalidReportDate,
  "InvalidReportDate",
  400,
  `\`date\` is not a calendar day of the form \`YYYY-MM-DD\` from ${Balances.FirstReportDay} to ${Balances.LastReportDay}`,
  "INVALID_DATE"
)

// ---------------------------------------------------------------------------------------------------------
// Reconciliation against the wallet provider's core (operator API).

export const ReconciliationConnectorOff = Problem.plain(
  Reconciliation.ConnectorOff,
  "WalletConnectorOff",
  409,
  "No wallet provider's core is configured (`LAARI_WALLET_URL` is unset): there is nothing to reconcile against",
  "WALLET_CONNECTOR_OFF"
)

export const ReconciliationRunInProgress = Problem.plain(
  Reconciliation.RunInProgress,
  "ReconciliationRunInProgress",
  409,
  "A run of this day is under way (in this process or another); read it once it is done",
  "RECONCILIATION_RUNNING"
)
