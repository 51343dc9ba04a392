/**
 * What the service parts of the contract set up before they pay: a mandate's terms for core's `Mandates`,
 * and a merchant with an outlet, a funded customer and a mandate of the customer's to charge.
 */
import { type Mandate, Mandates } from "@laari/core"
import { Effect } from "effect"
import { Seed } from "../../Seed.js"
import { freshPhone, merchantWithOutlet, uuid } from "./Helpers.js"

/**
 * Terms `Mandates.create` accepts: `title`, a fresh reference beginning `prefix`, charges of up to
 * 1,000 MVR, no period, no expiry; with `overrides`.
 */
export const mandateTerms = (prefix: string, title: string, overrides: Partial<Mandate.Terms> = {}) =>
  Effect.map(
    uuid,
    (id): Mandate.Terms => ({
      reference: `${prefix}-${id}`,
      title,
      description: null,
      perChargeCap: 100_000,
      periodCap: null,
      period: null,
      expiresAt: null,
      returnUrl: null,
      ...overrides
    })
  )

/** A merchant with an outlet, a customer holding 900 MVR, and a mandate of the customer's to charge. */
export const chargeable = Effect.gen(function* () {
  const seed = yield* Seed
  const { merchant, outlet, tenant } = yield* merchantWithOutlet()
  const customer = yield* seed.customer({ environment: "test", phone: yield* freshPhone, balance: 90_000 })
  const mandate = yield* (yield* Mandates.Mandates).create(tenant, yield* mandateTerms("reads", "Reads"))
  return { merchant, outlet, tenant, customer, mandate }
})
