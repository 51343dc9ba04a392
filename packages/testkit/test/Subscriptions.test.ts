/**
 * Checkout, subscriptions and the renewal engine through the library, on the memory adapters and the
 * controllable clock.
 */
import { describe, expect, it } from "@effect/vitest"
import { Checkout, type Ids, Store, Subscriptions } from "@laari/core"
import { DateTime, Effect } from "effect"
import { ControllableClock, MemorySeed, Seed, Testkit } from "../src/index.js"

const world = () => Testkit.layer({ start: "2027-01-31T05:00:00Z" })

/** A merchant and a paid MONTH x 1 subscription at `amount`, with the sandbox payer's balance set. */
const subscribed = (amount: number, balance: number) =>
  Effect.gen(function* () {
    const seed = yield* Seed.Seed
    const checkout = yield* Checkout.Checkout
    const merchant = yield* seed.merchant({ name: "Island Gym" })
    yield* seed.setPayer(merchant.sandboxPayer, { balance })
    const tenant = { merchantId: merchant.id, environment: "test" as const }
    const session = yield* checkout.create(tenant, {
      mode: "SUBSCRIPTION",
      reference: "member-1",
      title: "Membership",
      description: null,
      returnUrl: null,
      amount: null,
      priceData: { name: "Monthly", amount, interval: "MONTH", intervalCount: 1 }
    })
    const settled = yield* checkout.settle(session.id, merchant.sandboxPayer)
    return { merchant, tenant, session: settled.session, subscription: settled.subscription! }
  })

const invoicesOf = (tenant: Ids.Tenant, id: string) =>
  Effect.flatMap(Subscriptions.Subscriptions, (s) => s.listInvoices(tenant, id, { limit: 100, offset: 0 }))

describe("subscriptions through the library", () => {
  it.effect(
    "bills an anchor on 31 January on 28 February, 31 March, 30 April and 31 May, keeping the anchor",
    () =>
      Effect.gen(function* () {
        const clock = yield* ControllableClock.ControllableClock
        const { tenant, subscription, merchant } = yield* subscribed(10_000, 1_000_000)
        expect(subscription.status).toBe("ACTIVE")
        yield* clock.advanceTo(DateTime.unsafeMake("2027-06-01T00:00:00Z"))
        const invoices = yield* invoicesOf(tenant, subscription.id)
        expect(invoices.map((i) => [i.periodKey, i.status])).toEqual([
          ["2027-05-31", "PAID"],
          ["2027-04-30", "PAID"],
          ["2027-03-31", "PAID"],
          ["2027-02-28", "PAID"],
          ["2027-01-31", "PAID"]
        ])
        const seed = yield* Seed.Seed
        expect(yield* seed.merchantBalance(merchant.id, "test")).toBe(5 * (10_000 - 100))
        const now = yield* Effect.flatMap(Subscriptions.Subscriptions, (s) => s.get(tenant, "member-1"))
        expect(now.billingCycleAnchor).toEqual(subscription.billingCycleAnchor)
      }).pipe(Effect.provide(world()))
  )

  it.effect("retries at +12 h, +36 h and +84 h, then fails the invoice and cancels by DUNNING", () =>
    Effect.gen(function* () {
      const clock = yield* ControllableClock.ControllableClock
      const seed = yield* Seed.Seed
      const { tenant, subscription, merchant } = yield* subscribed(10_000, 10_000)
      // The first payment took the whole balance: every renewal attempt misses.
      yield* clock.advanceTo(subscription.currentPeriodEnd)
      const afterFirst = (yield* invoicesOf(tenant, subscription.id))[0]!
      expect(afterFirst).toMatchObject({
        status: "PENDING",
        attemptCount: 1,
        failureReason: "insufficient-balance"
      })
      expect(
        (yield* Effect.flatMap(Subscriptions.Subscriptions, (s) => s.get(tenant, subscription.id))).status
      ).toBe("PAST_DUE")
      yield* clock.advance("84 hours")
      const failed = (yield* invoicesOf(tenant, subscription.id))[0]!
      expect(failed).toMatchObject({ status: "FAILED", attemptCount: 4, nextRetryAt: null })
      const ended = yield* Effect.flatMap(Subscriptions.Subscriptions, (s) => s.get(tenant, subscription.id))
      expect(ended).toMatchObject({
        status: "CANCELLED",
        cancellationInitiator: "DUNNING",
        nextBillingAt: null
      })
      const types = (yield* seed.events)
        .filter((e) => e.merchantId === merchant.id)
        .map((e) => e.envelope.type)
      expect(types.filter((t) => t === "invoice.payment_failed")).toHaveLength(4)
      expect(types.filter((t) => t === "subscription.past_due")).toHaveLength(1)
      expect(types.filter((t) => t === "subscription.canceled")).toHaveLength(1)
      // Nothing more is ever attempted.
      yield* clock.advance("90 days")
      expect(yield* invoicesOf(tenant, subscription.id)).toHaveLength(2)
    }).pipe(Effect.provide(world()))
  )

  it.effect("ends at the period's end with no further charge when cancelled at period end", () =>
    Effect.gen(function* () {
      const clock = yield* ControllableClock.ControllableClock
      const seed = yield* Seed.Seed
      const { tenant, subscription, merchant } = yield* subscribed(10_000, 1_000_000)
      const subscriptions = yield* Subscriptions.Subscriptions
      const flagged = yield* subscriptions.cancel(tenant, subscription.id, true)
      expect(flagged).toMatchObject({ status: "ACTIVE", cancelAtPeriodEnd: true })
      const balance = yield* seed.merchantBalance(merchant.id, "test")
      yield* clock.advance("60 days")
      const ended = yield* subscriptions.get(tenant, subscription.id)
      expect(ended).toMatchObject({ status: "CANCELLED", cancellationInitiator: "MERCHANT" })
      expect(yield* invoicesOf(tenant, subscription.id)).toHaveLength(1)
      expect(yield* seed.merchantBalance(merchant.id, "test")).toBe(balance)
      expect(yield* Effect.flip(subscriptions.cancel(tenant, subscription.id, false))).toBeInstanceOf(
        Subscriptions.SubscriptionNotCancellable
      )
    }).pipe(Effect.provide(world()))
  )

  it.effect(
    "settles a session once under concurrent payments, and an unpaid session expires leaving nothing",
    () =>
      Effect.gen(function* () {
        const clock = yield* ControllableClock.ControllableClock
        const seed = yield* Seed.Seed
        const checkout = yield* Checkout.Checkout
        const merchant = yield* seed.merchant({ name: "Reef Radio" })
        const tenant = { merchantId: merchant.id, environment: "test" as const }
        const make = (reference: string) =>
          checkout.create(tenant, {
            mode: "SUBSCRIPTION",
            reference,
            title: "Radio",
            description: null,
            returnUrl: null,
            amount: null,
            priceData: { name: "Weekly", amount: 500, interval: "WEEK", intervalCount: 1 }
          })
        const paid = yield* make("paid")
        const results = yield* Effect.all(
          Array.from({ length: 10 }, () => Effect.either(checkout.settle(paid.id, merchant.sandboxPayer))),
          { concurrency: "unbounded" }
        )
        expect(results.filter((r) => r._tag === "Right")).toHaveLength(1)
        expect(
          results.filter((r) => r._tag === "Left").every((r) => r.left._tag === "CheckoutSessionClosed")
        ).toBe(true)
        const unpaid = yield* make("unpaid")
        yield* clock.advance("24 hours")
        expect((yield* checkout.get(tenant, unpaid.id)).status).toBe("EXPIRED")
        expect(yield* Effect.flip(checkout.settle(unpaid.id, merchant.sandboxPayer))).toBeInstanceOf(
          Checkout.CheckoutSessionClosed
        )
        const all = yield* Effect.flatMap(Store.SubscriptionsStore, (s) =>
          s.list(tenant, { limit: 100, offset: 0 })
        )
        expect(all.map((s) => s.reference)).toEqual(["paid"])
        expect(MemorySeed.sandboxPhone(merchant.id)).toContain(merchant.id)
      }).pipe(Effect.provide(world()))
  )
})
