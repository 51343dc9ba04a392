/**
 * The SQL adapters of checkout sessions, subscriptions and invoices, on PGlite and (with DATABASE_URL)
 * PostgreSQL: every field round-trips, every read is scoped to the tenant, and lookups by what cannot be
 * an id find nothing. What the schema refuses is in SqlSubscriptionsConstraints.test.ts, the claims of
 * the renewal engine and the expiry sweep in SqlSubscriptionsClaims.test.ts, list order, paging and index
 * use in SqlSubscriptionsQueries.test.ts, and migrating a database that already has data in
 * SqlSubscriptionsUpgrade.test.ts.
 */
import { expect } from "@effect/vitest"
import { CheckoutSession, Ids, Invoice, Store, Subscription } from "@laari/core"
import { Seed } from "@laari/testkit"
import { DateTime, Effect } from "effect"
import {
  uuid,
  iso,
  hours,
  T0,
  right,
  freshMerchant,
  paymentRequest,
  openSession,
  subscribe,
  storedDueAt,
  metadataIsSqlNull,
  ids
} from "../support/SubscriptionRows.js"
import * as TestDatabase from "../support/TestDatabase.js"

TestDatabase.eachBackend("SQL checkout sessions, subscriptions and invoices", (it) => {
  it.effect("every field of a payment session round-trips through each of its states", () =>
    Effect.gen(function* () {
      const sessions = yield* Store.CheckoutSessionsStore
      const { tenant, payer } = yield* freshMerchant
      const opened = yield* openSession(tenant, paymentRequest(`pay-${yield* uuid}`), T0)
      expect(opened.description).not.toBeNull()
      expect(opened.returnUrl).not.toBeNull()
      yield* sessions.insert(opened)
      expect(yield* sessions.find(tenant, Ids.lookup(opened.id))).toStrictEqual(opened)

      const completed = right(
        CheckoutSession.complete(opened, hours(T0, 1), {
          customerId: payer,
          paymentId: `pay-${opened.id}`
        })
      )
      yield* sessions.update(completed)
      const found = yield* sessions.find(tenant, Ids.lookup(opened.id), { forUpdate: true })
      expect(found).toStrictEqual(completed)
      expect(iso(found?.completedAt)).toBe("2030-01-31T11:15:30.123Z")
      expect(found?.price).toBeNull()
      expect(found?.subscriptionId).toBeNull()

      const withdrawn = yield* openSession(tenant, paymentRequest(`pay-${yield* uuid}`), T0)
      yield* sessions.insert(withdrawn)
      const cancelled = right(CheckoutSession.cancel(withdrawn, hours(T0, 2)))
      yield* sessions.update(cancelled)
      expect(yield* sessions.lockById(cancelled.id)).toStrictEqual(cancelled)

      const lapsed = yield* openSession(tenant, paymentRequest(`pay-${yield* uuid}`), T0)
      yield* sessions.insert(lapsed)
      const expired = CheckoutSession.expire(lapsed, hours(T0, 24))
      expect(expired.status).toBe("EXPIRED")
      yield* sessions.update(expired)
      expect(yield* sessions.find(tenant, Ids.lookup(lapsed.id))).toStrictEqual(expired)
    })
  )

  it.effect(
    "every field of a subscription session, its subscription and invoices round-trips to the millisecond",
    () =>
      Effect.gen(function* () {
        const sessions = yield* Store.CheckoutSessionsStore
        const subscriptions = yield* Store.SubscriptionsStore
        const invoices = yield* Store.InvoicesStore
        const tx = yield* Store.Transactor
        const { tenant, payer } = yield* freshMerchant
        const a = yield* subscribe(tenant, payer, T0, {
          price: { interval: "MONTH", intervalCount: 3 }
        })

        // The session, open and then complete.
        expect(a.opened.price).toEqual({
          name: "Gold",
          amount: 15_000,
          interval: "MONTH",
          intervalCount: 3
        })
        expect(yield* sessions.find(tenant, Ids.lookup(a.session.id))).toStrictEqual(a.session)
        expect(a.session.subscriptionId).toBe(a.subscription.id)

        // The subscription at consent: by id, by reference, locked; nulls stay null.
        const sub = a.subscription
        expect(yield* subscriptions.find(tenant, Ids.lookup(sub.id))).toStrictEqual(sub)
        expect(yield* subscriptions.find(tenant, Ids.lookup(sub.reference))).toStrictEqual(sub)
        expect(yield* subscriptions.find(tenant, Ids.lookup(sub.id), { forUpdate: true })).toStrictEqual(sub)
        expect(yield* subscriptions.lockById(sub.id)).toStrictEqual(sub)
        expect(iso(sub.billingCycleAnchor)).toBe("2030-01-31T10:15:30.123Z")
        expect(iso(sub.currentPeriodEnd)).toBe("2030-04-30T10:15:30.123Z")
        expect(yield* metadataIsSqlNull(sub.id)).toBe(true)
        const due0 = Subscription.nextDueAt(sub, a.invoice)!
        expect(yield* storedDueAt(sub.id)).toBe(iso(due0))

        // Invoice 0, PAID at consent.
        expect(yield* invoices.latest(sub.id)).toStrictEqual(a.invoice)
        expect(a.invoice.paidAt).not.toBeNull()

        // The next cycle opens, its first attempt misses: every nullable field of both is now set.
        const renewal = sub.currentPeriodEnd
        const warned = Subscription.markBalanceWarned(sub, 1)
        const opened = right(
          Subscription.openNextPeriod(warned, a.invoice, renewal, Invoice.InvoiceId.make(yield* uuid))
        )
        const charging = right(Invoice.startAttempt(opened.invoice, renewal))
        const missed = right(
          Subscription.afterAttempt(
            opened.subscription,
            charging,
            Subscription.missed("insufficient-balance"),
            DateTime.add(renewal, { millis: 450 })
          )
        )
        const pastDue = { ...missed.subscription, metadata: { plan: "gold", channel: "app" } }
        const retrying = missed.invoice!
        expect(pastDue.status).toBe("PAST_DUE")
        expect(retrying.status).toBe("PENDING")
        expect(retrying.nextRetryAt).not.toBeNull()
        expect(retrying.failureReason).toBe("insufficient-balance")
        yield* tx.withTransaction(
          Effect.gen(function* () {
            yield* invoices.insert(opened.invoice)
            yield* invoices.update(charging)
            yield* invoices.update(retrying)
            yield* subscriptions.update(pastDue, retrying.nextRetryAt)
          })
        )
        expect(yield* subscriptions.find(tenant, Ids.lookup(sub.id))).toStrictEqual(pastDue)
        expect(yield* storedDueAt(sub.id)).toBe(iso(retrying.nextRetryAt))
        expect(yield* invoices.latest(sub.id)).toStrictEqual(retrying)
        expect(iso(retrying.periodStart)).toBe("2030-04-30T10:15:30.123Z")
        expect(retrying.periodKey).toBe("2030-04-30")

        // Cancelled by operations: the open cycle is voided; the engine has nothing more to do.
        const ended = right(Subscription.cancelNow(pastDue, "OPS", hours(renewal, 1), retrying))
        const voided = ended.invoice!
        expect(voided.status).toBe("VOID")
        yield* tx.withTransaction(
          Effect.gen(function* () {
            yield* subscriptions.update(ended.subscription, null)
            yield* invoices.update(voided)
          })
        )
        expect(yield* subscriptions.lockById(sub.id)).toStrictEqual(ended.subscription)
        expect(ended.subscription.cancellationInitiator).toBe("OPS")
        expect(yield* storedDueAt(sub.id)).toBeNull()
        expect(yield* invoices.list(sub.id, { limit: 10, offset: 0 })).toStrictEqual([voided, a.invoice])
      })
  )

  it.effect("every read is scoped to the tenant; lockById is not", () =>
    Effect.gen(function* () {
      const sessions = yield* Store.CheckoutSessionsStore
      const subscriptions = yield* Store.SubscriptionsStore
      const seed = yield* Seed.Seed
      const { tenant, payer } = yield* freshMerchant
      const other = yield* freshMerchant
      const live: Ids.Tenant = { merchantId: tenant.merchantId, environment: "live" }
      const a = yield* subscribe(tenant, payer, T0)
      const sub = a.subscription
      for (const stranger of [other.tenant, live]) {
        expect(yield* sessions.find(stranger, Ids.lookup(a.session.id))).toBeUndefined()
        expect(yield* sessions.find(stranger, Ids.lookup(a.session.id), { forUpdate: true })).toBeUndefined()
        expect(yield* subscriptions.find(stranger, Ids.lookup(sub.id))).toBeUndefined()
        expect(yield* subscriptions.find(stranger, Ids.lookup(sub.reference))).toBeUndefined()
        expect(
          yield* subscriptions.list(stranger, { reference: sub.reference, limit: 25, offset: 0 })
        ).toEqual([])
      }
      expect(ids(yield* subscriptions.list(tenant, { limit: 25, offset: 0 }))).toEqual([sub.id])
      expect((yield* sessions.lockById(a.session.id))?.id).toBe(a.session.id)
      expect((yield* subscriptions.lockById(sub.id))?.id).toBe(sub.id)

      // The same reference is another merchant's, or the live environment's, to use as well.
      const theirs = yield* subscribe(other.tenant, other.payer, T0, { reference: sub.reference })
      const liveCustomer = yield* seed.customer({ environment: "live", phone: `+960 ${yield* uuid}` })
      const mineLive = yield* subscribe(live, liveCustomer.id, T0, { reference: sub.reference })
      expect((yield* subscriptions.find(other.tenant, Ids.lookup(sub.reference)))?.id).toBe(
        theirs.subscription.id
      )
      expect((yield* subscriptions.find(live, Ids.lookup(sub.reference)))?.id).toBe(mineLive.subscription.id)
      expect((yield* subscriptions.find(tenant, Ids.lookup(sub.reference)))?.id).toBe(sub.id)
    })
  )

  it.effect("lookups by something that is not a UUID (or not storable) find nothing instead of failing", () =>
    Effect.gen(function* () {
      const sessions = yield* Store.CheckoutSessionsStore
      const subscriptions = yield* Store.SubscriptionsStore
      const invoices = yield* Store.InvoicesStore
      const { tenant, payer } = yield* freshMerchant
      const a = yield* subscribe(tenant, payer, T0)
      const notMerchant: Ids.Tenant = { merchantId: "nope" as Ids.MerchantId, environment: "test" }
      expect(yield* sessions.find(tenant, { _tag: "ById", id: "not-a-uuid" })).toBeUndefined()
      expect(yield* sessions.find(tenant, Ids.lookup("ref\u0000"))).toBeUndefined()
      expect((yield* sessions.find(tenant, Ids.lookup(a.session.reference)))?.id).toBe(a.session.id)
      expect(yield* sessions.find(notMerchant, Ids.lookup(a.session.id))).toBeUndefined()
      expect(yield* sessions.lockById("not-a-uuid")).toBeUndefined()
      expect(yield* subscriptions.find(tenant, { _tag: "ById", id: "not-a-uuid" })).toBeUndefined()
      expect(yield* subscriptions.find(tenant, Ids.lookup("ref\u0000"))).toBeUndefined()
      expect(yield* subscriptions.find(notMerchant, Ids.lookup(a.subscription.id))).toBeUndefined()
      expect(yield* subscriptions.lockById("not-a-uuid")).toBeUndefined()
      expect(yield* subscriptions.list(notMerchant, { limit: 25, offset: 0 })).toEqual([])
      expect(yield* subscriptions.list(tenant, { reference: "ref\u0000", limit: 25, offset: 0 })).toEqual([])
      expect(yield* subscriptions.listByCustomer("nope" as Ids.CustomerId)).toEqual([])
      expect(yield* invoices.latest("nope")).toBeUndefined()
      expect(yield* invoices.list("nope", { limit: 25, offset: 0 })).toEqual([])
      // A well-formed id that names nothing.
      const unknown = yield* uuid
      expect(yield* sessions.find(tenant, Ids.lookup(unknown))).toBeUndefined()
      expect(yield* subscriptions.lockById(unknown)).toBeUndefined()
      expect(yield* invoices.latest(unknown)).toBeUndefined()
    })
  )
})
