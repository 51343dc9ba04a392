/**
 * The HTTP answers of the mandates' errors: the charge refusals (one schema per status) and the other
 * mandate errors. An endpoint lists the ones it can fail with (`addError`); an error is answered by the
 * schemas its endpoint lists.
 */
import { Mandate, Mandates } from "@laari/core"
import { Schema } from "effect"
import * as Problem from "../Http/Problem.js"
import * as Problems from "../Http/Problems.js"

const refusal = Problem.perStatus(Mandates.ChargeRefused, "ChargeRefused", (e): Mandate.RefusalCode => e.code)

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
