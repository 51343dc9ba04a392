/**
 * The list reads of subscriptions and invoices, on PGlite and (with DATABASE_URL) PostgreSQL: their order,
 * filters and paging, and that every query the adapters make is served by an index.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { expect } from "@effect/vitest"
import { Ids, Invoice, Store, Subscription } from "@laari/core"
import { Seed } from "@laari/testkit"
import { Effect } from "effect"
import {
  uuid,
  hours,
  T0,
  right,
  freshMerchant,
  subscribe,
  paidCycle,
  ids
} from "../support/SubscriptionRows.js"
import * as TestDatabase from "../support/TestDatabase.js"

TestDatabase.eachBackend("SQL checkout sessions, subscriptions and invoices", (it) => {
  it.effect("list is newest first, filters by status and reference, pages by limit and offset", () =>
    Effect.gen(function* () {
      const subscriptions = yield* Store.SubscriptionsStore
      const { tenant, payer } = yield* freshMerchant
      // Two created in the same instant keep the order they were written in.
      const s1 = (yield* subscribe(tenant, payer, T0)).subscription
      const s2 = (yield* subscribe(tenant, payer, hours(T0, 1))).subscription
      const s3 = (yield* subscribe(tenant, payer, hours(T0, 1))).subscription
      const s4 = (yield* subscribe(tenant, payer, hours(T0, 2))).subscription
      // Written out of creation order: the order is the creation time's, not the insertion's.
      const s0 = (yield* subscribe(tenant, payer, hours(T0, -5))).subscription
      const cancelled = right(Subscription.cancelNow(s2, "MERCHANT", hours(T0, 3))).subscription
      yield* subscriptions.update(cancelled, null)
      const page = (filter: Partial<Store.SubscriptionFilter>) =>
        Effect.map(subscriptions.list(tenant, { limit: 25, offset: 0, ...filter }), ids)
      expect(yield* page({})).toEqual([s4.id, s3.id, s2.id, s1.id, s0.id])
      expect(yield* page({ limit: 2 })).toEqual([s4.id, s3.id])
      expect(yield* page({ limit: 2, offset: 2 })).toEqual([s2.id, s1.id])
      expect(yield* page({ limit: 2, offset: 4 })).toEqual([s0.id])
      expect(yield* page({ offset: 5 })).toEqual([])
      expect(yield* page({ status: "ACTIVE" })).toEqual([s4.id, s3.id, s1.id, s0.id])
      expect(yield* page({ status: "ACTIVE", limit: 1, offset: 1 })).toEqual([s3.id])
      expect(yield* page({ status: "CANCELLED" })).toEqual([s2.id])
      expect(yield* page({ status: "PAST_DUE" })).toEqual([])
      expect(yield* page({ reference: s3.reference })).toEqual([s3.id])
      expect(yield* page({ reference: s3.reference, status: "CANCELLED" })).toEqual([])
      expect(yield* page({ reference: "nobody" })).toEqual([])
      expect(
        (yield* subscriptions.list(tenant, { status: "CANCELLED", limit: 25, offset: 0 }))[0]
      ).toStrictEqual(cancelled)
    })
  )

  it.effect("listByCustomer is the wallet's subscriptions with every merchant, newest first", () =>
    Effect.gen(function* () {
      const subscriptions = yield* Store.SubscriptionsStore
      const seed = yield* Seed.Seed
      const customer = yield* seed.customer({ environment: "test", phone: `+960 ${yield* uuid}` })
      const one = yield* freshMerchant
      const two = yield* freshMerchant
      const a = (yield* subscribe(one.tenant, customer.id, T0)).subscription
      const b = (yield* subscribe(two.tenant, customer.id, hours(T0, 1))).subscription
      const c = (yield* subscribe(one.tenant, customer.id, hours(T0, 1))).subscription
      yield* subscribe(one.tenant, one.payer, hours(T0, 2))
      expect(ids(yield* subscriptions.listByCustomer(customer.id))).toEqual([c.id, b.id, a.id])
      expect((yield* subscriptions.listByCustomer(customer.id))[2]).toStrictEqual(a)
      expect(yield* subscriptions.listByCustomer((yield* uuid) as Ids.CustomerId)).toEqual([])
    })
  )

  it.effect("invoices: newest cycle first, paged by limit and offset; latest is the highest period", () =>
    Effect.gen(function* () {
      const invoices = yield* Store.InvoicesStore
      const { tenant, payer } = yield* freshMerchant
      const a = yield* subscribe(tenant, payer, T0, { price: { interval: "WEEK", intervalCount: 2 } })
      const other = yield* subscribe(tenant, payer, T0)
      const sub = a.subscription
      // Written out of order: the order is the period's, not the insertion's or the creation time's.
      const cycle3 = yield* paidCycle(sub, 3)
      const cycle1 = yield* paidCycle(sub, 1)
      const cycle2 = yield* paidCycle(sub, 2)
      for (const inv of [cycle3, cycle1, cycle2]) yield* invoices.insert(inv)
      const cycle4 = Invoice.open(sub, 4, T0, Invoice.InvoiceId.make(yield* uuid))
      yield* invoices.insert(cycle4)
      const page = (limit: number, offset: number) =>
        Effect.map(invoices.list(sub.id, { limit, offset }), ids)
      expect(yield* page(25, 0)).toEqual([cycle4.id, cycle3.id, cycle2.id, cycle1.id, a.invoice.id])
      expect(yield* page(2, 0)).toEqual([cycle4.id, cycle3.id])
      expect(yield* page(2, 2)).toEqual([cycle2.id, cycle1.id])
      expect(yield* page(2, 4)).toEqual([a.invoice.id])
      expect(yield* page(2, 6)).toEqual([])
      expect(yield* invoices.latest(sub.id)).toStrictEqual(cycle4)
      expect(cycle4.periodKey).toBe("2030-03-28")
      expect((yield* invoices.list(sub.id, { limit: 1, offset: 1 }))[0]).toStrictEqual(cycle3)
      expect(ids(yield* invoices.list(other.subscription.id, { limit: 25, offset: 0 }))).toEqual([
        other.invoice.id
      ])
    })
  )

  it.effect("every query the adapters make is served by an index", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const id = `'${yield* uuid}'`
      const tenant = `merchant_id = ${id} AND environment = 'test'`
      const now = "'2030-01-01T00:00:00Z'"
      const newest = "ORDER BY created_at DESC, position DESC"
      // The adapters' queries, with literals for parameters; `true`: the index also gives the order.
      const queries: ReadonlyArray<readonly [string, boolean]> = [
        [`SELECT * FROM checkout_sessions WHERE id = ${id} AND ${tenant} FOR UPDATE`, false],
        [`SELECT * FROM checkout_sessions WHERE id = ${id} FOR UPDATE`, false],
        [
          `SELECT * FROM checkout_sessions WHERE status = 'OPEN' AND expires_at <= ${now}
                   ORDER BY expires_at LIMIT 100 FOR UPDATE SKIP LOCKED`,
          true
        ],
        ["SELECT min(expires_at) AS at FROM checkout_sessions WHERE status = 'OPEN'", false],
        [`SELECT * FROM subscriptions WHERE ${tenant} AND id = ${id} FOR UPDATE`, false],
        [`SELECT * FROM subscriptions WHERE ${tenant} AND reference = 'r'`, false],
        [`SELECT * FROM subscriptions WHERE id = ${id} FOR UPDATE`, false],
        [`SELECT * FROM subscriptions WHERE ${tenant} ${newest} LIMIT 25 OFFSET 50`, true],
        [
          `SELECT * FROM subscriptions WHERE ${tenant} AND status = 'PAST_DUE' ${newest} LIMIT 25 OFFSET 0`,
          true
        ],
        [
          `SELECT * FROM subscriptions WHERE ${tenant} AND reference = 'r' ${newest} LIMIT 25 OFFSET 0`,
          false
        ],
        [`SELECT * FROM subscriptions WHERE customer_id = ${id} ${newest}`, true],
        [
          `SELECT * FROM subscriptions WHERE due_at <= ${now} ORDER BY due_at LIMIT 100 FOR UPDATE SKIP LOCKED`,
          true
        ],
        ["SELECT min(due_at) AS at FROM subscriptions WHERE due_at IS NOT NULL", false],
        [`SELECT * FROM invoices WHERE subscription_id = ${id} ORDER BY period_index DESC LIMIT 1`, true],
        [
          `SELECT * FROM invoices WHERE subscription_id = ${id} ORDER BY period_index DESC LIMIT 25 OFFSET 25`,
          true
        ],
        // What the constraints look up on every write.
        [`SELECT 1 FROM invoices WHERE subscription_id = ${id} AND period_key = '2030-01-31'`, false],
        [`SELECT 1 FROM subscriptions WHERE checkout_session_id = ${id}`, false]
      ]
      yield* sql.withTransaction(
        Effect.gen(function* () {
          // Tables here are small: forbid sequential scans so the plan shows whether an index serves,
          // and sorts, so a plan still sorting shows that no index gives the order.
          yield* sql`SET LOCAL enable_seqscan = off`
          yield* sql`SET LOCAL enable_sort = off`
          for (const [query, ordered] of queries) {
            const plan = yield* sql.unsafe<Record<string, string>>(`EXPLAIN ${query}`)
            const text = plan.map((row) => row["QUERY PLAN"]).join("\n")
            expect(text, query).not.toContain("Seq Scan")
            expect(text, query).toContain("Index")
            // A sort on top of an index scan would mean the index does not give the order.
            if (ordered) expect(text, query).not.toContain("Sort")
          }
        })
      )
    })
  )
})
