/**
 * The claims of the renewal engine (`claimDue`) and of the checkout expiry sweep (`claimExpiring`), on
 * PGlite and (with DATABASE_URL) PostgreSQL; on PostgreSQL also that two connections claiming at once
 * skip each other's locked rows (FOR UPDATE SKIP LOCKED), and that the engine's lock holds a cancel back.
 */
import { expect } from "@effect/vitest"
import { CheckoutSession, Ids, Store, Subscription } from "@laari/core"
import { DateTime, Deferred, Effect, Fiber } from "effect"
import {
  at,
  iso,
  hours,
  T0,
  right,
  freshMerchant,
  paymentRequest,
  openSession,
  subscribe,
  storedDueAt,
  ids
} from "../support/SubscriptionRows.js"
import * as TestDatabase from "../support/TestDatabase.js"

TestDatabase.eachBackend("SQL checkout sessions, subscriptions and invoices", (it, backend) => {
  it.effect("claimDue claims exactly the due subscriptions, earliest first, up to the limit; nextDueAt", () =>
    Effect.gen(function* () {
      yield* TestDatabase.reset
      const tx = yield* Store.Transactor
      const subscriptions = yield* Store.SubscriptionsStore
      const { tenant, payer } = yield* freshMerchant
      expect(yield* subscriptions.nextDueAt).toBeUndefined()
      const now = at("2030-03-01T00:00:00.500Z")
      const dueAts = [
        DateTime.subtract(now, { hours: 1 }),
        now,
        DateTime.subtract(now, { hours: 2 }),
        DateTime.add(now, { millis: 1 }),
        null,
        DateTime.subtract(now, { millis: 1 })
      ]
      const made = yield* Effect.forEach(dueAts, (dueAt) => subscribe(tenant, payer, T0, { dueAt }))
      const [h1, exact, h2, later, never, ms1] = made.map((m) => m.subscription.id)
      expect(iso(yield* subscriptions.nextDueAt)).toBe("2030-02-28T22:00:00.500Z")
      const all = yield* tx.withTransaction(subscriptions.claimDue(now, 100))
      expect(ids(all)).toEqual([h2, h1, ms1, exact])
      expect(all[0]).toStrictEqual(made[2]!.subscription)
      expect(ids(yield* tx.withTransaction(subscriptions.claimDue(now, 2)))).toEqual([h2, h1])
      expect(
        ids(yield* tx.withTransaction(subscriptions.claimDue(DateTime.add(now, { millis: 1 }), 100)))
      ).toEqual([h2, h1, ms1, exact, later])
      expect(ids(yield* tx.withTransaction(subscriptions.claimDue(at("2030-02-28T21:59:59Z"), 100)))).toEqual(
        []
      )
      expect(yield* storedDueAt(never!)).toBeNull()

      // Rescheduled by update: no longer due (null), or due later.
      const [first, second] = [made[2]!.subscription, made[0]!.subscription]
      yield* subscriptions.update(first, null)
      yield* subscriptions.update(second, at("2031-01-01T00:00:00Z"))
      expect(ids(yield* tx.withTransaction(subscriptions.claimDue(now, 100)))).toEqual([ms1, exact])
      expect(iso(yield* subscriptions.nextDueAt)).toBe("2030-03-01T00:00:00.499Z")
    })
  )

  it.effect("claimExpiring claims exactly the open sessions past expiresAt, oldest first; nextExpiryAt", () =>
    Effect.gen(function* () {
      yield* TestDatabase.reset
      const tx = yield* Store.Transactor
      const sessions = yield* Store.CheckoutSessionsStore
      const { tenant, payer } = yield* freshMerchant
      expect(yield* sessions.nextExpiryAt).toBeUndefined()
      const now = at("2030-03-02T12:00:00.250Z")
      const opened = (hoursAgo: number) =>
        openSession(tenant, paymentRequest(`exp-${hoursAgo}`), DateTime.subtract(now, { hours: hoursAgo }))
      // Created 25 h, 24 h exactly, 24 h 1 ms, and 23 h before now; and sessions that are no longer open.
      const lapsedHour = yield* opened(25)
      const lapsedNow = yield* opened(24)
      const lapsedMs = yield* openSession(
        tenant,
        paymentRequest("exp-ms"),
        DateTime.subtract(now, { hours: 24, millis: 1 })
      )
      const stillOpen = yield* opened(23)
      const cancelled = right(
        CheckoutSession.cancel(yield* opened(30), DateTime.subtract(now, { hours: 29 }))
      )
      const completed = right(
        CheckoutSession.complete(yield* opened(31), DateTime.subtract(now, { hours: 30 }), {
          customerId: payer,
          paymentId: "pay-31"
        })
      )
      const alreadyExpired = CheckoutSession.expire(yield* opened(40), DateTime.subtract(now, { hours: 16 }))
      for (const s of [stillOpen, lapsedNow, lapsedHour, lapsedMs, cancelled, completed, alreadyExpired])
        yield* sessions.insert(s)
      expect(iso(yield* sessions.nextExpiryAt)).toBe(iso(lapsedHour.expiresAt))
      const claimed = yield* tx.withTransaction(sessions.claimExpiring(now, 100))
      expect(ids(claimed)).toEqual([lapsedHour.id, lapsedMs.id, lapsedNow.id])
      expect(claimed.every((s) => CheckoutSession.isDueToExpire(s, now))).toBe(true)
      expect(claimed[0]).toStrictEqual(lapsedHour)
      expect(ids(yield* tx.withTransaction(sessions.claimExpiring(now, 1)))).toEqual([lapsedHour.id])
      expect(
        ids(yield* tx.withTransaction(sessions.claimExpiring(DateTime.subtract(now, { millis: 1 }), 100)))
      ).toEqual([lapsedHour.id, lapsedMs.id])

      // The sweep expires them: they are claimed no more, and the next expiry is the one still open.
      yield* tx.withTransaction(
        Effect.forEach(claimed, (s) => sessions.update(CheckoutSession.expire(s, now)), {
          discard: true
        })
      )
      expect(yield* tx.withTransaction(sessions.claimExpiring(now, 100))).toEqual([])
      expect(iso(yield* sessions.nextExpiryAt)).toBe(iso(stillOpen.expiresAt))
      expect((yield* sessions.find(tenant, Ids.lookup(lapsedNow.id)))?.status).toBe("EXPIRED")
    })
  )

  if (backend.name === "PostgreSQL") {
    it.effect("two engines claiming at once get disjoint subscriptions (FOR UPDATE SKIP LOCKED)", () =>
      Effect.gen(function* () {
        yield* TestDatabase.reset
        const tx = yield* Store.Transactor
        const subscriptions = yield* Store.SubscriptionsStore
        const { tenant, payer } = yield* freshMerchant
        const now = at("2030-06-01T00:00:00Z")
        const due = yield* Effect.forEach([6, 5, 4, 3, 2, 1], (h) =>
          subscribe(tenant, payer, T0, { dueAt: DateTime.subtract(now, { hours: h }) })
        )
        const claimedA = yield* Deferred.make<ReadonlyArray<Subscription.Subscription>>()
        const release = yield* Deferred.make<void>()
        const a = yield* Effect.fork(
          tx.withTransaction(
            Effect.gen(function* () {
              yield* Deferred.succeed(claimedA, yield* subscriptions.claimDue(now, 3))
              yield* Deferred.await(release)
            })
          )
        )
        const first = yield* Deferred.await(claimedA)
        // A holds the three earliest: B skips them instead of waiting, and gets the next three.
        const second = yield* tx
          .withTransaction(subscriptions.claimDue(now, 10))
          .pipe(Effect.timeout("5 seconds"))
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(a)
        const dueIds = due.map((d) => d.subscription.id)
        expect(ids(first)).toEqual(dueIds.slice(0, 3))
        expect(ids(second)).toEqual(dueIds.slice(3))
        // Once A commits, its rows are claimable again.
        expect(ids(yield* tx.withTransaction(subscriptions.claimDue(now, 10)))).toEqual(dueIds)
      })
    )

    it.effect("two sweeps expiring at once get disjoint sessions (FOR UPDATE SKIP LOCKED)", () =>
      Effect.gen(function* () {
        yield* TestDatabase.reset
        const tx = yield* Store.Transactor
        const sessions = yield* Store.CheckoutSessionsStore
        const { tenant } = yield* freshMerchant
        const now = at("2030-06-01T00:00:00Z")
        const lapsed = yield* Effect.forEach([36, 35, 34, 33, 32, 31], (h) =>
          openSession(tenant, paymentRequest(`sweep-${h}`), DateTime.subtract(now, { hours: h }))
        )
        for (const s of lapsed) yield* sessions.insert(s)
        const claimedA = yield* Deferred.make<ReadonlyArray<CheckoutSession.CheckoutSession>>()
        const release = yield* Deferred.make<void>()
        const a = yield* Effect.fork(
          tx.withTransaction(
            Effect.gen(function* () {
              yield* Deferred.succeed(claimedA, yield* sessions.claimExpiring(now, 3))
              yield* Deferred.await(release)
            })
          )
        )
        const first = yield* Deferred.await(claimedA)
        const second = yield* tx
          .withTransaction(sessions.claimExpiring(now, 10))
          .pipe(Effect.timeout("5 seconds"))
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(a)
        expect(ids(first)).toEqual(ids(lapsed.slice(0, 3)))
        expect(ids(second)).toEqual(ids(lapsed.slice(3)))
      })
    )

    it.effect("a subscription locked by the engine holds a merchant's cancel until the engine commits", () =>
      Effect.gen(function* () {
        const tx = yield* Store.Transactor
        const subscriptions = yield* Store.SubscriptionsStore
        const { tenant, payer } = yield* freshMerchant
        const { subscription } = yield* subscribe(tenant, payer, T0)
        const held = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        const engine = yield* Effect.fork(
          tx.withTransaction(
            Effect.gen(function* () {
              const locked = yield* subscriptions.lockById(subscription.id)
              yield* Deferred.succeed(held, undefined)
              yield* Deferred.await(release)
              yield* subscriptions.update(Subscription.markBalanceWarned(locked!, 1), null)
            })
          )
        )
        yield* Deferred.await(held)
        const cancel = yield* Effect.fork(
          tx.withTransaction(
            Effect.gen(function* () {
              const found = yield* subscriptions.find(tenant, Ids.lookup(subscription.reference), {
                forUpdate: true
              })
              const ended = right(Subscription.cancelNow(found!, "MERCHANT", hours(T0, 1)))
              yield* subscriptions.update(ended.subscription, null)
              return found!
            })
          )
        )
        yield* Effect.sleep("300 millis")
        expect(cancel.unsafePoll()).toBeNull()
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(engine)
        // The cancel read the engine's write: nothing the engine did is lost.
        const seen = yield* Fiber.join(cancel).pipe(Effect.timeout("5 seconds"))
        expect(seen.balanceWarnedFor).toBe(1)
        const final = yield* subscriptions.lockById(subscription.id)
        expect(final?.status).toBe("CANCELLED")
        expect(final?.balanceWarnedFor).toBe(1)
      })
    )
  }
})
