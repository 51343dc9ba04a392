import { describe, expect, it } from "@effect/vitest"
import { DateTime, Either } from "effect"
import * as fc from "fast-check"
import * as QrCode from "../src/qr/QrCode.js"
import type { MerchantId } from "../src/kernel/Ids.js"

const now = DateTime.unsafeMake("2026-03-31T10:00:00Z")
const request = (overrides: Partial<QrCode.Request> = {}): QrCode.Request => ({
  outletId: 1,
  type: "STATIC",
  amount: null,
  expiresInMinutes: null,
  title: null,
  description: null,
  reference: null,
  ...overrides
})
const code = (overrides: Partial<QrCode.Request> = {}) =>
  QrCode.make(
    {
      id: "c",
      merchantId: "00000000-0000-4000-8000-000000000001" as MerchantId,
      environment: "test",
      request: request(overrides),
      outletName: "Main",
      qrid: "LQ0000000000000000000000",
      payload: "PAYLOAD"
    },
    now
  )
const fields = (r: QrCode.Request) => QrCode.validate(r).map((p) => p.field)

describe("QrCode.validate", () => {
  it("requires an amount of 100 or more for a dynamic code and refuses one for a static code", () => {
    expect(fields(request({ type: "DYNAMIC" }))).toEqual(["amount"])
    expect(fields(request({ type: "DYNAMIC", amount: 99 }))).toEqual(["amount"])
    expect(fields(request({ type: "DYNAMIC", amount: 100.5 }))).toEqual(["amount"])
    expect(fields(request({ type: "DYNAMIC", amount: 100 }))).toEqual([])
    expect(fields(request({ amount: 1000 }))).toEqual(["amount"])
  })

  it("allows expires_in_minutes 1 to 15 on dynamic codes only", () => {
    for (const m of [1, 7, 15])
      expect(fields(request({ type: "DYNAMIC", amount: 500, expiresInMinutes: m }))).toEqual([])
    for (const m of [0, 16, 2.5, -1])
      expect(fields(request({ type: "DYNAMIC", amount: 500, expiresInMinutes: m }))).toEqual([
        "expiresInMinutes"
      ])
    expect(fields(request({ expiresInMinutes: 5 }))).toEqual(["expiresInMinutes"])
  })

  it("limits title, description and reference to 255 characters", () => {
    const long = "x".repeat(256)
    expect(fields(request({ title: long, description: long, reference: long }))).toEqual([
      "title",
      "description",
      "reference"
    ])
    expect(fields(request({ title: "x".repeat(255) }))).toEqual([])
  })
})

describe("QrCode.make", () => {
  it("defaults the title to the outlet, the reference to the qrid, and a dynamic expiry to 15 minutes", () => {
    const dynamic = code({ type: "DYNAMIC", amount: 500 })
    expect(dynamic).toMatchObject({ title: "Main", reference: "LQ0000000000000000000000", status: "ACTIVE" })
    expect(DateTime.distance(now, dynamic.expiresAt!)).toBe(15 * 60_000)
    expect(code().expiresAt).toBeNull()
    expect(code().amount).toBeNull()
  })
})

describe("QrCode.authorizePayment", () => {
  const later = (ms: number) => DateTime.add(now, { millis: ms })

  it("charges a dynamic code exactly its amount, once, before expiresAt", () => {
    const c = code({ type: "DYNAMIC", amount: 12_550, expiresInMinutes: 1 })
    expect(QrCode.authorizePayment(c, "PAYLOAD", null, now, false)).toEqual(Either.right(12_550))
    expect(QrCode.authorizePayment(c, "PAYLOAD", 12_550, later(59_999), false)).toEqual(Either.right(12_550))
    expect(QrCode.authorizePayment(c, "PAYLOAD", 12_000, now, false)).toEqual(Either.left("amount-mismatch"))
    expect(QrCode.authorizePayment(c, "PAYLOAD", null, later(60_000), false)).toEqual(Either.left("expired"))
    expect(QrCode.authorizePayment(c, "PAYLOAD", null, now, true)).toEqual(Either.left("already-paid"))
  })

  it("charges a static code the typed amount of at least 100, any number of times", () => {
    const c = code()
    expect(QrCode.authorizePayment(c, "PAYLOAD", null, now, true)).toEqual(Either.left("amount-required"))
    expect(QrCode.authorizePayment(c, "PAYLOAD", 99, now, true)).toEqual(Either.left("amount-required"))
    expect(QrCode.authorizePayment(c, "PAYLOAD", 100, later(10 ** 12), true)).toEqual(Either.right(100))
  })

  it("refuses a payload other than the one issued, and an inactive code", () => {
    const c = code()
    expect(QrCode.authorizePayment(c, "PAYLOAD ", 500, now, false)).toEqual(Either.left("payload-mismatch"))
    const off = Either.getOrThrow(QrCode.deactivate(c, now))
    expect(QrCode.authorizePayment(off, "PAYLOAD", 500, now, false)).toEqual(Either.left("inactive"))
    expect(QrCode.deactivate(off, now)).toEqual(Either.left("already-inactive"))
  })

  it("never authorizes a dynamic code at or after expiry, whatever was typed", () => {
    const c = code({ type: "DYNAMIC", amount: 1000, expiresInMinutes: 15 })
    fc.assert(
      fc.property(fc.integer({ min: 15 * 60_000, max: 10 ** 10 }), fc.option(fc.integer()), (ms, typed) =>
        Either.isLeft(QrCode.authorizePayment(c, "PAYLOAD", typed, later(ms), false))
      )
    )
  })
})
