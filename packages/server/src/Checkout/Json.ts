/**
 * Read shapes of checkout sessions.
 */
import { Calendar, type CheckoutSession } from "@laari/core"
import type { SessionCreated, SessionRead } from "./Api.js"

/** The hosted page where the customer pays. */
export const url = (checkoutUrl: string, s: CheckoutSession.CheckoutSession): string =>
  `${checkoutUrl}/checkout/${s.id}`

export const created = (
  s: CheckoutSession.CheckoutSession,
  checkoutUrl: string
): typeof SessionCreated.Type => ({
  id: s.id,
  reference: s.reference,
  url: url(checkoutUrl, s)
})

export const session = (
  s: CheckoutSession.CheckoutSession,
  checkoutUrl: string
): typeof SessionRead.Type => ({
  id: s.id,
  reference: s.reference,
  url: url(checkoutUrl, s),
  mode: s.mode,
  status: s.status,
  title: s.title,
  description: s.description,
  amount: s.amount,
  currency: "MVR",
  priceData:
    s.price === null
      ? null
      : {
          name: s.price.name,
          amount: s.price.amount,
          interval: s.price.interval,
          intervalCount: s.price.intervalCount
        },
  returnUrl: s.returnUrl,
  subscriptionId: s.subscriptionId,
  expiresAt: Calendar.formatMaldives(s.expiresAt),
  completedAt: s.completedAt === null ? null : Calendar.formatMaldives(s.completedAt),
  createdAt: Calendar.formatMaldives(s.createdAt)
})
