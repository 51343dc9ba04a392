/**
 * Charging a mandate in memory: the money, fees, period counting, notices and events of a charge; every
 * refusal, which moves nothing and records one `mandate.charge.failed`; and any history of charges and
 * clock moves against an independent model.
 */
import { describe, expect, it } from "@effect/vitest"
import { type Ids, Mandate, Mandates, Notifications, Store, Wallet } from "@laari/core"
import { DateTime, Effect, Either } from "effect"
import fc from "fast-check"
import * as Arbitraries from "../src/Arbitraries.js"
import { ControllableClock } from "../src/ControllableClock.js"
import { SandboxPayerBalance, Seed } from "../src/Seed.js"
import {
  world,
  terms,
  merchant,
  testTenant,
  liveTenant,
  activeMandate,
  eventsOf,
  second,
  day,
  iso,
  ids
} from "./support/MandateWorld.js"

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
