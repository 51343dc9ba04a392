/**
 * The exact words of refusals a person reads: checkout session problems (field and message, every one
 * at once) and the approval caps' messages with their waits. A changed word or a lost problem fails.
 */
import { describe, expect, it } from "@effect/vitest"
import { DateTime, Either, Schema } from "effect"
import * as Approval from "../src/approvals/Approval.js"
import * as CheckoutSession from "../src/billing/CheckoutSession.js"
import * as Fields from "../src/kernel/Fields.js"
import * as Money from "../src/kernel/Money.js"
import * as QrCode from "../src/qr/QrCode.js"
import type { ChallengeId, CustomerId } from "../src/kernel/Ids.js"

const request = (r: Partial<CheckoutSession.Request> = {}): CheckoutSession.Request => ({
  mode: null,
  reference: "order-1",
  title: "Order 1",
  description: null,
  returnUrl: null,
  amount: 1_000,
  priceData: null,
  ...r
})

const price = (p: Partial<CheckoutSession.PriceDataRequest> = {}): CheckoutSession.PriceDataRequest => ({
  name: "Gold",
  amount: 25_000,
  interval: "MONTH",
  intervalCount: null,
  ...p
})

const problems = (r: CheckoutSession.Request) =>
  Either.match(CheckoutSession.validate(r), { onLeft: (list) => list, onRight: () => [] })

describe("CheckoutSession.validate: what each problem says", () => {
  it("requires a reference and a title, and names a bad mode", () => {
    expect(problems(request({ reference: null, title: null }))).toEqual([
      { field: "reference", message: "is required" },
      { field: "title", message: "is required" }
    ])
    expect(problems(request({ mode: "RENTAL" }))).toEqual([
      { field: "mode", message: "must be PAYMENT or SUBSCRIPTION" }
    ])
  })

  it("a payment needs an amount and takes no price", () => {
    expect(problems(request({ amount: null }))).toEqual([{ field: "amount", message: "is required" }])
    expect(problems(request({ priceData: price() }))).toEqual([
      { field: "priceData", message: "is only for SUBSCRIPTION mode" }
    ])
  })

  it("a subscription needs a whole price, within one week to one year, agreeing with any amount", () => {
    const sub = (r: Partial<CheckoutSession.Request>) =>
      problems(request({ mode: "SUBSCRIPTION", amount: null, ...r }))
    expect(sub({ priceData: null })).toEqual([
      { field: "priceData", message: "is required in SUBSCRIPTION mode" }
    ])
    expect(sub({ priceData: price({ name: null, amount: null, interval: null }) })).toEqual([
      { field: "priceData.name", message: "is required" },
      { field: "priceData.amount", message: "is required" },
      { field: "priceData.interval", message: "is required" }
    ])
    expect(sub({ priceData: price({ interval: "DAY" }) })).toEqual([
      { field: "priceData.interval", message: "must be WEEK or MONTH" }
    ])
    expect(sub({ priceData: price({ intervalCount: 13 }) })).toEqual([
      {
        field: "priceData.intervalCount",
        message: "must be from 1 to 12 for MONTH: a span of one week to one year"
      }
    ])
    expect(sub({ priceData: price({ interval: "WEEK", intervalCount: 53 }) })).toEqual([
      { field: "priceData.intervalCount", message: "must be a whole number from 1 to 52" }
    ])
    expect(sub({ priceData: price({ interval: "WEEK", intervalCount: 52 }) })).toEqual([])
    expect(sub({ amount: 20_000, priceData: price() })).toEqual([
      { field: "amount", message: "must equal priceData.amount in SUBSCRIPTION mode" }
    ])
    // The same amount twice is fine.
    expect(sub({ amount: 25_000, priceData: price() })).toEqual([])
  })

  it("a valid subscription gets its price, count defaulting to 1; any problem leaves no terms", () => {
    const ok = CheckoutSession.validate(request({ mode: "SUBSCRIPTION", amount: null, priceData: price() }))
    expect(Either.map(ok, (t) => t.price)).toEqual(
      Either.right({ name: "Gold", amount: 25_000, interval: "MONTH", intervalCount: 1 })
    )
    expect(
      Either.isLeft(
        CheckoutSession.validate(request({ mode: "SUBSCRIPTION", title: null, priceData: price() }))
      )
    ).toBe(true)
  })
})

describe("Approval limits: what the customer reads", () => {
  const message = (limit: "codes" | "guesses", scope: "subject" | "customer", retryAfterSeconds: number) =>
    Approval.limitMessage({ limit, scope, retryAfterSeconds })

  it("names what was too many, for what, and how long to wait", () => {
    expect(message("codes", "subject", 1)).toBe(
      "Too many codes were requested for this approval; try again in 1 minute"
    )
    expect(message("guesses", "customer", 61)).toBe(
      "Too many incorrect codes were entered for this phone number; try again in 2 minutes"
    )
    expect(message("codes", "customer", 60)).toBe(
      "Too many codes were requested for this phone number; try again in 1 minute"
    )
    expect(message("guesses", "subject", 89 * 60)).toBe(
      "Too many incorrect codes were entered for this approval; try again in 89 minutes"
    )
    expect(message("codes", "subject", 89 * 60 + 1)).toBe(
      "Too many codes were requested for this approval; try again in 2 hours"
    )
    expect(message("codes", "subject", 181 * 60)).toBe(
      "Too many codes were requested for this approval; try again in 4 hours"
    )
  })

  const t0 = DateTime.unsafeMake("2026-07-01T00:00:00Z")
  let n = 0
  const challenge = (kind: Approval.SubjectKind, subjectId: string, customerId: string, at = t0) =>
    Approval.issue({
      id: `00000000-0000-4000-8000-${String(n++).padStart(12, "0")}` as ChallengeId,
      subjectKind: kind,
      subjectId,
      customerId: customerId as CustomerId,
      environment: "live",
      codeHash: "h",
      now: at
    })
  const customer = "11111111-1111-4111-8111-111111111111" as CustomerId

  it("counts a subject's codes by its kind and id together", () => {
    const others = Array.from({ length: 5 }, () =>
      challenge("checkout", "x", "22222222-2222-4222-8222-222222222222")
    )
    const to = { subjectKind: "mandate" as const, subjectId: "x", customerId: customer }
    expect(Either.isRight(Approval.decideIssue(others, to, t0))).toBe(true)
    const same = Array.from({ length: 5 }, () =>
      challenge("mandate", "x", "22222222-2222-4222-8222-222222222222")
    )
    expect(Either.isLeft(Approval.decideIssue(same, to, t0))).toBe(true)
  })

  it("of two limits that free at the same moment, reports the approval's", () => {
    const mine = Array.from({ length: 5 }, () => challenge("mandate", "x", customer))
    const elsewhere = Array.from({ length: 5 }, (_, i) => challenge("mandate", `y${i}`, customer))
    const decided = Approval.decideIssue(
      [...mine, ...elsewhere],
      { subjectKind: "mandate", subjectId: "x", customerId: customer },
      t0
    )
    expect(decided).toEqual(Either.left({ limit: "codes", scope: "subject", retryAfterSeconds: 3600 }))
  })
})

describe("QR codes and amounts: what each refusal says", () => {
  const qr = (r: Partial<QrCode.Request>): QrCode.Request => ({
    outletId: 1,
    type: "STATIC",
    amount: null,
    expiresInMinutes: null,
    title: null,
    description: null,
    reference: null,
    ...r
  })
  const messages = <A, I>(schema: Schema.Schema<A, I>, value: unknown) =>
    Fields.problems(Schema.Struct({ v: schema }))({ v: value })

  it("names which fields each type of code takes", () => {
    expect(QrCode.validate(qr({ type: "DYNAMIC" }))).toEqual([
      { field: "amount", message: "is required for a DYNAMIC code" }
    ])
    expect(QrCode.validate(qr({ amount: 500, expiresInMinutes: 5 }))).toEqual([
      { field: "amount", message: "is not allowed for a STATIC code" },
      { field: "expiresInMinutes", message: "is only for DYNAMIC codes" }
    ])
  })

  it("says the range of an amount, an expiry and a chargeable sum", () => {
    expect(messages(QrCode.Amount, 50)).toEqual([
      { field: "v", message: "must be a whole number of laari from 100 to 100000000" }
    ])
    expect(messages(QrCode.Amount, 100.5)).toEqual([
      { field: "v", message: "must be a whole number of laari from 100 to 100000000" }
    ])
    expect(messages(QrCode.ExpiresInMinutes, 16)).toEqual([
      { field: "v", message: "must be a whole number from 1 to 15" }
    ])
    expect(messages(QrCode.ExpiresInMinutes, 1.5)).toEqual([
      { field: "v", message: "must be a whole number from 1 to 15" }
    ])
    expect(messages(Money.Chargeable, 99)).toEqual([
      { field: "v", message: "must be a whole number of laari of at least 100" }
    ])
    expect(messages(Money.Chargeable, 150.5)).toEqual([
      { field: "v", message: "must be a whole number of laari of at least 100" }
    ])
    const thrown = (() => {
      try {
        return Money.Laari(-1)
      } catch (e) {
        return e
      }
    })()
    expect(JSON.stringify(thrown)).toContain("Expected a whole, non-negative number of laari, got -1")
  })

  it("a static code needs the amount the customer typed", () => {
    const code: QrCode.QrCode = {
      id: "c",
      merchantId: "m" as QrCode.QrCode["merchantId"],
      environment: "live",
      outletId: 1,
      type: "STATIC",
      status: "ACTIVE",
      title: "Till",
      description: null,
      amount: null,
      payload: "p",
      qrid: "q",
      reference: "q",
      expiresAt: null,
      deactivatedAt: null,
      createdAt: DateTime.unsafeMake("2026-07-01T00:00:00Z")
    }
    const now = DateTime.unsafeMake("2026-07-01T01:00:00Z")
    expect(QrCode.authorizePayment(code, "p", null, now, false)).toEqual(Either.left("amount-required"))
    expect(QrCode.authorizePayment(code, "p", 99, now, false)).toEqual(Either.left("amount-required"))
    expect(QrCode.authorizePayment(code, "p", 100, now, true)).toEqual(Either.right(100))
  })
})

describe("the text rules every field shares: what each says", () => {
  const says = <A, I>(schema: Schema.Schema<A, I>, value: unknown) =>
    Fields.problems(Schema.Struct({ v: schema }))({ v: value }).map((p) => p.message)

  it("names NUL characters, unpaired surrogates, length and blankness", () => {
    expect(says(Fields.Text, "a\u0000b")).toEqual(["must not contain NUL characters"])
    expect(says(Fields.Text, "a\uD800")).toEqual([
      "must be well-formed Unicode (it contains an unpaired surrogate)"
    ])
    expect(says(Fields.Title, "x".repeat(256))).toEqual(["must be at most 255 characters"])
    expect(says(Fields.Title, "x".repeat(255))).toEqual([])
    expect(says(Fields.Title, "   ")).toEqual(["must not be empty"])
  })

  it("takes an absolute http(s) URL of at most 2,048 characters as a return URL", () => {
    expect(says(Fields.ReturnUrl, "ftp://shop.example")).toEqual(["must be an http or https URL"])
    expect(says(Fields.ReturnUrl, `https://shop.example/${"x".repeat(2048)}`)).toEqual([
      "must be at most 2048 characters"
    ])
    expect(says(Fields.ReturnUrl, "https://shop.example/back?o=1")).toEqual([])
  })

  it("a UUID says so, not Effect's name for it", () => {
    expect(says(Schema.UUID, "abc")).toEqual(["must be a UUID"])
    expect(says(Schema.UUID, "5E0B9F1A-1C2D-4E3F-8A9B-0C1D2E3F4A5B")).toEqual([])
  })
})

describe("decode errors in words: one message per field, wire names kept", () => {
  const Body = Schema.Struct({
    per_charge_cap: Schema.Number,
    period_cap: Fields.nullable(Schema.Number),
    period: Fields.nullable(Schema.Literal("MONTH")),
    events: Schema.optional(Schema.Array(Schema.Literal("a.b", "c.d", "e", "*"))),
    price_data: Fields.nullable(
      Schema.Struct({ amount: Fields.nullable(Money.Amount), interval_count: Fields.nullable(Schema.Number) })
    )
  }).annotations({ parseOptions: { onExcessProperty: "error" } })
  const says = (value: unknown) => Fields.problems(Body)(value)

  it("an unknown field names the field meant: its snake_case form or a close spelling", () => {
    expect(says({ per_charge_cap: 1, periodCap: 1 })).toEqual([
      { field: "periodCap", message: "is not a field; did you mean `period_cap`?" }
    ])
    expect(says({ per_charge_cap: 1, peroid: "MONTH" })).toEqual([
      { field: "peroid", message: "is not a field; did you mean `period`?" }
    ])
    expect(says({ per_charge_cap: 1, price_data: { intervalCount: 2 } })).toEqual([
      { field: "price_data.intervalCount", message: "is not a field; did you mean `interval_count`?" }
    ])
    expect(says({ per_charge_cap: 1, colour: "red" })).toEqual([
      {
        field: "colour",
        message: "is not a field; the fields are per_charge_cap, period_cap, period, events, price_data"
      }
    ])
  })

  it("an optional field's null and absent alternatives are not mentioned", () => {
    expect(says({ per_charge_cap: 1, price_data: { amount: 5 } })).toEqual([
      { field: "price_data.amount", message: "must be a whole number of laari from 100 to 500000" }
    ])
    expect(says({ per_charge_cap: 1, period_cap: "x" })).toEqual([
      { field: "period_cap", message: "must be a number" }
    ])
    expect(says({ per_charge_cap: 1, price_data: "x" })).toEqual([
      { field: "price_data", message: "must be an object" }
    ])
  })

  it("an enum is one line with its values, whatever the number of literals", () => {
    expect(says({ per_charge_cap: 1, period: "YEAR" })).toEqual([
      { field: "period", message: "must be MONTH" }
    ])
    expect(says({ per_charge_cap: 1, events: ["a.b", "nope"] })).toEqual([
      { field: "events.1", message: "must be one of a.b, c.d, e, *" }
    ])
  })

  it("a missing field is required; every field is reported once", () => {
    expect(says({ period: "YEAR" })).toEqual([
      { field: "per_charge_cap", message: "is required" },
      { field: "period", message: "must be MONTH" }
    ])
  })

  it("closestField suggests nothing far off", () => {
    expect(Fields.closestField("amount", ["reference", "title"])).toBeUndefined()
    expect(Fields.closestField("PerChargeCap", ["per_charge_cap"])).toBe("per_charge_cap")
    expect(Fields.closestField("per-charge-cap", ["per_charge_cap"])).toBe("per_charge_cap")
  })
})
