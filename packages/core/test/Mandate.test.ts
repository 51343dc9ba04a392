import { describe, expect, it } from "@effect/vitest"
import { DateTime, Either, Schema } from "effect"
import fc from "fast-check"
import { Temporal } from "temporal-polyfill"
import * as Calendar from "../src/kernel/Calendar.js"
import * as Fields from "../src/kernel/Fields.js"
import type { CustomerId, MandateId, MerchantId } from "../src/kernel/Ids.js"
import * as Mandate from "../src/mandates/Mandate.js"

// -------------------------------------------------------------------------------------------------
// Fixtures and arbitraries (core cannot use the testkit, which depends on it)
// -------------------------------------------------------------------------------------------------

const now = DateTime.unsafeMake("2026-03-31T10:00:00Z")
const customer = "c7a0b1f2-1111-4c5e-8a57-0b3fe4d0a111" as CustomerId

const terms = (overrides: Partial<Mandate.Terms> = {}): Mandate.Terms => ({
  reference: "gym-1",
  title: "Gym membership",
  description: null,
  perChargeCap: 50_000,
  periodCap: null,
  period: null,
  expiresAt: null,
  returnUrl: null,
  ...overrides
})

const initiated = (overrides: Partial<Mandate.Terms> = {}, at = now) =>
  Mandate.initiate(
    {
      id: "0b6a3c8e-0d3e-4f59-9a39-5f3b8f5f0c01" as MandateId,
      merchantId: "6f1c1f44-9a39-4c5e-8a57-0b3fe4d0a111" as MerchantId,
      environment: "live",
      terms: terms(overrides)
    },
    at
  )

const active = (overrides: Partial<Mandate.Terms> = {}, at = now) =>
  Either.getOrThrow(Mandate.approve(initiated(overrides, at), customer, at))

const withStatus = (m: Mandate.Mandate, status: Mandate.Status): Mandate.Mandate => ({ ...m, status })

const statuses = Mandate.Status.literals
const status = fc.constantFrom(...statuses)
const zones = [
  "Indian/Maldives",
  "Pacific/Kiritimati",
  "Pacific/Pago_Pago",
  "Asia/Kathmandu",
  "America/St_Johns",
  "Europe/London",
  "UTC"
]
const zone = fc.constantFrom(...zones)
const instant = fc
  .integer({ min: Date.UTC(2024, 0, 1), max: Date.UTC(2031, 0, 1) - 1 })
  .map((ms) => DateTime.unsafeMake(ms))
const plusMs = (t: DateTime.Utc, ms: number) => DateTime.unsafeMake(DateTime.toEpochMillis(t) + ms)
const day = 86_400_000

/** Any mandate at all: any state, any counters, created around `now`. */
const anyMandate = fc
  .record({
    status,
    perChargeCap: fc.integer({ min: 100, max: 500_000 }),
    periodCap: fc.option(fc.integer({ min: 100, max: 5_000_000 }), { nil: null }),
    periodCharged: fc.integer({ min: 0, max: 5_000_000 }),
    periodKey: fc.option(fc.constantFrom("2026-02", "2026-03", "2026-04"), { nil: null }),
    lifetimeDays: fc.integer({ min: 1, max: 365 })
  })
  .map((r) => ({
    ...active({
      perChargeCap: r.perChargeCap,
      periodCap: r.periodCap,
      period: r.periodCap === null ? null : "MONTH"
    }),
    status: r.status,
    periodKey: r.periodKey,
    periodCharged: r.periodCharged,
    expiresAt: plusMs(now, r.lifetimeDays * day)
  }))

/** The first instant of the month after the one `t` falls in, in `zone`, computed from calendar dates. */
const nextMonthStart = (t: DateTime.Utc, zone: string): DateTime.Utc => {
  const local = Temporal.Instant.fromEpochMilliseconds(DateTime.toEpochMillis(t)).toZonedDateTimeISO(zone)
  const first = Temporal.PlainDate.from({ year: local.year, month: local.month, day: 1 }).add({ months: 1 })
  return DateTime.unsafeMake(first.toZonedDateTime({ timeZone: zone }).epochMilliseconds)
}

/** The `YYYY-MM` whose bounds, computed from calendar dates in `zone`, contain `t`. */
const monthContaining = (t: DateTime.Utc, zone: string): string => {
  const ms = DateTime.toEpochMillis(t)
  // Start from a month that is surely not later, then walk forward to the one containing `t`.
  let month = Temporal.PlainDate.from({
    year: DateTime.getPartUtc(t, "year"),
    month: DateTime.getPartUtc(t, "month"),
    day: 1
  }).subtract({ months: 1 })
  for (;;) {
    const end = month.add({ months: 1 }).toZonedDateTime({ timeZone: zone }).epochMilliseconds
    if (ms < end) return month.toPlainYearMonth().toString()
    month = month.add({ months: 1 })
  }
}

// -------------------------------------------------------------------------------------------------

describe("validateTerms", () => {
  it("accepts valid terms, at the limits too", () => {
    for (const t of [
      terms(),
      terms({ perChargeCap: 100 }),
      terms({ perChargeCap: 500_000, periodCap: 500_000, period: "MONTH" }),
      terms({ reference: "r".repeat(255), title: "t".repeat(255), description: "d".repeat(255) }),
      terms({ expiresAt: DateTime.add(now, { days: 365 }) }),
      terms({ expiresAt: DateTime.add(now, { seconds: 1 }) }),
      terms({ returnUrl: "https://shop.example/return?x=1" }),
      terms({ returnUrl: "http://localhost:3000" })
    ])
      expect(Mandate.validateTerms(t, now)).toEqual([])
  })

  it.each<[string, Partial<Mandate.Terms>, string]>([
    ["empty reference", { reference: "" }, "reference"],
    ["blank reference", { reference: "  " }, "reference"],
    ["long reference", { reference: "r".repeat(256) }, "reference"],
    ["empty title", { title: "" }, "title"],
    ["long title", { title: "t".repeat(256) }, "title"],
    ["long description", { description: "d".repeat(256) }, "description"],
    ["cap below 100", { perChargeCap: 99 }, "perChargeCap"],
    ["cap above 500000", { perChargeCap: 500_001 }, "perChargeCap"],
    ["fractional cap", { perChargeCap: 100.5 }, "perChargeCap"],
    ["period cap below cap", { periodCap: 49_999, period: "MONTH" }, "periodCap"],
    ["fractional period cap", { periodCap: 60_000.5, period: "MONTH" }, "periodCap"],
    ["period cap without period", { periodCap: 60_000 }, "period"],
    ["non-http return URL", { returnUrl: "javascript:alert(1)" }, "returnUrl"],
    ["relative return URL", { returnUrl: "/done" }, "returnUrl"],
    ["return URL with a space", { returnUrl: "https://shop.example/a b" }, "returnUrl"],
    ["expiry in the past", { expiresAt: DateTime.add(now, { seconds: -1 }) }, "expiresAt"],
    ["expiry now", { expiresAt: now }, "expiresAt"],
    ["expiry beyond 365 days", { expiresAt: DateTime.add(now, { days: 365, seconds: 1 }) }, "expiresAt"]
  ])("%s names %s", (_, patch, field) => {
    expect(Mandate.validateTerms(terms(patch), now).map((p) => p.field)).toEqual([field])
  })

  it("reports every problem at once", () => {
    const problems = Mandate.validateTerms(
      terms({
        reference: "",
        title: "",
        perChargeCap: 1,
        periodCap: 0,
        expiresAt: now,
        returnUrl: "ftp://x"
      }),
      now
    )
    // Each field's own rule first, in the order of the fields, then the rules across fields.
    expect(problems.map((p) => p.field)).toEqual([
      "reference",
      "title",
      "perChargeCap",
      "periodCap",
      "returnUrl",
      "period",
      "expiresAt"
    ])
  })
})

describe("initiate", () => {
  it("starts INITIATED, with a 24 h link, a 365 day default lifetime and no period counters", () => {
    const m = initiated()
    expect(m).toMatchObject({
      status: "INITIATED",
      customerId: null,
      periodKey: null,
      periodCharged: 0,
      approvedAt: null,
      revokedAt: null
    })
    expect(DateTime.formatIso(m.setupExpiresAt)).toBe("2026-04-01T10:00:00.000Z")
    expect(DateTime.formatIso(m.expiresAt)).toBe("2027-03-31T10:00:00.000Z")
  })

  it("keeps a period only with a period cap, and the expiry asked for", () => {
    expect(initiated({ period: "MONTH" }).period).toBeNull()
    expect(initiated({ periodCap: 60_000, period: "MONTH" }).period).toBe("MONTH")
    const expiresAt = DateTime.unsafeMake("2026-06-01T00:00:00Z")
    expect(initiated({ expiresAt }).expiresAt).toEqual(expiresAt)
  })
})

describe("transitions", () => {
  const later = DateTime.add(now, { hours: 1 })
  const base = active()

  it.each(statuses)("from %s", (from) => {
    const m = from === "INITIATED" ? initiated() : withStatus(base, from)
    const to = (r: Either.Either<Mandate.Mandate, Mandate.TransitionRefusal>) =>
      Either.map(r, (x) => x.status)
    expect(to(Mandate.approve(m, customer, later))).toEqual(
      from === "INITIATED" ? Either.right("ACTIVE") : Either.left("not-pending")
    )
    expect(to(Mandate.decline(m, later))).toEqual(
      from === "INITIATED" ? Either.right("DECLINED") : Either.left("not-pending")
    )
    expect(to(Mandate.revoke(m, "MERCHANT", later))).toEqual(
      from === "ACTIVE" || from === "SUSPENDED" ? Either.right("REVOKED") : Either.left("not-revocable")
    )
    expect(to(Mandate.suspend(m))).toEqual(
      from === "ACTIVE" ? Either.right("SUSPENDED") : Either.left("not-active")
    )
  })

  it("approval binds the customer and stamps the time; revocation records who", () => {
    const approved = Either.getOrThrow(Mandate.approve(initiated(), customer, later))
    expect(approved.customerId).toBe(customer)
    expect(approved.approvedAt).toEqual(later)
    const revoked = Either.getOrThrow(Mandate.revoke(approved, "CUSTOMER", later))
    expect([revoked.revokedBy, revoked.revokedAt]).toEqual(["CUSTOMER", later])
  })

  it("the approval link lapses at exactly 24 hours", () => {
    const m = initiated()
    const edge = DateTime.add(now, { hours: 24 })
    expect(Either.isRight(Mandate.approve(m, customer, DateTime.add(edge, { millis: -1 })))).toBe(true)
    expect(Mandate.approve(m, customer, edge)).toEqual(Either.left("setup-expired"))
    expect(Mandate.decline(m, edge)).toEqual(Either.left("setup-expired"))
  })

  it("expiry: a lapsed link, or a lifetime run out while ACTIVE or SUSPENDED", () => {
    const link = initiated()
    expect(Mandate.isDueToExpire(link, DateTime.add(now, { hours: 24, millis: -1 }))).toBe(false)
    expect(Mandate.expire(link, DateTime.add(now, { hours: 24 }))).toMatchObject({ status: "EXPIRED" })
    const end = base.expiresAt
    for (const s of ["ACTIVE", "SUSPENDED"] as const) {
      expect(Mandate.isDueToExpire(withStatus(base, s), DateTime.add(end, { millis: -1 }))).toBe(false)
      const expired = Mandate.expire(withStatus(base, s), end)
      expect([expired.status, expired.expiredAt]).toEqual(["EXPIRED", end])
    }
    const notDue = withStatus(base, "ACTIVE")
    expect(Mandate.expire(notDue, now)).toBe(notDue)
  })

  it("terminal states stay terminal under every transition, at any time", () => {
    fc.assert(
      fc.property(anyMandate, fc.constantFrom(...Mandate.terminal), instant, (m0, terminal, at) => {
        const m = withStatus(m0, terminal)
        expect(Mandate.isTerminal(terminal)).toBe(true)
        expect(Either.isLeft(Mandate.approve(m, customer, at))).toBe(true)
        expect(Either.isLeft(Mandate.decline(m, at))).toBe(true)
        expect(Either.isLeft(Mandate.revoke(m, "SERVICE", at))).toBe(true)
        expect(Either.isLeft(Mandate.suspend(m))).toBe(true)
        expect(Mandate.expire(m, at)).toBe(m)
        expect(Mandate.isDueToExpire(m, at)).toBe(false)
      })
    )
  })

  it("only DECLINED, REVOKED and EXPIRED are terminal", () => {
    expect(statuses.filter(Mandate.isTerminal)).toEqual(["DECLINED", "REVOKED", "EXPIRED"])
  })
})

describe("authorizeCharge", () => {
  const m = active({ perChargeCap: 10_000, periodCap: 15_000, period: "MONTH" })

  it("refuses in the spec's order", () => {
    const after = DateTime.add(m.expiresAt, { millis: 1 })
    expect(Mandate.authorizeCharge(m, 1_000, m.expiresAt, "UTC")).toEqual(Either.left("MANDATE_EXPIRED"))
    expect(Mandate.authorizeCharge(withStatus(m, "SUSPENDED"), 1_000, after, "UTC")).toEqual(
      Either.left("MANDATE_EXPIRED")
    )
    expect(Mandate.authorizeCharge(withStatus(m, "EXPIRED"), 1_000, now, "UTC")).toEqual(
      Either.left("MANDATE_EXPIRED")
    )
    for (const s of ["INITIATED", "SUSPENDED", "REVOKED", "DECLINED"] as const)
      expect(Mandate.authorizeCharge(withStatus(m, s), 1_000, now, "UTC")).toEqual(
        Either.left("MANDATE_INACTIVE")
      )
    for (const amount of [99, 150.5, 0, -1, Number.NaN])
      expect(Mandate.authorizeCharge(m, amount, now, "UTC")).toEqual(
        Either.left("MANDATE_CHARGE_AMOUNT_INVALID")
      )
    expect(Mandate.authorizeCharge(m, 10_001, now, "UTC")).toEqual(Either.left("PER_CHARGE_CAP_EXCEEDED"))
    const used = { ...m, periodKey: "2026-03", periodCharged: 10_000 }
    expect(Mandate.authorizeCharge(used, 5_001, now, "UTC")).toEqual(Either.left("PERIOD_CAP_EXCEEDED"))
    expect(Mandate.authorizeCharge(used, 5_000, now, "UTC")).toEqual(
      Either.right({ periodKey: "2026-03", periodCharged: 15_000 })
    )
  })

  it("a mandate without a period reports the month and 0, and recordCharge keeps null and 0", () => {
    const open = active({ perChargeCap: 10_000 })
    // 10:00Z on 31 March is midnight, 1 April, in Kiritimati.
    const auth = Either.getOrThrow(Mandate.authorizeCharge(open, 10_000, now, "Pacific/Kiritimati"))
    expect(auth).toEqual({ periodKey: "2026-04", periodCharged: 0 })
    expect(Mandate.recordCharge(open, auth)).toBe(open)
  })

  /**
   * Two-sided: the decision is exactly the first charge refusal whose condition holds, the conditions
   * written out here (not with the module's helpers), and an authorization when none does.
   */
  it("refuses with exactly the first charge refusal that applies, and authorizes otherwise", () => {
    const amounts = fc.oneof(
      fc.integer({ min: -100, max: 600_000 }),
      fc.integer({ min: 0, max: 600_000 }).map((n) => n + 0.5),
      fc.constantFrom(99, 100, 101, Number.NaN, Number.POSITIVE_INFINITY)
    )
    // Around the expiry, and in the months the generated periodKeys name, so every branch is reached.
    const moments = fc.oneof(
      instant,
      fc.integer({ min: -2 * day, max: 400 * day }).map((ms) => plusMs(now, ms))
    )
    fc.assert(
      fc.property(anyMandate, amounts, moments, zone, (m, amount, at, z) => {
        const month = monthContaining(at, z)
        const already = m.periodKey === month ? m.periodCharged : 0
        const live = m.status === "ACTIVE" || m.status === "SUSPENDED"
        const expected =
          m.status === "EXPIRED" || (live && !DateTime.lessThan(at, m.expiresAt))
            ? Either.left("MANDATE_EXPIRED")
            : m.status !== "ACTIVE"
              ? Either.left("MANDATE_INACTIVE")
              : !Number.isSafeInteger(amount) || amount < 100
                ? Either.left("MANDATE_CHARGE_AMOUNT_INVALID")
                : amount > m.perChargeCap
                  ? Either.left("PER_CHARGE_CAP_EXCEEDED")
                  : m.periodCap !== null && already + amount > m.periodCap
                    ? Either.left("PERIOD_CAP_EXCEEDED")
                    : Either.right({
                        periodKey: month,
                        periodCharged: m.periodCap === null ? 0 : already + amount
                      })
        expect(Mandate.authorizeCharge(m, amount, at, z)).toEqual(expected)
      }),
      { numRuns: 2_000 }
    )
  })

  it("caps are never exceeded over any sequence of charges and clock moves", () => {
    const step = fc.oneof(
      {
        weight: 3,
        arbitrary: fc.integer({ min: 50, max: 60_000 }).map((amount) => ({ _tag: "Charge" as const, amount }))
      },
      {
        weight: 1,
        arbitrary: fc.integer({ min: 1, max: 40 * day }).map((ms) => ({ _tag: "Advance" as const, ms }))
      }
    )
    fc.assert(
      fc.property(
        fc.integer({ min: 100, max: 50_000 }).chain((perChargeCap) =>
          fc.record({
            perChargeCap: fc.constant(perChargeCap),
            periodCap: fc.option(fc.integer({ min: perChargeCap, max: perChargeCap * 10 }), { nil: null })
          })
        ),
        instant,
        zone,
        fc.array(step, { maxLength: 60 }),
        (caps, start, z, steps) => {
          let m = active({ ...caps, period: caps.periodCap === null ? null : "MONTH" }, start)
          let at = start
          const perMonth = new Map<string, number>()
          for (const s of steps) {
            if (s._tag === "Advance") {
              at = plusMs(at, s.ms)
              continue
            }
            const decision = Mandate.authorizeCharge(m, s.amount, at, z)
            if (Either.isLeft(decision)) continue
            const month = monthContaining(at, z)
            const total = (perMonth.get(month) ?? 0) + s.amount
            perMonth.set(month, total)
            expect(s.amount).toBeLessThanOrEqual(caps.perChargeCap)
            expect(decision.right.periodKey).toBe(month)
            if (caps.periodCap !== null) {
              expect(total).toBeLessThanOrEqual(caps.periodCap)
              expect(decision.right.periodCharged).toBe(total)
            }
            m = Mandate.recordCharge(m, decision.right)
          }
          if (caps.periodCap === null) expect([m.periodKey, m.periodCharged]).toEqual([null, 0])
        }
      ),
      { numRuns: 300 }
    )
  })

  it("the period rolls exactly at the payer's month boundary, in the payer's zone", () => {
    fc.assert(
      fc.property(instant, zone, (t, z) => {
        const boundary = nextMonthStart(t, z)
        const before = plusMs(boundary, -1)
        const month = Calendar.monthKey(before, z)
        expect(month).toBe(monthContaining(before, z))
        expect(Calendar.monthKey(boundary, z)).toBe(monthContaining(boundary, z))
        expect(Calendar.monthKey(boundary, z)).not.toBe(month)
        // A mandate whose period cap is used up in `month`: refused a millisecond before, fresh at the boundary.
        const full = {
          ...active({ perChargeCap: 1_000, periodCap: 1_000, period: "MONTH" }, plusMs(t, -day)),
          periodKey: month,
          periodCharged: 1_000
        }
        expect(Mandate.authorizeCharge(full, 100, before, z)).toEqual(Either.left("PERIOD_CAP_EXCEEDED"))
        expect(Mandate.authorizeCharge(full, 100, boundary, z)).toEqual(
          Either.right({ periodKey: Calendar.monthKey(boundary, z), periodCharged: 100 })
        )
      })
    )
  })

  it("around a UTC month end, east and west of UTC disagree on the month", () => {
    const t = DateTime.unsafeMake("2026-03-31T12:00:00Z")
    const m = {
      ...active({ perChargeCap: 1_000, periodCap: 1_000, period: "MONTH" }),
      periodKey: "2026-03",
      periodCharged: 1_000
    }
    expect(Mandate.authorizeCharge(m, 500, t, "Pacific/Kiritimati")).toEqual(
      Either.right({ periodKey: "2026-04", periodCharged: 500 })
    )
    expect(Mandate.authorizeCharge(m, 500, t, "Pacific/Pago_Pago")).toEqual(
      Either.left("PERIOD_CAP_EXCEEDED")
    )
  })
})

describe("what mandate refusals say, and recording a charge", () => {
  it("names each cross-field problem of the terms", () => {
    expect(
      Mandate.validateTerms(terms({ perChargeCap: 5_000, periodCap: 4_000, period: null }), now)
    ).toEqual([
      { field: "periodCap", message: "must be at least the per-charge cap" },
      { field: "period", message: "is required with a period cap" }
    ])
    expect(Mandate.validateTerms(terms({ expiresAt: now }), now)).toEqual([
      { field: "expiresAt", message: "must be in the future" }
    ])
    expect(Mandate.validateTerms(terms({ expiresAt: DateTime.add(now, { days: 366 }) }), now)).toEqual([
      { field: "expiresAt", message: `must be at most ${Mandate.MaxLifetimeDays} days away` }
    ])
    expect(
      Fields.problems(Schema.Struct({ amount: Mandate.ChargeAmount }))({ amount: 10.5 }).map((p) => p.message)
    ).toEqual(["must be a whole number of laari"])
  })

  it("a charge moves a period mandate's running total, and leaves the rest of it as it was", () => {
    const m = active({ periodCap: 100_000, period: "MONTH" })
    const next = Mandate.recordCharge(m, { periodKey: "2026-03", periodCharged: 1_500 })
    expect(next).toEqual({ ...m, periodKey: "2026-03", periodCharged: 1_500 })
    const plain = active({ periodCap: null, period: null })
    expect(Mandate.recordCharge(plain, { periodKey: "2026-03", periodCharged: 0 })).toBe(plain)
  })

  it("a charge refused after it counted (a pending one) no longer counts: in its own period only, never below 0", () =>
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 100_000 }),
        fc.integer({ min: 1, max: 100_000 }),
        fc.boolean(),
        (charged, amount, samePeriod) => {
          const m = {
            ...active({ periodCap: 100_000, period: "MONTH" }),
            periodKey: "2026-03",
            periodCharged: charged
          }
          const released = Mandate.releaseCharge(m, samePeriod ? "2026-03" : "2026-02", amount)
          expect(released).toEqual(samePeriod ? { ...m, periodCharged: Math.max(0, charged - amount) } : m)
          const plain = active({ periodCap: null, period: null })
          expect(Mandate.releaseCharge(plain, plain.periodKey ?? "2026-03", amount)).toBe(plain)
        }
      )
    ))
})
