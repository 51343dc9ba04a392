/**
 * The world of the in-memory mandate tests: a fresh testkit per test, a merchant and its tenants, terms
 * with a reference of their own, an ACTIVE mandate, the merchant's events, and time in milliseconds.
 */
import { type Ids, type Mandate, Mandates, type Store } from "@laari/core"
import { DateTime, Effect } from "effect"
import { type MerchantInput, Seed } from "../../src/Seed.js"
import * as Testkit from "../../src/Testkit.js"

/** Each test gets its own world; the clock starts at 2026-03-31T10:00:00Z unless told otherwise. */
export const world = (options: Testkit.Options = {}) => Effect.provide(Testkit.layer(options))

let refs = 0
export const terms = (overrides: Partial<Mandate.Terms> = {}): Mandate.Terms => ({
  reference: `gym-${++refs}`,
  title: "Gym membership",
  description: null,
  perChargeCap: 50_000,
  periodCap: null,
  period: null,
  expiresAt: null,
  returnUrl: null,
  ...overrides
})

export const merchant = (input: Partial<MerchantInput> = {}) =>
  Effect.flatMap(Seed, (seed) => seed.merchant({ name: "Fit Club", ...input }))

export const testTenant = (m: Store.Merchant): Ids.Tenant => ({ merchantId: m.id, environment: "test" })
export const liveTenant = (m: Store.Merchant): Ids.Tenant => ({ merchantId: m.id, environment: "live" })

/** A test-mode merchant with an ACTIVE mandate bound to its sandbox payer. */
export const activeMandate = (overrides: Partial<Mandate.Terms> = {}, input: Partial<MerchantInput> = {}) =>
  Effect.gen(function* () {
    const m = yield* merchant(input)
    const tenant = testTenant(m)
    const mandate = yield* (yield* Mandates.Mandates).create(tenant, terms(overrides))
    return { merchant: m, tenant, mandate, payer: m.sandboxPayer }
  })

export const eventsOf = (merchantId: Ids.MerchantId) =>
  Effect.map(Seed, (seed) => seed.events).pipe(
    Effect.flatten,
    Effect.map((events) => events.filter((e) => e.merchantId === merchantId))
  )

export const second = 1_000
export const minute = 60 * second
export const hour = 60 * minute
export const day = 24 * hour

export const iso = (t: DateTime.Utc | null) => (t === null ? null : DateTime.formatIso(t))

export const ids = (ms: ReadonlyArray<{ readonly id: string }>) => ms.map((m) => m.id)
