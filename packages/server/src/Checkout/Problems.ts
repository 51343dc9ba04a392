/**
 * The HTTP answers of checkout's errors: sessions, payers, refused or declined payments. An endpoint lists
 * the ones it can fail with (`addError`); an error is answered by the schemas its endpoint lists.
 */
import { Checkout } from "@laari/core"
import * as Problem from "../Http/Problem.js"

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
  Problem.byReason,
  "CheckoutSessionClosed",
  409,
  "The session is already paid, expired or cancelled, or cannot be completed this way",
  ["ALREADY_COMPLETE", "EXPIRED", "CANCELLED", "MODE_MISMATCH"]
)
export const CheckoutPaymentDeclined = Problem.declined(
  Checkout.CheckoutPaymentDeclined,
  "CheckoutPaymentDeclined"
)
