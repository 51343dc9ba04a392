import { describe, expect, it } from "@effect/vitest"
import { DateTime, Either } from "effect"
import fc from "fast-check"
import * as CheckoutSession from "../src/billing/CheckoutSession.js"
import type { CustomerId, MerchantId } from "../src/kernel/Ids.js"
import * as Invoice from "../src/billing/Invoice.js"
import * as Subscription from "../src/billing/Subscription.js"
import * as Wallet from "../src/wallet/Wallet.js"

const anchor = DateTime.unsafeMake("2026-01-31T10:00:00+05:00")
const invoiceId = "9d0c3b2a-3333-4c5e-8a57-0b3fe4d0a333" as Invoice.InvoiceId

const subscription = (): Subscription.Subscription => {
  const session = CheckoutSession.open(
    {
      id: "0b6a3c8e-0d3e-4f59-9a39-5f3b8f5f0c01" as CheckoutSession.CheckoutSessionId,
      merchantId: "6f1c1f44-9a39-4c5e-8a57-0b3fe4d0a111" as MerchantId,
      environment: "live",
      terms: {
        mode: "SUBSCRIPTION",
        reference: "gym-1",
        title: "Gym",
        description: null,
        returnUrl: null,
        amount: 25_000,
        price: { name: "Gold", amount: 25_000, interval: "MONTH", intervalCount: 1 }
      }
    },
    DateTime.add(anchor, { minutes: -5 })
  )
  return Either.getOrThrow(
    Subscription.activate(session, "c7a0b1f2-1111-4c5e-8a57-0b3fe4d0a111" as CustomerId, anchor, {
      subscriptionId: "5e1b0a3c-2222-4c5e-8a57-0b3fe4d0a222" as Subscription.SubscriptionId,
      invoiceId: "1d0c3b2a-4444-4c5e-8a57-0b3fe4d0a444" as Invoice.InvoiceId,
      paymentId: "pay-0"
    })
  ).subscription
}

const sub = subscription()
/** Period 1 of the subscription opens at the end of period 0, on 28 February. */
const t0 = sub.currentPeriodEnd
const opened = () => Invoice.open(sub, 1, t0, invoiceId)
const hours = (h: number) => DateTime.add(t0, { hours: h })
const ok = <A>(e: Either.Either<A, Invoice.Refusal>): A => Either.getOrThrow(e)
const iso = (t: DateTime.Utc | null) => (t === null ? null : DateTime.formatIso(t))

describe("open", () => {
  it("is PENDING for the period's bounds and key, due at once", () => {
    const inv = opened()
    expect(inv).toMatchObject({
      subscriptionId: sub.id,
      merchantId: sub.merchantId,
      environment: "live",
      subscriptionReference: "gym-1",
      periodIndex: 1,
      periodKey: "2026-02-28",
      amount: 25_000,
      status: "PENDING",
      attemptCount: 0,
      nextRetryAt: null,
      failureReason: null,
      paymentIntentId: null,
      paidAt: null,
      createdAt: t0
    })
    expect([iso(inv.periodStart), iso(inv.periodEnd)]).toEqual([
      "2026-02-28T05:00:00.000Z",
      "2026-03-31T05:00:00.000Z"
    ])
    expect(Invoice.isOpen(inv)).toBe(true)
    expect(Invoice.isDue(inv, t0)).toBe(true)
  })
})

describe("the retry schedule", () => {
  it("attempts at t0, +12 h, +36 h and +84 h, then FAILED", () => {
    let inv = opened()
    const attempts: Array<string | null> = []
    const transferIds: Array<string> = []
    for (const at of [0, 12, 36, 84]) {
      // Not a millisecond early.
      if (at > 0) {
        const early = DateTime.add(hours(at), { millis: -1 })
        expect(Invoice.isDue(inv, early)).toBe(false)
        expect(Invoice.startAttempt(inv, early)).toEqual(Either.left("not-due"))
      }
      expect(Invoice.isDue(inv, hours(at))).toBe(true)
      inv = ok(Invoice.startAttempt(inv, hours(at)))
      expect(inv.status).toBe("CHARGING")
      expect(Invoice.isOpen(inv)).toBe(true)
      attempts.push(iso(inv.lastAttemptAt))
      transferIds.push(Invoice.transferId(inv))
      inv = ok(Invoice.fail(inv, "insufficient-balance", DateTime.add(hours(at), { seconds: 2 })))
    }
    expect(attempts).toEqual([iso(hours(0)), iso(hours(12)), iso(hours(36)), iso(hours(84))])
    expect(transferIds).toEqual([1, 2, 3, 4].map((k) => `${invoiceId}:${k}`))
    expect(inv).toMatchObject({ status: "FAILED", attemptCount: 4, nextRetryAt: null })
    expect(inv.failureReason).toBe("insufficient-balance")
    expect(Invoice.isOpen(inv)).toBe(false)
  })

  it("each retry is counted from when the previous attempt started", () => {
    const inv = ok(Invoice.startAttempt(opened(), hours(1)))
    // The miss is recorded a day later (a crash resolved late): the retry still counts from the attempt.
    const missed = ok(Invoice.fail(inv, "executor-error", hours(25)))
    expect(iso(missed.nextRetryAt)).toBe(iso(hours(13)))
    expect(Invoice.retryAt(1, t0)).toEqual(hours(12))
    expect(Invoice.retryAt(2, t0)).toEqual(hours(24))
    expect(Invoice.retryAt(3, t0)).toEqual(hours(48))
    expect(Invoice.retryAt(4, t0)).toBeNull()
    // No attempt before the first: no delay to wait.
    expect(Invoice.retryAt(0, t0)).toBeNull()
  })

  it("a success at any attempt is PAID, with the payment, and clears the last reason", () => {
    for (const misses of [0, 1, 2, 3]) {
      let inv = opened()
      // Each attempt well after the previous one's retry moment.
      for (let k = 0; k < misses; k++) {
        inv = ok(Invoice.startAttempt(inv, hours(100 * k)))
        inv = ok(Invoice.fail(inv, "wallet-frozen", hours(100 * k)))
      }
      inv = ok(Invoice.startAttempt(inv, hours(100 * misses)))
      const paid = ok(Invoice.succeed(inv, "pay-9", hours(301)))
      expect(paid).toMatchObject({
        status: "PAID",
        attemptCount: misses + 1,
        paymentIntentId: "pay-9",
        nextRetryAt: null,
        failureReason: null
      })
      expect(paid.paidAt).toEqual(hours(301))
    }
  })
})

describe("failure reasons", () => {
  it("are the wallet's refusals, with a wallet limit read as blocked by rules", () => {
    expect(Wallet.RefusalReason.literals.map(Invoice.failureReasonOf)).toEqual([
      "insufficient-balance",
      "blocked-by-rules",
      "wallet-frozen",
      "blocked-by-rules",
      "executor-error"
    ])
    const charging = ok(Invoice.startAttempt(opened(), t0))
    expect(ok(Invoice.fail(charging, "wallet-limit", t0)).failureReason).toBe("blocked-by-rules")
    for (const reason of Invoice.FailureReason.literals) expect(Invoice.failureReasonOf(reason)).toBe(reason)
  })
})

describe("transitions", () => {
  const base = opened()
  const withStatus = (status: Invoice.Status): Invoice.Invoice => ({
    ...base,
    status,
    attemptCount: status === "PENDING" ? 0 : 1
  })

  it.each(Invoice.Status.literals)("from %s", (from) => {
    const inv = withStatus(from)
    const to = (r: Either.Either<Invoice.Invoice, Invoice.Refusal>) => Either.map(r, (x) => x.status)
    expect(to(Invoice.startAttempt(inv, t0))).toEqual(
      from === "PENDING" ? Either.right("CHARGING") : Either.left("not-pending")
    )
    expect(to(Invoice.succeed(inv, "p", t0))).toEqual(
      from === "CHARGING" ? Either.right("PAID") : Either.left("not-charging")
    )
    expect(to(Invoice.fail(inv, "insufficient-balance", t0))).toEqual(
      from === "CHARGING" ? Either.right("PENDING") : Either.left("not-charging")
    )
    expect(to(Invoice.void(inv, t0))).toEqual(
      from === "PENDING" ? Either.right("VOID") : Either.left("not-pending")
    )
  })

  it("void records when, and cancels the retry", () => {
    const pending = ok(Invoice.fail(ok(Invoice.startAttempt(opened(), t0)), "insufficient-balance", t0))
    expect(pending.nextRetryAt).not.toBeNull()
    const voided = ok(Invoice.void(pending, hours(3)))
    expect(voided).toMatchObject({ status: "VOID", nextRetryAt: null, voidedAt: hours(3) })
    expect(Invoice.isDue(voided, hours(500))).toBe(false)
  })

  it("a PENDING invoice that used all four attempts cannot start a fifth", () => {
    expect(Invoice.startAttempt({ ...opened(), attemptCount: 4 }, t0)).toEqual(
      Either.left("no-attempts-left")
    )
  })

  it("terminal states stay terminal under every transition, at any time", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...Invoice.terminal),
        fc.integer({ min: 0, max: 4 }),
        fc.integer({ min: -1000, max: 1000 }),
        fc.constantFrom(...Wallet.RefusalReason.literals),
        (status, attempts, h, reason) => {
          const inv = { ...opened(), status, attemptCount: attempts }
          expect(Invoice.isTerminal(status)).toBe(true)
          expect(Invoice.isOpen(inv)).toBe(false)
          expect(Invoice.isDue(inv, hours(h))).toBe(false)
          expect(Either.isLeft(Invoice.startAttempt(inv, hours(h)))).toBe(true)
          expect(Either.isLeft(Invoice.succeed(inv, "p", hours(h)))).toBe(true)
          expect(Either.isLeft(Invoice.fail(inv, reason, hours(h)))).toBe(true)
          expect(Either.isLeft(Invoice.void(inv, hours(h)))).toBe(true)
        }
      )
    )
  })

  it("only PAID, FAILED and VOID are terminal", () => {
    expect(Invoice.Status.literals.filter(Invoice.isTerminal)).toEqual(["PAID", "FAILED", "VOID"])
  })

  it("any sequence of attempts and misses takes at most four attempts, each at or after its retry moment", () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ waitMs: fc.integer({ min: 0, max: 4 * 86_400_000 }), pay: fc.boolean() }), {
          maxLength: 12
        }),
        (steps) => {
          let inv = opened()
          let now = t0
          for (const step of steps) {
            now = DateTime.add(now, { millis: step.waitMs })
            const started = Invoice.startAttempt(inv, now)
            if (Either.isLeft(started)) {
              expect(Invoice.isDue(inv, now)).toBe(false)
              continue
            }
            if (inv.nextRetryAt !== null)
              expect(DateTime.greaterThanOrEqualTo(now, inv.nextRetryAt)).toBe(true)
            inv = step.pay
              ? ok(Invoice.succeed(started.right, "p", now))
              : ok(Invoice.fail(started.right, "insufficient-balance", now))
            expect(inv.attemptCount).toBeLessThanOrEqual(Invoice.MaxAttempts)
            if (inv.status === "PENDING") expect(inv.attemptCount).toBeLessThan(Invoice.MaxAttempts)
          }
        }
      )
    )
  })
})
