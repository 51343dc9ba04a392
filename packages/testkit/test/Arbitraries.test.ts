import { describe, expect, it } from "@effect/vitest"
import { Calendar, Mandate, Money } from "@laari/core"
import { DateTime } from "effect"
import fc from "fast-check"
import * as Arbitraries from "../src/Arbitraries.js"

describe("Arbitraries", () => {
  it("terms(now) always pass validateTerms at now", () => {
    fc.assert(
      fc.property(Arbitraries.instant, (now) => {
        fc.assert(
          fc.property(Arbitraries.terms(now), (terms) => {
            expect(Mandate.validateTerms(terms, now)).toEqual([])
          }),
          { numRuns: 10 }
        )
      }),
      { numRuns: 30 }
    )
  })

  it("caps are in range, and a period cap is at least the per-charge cap", () => {
    fc.assert(
      fc.property(Arbitraries.caps, ({ perChargeCap, periodCap }) => {
        expect(perChargeCap).toBeGreaterThanOrEqual(Money.MinAmount)
        expect(perChargeCap).toBeLessThanOrEqual(Money.MaxCap)
        if (periodCap !== null) expect(periodCap).toBeGreaterThanOrEqual(perChargeCap)
      })
    )
  })

  it("amounts are chargeable, invalid amounts never are", () => {
    fc.assert(fc.property(Arbitraries.amount, (n) => Money.isChargeable(n)))
    fc.assert(fc.property(Arbitraries.invalidAmount, (n) => !Money.isChargeable(n)))
  })

  it("instants fall in 2024-2030", () => {
    fc.assert(
      fc.property(Arbitraries.instant, (t) => {
        const year = DateTime.getPartUtc(t, "year")
        expect(year).toBeGreaterThanOrEqual(2024)
        expect(year).toBeLessThanOrEqual(2030)
      })
    )
  })

  it("the zones are real zones, and include the awkward ones", () => {
    for (const zone of Arbitraries.TimeZones) expect(Calendar.isTimeZone(zone)).toBe(true)
    expect(Arbitraries.TimeZones).toEqual(
      expect.arrayContaining([
        "Indian/Maldives",
        "Pacific/Kiritimati",
        "Pacific/Pago_Pago",
        "Asia/Kathmandu",
        "America/St_Johns",
        "Europe/London",
        "UTC"
      ])
    )
  })
})
