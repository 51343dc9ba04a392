/**
 * The HTTP answers of the refunds' errors; a refused refund moves nothing. An endpoint lists the ones it
 * can fail with (`addError`); an error is answered by the schemas its endpoint lists.
 */
import { Refunds } from "@laari/core"
import * as Problem from "../Http/Problem.js"

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

const refundRefusal = Problem.perStatus(Refunds.RefundRefused, "RefundRefused", (e) => e.code)

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
