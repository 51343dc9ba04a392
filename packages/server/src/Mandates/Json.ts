/**
 * Read shapes of mandates and charges: camelCase, times in Maldives time.
 */
import { Calendar, type Mandate } from "@laari/core"
import type { ChargeRead, MandateCreated, MandateRead } from "./Api.js"
import { timeOrNull } from "../Http/Fields.js"

export const mandate = (m: Mandate.Mandate): typeof MandateRead.Type => ({
  id: m.id,
  reference: m.reference,
  status: m.status,
  title: m.title,
  description: m.description,
  currency: "MVR",
  perChargeCap: m.perChargeCap,
  periodCap: m.periodCap,
  period: m.period,
  periodKey: m.periodKey,
  periodCharged: m.periodCharged,
  setupExpiresAt: Calendar.formatMaldives(m.setupExpiresAt),
  expiresAt: Calendar.formatMaldives(m.expiresAt),
  approvedAt: timeOrNull(m.approvedAt),
  revokedAt: timeOrNull(m.revokedAt),
  createdAt: Calendar.formatMaldives(m.createdAt)
})

/** The hosted approval page of a mandate. */
export const approvalUrl = (checkoutUrl: string, m: Mandate.Mandate): string =>
  `${checkoutUrl}/mandate/${m.id}`

export const created = (m: Mandate.Mandate, checkoutUrl: string): typeof MandateCreated.Type => ({
  id: m.id,
  reference: m.reference,
  status: m.status,
  url: approvalUrl(checkoutUrl, m)
})

export const charge = (c: Mandate.Charge): typeof ChargeRead.Type => ({
  id: c.id,
  mandateId: c.mandateId,
  amount: c.amount,
  currency: "MVR",
  status: "SUCCEEDED",
  description: c.description,
  reference: c.reference,
  fee: c.fee,
  netAmount: c.netAmount,
  amountRefunded: c.amountRefunded,
  periodKey: c.periodKey,
  periodCharged: c.periodCharged,
  createdAt: Calendar.formatMaldives(c.createdAt)
})
