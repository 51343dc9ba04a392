import { describe, expect, it } from "@effect/vitest"
import { type Ids, Money, Movement } from "@laari/core"
import { DateTime, Duration } from "effect"
import * as fc from "fast-check"

const start = DateTime.unsafeMake("2026-12-02T08:00:00Z")

const movement = (createdAt = start): Movement.Movement =>
  Movement.pending(
    {
      id: "0b9f3c2e-4a1d-4c7e-9f21-5d6a7b8c9d0e",
      merchantId: "m" as Ids.MerchantId,
      environment: "live",
      kind: "payment",
      cause: "mandate-charge",
      holdKey: null,
      causeId: "c",
      customerId: "p" as Ids.CustomerId,
      from: "w-payer",
      to: "w-merchant",
      feeTo: "laari-fees",
      amount: Money.Laari(10_000),
      fee: Money.Laari(100),
      memo: "memo",
      detail: {}
    },
    createdAt
  )

const cancelAfter = Duration.seconds(60)
const settling: ReadonlyArray<Movement.Settling> = [
  { _tag: "posted", postedAt: start },
  { _tag: "refused", reason: "insufficient-balance" },
  { _tag: "cancelled" }
]

describe("Movement", () => {
  it("a known answer settles it, whatever its age", () =>
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10_000 }), fc.constantFrom(...settling), (seconds, answer) => {
        const now = DateTime.add(start, { seconds })
        expect(Movement.nextStep(movement(), answer, now, cancelAfter)).toEqual({ _tag: "settle", answer })
      })
    ))

  it("no answer: looked at again while young, cancelled once as old as the cancel time, never guessed", () =>
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10_000 }), (seconds) => {
        const now = DateTime.add(start, { seconds })
        const step = Movement.nextStep(movement(), Movement.unknown("timeout"), now, cancelAfter)
        expect(step._tag).toBe(seconds >= 60 ? "cancel" : "later")
      })
    ))

  it("never taken by the core: sent again while young, cancelled once old", () =>
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10_000 }), (seconds) => {
        const now = DateTime.add(start, { seconds })
        const step = Movement.nextStep(movement(), { _tag: "not-taken" }, now, cancelAfter)
        expect(step._tag).toBe(seconds >= 60 ? "cancel" : "resend")
      })
    ))

  it("looks again within at most 15 s, sooner at first: every movement is looked at within that of the core answering", () =>
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1_000 }), (checks) => {
        const wait = Duration.toSeconds(Movement.checkInterval(checks))
        expect(wait).toBeGreaterThanOrEqual(1)
        expect(wait).toBeLessThanOrEqual(15)
        if (checks < 3) expect(wait).toBeLessThan(15)
      })
    ))

  it("settling takes it out of the resolver's way; a refusal keeps its reason, a cancel none", () => {
    const m = movement()
    const now = DateTime.add(start, { seconds: 5 })
    const posted = Movement.settle(m, { _tag: "posted", postedAt: now }, "answer", now)
    expect(posted).toMatchObject({ status: "posted", nextCheckAt: null, postedAt: now, settledBy: "answer" })
    const refused = Movement.settle(m, { _tag: "refused", reason: "wallet-limit" }, "status", now)
    expect(refused).toMatchObject({ status: "refused", reason: "wallet-limit", nextCheckAt: null })
    expect(Movement.refusalOf({ _tag: "refused", reason: "wallet-limit" })).toBe("wallet-limit")
    expect(Movement.refusalOf({ _tag: "cancelled" })).toBe("executor-error")
    expect(Movement.refusalOf({ _tag: "posted", postedAt: null })).toBeUndefined()
    const later = Movement.postpone(m, now)
    expect(later.checks).toBe(1)
    expect(DateTime.greaterThan(later.nextCheckAt!, now)).toBe(true)
  })
})

describe("Movement answers and schedule", () => {
  it("answers carry their tag and what they say", () => {
    expect(Movement.posted(start)).toEqual({ _tag: "posted", postedAt: start })
    expect(Movement.refused("wallet-frozen")).toEqual({ _tag: "refused", reason: "wallet-frozen" })
    expect(Movement.unknown("timeout")).toEqual({ _tag: "unknown", cause: "timeout" })
    expect(Movement.cancelled).toEqual({ _tag: "cancelled" })
  })

  it("a new movement is pending, with nothing settled, first looked at 3 s after it was made", () => {
    expect(movement()).toMatchObject({
      status: "pending",
      reason: null,
      createdAt: start,
      nextCheckAt: DateTime.add(start, { seconds: 3 }),
      checks: 0,
      settledAt: null,
      settledBy: null,
      postedAt: null
    })
  })

  it("waits 1, 2, 4, 8 s between looks, then 15 s; a count below 0 waits 1 s", () => {
    expect([-3, 0, 1, 2, 3, 4, 5, 40].map((n) => Duration.toSeconds(Movement.checkInterval(n)))).toEqual([
      1, 1, 2, 4, 8, 15, 15, 15
    ])
  })

  it("postponing counts the look and waits the next interval from now", () => {
    const now = DateTime.add(start, { seconds: 5 })
    const once = Movement.postpone(movement(), now)
    expect(once.checks).toBe(1)
    expect(once.nextCheckAt).toEqual(DateTime.add(now, { seconds: 2 }))
    const twice = Movement.postpone(once, now)
    expect(twice.checks).toBe(2)
    expect(twice.nextCheckAt).toEqual(DateTime.add(now, { seconds: 4 }))
  })

  it("a posting keeps no reason and a refusal no posting time", () => {
    const now = DateTime.add(start, { seconds: 5 })
    expect(Movement.settle(movement(), { _tag: "posted", postedAt: now }, "answer", now)).toMatchObject({
      status: "posted",
      reason: null,
      postedAt: now,
      settledAt: now
    })
    expect(
      Movement.settle(movement(), { _tag: "refused", reason: "wallet-limit" }, "status", now)
    ).toMatchObject({
      status: "refused",
      reason: "wallet-limit",
      postedAt: null,
      settledBy: "status"
    })
    expect(Movement.settle(movement(), { _tag: "cancelled" }, "cancel", now)).toMatchObject({
      status: "cancelled",
      reason: null,
      postedAt: null
    })
  })

  it("a refusal without a reason is the executor's error", () => {
    expect(Movement.refusalOf({ _tag: "refused", reason: null })).toBe("executor-error")
  })
})

describe("Movement.balanceSource", () => {
  const of = (cause: Movement.Cause, causeId: string, detail: unknown = {}) =>
    Movement.balanceSource({ cause, causeId, detail } as Movement.Movement)

  it("names each cause's type and the record that caused it", () => {
    expect(of("mandate-charge", "ch")).toEqual({ type: "charge", sourceId: "ch" })
    expect(of("qr-payment", "qp")).toEqual({ type: "qr_payment", sourceId: "qp" })
    expect(of("invoice", "inv:3")).toEqual({ type: "invoice", sourceId: "inv" })
    expect(of("refund", "re")).toEqual({ type: "refund", sourceId: "re" })
  })

  it("a checkout names its session, else its cause id", () => {
    expect(of("checkout", "attempt", { sessionId: "cs" })).toEqual({
      type: "checkout_payment",
      sourceId: "cs"
    })
    expect(of("checkout", "attempt", { sessionId: 7 })).toEqual({
      type: "checkout_payment",
      sourceId: "attempt"
    })
    expect(of("checkout", "attempt", null)).toEqual({ type: "checkout_payment", sourceId: "attempt" })
    expect(of("checkout", "attempt", {})).toEqual({ type: "checkout_payment", sourceId: "attempt" })
  })
})
