/**
 * The subscriptions part of the store contract: insert, find, list and update, another tenant's never
 * found, listing by customer, locks, and the global due claims. `StoreContract.suite` runs it on every
 * adapter; every test makes its own merchant.
 */
import { describe, expect } from "@effect/vitest"
import { Calendar, Ids, Invoice, Store, Subscription } from "@laari/core"
import { DateTime, Effect, Either } from "effect"
import { Seed } from "../../Seed.js"
import {
  Activated,
  Era,
  type It,
  T0,
  activation,
  day,
  freshMerchant,
  freshTenant,
  freshPhone,
  hour,
  ids,
  insertSession,
  isDefect,
  isoOf,
  minute,
  plain,
  plus,
  rolledBack,
  storeActivation,
  subscribe,
  tenantOf,
  uuid
} from "../support/Helpers.js"

export const tests = (it: It): void => {
  describe("subscriptions", () => {
    it.effect("insert, then find by id and by reference (also locked, and by lockById)", () =>
      Effect.gen(function* () {
        const store = yield* Store.SubscriptionsStore
        const tx = yield* Store.Transactor
        const { merchant, tenant } = yield* freshTenant()
        const monthly = yield* subscribe(tenant, merchant.sandboxPayer)
        const weekly = yield* subscribe(tenant, merchant.sandboxPayer, {
          at: plus(T0, 3 * day + 789),
          request: {
            reference: `SUB 7/2026 ${yield* uuid}`,
            priceData: { name: "Weekly box", amount: 500_000, interval: "WEEK", intervalCount: 52 }
          }
        })
        for (const { subscription: sub } of [monthly, weekly]) {
          expect(plain(yield* store.find(tenant, Ids.lookup(sub.id)))).toEqual(plain(sub))
          expect(plain(yield* store.find(tenant, Ids.lookup(sub.id.toUpperCase())))).toEqual(plain(sub))
          expect(plain(yield* store.find(tenant, Ids.lookup(sub.reference)))).toEqual(plain(sub))
          const locked = yield* tx.withTransaction(
            store.find(tenant, Ids.lookup(sub.reference), { forUpdate: true })
          )
          expect(plain(locked)).toEqual(plain(sub))
          expect(plain(yield* tx.withTransaction(store.lockById(sub.id)))).toEqual(plain(sub))
          expect(plain(yield* store.lockById(sub.id.toUpperCase()))).toEqual(plain(sub))
        }
        expect(weekly.subscription).toMatchObject({ interval: "WEEK", intervalCount: 52, amount: 500_000 })
        expect(yield* store.find(tenant, Ids.lookup(yield* uuid))).toBeUndefined()
        expect(yield* store.find(tenant, Ids.lookup("no-such-reference"))).toBeUndefined()
        expect(yield* store.find(tenant, { _tag: "ById", id: "not-a-uuid" })).toBeUndefined()
        // Text no database row can hold finds nothing, rather than failing.
        expect(yield* store.find(tenant, Ids.lookup("SUB\u00007"))).toBeUndefined()
        expect(yield* store.lockById(yield* uuid)).toBeUndefined()
        expect(yield* store.lockById("not-a-uuid")).toBeUndefined()
      })
    )

    it.effect("another merchant's or environment's subscription is not found; lockById finds any", () =>
      Effect.gen(function* () {
        const store = yield* Store.SubscriptionsStore
        const owner = yield* freshMerchant()
        const other = yield* freshMerchant()
        const { subscription: sub } = yield* subscribe(tenantOf(owner), owner.sandboxPayer)
        for (const tenant of [tenantOf(other), tenantOf(owner, "live"), tenantOf(other, "live")]) {
          expect(yield* store.find(tenant, Ids.lookup(sub.id))).toBeUndefined()
          expect(yield* store.find(tenant, Ids.lookup(sub.reference))).toBeUndefined()
          expect(yield* store.list(tenant, { limit: 100, offset: 0 })).toEqual([])
        }
        expect(ids(yield* store.list(tenantOf(owner), { limit: 100, offset: 0 }))).toEqual([sub.id])
        // The engine and the customer's side have no tenant: they find any subscription by id.
        expect((yield* store.lockById(sub.id))?.id).toBe(sub.id)
      })
    )

    it.effect("the schema refuses, as a defect, a second subscription of one session, or of none", () =>
      Effect.gen(function* () {
        const store = yield* Store.SubscriptionsStore
        const { merchant, tenant } = yield* freshTenant()
        const a = yield* subscribe(tenant, merchant.sandboxPayer)
        // The same session settled twice: a second activation of its open form.
        const twice = Either.getOrThrow(
          Subscription.activate(a.opened, merchant.sandboxPayer, plus(T0, 2 * minute), {
            subscriptionId: (yield* uuid) as Subscription.SubscriptionId,
            invoiceId: (yield* uuid) as Invoice.InvoiceId,
            paymentId: yield* uuid
          })
        )
        const orphan = yield* activation(tenant, merchant.sandboxPayer)
        const fresh = yield* activation(tenant, merchant.sandboxPayer, { at: plus(T0, hour) })
        yield* (yield* Store.CheckoutSessionsStore).insert(fresh.opened)
        const refusals: ReadonlyArray<readonly [string, Subscription.Subscription]> = [
          ["a second subscription of one session", twice.subscription],
          ["the same, under another reference", { ...twice.subscription, reference: `other-${yield* uuid}` }],
          ["a subscription whose session was never stored", orphan.subscription],
          ["an id already taken", { ...fresh.subscription, id: a.subscription.id }]
        ]
        for (const [what, sub] of refusals) {
          expect(isDefect(yield* Effect.exit(store.insert(sub, plus(T0, day)))), what).toBe(true)
        }
        for (const id of [twice.subscription.id, orphan.subscription.id])
          expect(yield* store.lockById(id)).toBeUndefined()
        // The session left free takes its subscription.
        yield* store.insert(fresh.subscription, null)
        expect(plain(yield* store.lockById(fresh.subscription.id))).toEqual(plain(fresh.subscription))
        expect(plain(yield* store.find(tenant, Ids.lookup(a.subscription.reference)))).toEqual(
          plain(a.subscription)
        )
        expect(ids(yield* store.list(tenant, { limit: 100, offset: 0 }))).toEqual([
          fresh.subscription.id,
          a.subscription.id
        ])
      })
    )

    it.effect("list is newest first, filters by status and reference, pages by limit and offset", () =>
      Effect.gen(function* () {
        const store = yield* Store.SubscriptionsStore
        const { merchant, tenant } = yield* freshTenant()
        const payer = merchant.sandboxPayer
        const made = yield* Effect.forEach([1, 2, 3, 4, 5], (i) =>
          activation(tenant, payer, { at: plus(T0, i * minute) })
        )
        const withStatus = (a: Activated, status: Subscription.Status): Activated => {
          const at = plus(a.subscription.createdAt, hour)
          const subscription =
            status === "ACTIVE"
              ? a.subscription
              : status === "PAST_DUE"
                ? { ...a.subscription, status, pastDueSince: at }
                : Either.getOrThrow(Subscription.cancelNow(a.subscription, "MERCHANT", at)).subscription
          return { ...a, subscription }
        }
        const statuses: ReadonlyArray<Subscription.Status> = [
          "ACTIVE",
          "PAST_DUE",
          "ACTIVE",
          "CANCELLED",
          "ACTIVE"
        ]
        const stored = made.map((a, i) => withStatus(a, statuses[i]!))
        // Inserted out of order: the order of a list comes from `createdAt`, not from insertion.
        for (const i of [2, 0, 4, 1, 3]) yield* storeActivation(stored[i]!)
        // Two created in the same instant: the one inserted later is newer.
        const tieFirst = yield* subscribe(tenant, payer, { at: plus(T0, 10 * minute) })
        const tieSecond = yield* subscribe(tenant, payer, { at: plus(T0, 10 * minute) })
        yield* subscribe(tenantOf(yield* freshMerchant()), payer, { at: plus(T0, 3 * minute) })
        yield* subscribe(tenantOf(merchant, "live"), payer, { at: plus(T0, 3 * minute) })

        const newest = [tieSecond, tieFirst, ...[...stored].reverse()].map((a) => a.subscription)
        const list = (filter: Partial<Store.SubscriptionFilter>) =>
          Effect.map(store.list(tenant, { limit: 25, offset: 0, ...filter }), ids)
        expect(yield* list({})).toEqual(ids(newest))
        expect(plain(yield* store.list(tenant, { limit: 25, offset: 0 }))).toEqual(plain(newest))
        expect(yield* list({ status: "ACTIVE" })).toEqual(ids(newest.filter((s) => s.status === "ACTIVE")))
        expect(yield* list({ status: "PAST_DUE" })).toEqual([stored[1]!.subscription.id])
        expect(yield* list({ status: "CANCELLED" })).toEqual([stored[3]!.subscription.id])
        expect(yield* list({ reference: stored[3]!.subscription.reference })).toEqual([
          stored[3]!.subscription.id
        ])
        expect(yield* list({ reference: stored[3]!.subscription.reference, status: "ACTIVE" })).toEqual([])
        expect(yield* list({ reference: "no-such-reference" })).toEqual([])
        expect(yield* list({ limit: 2, offset: 1 })).toEqual(ids(newest.slice(1, 3)))
        expect(yield* list({ limit: 1, offset: 6 })).toEqual([newest[6]!.id])
        expect(yield* list({ offset: 7 })).toEqual([])
        expect(yield* list({ status: "ACTIVE", limit: 2, offset: 2 })).toEqual([
          stored[4]!.subscription.id,
          stored[2]!.subscription.id
        ])
      })
    )

    it.effect("update changes what the subscription's life changes, and nothing frozen at consent", () =>
      Effect.gen(function* () {
        const store = yield* Store.SubscriptionsStore
        const seed = yield* Seed
        const { merchant, tenant } = yield* freshTenant()
        const { subscription: sub } = yield* subscribe(tenant, merchant.sandboxPayer)
        const bystander = (yield* subscribe(tenant, merchant.sandboxPayer, { at: plus(T0, hour) }))
          .subscription
        const find = Effect.map(store.find(tenant, Ids.lookup(sub.id)), plain)

        const p1 = Calendar.period(sub.billingCycleAnchor, sub.interval, sub.intervalCount, 1)
        const filled: Subscription.Subscription = {
          ...sub,
          status: "PAST_DUE",
          currentPeriodIndex: 1,
          currentPeriodStart: p1.start,
          currentPeriodEnd: p1.end,
          nextBillingAt: plus(p1.end, 1),
          cancelAtPeriodEnd: true,
          cancelledAt: plus(p1.start, 2 * hour + 2),
          cancellationInitiator: "OPS",
          pastDueSince: plus(p1.start, 7),
          balanceWarnedFor: 2,
          metadata: { order: "ބައްޕަ 7", "with space": 'a "quoted" value' }
        }
        yield* store.update(filled, plus(p1.start, 12 * hour))
        expect(yield* find).toEqual(plain(filled))

        yield* store.update({ ...filled, metadata: {} }, null)
        expect(yield* find).toEqual(plain({ ...filled, metadata: {} }))

        const emptied: Subscription.Subscription = {
          ...filled,
          status: "CANCELLED",
          nextBillingAt: null,
          cancelAtPeriodEnd: false,
          cancelledAt: null,
          cancellationInitiator: null,
          pastDueSince: null,
          balanceWarnedFor: null,
          metadata: null
        }
        yield* store.update(emptied, null)
        expect(yield* find).toEqual(plain(emptied))

        // The plan, the payer, the anchor and the origin are frozen at consent.
        const otherPayer = yield* seed.customer({ environment: "test", phone: yield* freshPhone })
        const otherSession = yield* insertSession(tenant)
        yield* store.update(
          {
            ...emptied,
            reference: "another-reference",
            planName: "Another plan",
            amount: 99_999,
            interval: "WEEK",
            intervalCount: 3,
            checkoutSessionId: otherSession.id,
            customerId: otherPayer.id,
            billingCycleAnchor: plus(T0, day),
            createdAt: plus(T0, day)
          },
          null
        )
        expect(yield* find).toEqual(plain(emptied))

        // An update names its tenant: it cannot reach another merchant's or environment's subscription.
        for (const other of [tenantOf(yield* freshMerchant()), tenantOf(merchant, "live")]) {
          yield* store.update({ ...emptied, ...other, status: "ACTIVE", balanceWarnedFor: 9 }, null)
          expect(yield* find).toEqual(plain(emptied))
        }
        // An update of a subscription never inserted writes nothing.
        const ghost = (yield* activation(tenant, merchant.sandboxPayer)).subscription
        yield* store.update(ghost, plus(T0, day))
        expect(yield* store.lockById(ghost.id)).toBeUndefined()
        expect(plain(yield* store.find(tenant, Ids.lookup(bystander.id)))).toEqual(plain(bystander))
      })
    )

    it.effect("listByCustomer lists the subscriptions a wallet pays, of any merchant, newest first", () =>
      Effect.gen(function* () {
        const store = yield* Store.SubscriptionsStore
        const seed = yield* Seed
        const merchant = yield* freshMerchant()
        const customer = yield* seed.customer({ environment: "test", phone: yield* freshPhone })
        const older = yield* subscribe(tenantOf(merchant), customer.id)
        const cancelled = yield* activation(tenantOf(yield* freshMerchant()), customer.id, {
          at: plus(T0, hour)
        })
        const ended = Either.getOrThrow(
          Subscription.cancelNow(cancelled.subscription, "PAYER", plus(T0, day))
        )
        yield* storeActivation({ ...cancelled, subscription: ended.subscription }, null)
        yield* subscribe(tenantOf(merchant), merchant.sandboxPayer, { at: plus(T0, minute) })
        expect(plain(yield* store.listByCustomer(customer.id))).toEqual(
          plain([ended.subscription, older.subscription])
        )
        expect(yield* store.listByCustomer((yield* uuid) as Ids.CustomerId)).toEqual([])
      })
    )

    it.effect(
      "lockMany returns the subscriptions named, of any tenant, in id order, and skips the rest",
      () =>
        Effect.gen(function* () {
          const store = yield* Store.SubscriptionsStore
          const merchant = yield* freshMerchant()
          const other = yield* freshMerchant()
          const tenants = [tenantOf(merchant), tenantOf(merchant, "live"), tenantOf(other)]
          const subs = yield* Effect.forEach(tenants, (tenant, i) =>
            Effect.map(
              subscribe(tenant, merchant.sandboxPayer, { at: plus(T0, i * minute) }),
              (a) => a.subscription
            )
          )
          const sorted = [...subs].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
          const named = [
            subs[2]!.id.toUpperCase(),
            yield* uuid,
            subs[0]!.id,
            "not-a-uuid",
            subs[1]!.id,
            subs[0]!.id
          ]
          expect(plain(yield* store.lockMany(named))).toEqual(plain(sorted))
          expect(ids(yield* store.lockMany([subs[1]!.id]))).toEqual([subs[1]!.id])
          expect(yield* store.lockMany([])).toEqual([])
          expect(yield* store.lockMany(["", yield* uuid])).toEqual([])
        })
    )

    it.effect("claimDue claims exactly the subscriptions due at now, in dueAt order, up to the limit", () =>
      Effect.gen(function* () {
        const store = yield* Store.SubscriptionsStore
        const { merchant, tenant } = yield* freshTenant()
        const now = Era
        const dueAt = (dueAt: DateTime.Utc | null, t: Ids.Tenant = tenant) =>
          Effect.map(subscribe(t, merchant.sandboxPayer, { dueAt }), (a) => a.subscription)
        yield* rolledBack(
          Effect.gen(function* () {
            // Inserted out of order: claims come in `dueAt` order.
            const atNow = yield* dueAt(now)
            const dayAgo = yield* dueAt(plus(now, -day))
            const justBefore = yield* dueAt(plus(now, -1), tenantOf(yield* freshMerchant(), "live"))
            const hourAgo = yield* dueAt(plus(now, -hour))
            const justAfter = yield* dueAt(plus(now, 1))
            const never = yield* dueAt(null)
            const due = [dayAgo, hourAgo, justBefore, atNow]

            expect(plain(yield* store.claimDue(now, 100))).toEqual(plain(due))
            expect(ids(yield* store.claimDue(now, 2))).toEqual(ids(due.slice(0, 2)))
            expect(ids(yield* store.claimDue(now, 1))).toEqual([dayAgo.id])
            expect(yield* store.claimDue(plus(now, -2 * day), 100)).toEqual([])
            expect(ids(yield* store.claimDue(plus(now, 1), 100))).toEqual(ids([...due, justAfter]))

            // `dueAt` moves with each update: done for now, due later, due earlier, never again.
            yield* store.update(dayAgo, plus(now, day))
            yield* store.update({ ...never, balanceWarnedFor: 1 }, plus(now, -2 * hour))
            yield* store.update(hourAgo, null)
            expect(ids(yield* store.claimDue(now, 100))).toEqual([never.id, justBefore.id, atNow.id])
            expect((yield* store.claimDue(now, 1))[0]?.balanceWarnedFor).toBe(1)
          })
        )
      })
    )

    it.effect("nextDueAt is the earliest dueAt of any subscription", () =>
      Effect.gen(function* () {
        const store = yield* Store.SubscriptionsStore
        const { merchant, tenant } = yield* freshTenant()
        yield* rolledBack(
          Effect.gen(function* () {
            const expectNext = (t: DateTime.Utc) =>
              Effect.map(store.nextDueAt, (next) => expect(isoOf(next)).toBe(DateTime.formatIso(t)))
            yield* subscribe(tenant, merchant.sandboxPayer, { dueAt: null })
            const soon = yield* subscribe(tenant, merchant.sandboxPayer, { dueAt: plus(Era, 250) })
            const later = yield* subscribe(tenantOf(merchant, "live"), merchant.sandboxPayer, {
              dueAt: plus(Era, 3 * day + 7)
            })
            yield* expectNext(plus(Era, 250))
            yield* store.update(soon.subscription, null)
            yield* expectNext(plus(Era, 3 * day + 7))
            yield* store.update(soon.subscription, plus(Era, -5 * day))
            yield* expectNext(plus(Era, -5 * day))
            yield* store.update(soon.subscription, null)
            yield* store.update(later.subscription, null)
            const next = yield* store.nextDueAt
            if (next !== undefined) expect(DateTime.greaterThan(next, plus(Era, 3 * day + 7))).toBe(true)
          })
        )
      })
    )

    it.effect("a subscription found forUpdate or by lockById stays locked: no update is lost", () =>
      Effect.gen(function* () {
        const tx = yield* Store.Transactor
        const store = yield* Store.SubscriptionsStore
        const { merchant, tenant } = yield* freshTenant()
        const { subscription: sub } = yield* subscribe(tenant, merchant.sandboxPayer)
        // Read, wait (so the others run), write: without the lock, increments overwrite each other.
        const increment = (byLock: boolean) =>
          tx.withTransaction(
            Effect.gen(function* () {
              const found = byLock
                ? yield* store.lockById(sub.id)
                : yield* store.find(tenant, Ids.lookup(sub.reference), { forUpdate: true })
              yield* Effect.sleep("2 millis")
              yield* store.update({ ...found!, balanceWarnedFor: (found!.balanceWarnedFor ?? 0) + 1 }, null)
            })
          )
        yield* Effect.all(
          Array.from({ length: 10 }, (_, i) => increment(i % 2 === 0)),
          { concurrency: "unbounded" }
        )
        expect((yield* store.find(tenant, Ids.lookup(sub.id)))?.balanceWarnedFor).toBe(10)
      })
    )
  })
}
