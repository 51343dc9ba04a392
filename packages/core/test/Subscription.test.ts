import { describe, expect, it } from "@effect/vitest"
import { DateTime, Either } from "effect"
import fc from "fast-check"
import * as Calendar from "../src/kernel/Calendar.js"
import * as CheckoutSession from "../src/billing/CheckoutSession.js"
import type { CustomerId, MerchantId } from "../src/kernel/Ids.js"
import * as Invoice from "../src/billing/Invoice.js"
import * as Subscription from "../src/billing/Subscription.js"

// -------------------------------------------------------------------------------------------------
// Fixtures
// -------------------------------------------------------------------------------------------------

const customer = "c7a0b1f2-1111-4c5e-8a57-0b3fe4d0a111" as CustomerId
const subscriptionId = "5e1b0a3c-2222-4c5e-8a57-0b3fe4d0a222" as Subscription.SubscriptionId
const invoiceIds = Array.from(
  { length: 10 },
  (_, k) => `9d0c3b2a-3333-4c5e-8a57-0b3fe4d0a3${String(k).padStart(2, "0")}` as Invoice.InvoiceId
)
/** Consent on 31 January 2026, 10:00 in Malé. */
const anchor = DateTime.unsafeMake("2026-01-31T10:00:00+05:00")

const session = (
  price: CheckoutSession.Price | null = { name: "Gold", amount: 25_000, interval: "MONTH", intervalCount: 1 },
  createdAt = DateTime.add(anchor, { minutes: -5 })
) =>
  CheckoutSession.open(
    {
      id: "0b6a3c8e-0d3e-4f59-9a39-5f3b8f5f0c01" as CheckoutSession.CheckoutSessionId,
      merchantId: "6f1c1f44-9a39-4c5e-8a57-0b3fe4d0a111" as MerchantId,
      environment: "live",
      terms: {
        mode: price === null ? "PAYMENT" : "SUBSCRIPTION",
        reference: "gym-1",
        title: "Gym",
        description: null,
        returnUrl: null,
        amount: price?.amount ?? 12_000,
        price
      }
    },
    createdAt
  )

const ids = { subscriptionId, invoiceId: invoiceIds[0]!, paymentId: "pay-0" }
const activation = (s = session(), at = anchor) =>
  Either.getOrThrow(Subscription.activate(s, customer, at, ids))
const active = () => activation().subscription
const invoice0 = () => activation().invoice

const ok = <A, E>(e: Either.Either<A, E>): A => Either.getOrThrow(e)
const iso = (t: DateTime.Utc | null | undefined) => (t == null ? t : Calendar.formatMaldives(t))
const plus = (t: DateTime.Utc, hours: number) => DateTime.add(t, { hours })

/** Opens period 1 at the end of period 0 and starts its first attempt. */
const renewing = () => {
  const sub = active()
  const t0 = sub.currentPeriodEnd
  const opened = ok(Subscription.openNextPeriod(sub, invoice0(), t0, invoiceIds[1]!))
  return { sub: opened.subscription, invoice: opened.invoice, t0 }
}

// -------------------------------------------------------------------------------------------------

describe("activate", () => {
  it("anchors at the settlement instant, freezes the plan and writes invoice 0 PAID", () => {
    const a = activation()
    expect(a.subscription).toMatchObject({
      id: subscriptionId,
      reference: "gym-1",
      status: "ACTIVE",
      planName: "Gold",
      amount: 25_000,
      interval: "MONTH",
      intervalCount: 1,
      checkoutSessionId: a.session.id,
      customerId: customer,
      billingCycleAnchor: anchor,
      currentPeriodIndex: 0,
      currentPeriodStart: anchor,
      cancelAtPeriodEnd: false,
      cancelledAt: null,
      cancellationInitiator: null,
      pastDueSince: null,
      metadata: null,
      createdAt: anchor
    })
    expect(iso(a.subscription.currentPeriodEnd)).toBe("2026-02-28T10:00:00+05:00")
    expect(a.subscription.nextBillingAt).toEqual(a.subscription.currentPeriodEnd)
    expect(a.invoice).toMatchObject({
      id: ids.invoiceId,
      subscriptionId,
      periodIndex: 0,
      periodKey: "2026-01-31",
      periodStart: anchor,
      periodEnd: a.subscription.currentPeriodEnd,
      amount: 25_000,
      status: "PAID",
      attemptCount: 1,
      paymentIntentId: "pay-0",
      paidAt: anchor,
      nextRetryAt: null,
      failureReason: null
    })
    expect(a.session).toMatchObject({
      status: "COMPLETE",
      customerId: customer,
      paymentId: "pay-0",
      subscriptionId,
      completedAt: anchor
    })
    expect(a.events).toEqual(["subscription.activated", "invoice.paid", "checkout.session.completed"])
  })

  it("only an open, unexpired subscription session activates", () => {
    const activate = (s: CheckoutSession.CheckoutSession, t = anchor) =>
      Either.map(Subscription.activate(s, customer, t, ids), (a) => a.subscription.status)
    expect(activate(session(null))).toEqual(Either.left("mode-mismatch"))
    // Either half of a subscription session alone is none: its mode, or its price.
    expect(activate({ ...session(), mode: "PAYMENT" })).toEqual(Either.left("mode-mismatch"))
    expect(activate({ ...session(), price: null })).toEqual(Either.left("mode-mismatch"))
    expect(activate(session(), plus(session().createdAt, 24))).toEqual(Either.left("expired"))
    expect(activate(activation().session)).toEqual(Either.left("already-complete"))
    expect(activate(ok(CheckoutSession.cancel(session(), anchor)))).toEqual(Either.left("cancelled"))
    expect(activate(CheckoutSession.expire(session(), plus(anchor, 24)))).toEqual(Either.left("expired"))
  })
})

describe("cancelNow", () => {
  it.each(["PAYER", "MERCHANT", "OPS"] as const)(
    "by %s ends ACTIVE and PAST_DUE subscriptions at once",
    (by) => {
      const t = plus(anchor, 5)
      for (const status of ["ACTIVE", "PAST_DUE"] as const) {
        const change = ok(Subscription.cancelNow({ ...active(), status, cancelAtPeriodEnd: true }, by, t))
        expect(change.subscription).toMatchObject({
          status: "CANCELLED",
          cancelledAt: t,
          cancellationInitiator: by,
          nextBillingAt: null,
          cancelAtPeriodEnd: false,
          pastDueSince: null
        })
        // The paid period is kept, never refunded.
        expect(change.subscription.currentPeriodEnd).toEqual(active().currentPeriodEnd)
        expect(change.invoice).toBeUndefined()
        expect(change.events).toEqual(["subscription.canceled"])
      }
    }
  )

  it("a cancelled subscription cannot be cancelled again", () => {
    const cancelled = ok(Subscription.cancelNow(active(), "PAYER", anchor)).subscription
    expect(Subscription.cancelNow(cancelled, "MERCHANT", anchor)).toEqual(Either.left("already-cancelled"))
  })

  it("voids an open PENDING invoice, leaves an in-flight one to be resolved, ignores a closed one", () => {
    const { sub, invoice, t0 } = renewing()
    const voided = ok(Subscription.cancelNow(sub, "MERCHANT", t0, invoice))
    expect(voided.invoice).toMatchObject({ status: "VOID", voidedAt: t0 })
    const charging = ok(Invoice.startAttempt(invoice, t0))
    expect(ok(Subscription.cancelNow(sub, "MERCHANT", t0, charging)).invoice).toBeUndefined()
    expect(ok(Subscription.cancelNow(active(), "MERCHANT", t0, invoice0())).invoice).toBeUndefined()
    // Another subscription's open invoice is not this one's to void.
    const theirs = {
      ...invoice,
      subscriptionId: "7e1b0a3c-2222-4c5e-8a57-0b3fe4d0a999" as Subscription.SubscriptionId
    }
    expect(ok(Subscription.cancelNow(sub, "MERCHANT", t0, theirs)).invoice).toBeUndefined()
  })
})

describe("cancel at period end", () => {
  it("sets the flag on an ACTIVE subscription only, harmlessly twice", () => {
    const flagged = ok(Subscription.cancelAtPeriodEnd(active()))
    expect(flagged).toMatchObject({ status: "ACTIVE", cancelAtPeriodEnd: true, cancelledAt: null })
    expect(ok(Subscription.cancelAtPeriodEnd(flagged))).toBe(flagged)
    expect(Subscription.cancelAtPeriodEnd({ ...active(), status: "PAST_DUE" })).toEqual(
      Either.left("not-active")
    )
    const cancelled = ok(Subscription.cancelNow(active(), "PAYER", anchor)).subscription
    expect(Subscription.cancelAtPeriodEnd(cancelled)).toEqual(Either.left("already-cancelled"))
  })

  it("ends at currentPeriodEnd, by the merchant, with nothing charged", () => {
    const flagged = ok(Subscription.cancelAtPeriodEnd(active()))
    const end = flagged.currentPeriodEnd
    expect(Subscription.endAtPeriodEnd(flagged, DateTime.add(end, { millis: -1 }))).toEqual(
      Either.left("not-due")
    )
    expect(Subscription.endAtPeriodEnd(active(), end)).toEqual(Either.left("not-due"))
    expect(Subscription.next(flagged, invoice0(), end)).toEqual(Subscription.Step.EndAtPeriodEnd())
    const change = ok(Subscription.endAtPeriodEnd(flagged, end))
    expect(change.subscription).toMatchObject({
      status: "CANCELLED",
      cancelledAt: end,
      cancellationInitiator: "MERCHANT",
      nextBillingAt: null,
      cancelAtPeriodEnd: true
    })
    expect(change.invoice).toBeUndefined()
    expect(change.events).toEqual(["subscription.canceled"])
    expect(Subscription.endAtPeriodEnd(change.subscription, end)).toEqual(Either.left("not-due"))
  })
})

describe("next", () => {
  const sub = active()
  const end = sub.currentPeriodEnd
  const warnAt = plus(end, -24)
  const tag = (s: Subscription.Subscription, latest: Invoice.Invoice | undefined, t: DateTime.Utc) =>
    Subscription.next(s, latest, t)._tag

  it("a paid period: nothing, then the balance check 24 h before, then the next period at its end", () => {
    expect(tag(sub, invoice0(), anchor)).toBe("Nothing")
    expect(tag(sub, invoice0(), DateTime.add(warnAt, { millis: -1 }))).toBe("Nothing")
    expect(Subscription.next(sub, invoice0(), warnAt)).toEqual(
      Subscription.Step.WarnBalance({ periodIndex: 1, amount: 25_000, renewsAt: end })
    )
    const warned = Subscription.markBalanceWarned(sub, 1)
    // Marking the same renewal again changes nothing, not even the object.
    expect(Subscription.markBalanceWarned(warned, 1)).toBe(warned)
    expect(tag(warned, invoice0(), warnAt)).toBe("Nothing")
    expect(tag(warned, invoice0(), DateTime.add(end, { millis: -1 }))).toBe("Nothing")
    expect(Subscription.next(warned, invoice0(), end)).toEqual(
      Subscription.Step.OpenNextPeriod({ periodIndex: 1 })
    )
    // A renewal that is due wins over a warning that never ran.
    expect(tag(sub, invoice0(), end)).toBe("OpenNextPeriod")
    expect(tag(sub, undefined, end)).toBe("OpenNextPeriod")
  })

  it("no balance check for a subscription set to end", () => {
    const flagged = ok(Subscription.cancelAtPeriodEnd(sub))
    expect(tag(flagged, invoice0(), warnAt)).toBe("Nothing")
    expect(Subscription.nextDueAt(flagged, invoice0())).toEqual(end)
  })

  it("an open invoice comes first and blocks later periods", () => {
    const { sub: renewed, invoice, t0 } = renewing()
    const far = plus(renewed.currentPeriodEnd, 24 * 90)
    expect(Subscription.next(renewed, invoice, t0)).toEqual(Subscription.Step.Attempt({ invoice }))
    const charging = ok(Invoice.startAttempt(invoice, t0))
    expect(Subscription.next(renewed, charging, anchor)).toEqual(
      Subscription.Step.ResumeAttempt({ invoice: charging })
    )
    const missed = ok(
      Subscription.afterAttempt(renewed, charging, Subscription.missed("insufficient-balance"), t0)
    )
    expect(tag(missed.subscription, missed.invoice, plus(t0, 11))).toBe("Nothing")
    expect(tag(missed.subscription, missed.invoice, plus(t0, 12))).toBe("Attempt")
    // Long after the period ended, the unpaid cycle is still the only thing to do.
    expect(tag(missed.subscription, missed.invoice, far)).toBe("Attempt")
    expect(tag({ ...missed.subscription, status: "ACTIVE" }, missed.invoice, far)).toBe("Attempt")
  })

  it("a cancelled subscription only settles what it left open", () => {
    const { sub: renewed, invoice, t0 } = renewing()
    const cancelled = { ...renewed, status: "CANCELLED" as const, cancelledAt: t0 }
    expect(Subscription.next(cancelled, invoice, t0)).toEqual(Subscription.Step.VoidInvoice({ invoice }))
    const charging = ok(Invoice.startAttempt(invoice, t0))
    expect(tag(cancelled, charging, t0)).toBe("ResumeAttempt")
    const done = ok(Subscription.cancelNow(active(), "PAYER", anchor)).subscription
    expect(tag(done, invoice0(), plus(anchor, 24 * 400))).toBe("Nothing")
    expect(Subscription.nextDueAt(done, invoice0())).toBeUndefined()
  })

  it("ignores another subscription's invoice", () => {
    const { invoice, t0 } = renewing()
    const other = {
      ...invoice,
      subscriptionId: "7e1b0a3c-2222-4c5e-8a57-0b3fe4d0a999" as Subscription.SubscriptionId
    }
    expect(tag(active(), other, plus(anchor, 1))).toBe("Nothing")
    expect(
      Subscription.afterAttempt(active(), ok(Invoice.startAttempt(other, t0)), Subscription.paid("p"), t0)
    ).toEqual(Either.left("not-charging"))
  })
})

describe("openNextPeriod", () => {
  it("moves the subscription to the next anchored period and opens its invoice PENDING", () => {
    const { sub, invoice, t0 } = renewing()
    expect(sub).toMatchObject({ currentPeriodIndex: 1, billingCycleAnchor: anchor, status: "ACTIVE" })
    expect([iso(sub.currentPeriodStart), iso(sub.currentPeriodEnd), iso(sub.nextBillingAt)]).toEqual([
      "2026-02-28T10:00:00+05:00",
      "2026-03-31T10:00:00+05:00",
      "2026-03-31T10:00:00+05:00"
    ])
    expect(invoice).toMatchObject({
      periodIndex: 1,
      periodKey: "2026-02-28",
      status: "PENDING",
      createdAt: t0
    })
    expect(Invoice.isDue(invoice, t0)).toBe(true)
  })

  it("refuses when the engine would not open one", () => {
    const sub = active()
    const end = sub.currentPeriodEnd
    expect(
      Subscription.openNextPeriod(sub, invoice0(), DateTime.add(end, { millis: -1 }), invoiceIds[1]!)
    ).toEqual(Either.left("not-due"))
    const { sub: renewed, invoice } = renewing()
    expect(Subscription.openNextPeriod(renewed, invoice, plus(end, 24 * 60), invoiceIds[2]!)).toEqual(
      Either.left("not-due")
    )
    expect(
      Subscription.openNextPeriod(ok(Subscription.cancelAtPeriodEnd(sub)), invoice0(), end, invoiceIds[1]!)
    ).toEqual(Either.left("not-due"))
  })
})

describe("afterAttempt", () => {
  /** Runs attempts at their due moments with the given outcomes; returns what each step emitted. */
  const dun = (outcomes: ReadonlyArray<Subscription.Outcome>) => {
    let { sub, invoice, t0 } = renewing()
    const log: Array<{ at: string; events: ReadonlyArray<string>; status: string; invoice: string }> = []
    for (const outcome of outcomes) {
      const now = invoice.nextRetryAt ?? t0
      const step = Subscription.next(sub, invoice, now)
      expect(step._tag).toBe("Attempt")
      const charging = ok(Invoice.startAttempt(invoice, now))
      const change = ok(Subscription.afterAttempt(sub, charging, outcome, now))
      sub = change.subscription
      invoice = change.invoice!
      log.push({ at: iso(now)!, events: change.events, status: sub.status, invoice: invoice.status })
    }
    return { sub, invoice, log, t0 }
  }
  const miss = Subscription.missed("insufficient-balance")

  it("four misses: t0, +12 h, +36 h, +84 h, then FAILED and CANCELLED by DUNNING", () => {
    const { sub, invoice, log } = dun([miss, miss, miss, miss])
    expect(log).toEqual([
      {
        at: "2026-02-28T10:00:00+05:00",
        events: ["invoice.payment_failed", "subscription.past_due"],
        status: "PAST_DUE",
        invoice: "PENDING"
      },
      {
        at: "2026-02-28T22:00:00+05:00",
        events: ["invoice.payment_failed"],
        status: "PAST_DUE",
        invoice: "PENDING"
      },
      {
        at: "2026-03-01T22:00:00+05:00",
        events: ["invoice.payment_failed"],
        status: "PAST_DUE",
        invoice: "PENDING"
      },
      {
        at: "2026-03-03T22:00:00+05:00",
        events: ["invoice.payment_failed", "subscription.canceled"],
        status: "CANCELLED",
        invoice: "FAILED"
      }
    ])
    expect(sub).toMatchObject({
      cancellationInitiator: "DUNNING",
      nextBillingAt: null,
      pastDueSince: null,
      billingCycleAnchor: anchor
    })
    expect(iso(sub.cancelledAt)).toBe("2026-03-03T22:00:00+05:00")
    expect(invoice).toMatchObject({
      attemptCount: 4,
      nextRetryAt: null,
      failureReason: "insufficient-balance"
    })
    expect(Subscription.next(sub, invoice, plus(anchor, 24 * 365))._tag).toBe("Nothing")
  })

  it("a late success makes it ACTIVE again and keeps the anchor and the period", () => {
    const { sub, invoice, log, t0 } = dun([miss, miss, Subscription.paid("pay-3")])
    expect(log.map((l) => l.events)).toEqual([
      ["invoice.payment_failed", "subscription.past_due"],
      ["invoice.payment_failed"],
      ["invoice.paid"]
    ])
    expect(sub).toMatchObject({
      status: "ACTIVE",
      pastDueSince: null,
      billingCycleAnchor: anchor,
      currentPeriodIndex: 1
    })
    expect(iso(sub.nextBillingAt)).toBe("2026-03-31T10:00:00+05:00")
    expect(invoice).toMatchObject({
      status: "PAID",
      attemptCount: 3,
      paymentIntentId: "pay-3",
      paidAt: plus(t0, 36)
    })
  })

  it("past_due fires once per window: again on the next cycle's first miss", () => {
    let { sub, invoice } = dun([miss, Subscription.paid("pay-2")])
    const t1 = sub.currentPeriodEnd
    const opened = ok(Subscription.openNextPeriod(sub, invoice, t1, invoiceIds[2]!))
    const charging = ok(Invoice.startAttempt(opened.invoice, t1))
    const change = ok(Subscription.afterAttempt(opened.subscription, charging, miss, t1))
    expect(change.events).toEqual(["invoice.payment_failed", "subscription.past_due"])
    expect(change.subscription).toMatchObject({ status: "PAST_DUE", pastDueSince: t1, currentPeriodIndex: 2 })
    sub = change.subscription
    invoice = change.invoice!
    expect(invoice.periodKey).toBe("2026-03-31")
  })

  it("every wallet refusal is a miss with its reason; a wallet limit reads blocked-by-rules", () => {
    for (const [reason, recorded] of [
      ["insufficient-balance", "insufficient-balance"],
      ["wallet-limit", "blocked-by-rules"],
      ["wallet-frozen", "wallet-frozen"],
      ["blocked-by-rules", "blocked-by-rules"],
      ["executor-error", "executor-error"]
    ] as const) {
      const { invoice } = dun([Subscription.missed(reason)])
      expect(invoice.failureReason).toBe(recorded)
    }
  })

  it("an attempt in flight when the subscription was cancelled: a success is kept, a miss voids", () => {
    const { sub, invoice, t0 } = renewing()
    const charging = ok(Invoice.startAttempt(invoice, t0))
    const cancelled = ok(Subscription.cancelNow(sub, "PAYER", t0, charging)).subscription
    const paid = ok(Subscription.afterAttempt(cancelled, charging, Subscription.paid("pay-1"), plus(t0, 1)))
    expect([paid.subscription.status, paid.invoice?.status, paid.events]).toEqual([
      "CANCELLED",
      "PAID",
      ["invoice.paid"]
    ])
    const missed = ok(Subscription.afterAttempt(cancelled, charging, miss, plus(t0, 1)))
    expect([missed.subscription, missed.invoice?.status, missed.events]).toEqual([cancelled, "VOID", []])
    const fourth = { ...charging, attemptCount: 4 }
    expect(ok(Subscription.afterAttempt(cancelled, fourth, miss, plus(t0, 1))).invoice?.status).toBe("FAILED")
  })

  it("needs an attempt in flight", () => {
    const { sub, invoice, t0 } = renewing()
    expect(Subscription.afterAttempt(sub, invoice, Subscription.paid("p"), t0)).toEqual(
      Either.left("not-charging")
    )
    expect(Subscription.afterAttempt(sub, invoice0(), miss, t0)).toEqual(Either.left("not-charging"))
  })
})

describe("nextDueAt", () => {
  /** Subscriptions in every reachable resting shape, with their latest invoice. */
  const state = fc
    .record({
      status: fc.constantFrom("ACTIVE", "PAST_DUE", "CANCELLED"),
      flagged: fc.boolean(),
      warned: fc.boolean(),
      invoice: fc.constantFrom("paid", "pending-new", "pending-retry", "charging", "void"),
      retryHours: fc.integer({ min: 1, max: 84 })
    })
    .map(({ status, flagged, warned, invoice, retryHours }) => {
      const { sub: renewed, invoice: opened, t0 } = renewing()
      const sub: Subscription.Subscription = {
        ...renewed,
        status: status as Subscription.Status,
        cancelAtPeriodEnd: flagged && status !== "CANCELLED",
        cancelledAt: status === "CANCELLED" ? t0 : null,
        balanceWarnedFor: warned ? 2 : null
      }
      const latest: Invoice.Invoice =
        invoice === "paid"
          ? { ...opened, status: "PAID", attemptCount: 1 }
          : invoice === "pending-new"
            ? opened
            : invoice === "pending-retry"
              ? { ...opened, attemptCount: 1, lastAttemptAt: t0, nextRetryAt: plus(t0, retryHours) }
              : invoice === "charging"
                ? ok(Invoice.startAttempt(opened, t0))
                : { ...opened, status: "VOID" }
      return { sub, latest }
    })

  it("nothing is due strictly before it, and something is due at it", () => {
    fc.assert(
      fc.property(state, fc.integer({ min: 1, max: 60 * 86_400_000 }), ({ sub, latest }, beforeMs) => {
        const due = Subscription.nextDueAt(sub, latest)
        if (due === undefined) {
          for (const d of [0, 1, 10, 400])
            expect(Subscription.next(sub, latest, plus(sub.currentPeriodEnd, 24 * d))._tag).toBe("Nothing")
          return
        }
        expect(Subscription.next(sub, latest, due)._tag).not.toBe("Nothing")
        // Work due from the moment it exists (an attempt in flight, a new cycle's first attempt, an
        // invoice to void) is due at any time.
        if (latest.status === "CHARGING" || (latest.status === "PENDING" && latest.nextRetryAt === null))
          return
        if (sub.status === "CANCELLED" && latest.status === "PENDING") return
        const before = DateTime.add(due, { millis: -beforeMs })
        expect(Subscription.next(sub, latest, before)._tag).toBe("Nothing")
      }),
      { numRuns: 500 }
    )
  })

  it("reports when each kind of open work became due, not when its invoice was created", () => {
    const { sub, invoice, t0 } = renewing()
    expect(invoice.createdAt).toEqual(t0)
    // An attempt in flight since `started` (a crashed worker's) is due from then.
    const started = plus(t0, 30)
    expect(Subscription.nextDueAt(sub, ok(Invoice.startAttempt(invoice, started)))).toEqual(started)
    // A retry at its moment.
    const retry: Invoice.Invoice = {
      ...invoice,
      attemptCount: 1,
      lastAttemptAt: t0,
      nextRetryAt: plus(t0, 12)
    }
    expect(Subscription.nextDueAt(sub, retry)).toEqual(plus(t0, 12))
    // A cancelled subscription's open invoice, voided from the cancellation.
    const cancelled: Subscription.Subscription = { ...sub, status: "CANCELLED", cancelledAt: plus(t0, 5) }
    expect(Subscription.nextDueAt(cancelled, invoice)).toEqual(plus(t0, 5))
  })

  it("an ACTIVE subscription is next due at the balance check, then at the period end", () => {
    const sub = active()
    expect(Subscription.nextDueAt(sub, invoice0())).toEqual(plus(sub.currentPeriodEnd, -24))
    expect(Subscription.nextDueAt(Subscription.markBalanceWarned(sub, 1), invoice0())).toEqual(
      sub.currentPeriodEnd
    )
    const { sub: renewed, invoice, t0 } = renewing()
    expect(Subscription.nextDueAt(renewed, invoice)).toEqual(t0)
  })
})

describe("isLive", () => {
  it("holds until the subscription is cancelled", () => {
    expect(Subscription.isLive(active())).toBe(true)
    expect(Subscription.isLive({ ...active(), status: "PAST_DUE" })).toBe(true)
    expect(Subscription.isLive({ ...active(), status: "CANCELLED" })).toBe(false)
  })
})

describe("outcomes", () => {
  it("carry their tag and what they say", () => {
    expect(Subscription.paid("pay-1")).toEqual({ _tag: "Paid", paymentId: "pay-1" })
    expect(Subscription.missed("wallet-limit")).toEqual({ _tag: "Missed", reason: "wallet-limit" })
  })
})
