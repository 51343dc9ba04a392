/**
 * The HTTP answers of the QR codes' errors and of refused or declined QR payments. An endpoint lists the
 * ones it can fail with (`addError`); an error is answered by the schemas its endpoint lists.
 */
import { QrCodes } from "@laari/core"
import * as Problem from "../Http/Problem.js"

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

const qrRefusal = Problem.perStatus(QrCodes.QrPaymentRefused, "QrPaymentRefused", Problem.byReason)

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

export const QrPaymentDeclined = Problem.declined(QrCodes.QrPaymentDeclined, "QrPaymentDeclined")
