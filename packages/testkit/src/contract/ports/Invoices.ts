/**
 * The invoices part of the store contract: one per period, the latest and lists by subscription, updates
 * that change only what attempts change, and rollback. `StoreContract.suite` runs it on every adapter;
 * every test makes its own merchant.
 */
import { describe, expect } from "@effect/vitest"
import { Ids, Invoice, Store } from "@laari/core"
import { Effect, Either } from "effect"
import {
  Era,
  type It,
  Rollback,
  T0,
  activation,
  cycleInvoice,
  day,
  freshMerchant,
  freshTenant,
  hour,
  ids,
  isDefect,
  paidAt,
  plain,
  plus,
  storeActivation,
  subscribe,
  uuid
} from "../support/Helpers.js"

/** A fresh tenant and two subscriptions of its sandbox payer's, the second an hour after `T0`. */
const twoSubscriptions = Effect.gen(function* () {
  const { merchant, tenant } = yield* freshTenant()
  const a = yield* subscribe(tenant, merchant.sandboxPayer)
  const b = yield* subscribe(tenant, merchant.sandboxPayer, { at: plus(T0, hour) })
  return { a, b }
})

export const tests = (it: It): void => {
  describe("invoices", () => {
    it.effect("latestOf is latest for each subscription named, and nothing for one without invoices", () =>
      Effect.gen(function* () {
        const store = yield* Store.InvoicesStore
        const { a, b } = yield* twoSubscriptions
        const second = yield* cycleInvoice(a.subscription, 1)
        yield* store.insert(second)
        const byId = (list: ReadonlyArray<Invoice.Invoice>) =>
          plain([...list].sort((x, y) => (x.id < y.id ? -1 : 1)))
        expect(byId(yield* store.latestOf([a.subscription.id, b.subscription.id]))).toEqual(
          byId([second, b.invoice])
        )
        expect(plain(yield* store.latestOf([b.subscription.id.toUpperCase(), yield* uuid, "x"]))).toEqual(
          plain([b.invoice])
        )
        expect(yield* store.latestOf([])).toEqual([])
        expect(yield* store.latestOf([yield* uuid])).toEqual([])
      })
    )

    it.effect("listBySubscriptions gives each subscription's newest cycles, at most n each, in one go", () =>
      Effect.gen(function* () {
        const store = yield* Store.InvoicesStore
        const { a, b } = yield* twoSubscriptions
        const a1 = yield* cycleInvoice(a.subscription, 1)
        const a2 = paidAt(a1, plus(a1.createdAt, 5), yield* uuid)
        const a3 = yield* cycleInvoice(a.subscription, 2)
        yield* store.insert(a2)
        yield* store.insert(a3)
        const got = yield* store.listBySubscriptions(
          [a.subscription.id, b.subscription.id.toUpperCase(), yield* uuid],
          2
        )
        expect(plain(got.filter((i) => i.subscriptionId === a.subscription.id))).toEqual(plain([a3, a2]))
        expect(plain(got.filter((i) => i.subscriptionId === b.subscription.id))).toEqual(plain([b.invoice]))
        expect(got).toHaveLength(3)
        expect(yield* store.listBySubscriptions([], 2)).toEqual([])
      })
    )

    it.effect("latest is the highest period; list is newest cycle first, paged by limit and offset", () =>
      Effect.gen(function* () {
        const store = yield* Store.InvoicesStore
        const {
          a: { subscription: sub, invoice: first },
          b: other
        } = yield* twoSubscriptions
        expect(plain(yield* store.latest(sub.id))).toEqual(plain(first))
        expect(plain(yield* store.list(sub.id, { limit: 25, offset: 0 }))).toEqual(plain([first]))

        const paid = yield* Effect.forEach([1, 2], (n) =>
          Effect.gen(function* () {
            const inv = yield* cycleInvoice(sub, n)
            return paidAt(inv, plus(inv.createdAt, 5), yield* uuid)
          })
        )
        const open = yield* cycleInvoice(sub, 3)
        // Inserted out of order: the order comes from the period, not from insertion.
        for (const inv of [paid[1]!, open, paid[0]!]) yield* store.insert(inv)
        yield* store.insert(yield* cycleInvoice(other.subscription, 1))

        const newest = [open, paid[1]!, paid[0]!, first]
        expect(newest.map((i) => i.periodIndex)).toEqual([3, 2, 1, 0])
        expect(new Set(newest.map((i) => i.periodKey)).size).toBe(4)
        expect(plain(yield* store.latest(sub.id))).toEqual(plain(open))
        expect(plain(yield* store.latest(sub.id.toUpperCase()))).toEqual(plain(open))
        expect(plain(yield* store.list(sub.id, { limit: 25, offset: 0 }))).toEqual(plain(newest))
        expect(ids(yield* store.list(sub.id.toUpperCase(), { limit: 25, offset: 0 }))).toEqual(ids(newest))
        expect(ids(yield* store.list(sub.id, { limit: 2, offset: 1 }))).toEqual(ids(newest.slice(1, 3)))
        expect(ids(yield* store.list(sub.id, { limit: 1, offset: 3 }))).toEqual([first.id])
        expect(yield* store.list(sub.id, { limit: 25, offset: 4 })).toEqual([])
        expect((yield* store.latest(other.subscription.id))?.periodIndex).toBe(1)
        expect(ids(yield* store.list(other.subscription.id, { limit: 25, offset: 1 }))).toEqual([
          other.invoice.id
        ])
        for (const id of [yield* uuid, "not-a-uuid", ""]) {
          expect(yield* store.latest(id)).toBeUndefined()
          expect(yield* store.list(id, { limit: 25, offset: 0 })).toEqual([])
        }
      })
    )

    it.effect("update changes what attempts change, and nothing the cycle fixes", () =>
      Effect.gen(function* () {
        const store = yield* Store.InvoicesStore
        const { merchant, tenant } = yield* freshTenant()
        const { subscription: sub, invoice: first } = yield* subscribe(tenant, merchant.sandboxPayer)
        const opened = yield* cycleInvoice(sub, 1)
        yield* store.insert(opened)
        const latest = Effect.map(store.latest(sub.id), plain)
        expect(yield* latest).toEqual(plain(opened))

        // Through the attempts: a miss, its retry, a success.
        const charging = Either.getOrThrow(Invoice.startAttempt(opened, plus(opened.createdAt, 3)))
        yield* store.update(charging)
        expect(yield* latest).toEqual(plain(charging))
        const missed = Either.getOrThrow(Invoice.fail(charging, "wallet-limit", plus(opened.createdAt, 9)))
        expect(missed).toMatchObject({ status: "PENDING", failureReason: "blocked-by-rules" })
        yield* store.update(missed)
        expect(yield* latest).toEqual(plain(missed))
        const retried = paidAt(missed, missed.nextRetryAt!, yield* uuid)
        yield* store.update(retried)
        expect(yield* latest).toEqual(plain(retried))

        const filled: Invoice.Invoice = {
          ...retried,
          status: "VOID",
          attemptCount: 4,
          nextRetryAt: plus(T0, 40 * day + 1),
          failureReason: "executor-error",
          voidedAt: plus(T0, 41 * day + 2)
        }
        yield* store.update(filled)
        expect(yield* latest).toEqual(plain(filled))
        const emptied: Invoice.Invoice = {
          ...filled,
          status: "PENDING",
          attemptCount: 0,
          nextRetryAt: null,
          failureReason: null,
          paymentIntentId: null,
          paidAt: null,
          lastAttemptAt: null,
          voidedAt: null
        }
        yield* store.update(emptied)
        expect(yield* latest).toEqual(plain(emptied))
        expect(plain(emptied)).toEqual(plain(opened))

        // The cycle, its subscription and its amount are fixed when it opens.
        const other = yield* subscribe(tenant, merchant.sandboxPayer, { at: plus(T0, hour) })
        yield* store.update({
          ...emptied,
          subscriptionId: other.subscription.id,
          merchantId: (yield* freshMerchant()).id,
          environment: "live",
          subscriptionReference: "another-reference",
          periodIndex: 7,
          periodKey: "2027-01-01",
          periodStart: plus(T0, 300 * day),
          periodEnd: plus(T0, 330 * day),
          amount: 99_999,
          createdAt: plus(T0, day),
          status: "FAILED",
          attemptCount: 4
        })
        expect(yield* latest).toEqual(plain({ ...emptied, status: "FAILED", attemptCount: 4 }))
        expect(ids(yield* store.list(other.subscription.id, { limit: 25, offset: 0 }))).toEqual([
          other.invoice.id
        ])
        // An update of an invoice never inserted writes nothing.
        const ghost = yield* cycleInvoice(sub, 2)
        yield* store.update(ghost)
        expect(ids(yield* store.list(sub.id, { limit: 25, offset: 0 }))).toEqual([opened.id, first.id])
        expect(plain(yield* store.list(sub.id, { limit: 1, offset: 1 }))).toEqual(plain([first]))
      })
    )

    it.effect(
      "the schema refuses, as a defect, a second invoice for one period, or for no subscription",
      () =>
        Effect.gen(function* () {
          const store = yield* Store.InvoicesStore
          const { merchant, tenant } = yield* freshTenant()
          const a = yield* subscribe(tenant, merchant.sandboxPayer)
          const sub = a.subscription
          const second = yield* cycleInvoice(sub, 1)
          yield* store.insert(second)
          const orphan = yield* activation(tenant, merchant.sandboxPayer)
          const refusals: ReadonlyArray<readonly [string, Invoice.Invoice]> = [
            ["a second invoice for the period paid at consent", yield* cycleInvoice(sub, 0)],
            ["a second invoice for an open period", yield* cycleInvoice(sub, 1)],
            ["the same, already paid", paidAt(yield* cycleInvoice(sub, 1), plus(second.createdAt, 1), "p")],
            ["an invoice whose subscription was never stored", orphan.invoice],
            ["an id already taken", { ...(yield* cycleInvoice(sub, 2)), id: second.id }]
          ]
          for (const [what, inv] of refusals)
            expect(isDefect(yield* Effect.exit(store.insert(inv))), what).toBe(true)
          expect(plain(yield* store.list(sub.id, { limit: 25, offset: 0 }))).toEqual(
            plain([second, a.invoice])
          )
          expect(yield* store.list(orphan.subscription.id, { limit: 25, offset: 0 })).toEqual([])

          // The same period of another subscription is another cycle.
          const twin = yield* subscribe(tenant, merchant.sandboxPayer, { at: sub.billingCycleAnchor })
          const twinCycle = yield* cycleInvoice(twin.subscription, 1)
          expect(twinCycle.periodKey).toBe(second.periodKey)
          yield* store.insert(twinCycle)
          expect(plain(yield* store.latest(twin.subscription.id))).toEqual(plain(twinCycle))
        })
    )

    it.effect("a rolled-back transaction keeps no session, subscription or invoice", () =>
      Effect.gen(function* () {
        const tx = yield* Store.Transactor
        const sessions = yield* Store.CheckoutSessionsStore
        const subscriptions = yield* Store.SubscriptionsStore
        const invoices = yield* Store.InvoicesStore
        const { merchant, tenant } = yield* freshTenant()
        const a = yield* activation(tenant, merchant.sandboxPayer, { at: plus(Era, -day) })
        const outcome = yield* tx
          .withTransaction(
            Effect.gen(function* () {
              yield* storeActivation(a, plus(Era, -day))
              expect((yield* subscriptions.lockById(a.subscription.id))?.id).toBe(a.subscription.id)
              return yield* new Rollback()
            })
          )
          .pipe(Effect.either)
        expect(Either.isLeft(outcome)).toBe(true)
        expect(yield* sessions.lockById(a.session.id)).toBeUndefined()
        expect(yield* subscriptions.lockById(a.subscription.id)).toBeUndefined()
        expect(yield* subscriptions.find(tenant, Ids.lookup(a.subscription.reference))).toBeUndefined()
        expect(yield* subscriptions.list(tenant, { limit: 25, offset: 0 })).toEqual([])
        expect(yield* subscriptions.listByCustomer(merchant.sandboxPayer)).toEqual([])
        expect(yield* invoices.latest(a.subscription.id)).toBeUndefined()
        expect(ids(yield* subscriptions.claimDue(Era, 100))).not.toContain(a.subscription.id)
        // The reference, the session and the period are free again.
        yield* storeActivation(a, null)
        expect(plain(yield* subscriptions.find(tenant, Ids.lookup(a.subscription.reference)))).toEqual(
          plain(a.subscription)
        )
        expect(plain(yield* invoices.latest(a.subscription.id))).toEqual(plain(a.invoice))
        expect(plain(yield* sessions.find(tenant, Ids.lookup(a.session.id)))).toEqual(plain(a.session))
      })
    )
  })
}
