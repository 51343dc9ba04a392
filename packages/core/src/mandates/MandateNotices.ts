/**
 * What a customer is told about their mandates, in words: the notices `Mandates` sends when a merchant
 * charges, a charge is refused, a mandate is approved or ends. Pure, so the wording lives in one place and a
 * test can read it without running a charge.
 */
import type { Charge, Mandate, RefusalCode, RevokedBy } from "./Mandate.js"
import { refusalMessages } from "./Mandate.js"
import { display } from "../kernel/Money.js"

/** A notice before it is addressed: `Mandates` adds the id, the customer, the environment and the time. */
export interface Notice {
  readonly kind: "mandate.charge" | "mandate.charge_failed" | "mandate.approved" | "mandate.revoked"
  readonly title: string
  readonly body: string
  readonly data: Record<string, unknown>
}

/** A charge went through. */
export const charged = (merchantName: string, m: Mandate, charge: Charge): Notice => ({
  kind: "mandate.charge",
  title: `${merchantName} charged ${display(charge.amount)}`,
  body: `${merchantName} charged ${display(charge.amount)} to your wallet under the mandate "${m.title}": ${charge.description}.`,
  data: {
    mandate_id: m.id,
    charge_id: charge.id,
    amount: charge.amount,
    reference: charge.reference,
    merchant_name: merchantName
  }
})

/** The wallet refused a charge (the mandate's own refusals are the merchant's business, not the customer's). */
export const chargeRefused = (
  merchantName: string,
  m: Mandate,
  attempt: { readonly amount: number; readonly description: string; readonly code: RefusalCode }
): Notice => ({
  kind: "mandate.charge_failed",
  title: `${merchantName} could not charge your wallet`,
  body: `A charge of ${display(attempt.amount)} by ${merchantName} (${attempt.description}) was refused: ${refusalMessages[attempt.code]}.`,
  data: { mandate_id: m.id, amount: attempt.amount, code: attempt.code, merchant_name: merchantName }
})

/** The customer approved a mandate with their code. */
export const approved = (merchantName: string, m: Mandate): Notice => ({
  kind: "mandate.approved",
  title: `Mandate approved for ${merchantName}`,
  body: `You approved "${m.title}": up to ${display(m.perChargeCap)} a charge${m.periodCap === null ? "" : `, ${display(m.periodCap)} a month`}. You can end it at any time in the app.`,
  data: { mandate_id: m.id, merchant_name: merchantName }
})

/** A mandate ended, whoever ended it. */
export const revoked = (m: Mandate, by: RevokedBy): Notice => ({
  kind: "mandate.revoked",
  title: "Mandate ended",
  body: `The mandate "${m.title}" has ended; no further charges can be made under it.`,
  data: { mandate_id: m.id, revoked_by: by }
})
