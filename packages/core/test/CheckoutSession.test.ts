import { describe, expect, it } from "@effect/vitest"
import { DateTime, Either } from "effect"
import fc from "fast-check"
import * as CheckoutSession from "../src/billing/CheckoutSession.js"
import type { CustomerId, MerchantId } from "../src/kernel/Ids.js"
import type { SubscriptionId } from "../src/billing/Subscription.js"

const DAY = 86_400_000
const now = DateTime.unsafeMake("2026-03-31T10:00:00Z")
const customer = "c7a0b1f2-1111-4c5e-8a57-0b3fe4d0a111" as CustomerId
const subscriptionId = "5e1b0a3c-2222-4c5e-8a57-0b3fe4d0a222" as SubscriptionId

const priceData = (
  overrides: Partial<CheckoutSession.PriceDataRequest> = {}
): CheckoutSession.PriceDataRequest => ({
  name: "Gold plan",
  amount: 25_000,
  interval: "MONTH",
  intervalCount: null,
  ...overrides
})

const subscriptionRequest = (overrides: Partial<CheckoutSession.Request> = {}): CheckoutSession.Request => ({
  mode: "SUBSCRIPTION",
  reference: "sub-1",
  title: "Gym membership",
  description: null,
  returnUrl: null,
  amount: null,
  priceData: priceData(),
  ...overrides
})

const paymentRequest = (overrides: Partial<CheckoutSession.Request> = {}): CheckoutSession.Request => ({
  mode: null,
  reference: "order-1",
  title: "Order 1",
  description: null,
  returnUrl: null,
  amount: 12_550,
  priceData: null,
  ...overrides
})

const fields = (r: CheckoutSession.Request) =>
  Either.match(CheckoutSession.validate(r), { onLeft: (ps) => ps.map((p) => p.field), onRight: () => [] })

const terms = (r: CheckoutSession.Request) => Either.getOrThrow(CheckoutSession.validate(r))

const opened = (r: CheckoutSession.Request = subscriptionRequest(), at = now) =>
  CheckoutSession.open(
    {
      id: "0b6a3c8e-0d3e-4f59-9a39-5f3b8f5f0c01" as CheckoutSession.CheckoutSessionId,
      merchantId: "6f1c1f44-9a39-4c5e-8a57-0b3fe4d0a111" as MerchantId,
      environment: "test",
      terms: terms(r)
    },
    at
  )

describe("validate: subscription mode", () => {
  it("accepts a valid request, at the limits too, and applies the defaults", () => {
    for (const r of [
      subscriptionRequest(),
      subscriptionRequest({ priceData: priceData({ amount: 100, interval: "WEEK", intervalCount: 1 }) }),
      subscriptionRequest({ priceData: priceData({ amount: 500_000, intervalCount: 12 }) }),
      subscriptionRequest({ priceData: priceData({ interval: "WEEK", intervalCount: 52 }) }),
      subscriptionRequest({ priceData: priceData({ name: "n".repeat(120) }) }),
      subscriptionRequest({
        reference: "r".repeat(255),
        title: "t".repeat(255),
        description: "d".repeat(255)
      }),
      subscriptionRequest({ returnUrl: "https://shop.example/return?x=1" }),
      subscriptionRequest({ returnUrl: "http://localhost:3000" }),
      subscriptionRequest({ amount: 25_000 })
    ])
      expect(fields(r)).toEqual([])
    expect(terms(subscriptionRequest())).toEqual({
      mode: "SUBSCRIPTION",
      reference: "sub-1",
      title: "Gym membership",
      description: null,
      returnUrl: null,
      amount: 25_000,
      price: { name: "Gold plan", amount: 25_000, interval: "MONTH", intervalCount: 1 }
    })
  })

  it.each<[string, Partial<CheckoutSession.Request>, string]>([
    ["unknown mode", { mode: "subscription" }, "mode"],
    ["no priceData", { priceData: null }, "priceData"],
    ["no plan name", { priceData: priceData({ name: null }) }, "priceData.name"],
    ["blank plan name", { priceData: priceData({ name: " " }) }, "priceData.name"],
    ["plan name of 121", { priceData: priceData({ name: "n".repeat(121) }) }, "priceData.name"],
    ["no price amount", { priceData: priceData({ amount: null }) }, "priceData.amount"],
    ["price below 100", { priceData: priceData({ amount: 99 }) }, "priceData.amount"],
    ["price above 500000", { priceData: priceData({ amount: 500_001 }) }, "priceData.amount"],
    ["fractional price", { priceData: priceData({ amount: 150.5 }) }, "priceData.amount"],
    ["no interval", { priceData: priceData({ interval: null }) }, "priceData.interval"],
    ["DAY interval", { priceData: priceData({ interval: "DAY" }) }, "priceData.interval"],
    ["lower-case interval", { priceData: priceData({ interval: "month" }) }, "priceData.interval"],
    ["MONTH x 13", { priceData: priceData({ intervalCount: 13 }) }, "priceData.intervalCount"],
    ["MONTH x 0", { priceData: priceData({ intervalCount: 0 }) }, "priceData.intervalCount"],
    [
      "WEEK x 53",
      { priceData: priceData({ interval: "WEEK", intervalCount: 53 }) },
      "priceData.intervalCount"
    ],
    ["fractional count", { priceData: priceData({ intervalCount: 1.5 }) }, "priceData.intervalCount"],
    ["no title", { title: null }, "title"],
    ["empty title", { title: "" }, "title"],
    ["long title", { title: "t".repeat(256) }, "title"],
    ["no reference", { reference: null }, "reference"],
    ["blank reference", { reference: "  " }, "reference"],
    ["long reference", { reference: "r".repeat(256) }, "reference"],
    ["long description", { description: "d".repeat(256) }, "description"],
    ["non-http return URL", { returnUrl: "javascript:alert(1)" }, "returnUrl"],
    ["relative return URL", { returnUrl: "/done" }, "returnUrl"],
    ["return URL with a space", { returnUrl: "https://shop.example/a b" }, "returnUrl"],
    ["amount that differs from the price", { amount: 24_999 }, "amount"]
  ])("%s names %s", (_, patch, field) => {
    expect(fields(subscriptionRequest(patch))).toEqual([field])
  })

  it("a count that is no whole number in range is told the range, whatever is wrong with it", () => {
    for (const intervalCount of [1.5, 0, 53])
      expect(
        CheckoutSession.validate(subscriptionRequest({ priceData: priceData({ intervalCount }) }))
      ).toEqual(
        Either.left([{ field: "priceData.intervalCount", message: "must be a whole number from 1 to 52" }])
      )
  })

  it("an amount beside a price without one is not said to differ: the price's amount is what is missing", () => {
    expect(fields(subscriptionRequest({ amount: 25_000, priceData: priceData({ amount: null }) }))).toEqual([
      "priceData.amount"
    ])
  })

  it("ignores amount when it equals the price, whatever else it is", () => {
    expect(terms(subscriptionRequest({ amount: 25_000 })).amount).toBe(25_000)
  })

  it("an invalid interval still checks the count is a positive whole number", () => {
    expect(
      fields(subscriptionRequest({ priceData: priceData({ interval: "YEAR", intervalCount: 0 }) }))
    ).toEqual(["priceData.interval", "priceData.intervalCount"])
    expect(
      fields(subscriptionRequest({ priceData: priceData({ interval: "YEAR", intervalCount: 2 }) }))
    ).toEqual(["priceData.interval"])
  })

  it("reports every problem at once", () => {
    expect(
      fields({
        mode: "SUBSCRIPTION",
        reference: null,
        title: "",
        description: "d".repeat(256),
        returnUrl: "ftp://x",
        amount: 5,
        priceData: { name: null, amount: 50, interval: "WEEK", intervalCount: 60 }
      })
    ).toEqual([
      // Each field's own rule first, in the order of the fields, then the rules across fields.
      "title",
      "description",
      "returnUrl",
      "amount",
      "priceData.amount",
      "priceData.intervalCount",
      "reference",
      "priceData.name"
    ])
  })

  it("every span of WEEK x 1..52 and MONTH x 1..12 is accepted; nothing longer or shorter", () => {
    fc.assert(
      fc.property(fc.constantFrom("WEEK", "MONTH"), fc.integer({ min: -5, max: 60 }), (interval, count) => {
        const ok = count >= 1 && count <= (interval === "WEEK" ? 52 : 12)
        expect(
          fields(subscriptionRequest({ priceData: priceData({ interval, intervalCount: count }) }))
        ).toEqual(ok ? [] : ["priceData.intervalCount"])
      })
    )
  })
})

describe("validate: payment mode", () => {
  it("is the default mode and needs an amount, title and reference", () => {
    expect(terms(paymentRequest())).toEqual({
      mode: "PAYMENT",
      reference: "order-1",
      title: "Order 1",
      description: null,
      returnUrl: null,
      amount: 12_550,
      price: null
    })
    expect(terms(paymentRequest({ mode: "PAYMENT", amount: 500_000 })).mode).toBe("PAYMENT")
  })

  it.each<[string, Partial<CheckoutSession.Request>, string]>([
    ["no amount", { amount: null }, "amount"],
    ["amount below 100", { amount: 99 }, "amount"],
    ["amount above 500000", { amount: 500_001 }, "amount"],
    ["fractional amount", { amount: 100.5 }, "amount"],
    ["no title", { title: null }, "title"],
    ["no reference", { reference: null }, "reference"],
    ["priceData in a payment", { priceData: priceData() }, "priceData"]
  ])("%s names %s", (_, patch, field) => {
    expect(fields(paymentRequest(patch))).toEqual([field])
  })
})

describe("open", () => {
  it("is OPEN for 24 hours with the price frozen", () => {
    const s = opened()
    expect(s).toMatchObject({
      status: "OPEN",
      mode: "SUBSCRIPTION",
      amount: 25_000,
      price: { name: "Gold plan", amount: 25_000, interval: "MONTH", intervalCount: 1 },
      customerId: null,
      paymentId: null,
      subscriptionId: null,
      completedAt: null,
      cancelledAt: null
    })
    expect(DateTime.formatIso(s.expiresAt)).toBe("2026-04-01T10:00:00.000Z")
    expect(CheckoutSession.transferId(s)).toBe(`checkout:${s.id}`)
  })
})

describe("transitions", () => {
  const later = DateTime.add(now, { hours: 1 })
  const settle = { customerId: customer, paymentId: "pay-1", subscriptionId }
  const withStatus = (s: CheckoutSession.CheckoutSession, status: CheckoutSession.Status) => ({
    ...s,
    status
  })
  const refusalOf: Record<CheckoutSession.Status, CheckoutSession.Refusal | undefined> = {
    OPEN: undefined,
    COMPLETE: "already-complete",
    EXPIRED: "expired",
    CANCELLED: "cancelled"
  }

  it.each(CheckoutSession.Status.literals)("from %s", (from) => {
    const s = withStatus(opened(), from)
    const to = (r: Either.Either<CheckoutSession.CheckoutSession, CheckoutSession.Refusal>) =>
      Either.map(r, (x) => x.status)
    const refusal = refusalOf[from]
    expect(to(CheckoutSession.complete(s, later, settle))).toEqual(
      refusal === undefined ? Either.right("COMPLETE") : Either.left(refusal)
    )
    expect(to(CheckoutSession.cancel(s, later))).toEqual(
      refusal === undefined ? Either.right("CANCELLED") : Either.left(refusal)
    )
    expect(CheckoutSession.isTerminal(from)).toBe(from !== "OPEN")
  })

  it("completion records the payer, the payment and the subscription", () => {
    const done = Either.getOrThrow(CheckoutSession.complete(opened(), later, settle))
    expect(done).toMatchObject({
      status: "COMPLETE",
      customerId: customer,
      paymentId: "pay-1",
      subscriptionId,
      completedAt: later
    })
    const paid = Either.getOrThrow(
      CheckoutSession.complete(opened(paymentRequest()), later, { customerId: customer, paymentId: "pay-2" })
    )
    expect([paid.status, paid.subscriptionId]).toEqual(["COMPLETE", null])
  })

  it("a subscription session needs a subscription, a payment session must not have one", () => {
    expect(CheckoutSession.complete(opened(), later, { customerId: customer, paymentId: "p" })).toEqual(
      Either.left("mode-mismatch")
    )
    expect(CheckoutSession.complete(opened(paymentRequest()), later, settle)).toEqual(
      Either.left("mode-mismatch")
    )
  })

  it("expires at exactly 24 hours, marked or not", () => {
    const s = opened()
    const edge = DateTime.add(now, { hours: 24 })
    const before = DateTime.add(edge, { millis: -1 })
    expect(Either.isRight(CheckoutSession.complete(s, before, settle))).toBe(true)
    expect(CheckoutSession.complete(s, edge, settle)).toEqual(Either.left("expired"))
    expect(CheckoutSession.cancel(s, edge)).toEqual(Either.left("expired"))
    expect(CheckoutSession.isDueToExpire(s, before)).toBe(false)
    expect(CheckoutSession.expire(s, before)).toBe(s)
    expect(CheckoutSession.isDueToExpire(s, edge)).toBe(true)
    const expired = CheckoutSession.expire(s, edge)
    expect([expired.status, expired.expiredAt]).toEqual(["EXPIRED", edge])
  })

  it("a payment taken while open completes the session when it settles past the expiry, and only then", () => {
    const s = opened()
    const edge = DateTime.add(now, { hours: 24 })
    const taken = DateTime.add(edge, { millis: -1 })
    const settledAt = DateTime.add(edge, { minutes: 2 })
    const done = CheckoutSession.complete(s, settledAt, { ...settle, openAt: taken })
    expect(Either.isRight(done) && done.right.status).toBe("COMPLETE")
    expect(CheckoutSession.complete(s, settledAt, { ...settle, openAt: edge })).toEqual(
      Either.left("expired")
    )
    expect(CheckoutSession.complete(s, settledAt, settle)).toEqual(Either.left("expired"))
  })

  it("terminal states stay terminal under every transition, at any time", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...CheckoutSession.terminal),
        fc.integer({ min: -DAY, max: 3 * DAY }),
        (status, offset) => {
          const s = withStatus(opened(), status)
          const at = DateTime.unsafeMake(DateTime.toEpochMillis(now) + offset)
          expect(Either.isLeft(CheckoutSession.complete(s, at, settle))).toBe(true)
          expect(Either.isLeft(CheckoutSession.cancel(s, at))).toBe(true)
          expect(CheckoutSession.isDueToExpire(s, at)).toBe(false)
          expect(CheckoutSession.expire(s, at)).toBe(s)
        }
      )
    )
  })
})
