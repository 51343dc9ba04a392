/**
 * The event catalogue's names and the API version. Its own module so domain modules can name event
 * types without importing the webhook objects (which import them).
 */
import { Schema } from "effect"

/** The API version, carried as `api_version` in every delivery. */
export const ApiVersion = "2026-07-01"

/** Every event type the service emits; the last two, the QR payment's and the refund's, came later. */
export const Types = [
  "mandate.activated",
  "mandate.declined",
  "mandate.revoked",
  "mandate.charge.succeeded",
  "mandate.charge.failed",
  "subscription.activated",
  "invoice.paid",
  "invoice.payment_failed",
  "subscription.past_due",
  "subscription.canceled",
  "checkout.session.completed",
  "qr_code.payment.succeeded",
  "refund.created"
] as const

export const Type = Schema.Literal(...Types).annotations({ description: "What happened: the event's type" })
export type Type = typeof Type.Type
