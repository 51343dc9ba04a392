/** The webhook object of a QR payment. */
import { Schema } from "effect"
import { Amount, CurrencyCode, UnixSeconds, unix } from "../kernel/EventFields.js"
import { Currency } from "../kernel/Money.js"
import type { Payment as QrPayment } from "./QrCode.js"

export const QrPaymentObject = Schema.Struct({
  id: Schema.String.annotations({ description: "The QR payment's id" }),
  object: Schema.Literal("qr_code_payment").annotations({ description: "Always `qr_code_payment`" }),
  qrid: Schema.String.annotations({
    description:
      "The national QR standard's identifier tying the code to this payment; the field to reconcile on"
  }),
  qr_code_id: Schema.String.annotations({ description: "The id of the QR code that was paid" }),
  // A string here although requests send an integer: kept as delivered so far (the outbox stores exact text).
  outlet_id: Schema.String.annotations({
    description: "The number of the outlet the code belongs to, as a string"
  }),
  amount: Amount,
  currency: CurrencyCode,
  fee: Amount,
  net_amount: Amount,
  reference: Schema.String.annotations({
    description: "The paid QR code's reference (its `qrid` if the merchant sent none)"
  }),
  created_at: UnixSeconds
}).annotations({
  identifier: "QrCodePaymentEventObject",
  description: "A payment made by scanning one of the merchant's QR codes"
})
export type QrPaymentObject = typeof QrPaymentObject.Type

export const qrPaymentObject = (p: QrPayment): QrPaymentObject => ({
  id: p.id,
  object: "qr_code_payment",
  qrid: p.qrid,
  qr_code_id: p.qrCodeId,
  outlet_id: String(p.outletId),
  amount: p.amount,
  currency: Currency,
  fee: p.fee,
  net_amount: p.netAmount,
  reference: p.reference,
  created_at: unix(p.createdAt)
})

// The outbox's catalogue of objects (kernel/Outbox.ts): these are this feature's.
declare module "../kernel/Outbox.js" {
  interface EventObjects {
    qrPayment: QrPaymentObject
  }
}
