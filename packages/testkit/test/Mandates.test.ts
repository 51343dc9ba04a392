import { describe, expect, it } from "@effect/vitest"
import { type Ids, Mandate, Mandates, Notifications, Store, Wallet } from "@laari/core"
import { DateTime, Effect, Either } from "effect"
import fc from "fast-check"
import * as Arbitraries from "../src/Arbitraries.js"
import { ControllableClock } from "../src/ControllableClock.js"
import * as MemorySeed from "../src/MemorySeed.js"
import { type MerchantInput, SandboxPayerBalance, Seed } from "../src/Seed.js"
import * as Testkit from "../src/Testkit.js"

/** Each test gets its own world; the clock starts at 2026-03-31T10:00:00Z unless told otherwise. */
const world = (options: Testkit.Options = {}) => Effect.provide(Testkit.layer(options))

let refs = 0
const terms = (overrides: Partial<Mandate.Terms> = {}): Mandate.Terms => ({
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

const merchant = (input: Partial<MerchantInput> = {}) =>
  Effect.flatMap(Seed, (seed) => seed.merchant({ name: "Fit Club", ...input }))

const testTenant = (m: Store.Merchant): Ids.Tenant => ({ merchantId: m.id, environment: "test" })
const liveTenant = (m: Store.Merchant): Ids.Tenant => ({ merchantId: m.id, environment: "live" })

/** A test-mode merchant with an ACTIVE mandate bound to its sandbox payer. */
const activeMandate = (overrides: Partial<Mandate.Terms> = {}, input: Partial<MerchantInput> = {}) =>
  Effect.gen(function* () {
    const m = yield* merchant(input)
    const tenant = testTenant(m)
    const mandate = yield* (yield* Mandates.Mandates).create(tenant, terms(overrides))
    return { merchant: m, tenant, mandate, payer: m.sandboxPayer }
  })

const eventsOf = (merchantId: Ids.MerchantId) =>
  Effect.map(Seed, (seed) => seed.events).pipe(
    Effect.flatten,
    Effect.map((events) => events.filter((e) => e.merchantId === merchantId))
  )

/** Everything a refused charge must leave alone. */
const moneyOf = (merchant: Store.Merchant, payer: Ids.CustomerId, environment: Ids.Environment = "test") =>
  Effect.gen(function* () {
    const seed = yield* Seed
    return {
      payer: (yield* (yield* Wallet.Wallet).payer(payer))?.balance,
      merchant: yield* seed.merchantBalance(merchant.id, environment),
      fee: yield* seed.feeBalance(environment),
      total: yield* seed.ledgerTotal
    }
  })

/**
 * Charges and expects the refusal `code`: its message, one `mandate.charge.failed` event with the code,
 * no money moved, no charge stored, and the mandate's counters untouched.
 */
const expectRefused = (
  ctx: { merchant: Store.Merchant; tenant: Ids.Tenant; mandate: Mandate.Mandate; payer: Ids.CustomerId },
  request: Mandates.ChargeRequest,
  code: Mandate.RefusalCode
) =>
  Effect.gen(function* () {
    const mandates = yield* Mandates.Mandates
    const charges = yield* Store.ChargesStore
    const before = yield* moneyOf(ctx.merchant, ctx.payer, ctx.tenant.environment)
    const mandateBefore = yield* mandates.get(ctx.tenant, ctx.mandate.id)
    const eventsBefore = (yield* eventsOf(ctx.merchant.id)).length
    const chargesBefore = (yield* charges.listByMandate(ctx.mandate.id)).length

    const refused = yield* Effect.flip(mandates.charge(ctx.tenant, ctx.mandate.id, request))
    expect(refused).toBeInstanceOf(Mandates.ChargeRefused)
    expect(refused).toMatchObject({ code, message: Mandate.refusalMessages[code] })

    const events = (yield* eventsOf(ctx.merchant.id)).slice(eventsBefore)
    expect(events.map((e) => e.envelope.type)).toEqual(["mandate.charge.failed"])
    expect(events[0]!.envelope.data.object).toMatchObject({
      code,
      mandate_id: ctx.mandate.id,
      amount: request.amount,
      message: Mandate.refusalMessages[code]
    })
    expect(yield* moneyOf(ctx.merchant, ctx.payer, ctx.tenant.environment)).toEqual(before)
    expect((yield* charges.listByMandate(ctx.mandate.id)).length).toBe(chargesBefore)
    const after = yield* mandates.get(ctx.tenant, ctx.mandate.id)
    expect([after.periodKey, after.periodCharged]).toEqual([
      mandateBefore.periodKey,
      mandateBefore.periodCharged
    ])
    return after
  })

const second = 1_000
const minute = 60 * second
const hour = 60 * minute
const day = 24 * hour

const iso = (t: DateTime.Utc | null) => (t === null ? null : DateTime.formatIso(t))

describe("create", () => {
  it.effect("a sandbox mandate is ACTIVE at once, bound to the sandbox payer, with mandate.activated", () =>
    Effect.gen(function* () {
      const mandates = yield* Mandates.Mandates
      const m = yield* merchant()
      const now = yield* DateTime.now
      const created = yield* mandates.create(testTenant(m), terms({ periodCap: 100_000, period: "MONTH" }))
      expect(created).toMatchObject({
        status: "ACTIVE",
        customerId: m.sandboxPayer,
        environment: "test",
        periodKey: null,
        periodCharged: 0,
        period: "MONTH"
      })
      expect(iso(created.approvedAt)).toBe(iso(now))
      expect(iso(created.setupExpiresAt)).toBe("2026-04-01T10:00:00.000Z")
      expect(iso(created.expiresAt)).toBe("2027-03-31T10:00:00.000Z")
      const events = yield* eventsOf(m.id)
      expect(events.map((e) => e.envelope.type)).toEqual(["mandate.activated"])
      expect(events[0]!.envelope).toMatchObject({
        livemode: false,
        data: { object: { id: created.id, status: "ACTIVE" } }
      })
      expect((yield* mandates.get(testTenant(m), created.reference)).id).toBe(created.id)
      expect((yield* mandates.get(testTenant(m), created.id)).reference).toBe(created.reference)
    }).pipe(world())
  )

  it.effect("a live mandate is refused until mandates are enabled, then INITIATED and unbound", () =>
    Effect.gen(function* () {
      const mandates = yield* Mandates.Mandates
      const m = yield* merchant()
      const refused = yield* Effect.flip(mandates.create(liveTenant(m), terms()))
      expect(refused).toBeInstanceOf(Mandates.MandatesNotEnabled)
      expect(yield* mandates.list(liveTenant(m), { limit: 25, offset: 0 })).toEqual([])

      yield* MemorySeed.updateMerchant(m.id, { features: { mandatesLive: true } })
      const created = yield* mandates.create(liveTenant(m), terms())
      expect(created).toMatchObject({
        status: "INITIATED",
        customerId: null,
        approvedAt: null,
        environment: "live"
      })
      expect(yield* eventsOf(m.id)).toEqual([])
    }).pipe(world())
  )

  const now = DateTime.unsafeMake("2026-03-31T10:00:00Z")
  const invalid: ReadonlyArray<readonly [string, Partial<Mandate.Terms>, string]> = [
    ["an empty reference", { reference: "" }, "reference"],
    ["a blank reference", { reference: "   " }, "reference"],
    ["a reference of 256 characters", { reference: "r".repeat(256) }, "reference"],
    ["an empty title", { title: "" }, "title"],
    ["a title of 256 characters", { title: "t".repeat(256) }, "title"],
    ["a description of 256 characters", { description: "d".repeat(256) }, "description"],
    ["a per-charge cap of 99", { perChargeCap: 99 }, "perChargeCap"],
    ["a per-charge cap of 500001", { perChargeCap: 500_001 }, "perChargeCap"],
    ["a fractional per-charge cap", { perChargeCap: 150.5 }, "perChargeCap"],
    ["a period cap below the per-charge cap", { periodCap: 49_999, period: "MONTH" }, "periodCap"],
    ["a period cap without a period", { periodCap: 100_000 }, "period"],
    ["an ftp return URL", { returnUrl: "ftp://shop.example/done" }, "returnUrl"],
    ["a relative return URL", { returnUrl: "/done" }, "returnUrl"],
    ["an expiry in the past", { expiresAt: DateTime.unsafeMake("2026-03-31T09:59:59Z") }, "expiresAt"],
    ["an expiry of now", { expiresAt: now }, "expiresAt"],
    [
      "an expiry 365 days and a second away",
      { expiresAt: DateTime.add(now, { days: 365, seconds: 1 }) },
      "expiresAt"
    ]
  ]
  it.effect.each(invalid)("%s is InvalidRequest naming the field", ([, patch, field]) =>
    Effect.gen(function* () {
      const mandates = yield* Mandates.Mandates
      const m = yield* merchant()
      const refused = yield* Effect.flip(mandates.create(testTenant(m), terms(patch)))
      expect(refused._tag).toBe("InvalidRequest")
      if (refused._tag !== "InvalidRequest") return
      expect(refused.errors.map((e) => e.field)).toEqual([field])
      expect(refused.message).toBe(`${field}: ${refused.errors[0]!.message}`)
      expect(yield* mandates.list(testTenant(m), { limit: 25, offset: 0 })).toEqual([])
    }).pipe(world())
  )

  it.effect("the limits themselves are accepted", () =>
    Effect.gen(function* () {
      const mandates = yield* Mandates.Mandates
      const m = yield* merchant()
      const accepted: ReadonlyArray<Partial<Mandate.Terms>> = [
        { perChargeCap: 100 },
        { perChargeCap: 500_000, periodCap: 500_000, period: "MONTH" },
        { reference: "r".repeat(255), title: "t".repeat(255), description: "d".repeat(255) },
        { expiresAt: DateTime.add(now, { days: 365 }) },
        { expiresAt: DateTime.add(now, { seconds: 1 }) },
        { returnUrl: "http://localhost:3000/done" },
        { returnUrl: "https://shop.example/return?order=1" }
      ]
      for (const patch of accepted) {
        const created = yield* mandates.create(testTenant(m), terms(patch))
        expect(created.status).toBe("ACTIVE")
        if (patch.expiresAt) expect(iso(created.expiresAt)).toBe(iso(patch.expiresAt))
      }
    }).pipe(world())
  )

  it.effect("every generated valid terms are accepted and kept as sent", () =>
    Effect.gen(function* () {
      yield* Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(Arbitraries.terms(now), (t) =>
            Effect.gen(function* () {
              const m = yield* merchant()
              const created = yield* (yield* Mandates.Mandates).create(testTenant(m), t)
              expect(created).toMatchObject({
                reference: t.reference,
                title: t.title,
                description: t.description,
                perChargeCap: t.perChargeCap,
                periodCap: t.periodCap,
                period: t.period,
                returnUrl: t.returnUrl,
                status: "ACTIVE"
              })
              if (t.expiresAt !== null) expect(iso(created.expiresAt)).toBe(iso(t.expiresAt))
            }).pipe(world(), Effect.runPromise)
          ),
          { numRuns: 50 }
        )
      )
    })
  )

  it.effect("a duplicate reference is refused; the same reference elsewhere is fine", () =>
    Effect.gen(function* () {
      const mandates = yield* Mandates.Mandates
      const m = yield* merchant({ features: { mandatesLive: true } })
      const other = yield* merchant()
      const first = yield* mandates.create(testTenant(m), terms({ reference: "order-1" }))
      const refused = yield* Effect.flip(mandates.create(testTenant(m), terms({ reference: "order-1" })))
      expect(refused).toBeInstanceOf(Mandates.MandateReferenceTaken)
      expect(ids(yield* mandates.list(testTenant(m), { limit: 25, offset: 0 }))).toEqual([first.id])
      // Only the first one's event: the refused create left nothing behind.
      expect((yield* eventsOf(m.id)).map((e) => e.envelope.type)).toEqual(["mandate.activated"])
      yield* mandates.create(testTenant(other), terms({ reference: "order-1" }))
      yield* mandates.create(liveTenant(m), terms({ reference: "order-1" }))
    }).pipe(world())
  )
})

const ids = (ms: ReadonlyArray<{ readonly id: string }>) => ms.map((m) => m.id)

describe("charge", () => {
  it.effect("a charge moves the money, counts the period, notifies the customer and records the event", () =>
    Effect.gen(function* () {
      const ctx = yield* activeMandate({ periodCap: 100_000, period: "MONTH" })
      const mandates = yield* Mandates.Mandates
      const before = yield* moneyOf(ctx.merchant, ctx.payer)
      const charge = yield* mandates.charge(ctx.tenant, ctx.mandate.reference, {
        amount: 12_350,
        description: "March dues"
      })
      // 1% of 12,350 is 123.5, rounded half up.
      expect(charge).toMatchObject({
        mandateId: ctx.mandate.id,
        customerId: ctx.payer,
        amount: 12_350,
        fee: 124,
        netAmount: 12_226,
        description: "March dues",
        reference: ctx.mandate.reference,
        periodKey: "2026-03",
        periodCharged: 12_350
      })
      expect(iso(charge.createdAt)).toBe("2026-03-31T10:00:00.000Z")
      const after = yield* moneyOf(ctx.merchant, ctx.payer)
      expect(after).toEqual({
        payer: before.payer! - 12_350,
        merchant: before.merchant + 12_226,
        fee: before.fee + 124,
        total: 0
      })
      const mandate = yield* mandates.get(ctx.tenant, ctx.mandate.id)
      expect([mandate.periodKey, mandate.periodCharged]).toEqual(["2026-03", 12_350])

      const second = yield* mandates.charge(ctx.tenant, ctx.mandate.id, { amount: 150, reference: "inv-2" })
      // 1.5 laari rounds up to 2; the description defaults to the title.
      expect(second).toMatchObject({
        fee: 2,
        netAmount: 148,
        reference: "inv-2",
        description: "Gym membership",
        periodCharged: 12_500
      })
      expect(ids(yield* (yield* Store.ChargesStore).listByMandate(ctx.mandate.id))).toEqual([
        second.id,
        charge.id
      ])

      const [latest, first] = yield* (yield* Notifications.Notifications).list(ctx.payer)
      expect(first).toMatchObject({ kind: "mandate.charge", data: { charge_id: charge.id, amount: 12_350 } })
      expect(first!.title).toContain("MVR 123.50")
      expect(latest).toMatchObject({ kind: "mandate.charge", data: { charge_id: second.id, amount: 150 } })

      const succeeded = (yield* eventsOf(ctx.merchant.id)).filter(
        (e) => e.envelope.type === "mandate.charge.succeeded"
      )
      expect(succeeded.map((e) => e.envelope.data.object)).toMatchObject([
        {
          id: charge.id,
          amount: 12_350,
          fee: 124,
          net_amount: 12_226,
          period_key: "2026-03",
          period_charged: 12_350
        },
        { id: second.id, amount: 150, fee: 2, net_amount: 148, period_charged: 12_500 }
      ])
    }).pipe(world())
  )

  it.effect("the customer's notice writes the amount as the pages do: MVR 1,500.00", () =>
    Effect.gen(function* () {
      const ctx = yield* activeMandate({ perChargeCap: 500_000 })
      yield* (yield* Mandates.Mandates).charge(ctx.tenant, ctx.mandate.id, { amount: 150_000 })
      const [notice] = yield* (yield* Notifications.Notifications).list(ctx.payer)
      expect(notice!.title).toBe("Fit Club charged MVR 1,500.00")
      expect(notice!.body).toContain("MVR 1,500.00")
    }).pipe(world())
  )

  it.effect("the merchant's own fee rate applies, rounded half up", () =>
    Effect.gen(function* () {
      const ctx = yield* activeMandate({}, { feeBps: 250 })
      const mandates = yield* Mandates.Mandates
      expect(yield* mandates.charge(ctx.tenant, ctx.mandate.id, { amount: 1_010 })).toMatchObject({
        fee: 25,
        netAmount: 985
      })
      expect(yield* mandates.charge(ctx.tenant, ctx.mandate.id, { amount: 1_030 })).toMatchObject({
        fee: 26,
        netAmount: 1_004
      })
      expect(yield* mandates.charge(ctx.tenant, ctx.mandate.id, { amount: 1_020 })).toMatchObject({
        fee: 26,
        netAmount: 994
      })
      expect(yield* Effect.flatMap(Seed, (s) => s.merchantBalance(ctx.merchant.id, "test"))).toBe(
        985 + 1_004 + 994
      )
    }).pipe(world())
  )

  it.effect("a mandate without a period keeps periodKey null and periodCharged 0", () =>
    Effect.gen(function* () {
      const ctx = yield* activeMandate({ perChargeCap: 10_000 })
      const mandates = yield* Mandates.Mandates
      for (const amount of [10_000, 10_000, 5_000]) {
        const charge = yield* mandates.charge(ctx.tenant, ctx.mandate.id, { amount })
        expect([charge.periodKey, charge.periodCharged]).toEqual(["2026-03", 0])
      }
      const mandate = yield* mandates.get(ctx.tenant, ctx.mandate.id)
      expect([mandate.periodKey, mandate.periodCharged]).toEqual([null, 0])
      expect((yield* moneyOf(ctx.merchant, ctx.payer)).payer).toBe(SandboxPayerBalance - 25_000)
    }).pipe(world())
  )

  it.effect("an unknown mandate is MandateNotFound and records no event", () =>
    Effect.gen(function* () {
      const mandates = yield* Mandates.Mandates
      const ctx = yield* activeMandate()
      const other = yield* merchant()
      for (const [tenant, id] of [
        [ctx.tenant, "no-such-reference"],
        [ctx.tenant, "00000000-0000-4000-8000-000000000000"],
        [testTenant(other), ctx.mandate.id],
        [liveTenant(ctx.merchant), ctx.mandate.id]
      ] as const) {
        const refused = yield* Effect.flip(mandates.charge(tenant, id, { amount: 1_000 }))
        expect(refused).toBeInstanceOf(Mandates.MandateNotFound)
      }
      expect((yield* eventsOf(ctx.merchant.id)).map((e) => e.envelope.type)).toEqual(["mandate.activated"])
      expect(yield* eventsOf(other.id)).toEqual([])
      expect((yield* moneyOf(ctx.merchant, ctx.payer)).payer).toBe(SandboxPayerBalance)
    }).pipe(world())
  )

  it.effect("an INITIATED, SUSPENDED or REVOKED mandate is MANDATE_INACTIVE", () =>
    Effect.gen(function* () {
      const mandates = yield* Mandates.Mandates
      const m = yield* merchant({ features: { mandatesLive: true } })
      const initiated = yield* mandates.create(liveTenant(m), terms())
      yield* expectRefused(
        { merchant: m, tenant: liveTenant(m), mandate: initiated, payer: m.sandboxPayer },
        { amount: 1_000 },
        "MANDATE_INACTIVE"
      )

      const suspended = yield* activeMandate()
      yield* mandates.suspend(suspended.mandate.id)
      yield* expectRefused(suspended, { amount: 1_000 }, "MANDATE_INACTIVE")

      const revoked = yield* activeMandate()
      yield* mandates.revoke(revoked.tenant, revoked.mandate.id)
      yield* expectRefused(revoked, { amount: 1_000 }, "MANDATE_INACTIVE")
    }).pipe(world())
  )

  it.effect("past expiresAt a mandate is MANDATE_EXPIRED before any sweep, and is then EXPIRED", () =>
    Effect.gen(function* () {
      const clock = yield* ControllableClock
      const ctx = yield* activeMandate({ expiresAt: DateTime.unsafeMake("2026-04-10T10:00:00Z") })
      const mandates = yield* Mandates.Mandates
      // The workers are down: time passes, the sweep does not run.
      yield* clock.skip("10 days")
      expect((yield* mandates.get(ctx.tenant, ctx.mandate.id)).status).toBe("ACTIVE")
      const after = yield* expectRefused(ctx, { amount: 1_000 }, "MANDATE_EXPIRED")
      expect(after.status).toBe("EXPIRED")
      expect(iso(after.expiredAt)).toBe("2026-04-10T10:00:00.000Z")
      yield* expectRefused(ctx, { amount: 1_000 }, "MANDATE_EXPIRED")
    }).pipe(world())
  )

  it.effect("a second before expiresAt the mandate still charges", () =>
    Effect.gen(function* () {
      const clock = yield* ControllableClock
      const ctx = yield* activeMandate({ expiresAt: DateTime.unsafeMake("2026-04-10T10:00:00Z") })
      yield* clock.advance(10 * day - second)
      yield* (yield* Mandates.Mandates).charge(ctx.tenant, ctx.mandate.id, { amount: 1_000 })
    }).pipe(world())
  )

  it.effect("amounts above the per-charge cap, beyond the period cap, or not chargeable are refused", () =>
    Effect.gen(function* () {
      const ctx = yield* activeMandate({ perChargeCap: 10_000, periodCap: 15_000, period: "MONTH" })
      const mandates = yield* Mandates.Mandates
      yield* expectRefused(ctx, { amount: 10_001 }, "PER_CHARGE_CAP_EXCEEDED")
      for (const amount of [99, 150.5, 0, -500, Number.NaN])
        yield* expectRefused(ctx, { amount }, "MANDATE_CHARGE_AMOUNT_INVALID")
      yield* mandates.charge(ctx.tenant, ctx.mandate.id, { amount: 10_000 })
      yield* expectRefused(ctx, { amount: 5_001 }, "PERIOD_CAP_EXCEEDED")
      // Exactly up to the cap is fine.
      expect((yield* mandates.charge(ctx.tenant, ctx.mandate.id, { amount: 5_000 })).periodCharged).toBe(
        15_000
      )
      yield* expectRefused(ctx, { amount: 100 }, "PERIOD_CAP_EXCEEDED")
    }).pipe(world())
  )

  it.effect("wallet refusals: limit, frozen, blocked and insufficient funds", () =>
    Effect.gen(function* () {
      const seed = yield* Seed
      const ctx = yield* activeMandate()
      const notifications = yield* Notifications.Notifications
      const cases: ReadonlyArray<readonly [Parameters<typeof seed.setPayer>[1], Mandate.RefusalCode]> = [
        [{ limit: 1_000 }, "WALLET_LIMIT_EXCEEDED"],
        [{ limit: null, frozen: true }, "MANDATE_CHARGE_FAILED"],
        [{ frozen: false, blockedByRules: true }, "MANDATE_CHARGE_FAILED"],
        [{ blockedByRules: false, balance: 1_499 }, "INSUFFICIENT_FUNDS"]
      ]
      for (const [patch, code] of cases) {
        yield* seed.setPayer(ctx.payer, patch)
        yield* expectRefused(ctx, { amount: 1_500 }, code)
        // The customer hears of a refusal by their wallet.
        const [notice] = yield* notifications.list(ctx.payer)
        expect(notice).toMatchObject({ kind: "mandate.charge_failed", data: { code, amount: 1_500 } })
      }
      yield* seed.setPayer(ctx.payer, { balance: 1_500 })
      yield* (yield* Mandates.Mandates).charge(ctx.tenant, ctx.mandate.id, { amount: 1_500 })
      expect((yield* moneyOf(ctx.merchant, ctx.payer)).payer).toBe(0)
    }).pipe(world())
  )

  it.effect("the period rolls at the payer's own month boundary", () =>
    Effect.gen(function* () {
      const clock = yield* ControllableClock
      const seed = yield* Seed
      const mandates = yield* Mandates.Mandates
      const caps = { perChargeCap: 10_000, periodCap: 10_000, period: "MONTH" as const }
      // 09:00Z on 31 March is 23:00 on the 31st in Kiritimati (UTC+14) and 22:00 on the 30th in Pago Pago (UTC-11).
      const east = yield* activeMandate(caps)
      const west = yield* activeMandate(caps)
      yield* seed.setPayer(east.payer, { timeZone: "Pacific/Kiritimati" })
      yield* seed.setPayer(west.payer, { timeZone: "Pacific/Pago_Pago" })
      const charge = (ctx: typeof east, amount: number) =>
        mandates.charge(ctx.tenant, ctx.mandate.id, { amount })
      expect((yield* charge(east, 10_000)).periodKey).toBe("2026-03")
      expect((yield* charge(west, 10_000)).periodKey).toBe("2026-03")

      yield* clock.advanceTo(DateTime.unsafeMake("2026-03-31T09:59:59.999Z"))
      yield* expectRefused(east, { amount: 100 }, "PERIOD_CAP_EXCEEDED")
      // Midnight in Kiritimati: a new month there, still March in Pago Pago.
      yield* clock.advanceTo(DateTime.unsafeMake("2026-03-31T10:00:00Z"))
      expect(yield* charge(east, 10_000)).toMatchObject({ periodKey: "2026-04", periodCharged: 10_000 })
      yield* expectRefused(west, { amount: 100 }, "PERIOD_CAP_EXCEEDED")

      yield* clock.advanceTo(DateTime.unsafeMake("2026-04-01T10:59:59.999Z"))
      yield* expectRefused(west, { amount: 100 }, "PERIOD_CAP_EXCEEDED")
      // Midnight in Pago Pago, eleven hours behind UTC.
      yield* clock.advanceTo(DateTime.unsafeMake("2026-04-01T11:00:00Z"))
      expect(yield* charge(west, 10_000)).toMatchObject({ periodKey: "2026-04", periodCharged: 10_000 })
      expect(yield* mandates.get(west.tenant, west.mandate.id)).toMatchObject({
        periodKey: "2026-04",
        periodCharged: 10_000
      })
    }).pipe(world({ start: "2026-03-31T09:00:00Z" }))
  )

  it.effect(
    "any history of charges and clock moves matches an independent model, and never exceeds a cap",
    () =>
      Effect.gen(function* () {
        yield* Effect.promise(() =>
          fc.assert(
            fc.asyncProperty(
              Arbitraries.chargeSequence,
              Arbitraries.timeZone,
              Arbitraries.instant,
              ({ caps, steps }, zone, start) =>
                Effect.runPromise(history(caps, steps, zone).pipe(world({ start })))
            ),
            { numRuns: 60 }
          )
        )
      })
  )
})

/** The payer's month by `Intl`, independent of `Calendar` and Temporal. */
const intlMonth = (t: DateTime.Utc, zone: string): string => {
  const parts = new Intl.DateTimeFormat("en-US", {
    timeZone: zone,
    year: "numeric",
    month: "2-digit"
  }).formatToParts(new Date(DateTime.toEpochMillis(t)))
  return `${parts.find((p) => p.type === "year")!.value}-${parts.find((p) => p.type === "month")!.value}`
}

const history = (caps: Arbitraries.Caps, steps: ReadonlyArray<Arbitraries.Step>, zone: string) =>
  Effect.gen(function* () {
    const clock = yield* ControllableClock
    const mandates = yield* Mandates.Mandates
    const seed = yield* Seed
    const ctx = yield* activeMandate({
      perChargeCap: caps.perChargeCap,
      periodCap: caps.periodCap,
      period: caps.periodCap === null ? null : "MONTH"
    })
    yield* seed.setPayer(ctx.payer, { timeZone: zone })
    const model = { balance: SandboxPayerBalance, key: null as string | null, charged: 0, taken: 0 }
    const perPeriod = new Map<string, number>()
    for (const step of steps) {
      if (step._tag === "Advance") {
        yield* clock.advance(step.millis)
        continue
      }
      const now = yield* clock.now
      const month = intlMonth(now, zone)
      const used = model.key === month ? model.charged : 0
      const expected: Mandate.RefusalCode | undefined = DateTime.greaterThanOrEqualTo(
        now,
        ctx.mandate.expiresAt
      )
        ? "MANDATE_EXPIRED"
        : !Number.isInteger(step.amount) || step.amount < 100
          ? "MANDATE_CHARGE_AMOUNT_INVALID"
          : step.amount > caps.perChargeCap
            ? "PER_CHARGE_CAP_EXCEEDED"
            : caps.periodCap !== null && used + step.amount > caps.periodCap
              ? "PERIOD_CAP_EXCEEDED"
              : step.amount > model.balance
                ? "INSUFFICIENT_FUNDS"
                : undefined
      const outcome = yield* Effect.either(
        mandates.charge(ctx.tenant, ctx.mandate.id, { amount: step.amount })
      )
      if (Either.isLeft(outcome)) {
        expect(outcome.left).toMatchObject({ _tag: "ChargeRefused", code: expected })
        continue
      }
      expect(expected).toBeUndefined()
      model.balance -= step.amount
      model.taken += step.amount
      perPeriod.set(month, (perPeriod.get(month) ?? 0) + step.amount)
      if (caps.periodCap !== null) {
        model.key = month
        model.charged = used + step.amount
      }
      expect(outcome.right).toMatchObject({
        periodKey: month,
        periodCharged: caps.periodCap === null ? 0 : model.charged
      })
      const m = yield* mandates.get(ctx.tenant, ctx.mandate.id)
      expect([m.periodKey, m.periodCharged]).toEqual([model.key, model.charged])
    }
    // The caps held in every month, and the money matches the successful charges exactly.
    for (const total of perPeriod.values())
      if (caps.periodCap !== null) expect(total).toBeLessThanOrEqual(caps.periodCap)
    const money = yield* moneyOf(ctx.merchant, ctx.payer)
    expect(money.payer).toBe(SandboxPayerBalance - model.taken)
    expect(money.merchant + money.fee).toBe(model.taken)
    expect(money.total).toBe(0)
  })

describe("revoke", () => {
  it.effect("an ACTIVE mandate is revoked at once, with mandate.revoked and a notice to the customer", () =>
    Effect.gen(function* () {
      const ctx = yield* activeMandate()
      const mandates = yield* Mandates.Mandates
      const revoked = yield* mandates.revoke(ctx.tenant, ctx.mandate.reference)
      expect(revoked).toMatchObject({ status: "REVOKED", revokedBy: "MERCHANT" })
      expect(iso(revoked.revokedAt)).toBe("2026-03-31T10:00:00.000Z")
      expect((yield* mandates.get(ctx.tenant, ctx.mandate.id)).status).toBe("REVOKED")
      const events = yield* eventsOf(ctx.merchant.id)
      expect(events.map((e) => e.envelope.type)).toEqual(["mandate.activated", "mandate.revoked"])
      expect(events[1]!.envelope.data.object).toMatchObject({ status: "REVOKED", revoked_by: "MERCHANT" })
      const [notice] = yield* (yield* Notifications.Notifications).list(ctx.payer)
      expect(notice).toMatchObject({ kind: "mandate.revoked", data: { mandate_id: ctx.mandate.id } })
    }).pipe(world())
  )

  it.effect("a SUSPENDED mandate can be revoked", () =>
    Effect.gen(function* () {
      const ctx = yield* activeMandate()
      const mandates = yield* Mandates.Mandates
      expect((yield* mandates.suspend(ctx.mandate.id)).status).toBe("SUSPENDED")
      expect((yield* mandates.revoke(ctx.tenant, ctx.mandate.id)).status).toBe("REVOKED")
    }).pipe(world())
  )

  it.effect("INITIATED, REVOKED, EXPIRED and DECLINED mandates are MandateNotRevocable", () =>
    Effect.gen(function* () {
      const clock = yield* ControllableClock
      const mandates = yield* Mandates.Mandates
      const m = yield* merchant({ features: { mandatesLive: true } })
      const customer = yield* (yield* Seed).customer({ environment: "live", phone: "+960 7000001" })
      const initiated = yield* mandates.create(liveTenant(m), terms())
      const revoked = yield* mandates.create(testTenant(m), terms())
      yield* mandates.revoke(testTenant(m), revoked.id)
      const declined = yield* mandates.create(liveTenant(m), terms())
      const challenge = yield* mandates.requestApproval(declined.id, customer.phone)
      const [notice] = yield* (yield* Notifications.Notifications).list(customer.id)
      yield* mandates.decline(declined.id, challenge.id, String(notice!.data.code))
      const expired = yield* mandates.create(
        testTenant(m),
        terms({ expiresAt: DateTime.unsafeMake("2026-04-01T00:00:00Z") })
      )
      yield* clock.advanceTo(DateTime.unsafeMake("2026-04-01T00:00:00Z"))

      for (const [tenant, mandate, status] of [
        [liveTenant(m), initiated, "INITIATED"],
        [testTenant(m), revoked, "REVOKED"],
        [liveTenant(m), declined, "DECLINED"],
        [testTenant(m), expired, "EXPIRED"]
      ] as const) {
        expect((yield* mandates.get(tenant, mandate.id)).status).toBe(status)
        const refused = yield* Effect.flip(mandates.revoke(tenant, mandate.id))
        expect(refused).toBeInstanceOf(Mandates.MandateNotRevocable)
        expect(refused.message).toBe("Mandate cannot be revoked")
        expect((yield* mandates.get(tenant, mandate.id)).status).toBe(status)
      }
    }).pipe(world())
  )

  it.effect("the customer revokes from the wallet app; nobody else can that way", () =>
    Effect.gen(function* () {
      const seed = yield* Seed
      const ctx = yield* activeMandate()
      const mandates = yield* Mandates.Mandates
      const stranger = yield* seed.customer({ environment: "test", phone: "+960 7000002" })
      const refused = yield* Effect.flip(mandates.revokeAsCustomer(stranger.id, ctx.mandate.id))
      expect(refused).toBeInstanceOf(Mandates.MandateNotFound)
      expect(ids(yield* mandates.listForCustomer(ctx.payer))).toEqual([ctx.mandate.id])
      const revoked = yield* mandates.revokeAsCustomer(ctx.payer, ctx.mandate.id)
      expect(revoked).toMatchObject({ status: "REVOKED", revokedBy: "CUSTOMER" })
      const again = yield* Effect.flip(mandates.revokeAsCustomer(ctx.payer, ctx.mandate.id))
      expect(again).toBeInstanceOf(Mandates.MandateNotRevocable)
    }).pipe(world())
  )
})

describe("approval", () => {
  /** A live mandate awaiting approval and a live customer with a wallet. */
  const pending = Effect.gen(function* () {
    const seed = yield* Seed
    const mandates = yield* Mandates.Mandates
    const m = yield* merchant({ features: { mandatesLive: true } })
    const customer = yield* seed.customer({ environment: "live", phone: "+960 7771234", balance: 50_000 })
    const mandate = yield* mandates.create(liveTenant(m), terms({ perChargeCap: 20_000 }))
    return { merchant: m, tenant: liveTenant(m), mandate, customer }
  })

  /** Asks for a code and reads it from the customer's notifications. */
  const askCode = (mandateId: string, customer: Store.Customer) =>
    Effect.gen(function* () {
      const challenge = yield* (yield* Mandates.Mandates).requestApproval(mandateId, customer.phone)
      const [notice] = yield* (yield* Notifications.Notifications).list(customer.id)
      expect(notice).toMatchObject({
        kind: "one_time_code",
        data: { challenge_id: challenge.id, subject_id: mandateId }
      })
      const code = String(notice!.data.code)
      expect(code).toMatch(/^\d{6}$/)
      expect(notice!.body).toContain(code)
      return { challenge, code }
    })

  const wrong = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, "0")

  it.effect("approve: ACTIVE, bound to the customer who confirmed, with mandate.activated", () =>
    Effect.gen(function* () {
      const p = yield* pending
      const mandates = yield* Mandates.Mandates
      expect((yield* mandates.forApproval(p.mandate.id)).status).toBe("INITIATED")
      const { challenge, code } = yield* askCode(p.mandate.id, p.customer)
      const approved = yield* mandates.approve(p.mandate.id, challenge.id, code)
      expect(approved).toMatchObject({ status: "ACTIVE", customerId: p.customer.id })
      expect(iso(approved.approvedAt)).toBe("2026-03-31T10:00:00.000Z")
      expect((yield* eventsOf(p.merchant.id)).map((e) => e.envelope.type)).toEqual(["mandate.activated"])
      const [notice] = yield* (yield* Notifications.Notifications).list(p.customer.id)
      expect(notice).toMatchObject({ kind: "mandate.approved", data: { mandate_id: p.mandate.id } })
      // The code is used up.
      const reused = yield* Effect.flip(mandates.approve(p.mandate.id, challenge.id, code))
      expect(reused).toBeInstanceOf(Mandates.MandateNotPending)
      // Charges now come out of that customer's wallet.
      yield* mandates.charge(p.tenant, p.mandate.id, { amount: 20_000 })
      expect((yield* (yield* Wallet.Wallet).payer(p.customer.id))?.balance).toBe(30_000)
      expect(ids(yield* mandates.listForCustomer(p.customer.id))).toEqual([p.mandate.id])
    }).pipe(world())
  )

  it.effect("decline: DECLINED with mandate.declined, and no longer awaiting approval", () =>
    Effect.gen(function* () {
      const p = yield* pending
      const mandates = yield* Mandates.Mandates
      const { challenge, code } = yield* askCode(p.mandate.id, p.customer)
      const declined = yield* mandates.decline(p.mandate.id, challenge.id, code)
      expect(declined.status).toBe("DECLINED")
      expect(iso(declined.declinedAt)).toBe("2026-03-31T10:00:00.000Z")
      expect((yield* eventsOf(p.merchant.id)).map((e) => e.envelope.type)).toEqual(["mandate.declined"])
      const late = yield* Effect.flip(mandates.requestApproval(p.mandate.id, p.customer.phone))
      expect(late).toMatchObject({ _tag: "MandateNotPending", message: "Mandate is not awaiting approval" })
    }).pipe(world())
  )

  it.effect("wrong codes count attempts, and the fifth locks the challenge", () =>
    Effect.gen(function* () {
      const p = yield* pending
      const mandates = yield* Mandates.Mandates
      const challenges = yield* Store.ChallengesStore
      const { challenge, code } = yield* askCode(p.mandate.id, p.customer)
      for (let attempt = 1; attempt <= 4; attempt++) {
        const refused = yield* Effect.flip(mandates.approve(p.mandate.id, challenge.id, wrong(code)))
        expect(refused).toMatchObject({ _tag: "ApprovalRefused", reason: "incorrect" })
        expect((yield* challenges.lock(challenge.id))?.attempts).toBe(attempt)
      }
      const fifth = yield* Effect.flip(mandates.approve(p.mandate.id, challenge.id, wrong(code)))
      expect(fifth).toMatchObject({ _tag: "ApprovalRefused", reason: "locked" })
      const right = yield* Effect.flip(mandates.approve(p.mandate.id, challenge.id, code))
      expect(right).toMatchObject({ _tag: "ApprovalRefused", reason: "locked" })
      expect((yield* challenges.lock(challenge.id))?.attempts).toBe(5)
      expect((yield* mandates.forApproval(p.mandate.id)).status).toBe("INITIATED")
      // A new code works.
      const fresh = yield* askCode(p.mandate.id, p.customer)
      expect((yield* mandates.approve(p.mandate.id, fresh.challenge.id, fresh.code)).status).toBe("ACTIVE")
    }).pipe(world())
  )

  it.effect("a code expires after five minutes", () =>
    Effect.gen(function* () {
      const p = yield* pending
      const clock = yield* ControllableClock
      const mandates = yield* Mandates.Mandates
      const { challenge, code } = yield* askCode(p.mandate.id, p.customer)
      yield* clock.advance("5 minutes")
      const refused = yield* Effect.flip(mandates.approve(p.mandate.id, challenge.id, code))
      expect(refused).toMatchObject({ _tag: "ApprovalRefused", reason: "expired" })
      expect((yield* mandates.forApproval(p.mandate.id)).status).toBe("INITIATED")
    }).pipe(world())
  )

  it.effect("a code a second short of five minutes still works", () =>
    Effect.gen(function* () {
      const p = yield* pending
      const clock = yield* ControllableClock
      const { challenge, code } = yield* askCode(p.mandate.id, p.customer)
      yield* clock.advance(5 * minute - second)
      expect((yield* (yield* Mandates.Mandates).approve(p.mandate.id, challenge.id, code)).status).toBe(
        "ACTIVE"
      )
    }).pipe(world())
  )

  it.effect("after the 24 hour link the mandate is not pending: the link has expired", () =>
    Effect.gen(function* () {
      const p = yield* pending
      const clock = yield* ControllableClock
      const mandates = yield* Mandates.Mandates
      const { challenge, code } = yield* askCode(p.mandate.id, p.customer)
      // Before a sweep has caught up, the link itself says it has expired.
      yield* clock.skip("24 hours")
      const refused = yield* Effect.flip(mandates.approve(p.mandate.id, challenge.id, code))
      expect(refused).toMatchObject({ _tag: "MandateNotPending", message: "The approval link has expired" })
      const asked = yield* Effect.flip(mandates.requestApproval(p.mandate.id, p.customer.phone))
      expect(asked).toMatchObject({ _tag: "MandateNotPending", message: "The approval link has expired" })
      // Once the sweep runs, the mandate is EXPIRED.
      yield* clock.runDue
      expect((yield* mandates.forApproval(p.mandate.id)).status).toBe("EXPIRED")
    }).pipe(world())
  )

  it.effect("a phone without a wallet in the mandate's environment, or a foreign challenge, is refused", () =>
    Effect.gen(function* () {
      const p = yield* pending
      const seed = yield* Seed
      const mandates = yield* Mandates.Mandates
      const testOnly = yield* seed.customer({ environment: "test", phone: "+960 7009999" })
      for (const phone of ["+960 0000000", testOnly.phone])
        expect(yield* Effect.flip(mandates.requestApproval(p.mandate.id, phone))).toBeInstanceOf(
          Mandates.CustomerNotFound
        )
      const other = yield* mandates.create(p.tenant, terms())
      const { challenge, code } = yield* askCode(other.id, p.customer)
      const foreign = yield* Effect.flip(mandates.approve(p.mandate.id, challenge.id, code))
      expect(foreign._tag).toBe("ChallengeNotFound")
      expect(yield* Effect.flip(mandates.forApproval("00000000-0000-4000-8000-000000000000"))).toBeInstanceOf(
        Mandates.MandateNotFound
      )
    }).pipe(world())
  )
})

describe("expiry sweep", () => {
  it.effect(
    "the clock's advance expires a lapsed INITIATED mandate at 24 hours, and an ACTIVE one at expiresAt",
    () =>
      Effect.gen(function* () {
        const clock = yield* ControllableClock
        const mandates = yield* Mandates.Mandates
        const m = yield* merchant({ features: { mandatesLive: true } })
        const initiated = yield* mandates.create(liveTenant(m), terms())
        const active = yield* mandates.create(
          testTenant(m),
          terms({ expiresAt: DateTime.unsafeMake("2026-04-10T10:00:00Z") })
        )
        const untouched = yield* mandates.create(testTenant(m), terms())

        yield* clock.advance(24 * hour - second)
        expect((yield* mandates.get(liveTenant(m), initiated.id)).status).toBe("INITIATED")
        yield* clock.advance("1 second")
        const lapsed = yield* mandates.get(liveTenant(m), initiated.id)
        expect(lapsed.status).toBe("EXPIRED")
        // The sweep ran at the due moment itself.
        expect(iso(lapsed.expiredAt)).toBe(iso(lapsed.setupExpiresAt))

        // Far past the lifetime in one call: the job still runs at expiresAt.
        yield* clock.advance("30 days")
        const ended = yield* mandates.get(testTenant(m), active.id)
        expect(ended.status).toBe("EXPIRED")
        expect(iso(ended.expiredAt)).toBe("2026-04-10T10:00:00.000Z")
        expect((yield* mandates.get(testTenant(m), untouched.id)).status).toBe("ACTIVE")
        expect(iso(yield* clock.now)).toBe("2026-05-01T10:00:00.000Z")
        // Expiry is silent: no webhook for it in the spec.
        expect((yield* eventsOf(m.id)).map((e) => e.envelope.type)).toEqual([
          "mandate.activated",
          "mandate.activated"
        ])
      }).pipe(world())
  )

  it.effect("sweep works through more due mandates than one batch", () =>
    Effect.gen(function* () {
      const clock = yield* ControllableClock
      const mandates = yield* Mandates.Mandates
      const m = yield* merchant({ features: { mandatesLive: true } })
      yield* Effect.forEach(Array.from({ length: 7 }), () => mandates.create(liveTenant(m), terms()))
      yield* clock.skip("25 hours")
      expect(yield* mandates.sweep(3)).toBe(7)
      const all = yield* mandates.list(liveTenant(m), { limit: 100, offset: 0 })
      expect(all.map((x) => x.status)).toEqual(Array(7).fill("EXPIRED"))
      expect(yield* mandates.sweep(3)).toBe(0)
    }).pipe(world())
  )
})

describe("list", () => {
  it.effect("lists the tenant's mandates newest first, with filters and paging", () =>
    Effect.gen(function* () {
      const clock = yield* ControllableClock
      const mandates = yield* Mandates.Mandates
      const m = yield* merchant()
      const made: Array<Mandate.Mandate> = []
      for (let i = 0; i < 4; i++) {
        made.push(yield* mandates.create(testTenant(m), terms()))
        yield* clock.advance("1 minute")
      }
      yield* mandates.revoke(testTenant(m), made[1]!.id)
      const list = (f: Partial<Store.MandateFilter>) =>
        Effect.map(mandates.list(testTenant(m), { limit: 25, offset: 0, ...f }), ids)
      expect(yield* list({})).toEqual(ids([...made].reverse()))
      expect(yield* list({ status: "REVOKED" })).toEqual([made[1]!.id])
      expect(yield* list({ reference: made[2]!.reference })).toEqual([made[2]!.id])
      expect(yield* list({ limit: 2, offset: 1 })).toEqual([made[2]!.id, made[1]!.id])
    }).pipe(world())
  )
})
