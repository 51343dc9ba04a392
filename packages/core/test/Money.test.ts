import { describe, expect, it } from "@effect/vitest"
import { Either, JSONSchema, Schema } from "effect"
import fc from "fast-check"
import * as CheckoutSession from "../src/billing/CheckoutSession.js"
import * as Fields from "../src/kernel/Fields.js"
import * as Money from "../src/kernel/Money.js"
import * as QrCode from "../src/qr/QrCode.js"

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

describe("display", () => {
  it.each([
    [0, "MVR 0.00"],
    [12_550, "MVR 125.50"],
    [100_000, "MVR 1,000.00"],
    [150_000, "MVR 1,500.00"],
    [123_456_789, "MVR 1,234,567.89"]
  ])("%d laari reads %s, thousands grouped", (laari, text) => {
    expect(Money.display(laari)).toBe(text)
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

describe("field schemas", () => {
  const accepts =
    <A, I>(schema: Schema.Schema<A, I>) =>
    (v: unknown) =>
      Either.isRight(Schema.decodeUnknownEither(schema)(v))

  it("Amount accepts whole laari from 100 to 500000 and nothing else", () => {
    const ok = accepts(Money.Amount)
    expect([100, 500_000, 12_550].map(ok)).toEqual([true, true, true])
    expect([99, 500_001, 150.5, 0, -100, Number.NaN, "1000", null].map(ok)).toEqual(Array(8).fill(false))
    fc.assert(fc.property(fc.integer({ min: -1e9, max: 1e9 }), (n) => ok(n) === (n >= 100 && n <= 500_000)))
    fc.assert(fc.property(fc.integer({ min: 100, max: 499_999 }), (n) => !ok(n + 0.5)))
    expect(Money.isAmount(500_000)).toBe(true)
    expect(Money.isAmount(500_001)).toBe(false)
  })

  it("Chargeable is Amount without the top: whole laari of at least 100", () => {
    const ok = accepts(Money.Chargeable)
    expect([100, 500_001, 10_000_000].map(ok)).toEqual([true, true, true])
    expect([99, 150.5, "100"].map(ok)).toEqual([false, false, false])
  })

  it("a refused amount reads the rule, whatever check failed", () => {
    for (const bad of [99, 150.5, "x"]) {
      const result = Schema.decodeUnknownEither(Money.Amount)(bad)
      expect(Either.isLeft(result) && result.left.message).toBe(
        "must be a whole number of laari from 100 to 500000"
      )
    }
  })

  it("publishes integer, minimum and maximum", () => {
    expect(JSONSchema.make(Money.Amount)).toMatchObject({ type: "integer", minimum: 100, maximum: 500_000 })
    expect(JSONSchema.make(Money.Chargeable)).toMatchObject({ type: "integer", minimum: 100 })
  })
})

describe("text fields", () => {
  const accepts = (schema: Schema.Schema<string>) => (v: unknown) =>
    Either.isRight(Schema.decodeUnknownEither(schema)(v))

  it.each([
    ["Reference", Fields.Reference, 255, true],
    ["Title", Fields.Title, 255, true],
    ["Description", Fields.Description, 255, false],
    ["PlanName", CheckoutSession.PlanName, 120, true]
  ] as const)(
    "%s accepts %i characters and refuses one more, a NUL or a lone surrogate (blank refused: %s)",
    (_, schema, max, required) => {
      const ok = accepts(schema)
      expect(ok("x".repeat(max))).toBe(true)
      expect(ok("")).toBe(!required)
      expect(ok("  \t")).toBe(!required)
      expect(ok("x".repeat(max + 1))).toBe(false)
      expect(ok("a\u0000b")).toBe(false)
      expect(ok("\ud800 lone")).toBe(false)
      fc.assert(
        fc.property(
          fc.string({ maxLength: max + 20 }),
          (s) => ok(s) === (s.length <= max && (!required || s.trim().length > 0))
        )
      )
      expect(JSONSchema.make(schema)).toMatchObject({
        type: "string",
        maxLength: max,
        ...(required ? { pattern: "\\S" } : {})
      })
    }
  )

  it("ReturnUrl takes an absolute http or https URL without spaces", () => {
    const ok = accepts(Fields.ReturnUrl)
    for (const url of ["https://shop.example/done", "http://a.b/c?d=e#f"]) expect(ok(url), url).toBe(true)
    for (const url of ["javascript:alert(1)", "/done", "https://shop.example/a b", "https://", "ftp://x"])
      expect(ok(url), url).toBe(false)
    expect(ok(`https://a.b/${"x".repeat(Fields.MaxUrlLength)}`)).toBe(false)
  })
})

describe("QR and interval fields", () => {
  const ok = (schema: Schema.Schema<number>) => (v: unknown) =>
    Either.isRight(Schema.decodeUnknownEither(schema)(v))

  it("ExpiresInMinutes is 1 to 15", () => {
    expect([1, 15].map(ok(QrCode.ExpiresInMinutes))).toEqual([true, true])
    expect([0, 16, 1.5].map(ok(QrCode.ExpiresInMinutes))).toEqual([false, false, false])
  })

  it("QrCode.Amount is 100 to QrCode.MaxAmount", () => {
    expect([100, QrCode.MaxAmount].map(ok(QrCode.Amount))).toEqual([true, true])
    expect([99, QrCode.MaxAmount + 1, 150.5].map(ok(QrCode.Amount))).toEqual([false, false, false])
  })

  it("IntervalCount is 1 to 52 on its own; the span per interval is CheckoutSession.validate's", () => {
    expect([1, 52].map(ok(CheckoutSession.IntervalCount))).toEqual([true, true])
    expect([0, 53, 1.5].map(ok(CheckoutSession.IntervalCount))).toEqual([false, false, false])
  })
})
