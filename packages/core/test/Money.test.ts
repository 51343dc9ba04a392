import { describe, expect, it } from "@effect/vitest"
import { Either, Schema } from "effect"
import fc from "fast-check"
import * as Money from "../src/Money.js"

describe("formatMvr", () => {
  it.each([
    [0, "0.00"],
    [5, "0.05"],
    [50, "0.50"],
    [100, "1.00"],
    [12_550, "125.50"],
    [500_000, "5000.00"],
    [123_456_789, "1234567.89"],
    [-5, "-0.05"],
    [-12_550, "-125.50"]
  ])("%d laari is %s", (laari, text) => {
    expect(Money.formatMvr(laari)).toBe(text)
  })

  it("always two decimals, and reads back as the same number of laari", () => {
    fc.assert(
      fc.property(fc.integer({ min: -1e12, max: 1e12 }), (n) => {
        const text = Money.formatMvr(n)
        expect(text).toMatch(/^-?\d+\.\d{2}$/)
        const [whole, cents] = text.replace("-", "").split(".")
        expect((text.startsWith("-") ? -1 : 1) * (Number(whole) * 100 + Number(cents))).toBe(n)
      })
    )
  })
})

describe("Laari", () => {
  it("accepts whole non-negative numbers only", () => {
    expect(Money.Laari(0)).toBe(0)
    expect(Money.Laari(12_550)).toBe(12_550)
    for (const bad of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53])
      expect(() => Money.Laari(bad)).toThrow()
    expect(Either.isRight(Schema.decodeUnknownEither(Money.LaariSchema)(100))).toBe(true)
    expect(Either.isLeft(Schema.decodeUnknownEither(Money.LaariSchema)(-100))).toBe(true)
    expect(Either.isLeft(Schema.decodeUnknownEither(Money.LaariSchema)(10.5))).toBe(true)
  })

  it("isChargeable: whole amounts of at least the minimum", () => {
    expect([99, 100, 101, 150.5, 0, -100, Number.NaN].map(Money.isChargeable)).toEqual([
      false,
      true,
      true,
      false,
      false,
      false,
      false
    ])
    fc.assert(
      fc.property(fc.integer({ min: -1e9, max: 1e9 }), (n) => Money.isChargeable(n) === n >= Money.MinAmount)
    )
  })
})
