/** The webhook objects of mandate events: the mandate, a charge, a refused charge. */
import type { DateTime } from "effect"
import { Schema } from "effect"
import * as Calendar from "../kernel/Calendar.js"
import { Amount, CurrencyCode, UnixSeconds, unix } from "../kernel/EventFields.js"
import * as Ids from "../kernel/Ids.js"
import { Currency } from "../kernel/Money.js"
import * as Mandate from "./Mandate.js"

export const MandateObject = Schema.Struct({
  id: Ids.MandateId,
  object: Schema.Literal("mandate").annotations({ description: "Always `mandate`" }),
  reference: Schema.String.annotations({
    description: "The merchant's own identifier of the mandate, unique among its mandates"
  }),
  status: Mandate.Status,
  title: Schema.String.annotations({ description: "Shown to the customer on the approval screen" }),
  description: Schema.NullOr(Schema.String).annotations({
    description: "Shown to the customer on the approval screen; `null` if none was sent"
  }),
  currency: CurrencyCode,
  per_charge_cap: Amount,
  period_cap: Schema.NullOr(Amount),
  period: Schema.NullOr(Mandate.Period).annotations({
    description:
      "`MONTH`: `period_cap` counts over the customer's calendar month; `null`: no period accounting"
  }),
  period_key: Schema.NullOr(Schema.String).annotations({
    description:
      "The period being counted, `YYYY-MM` in the customer's calendar; `null` until the first charge, and on a mandate without a `period`"
  }),
  period_charged: Amount,
  setup_expires_at: UnixSeconds,
  expires_at: UnixSeconds,
  approved_at: Schema.NullOr(UnixSeconds),
  revoked_at: Schema.NullOr(UnixSeconds),
  revoked_by: Schema.NullOr(Mandate.RevokedBy).annotations({
    description: "Who revoked it: `CUSTOMER`, `MERCHANT` or `SERVICE`; `null` unless `status` is `REVOKED`"
  }),
  created_at: UnixSeconds
}).annotations({
  identifier: "MandateEventObject",
  description: "The mandate the event is about"
})
export type MandateObject = typeof MandateObject.Type

export const ChargeObject = Schema.Struct({
  id: Schema.String.annotations({ description: "The charge's id" }),
  object: Schema.Literal("mandate_charge").annotations({ description: "Always `mandate_charge`" }),
  mandate_id: Ids.MandateId,
  amount: Amount,
  currency: CurrencyCode,
  status: Schema.Literal("SUCCEEDED").annotations({
    description: "Always `SUCCEEDED`: a refused charge is a `mandate.charge.failed` event, never a charge"
  }),
  description: Schema.String.annotations({ description: "What the charge is for, as the merchant sent it" }),
  reference: Schema.String.annotations({
    description: "The charge's reference: as sent, or else the mandate's reference"
  }),
  fee: Amount,
  net_amount: Amount,
  period_key: Schema.String.annotations({
    description: "The period the charge counted in, `YYYY-MM` in the customer's calendar"
  }),
  period_charged: Amount,
  created_at: UnixSeconds
}).annotations({
  identifier: "MandateChargeEventObject",
  description: "A charge taken under a mandate: the laari are already in the merchant's balance"
})
export type ChargeObject = typeof ChargeObject.Type

/** A refused charge has no id: nothing was created, only the refusal is reported. */
export const ChargeFailureObject = Schema.Struct({
  object: Schema.Literal("mandate_charge_failure").annotations({
    description: "Always `mandate_charge_failure`"
  }),
  mandate_id: Ids.MandateId,
  mandate_reference: Schema.String.annotations({ description: "The mandate's reference" }),
  amount: Schema.Number.pipe(Schema.int()).annotations({
    description: "The laari the refused charge asked for (100 laari = 1 MVR), as sent"
  }),
  currency: CurrencyCode,
  reference: Schema.String.annotations({
    description: "The refused charge's reference: as sent, or else the mandate's reference"
  }),
  description: Schema.String.annotations({ description: "What the charge was for, as the merchant sent it" }),
  code: Mandate.RefusalCode,
  message: Schema.String.annotations({ description: "Why it was refused, in words" }),
  created_at: UnixSeconds
}).annotations({
  identifier: "MandateChargeFailureEventObject",
  description: "A refused charge: nothing was taken"
})
export type ChargeFailureObject = typeof ChargeFailureObject.Type

export const mandateObject = (m: Mandate.Mandate): MandateObject => ({
  id: m.id,
  object: "mandate",
  reference: m.reference,
  status: m.status,
  title: m.title,
  description: m.description,
  currency: Currency,
  per_charge_cap: m.perChargeCap,
  period_cap: m.periodCap,
  period: m.period,
  period_key: m.periodKey,
  period_charged: m.periodCharged,
  setup_expires_at: unix(m.setupExpiresAt),
  expires_at: unix(m.expiresAt),
  approved_at: unix(m.approvedAt),
  revoked_at: unix(m.revokedAt),
  revoked_by: m.revokedBy,
  created_at: unix(m.createdAt)
})

export const chargeObject = (c: Mandate.Charge): ChargeObject => ({
  id: c.id,
  object: "mandate_charge",
  mandate_id: c.mandateId,
  amount: c.amount,
  currency: Currency,
  status: "SUCCEEDED",
  description: c.description,
  reference: c.reference,
  fee: c.fee,
  net_amount: c.netAmount,
  period_key: c.periodKey,
  period_charged: c.periodCharged,
  created_at: unix(c.createdAt)
})

export const chargeFailedObject = (input: {
  mandate: Mandate.Mandate
  amount: number
  reference: string
  description: string
  code: Mandate.RefusalCode
  message: string
  now: DateTime.Utc
}): ChargeFailureObject => ({
  object: "mandate_charge_failure",
  mandate_id: input.mandate.id,
  mandate_reference: input.mandate.reference,
  amount: input.amount,
  currency: Currency,
  reference: input.reference,
  description: input.description,
  code: input.code,
  message: input.message,
  created_at: Calendar.unixSeconds(input.now)
})

// The outbox's catalogue of objects (kernel/Outbox.ts): these are this feature's.
declare module "../kernel/Outbox.js" {
  interface EventObjects {
    mandate: MandateObject
    mandateCharge: ChargeObject
    mandateChargeFailure: ChargeFailureObject
  }
}
