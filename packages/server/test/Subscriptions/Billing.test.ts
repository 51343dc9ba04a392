/**
 * The renewal engine on real databases: workers in parallel never charge a cycle twice, and an attempt
 * left `CHARGING` by a crash is resolved without a second transfer. On PGlite always; on PostgreSQL (with
 * real concurrency between connections) when DATABASE_URL is set. Throughput figures are printed.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, layer } from "@effect/vitest"
import {
  Billing,
  Calendar,
  Engine,
  Checkout,
  Invoice,
  Money,
  Store,
  Subscription,
  Wallet,
  Work
} from "@laari/core"
import { Seed } from "@laari/testkit"
import { DateTime, Effect, Either, Exit, Layer, Schedule } from "effect"
import * as QrPng from "../../src/QrPng.js"
import * as TestDatabase from "../support/TestDatabase.js"

const start = DateTime.unsafeMake("2031-01-31T05:00:00Z")
const manual = Work.makeManualClock(DateTime.toEpochMillis(start))
const moveTo = (t: DateTime.Utc) => Effect.sync(() => manual.set(DateTime.toEpochMillis(t)))

const services = (database: Layer.Layer<TestDatabase.TestServices, unknown>) =>
  Engine.layer.pipe(Layer.provideMerge(QrPng.layer), Layer.provideMerge(database))

/**
 * `count` subscriptions of one merchant, MONTH x 1 at `amount`, all anchored at the clock's now, paid by
 * the merchant's sandbox payer or, with `payers`, by that many customers in turn (each funded with `funds`).
 */
const subscribe = (
  count: number,
  amount: number,
  payers?: { readonly count: number; readonly funds: number }
) =>
  Effect.gen(function* () {
    const seed = yield* Seed.Seed
    const checkout = yield* Checkout.Checkout
    const merchant = yield* seed.merchant({ name: "Island Gym" })
    const wallets =
      payers === undefined
        ? [merchant.sandboxPayer]
        : yield* Effect.forEach(Array.from({ length: payers.count }), (_, i) =>
            Effect.map(
              seed.customer({
                environment: "test",
                phone: `+960 77${String(i).padStart(5, "0")}`,
                balance: payers.funds
              }),
              (c) => c.id
            )
          )
    const tenant = { merchantId: merchant.id, environment: "test" as const }
    const ids: Array<string> = []
    for (let i = 0; i < count; i++) {
      const session = yield* checkout.create(tenant, {
        mode: "SUBSCRIPTION",
        reference: `member-${i}`,
        title: "Membership",
        description: null,
        returnUrl: null,
        amount: null,
        priceData: { name: "Monthly", amount, interval: "MONTH", intervalCount: 1 }
      })
      const settled = yield* checkout.settle(session.id, wallets[i % wallets.length]!)
      ids.push(settled.subscription!.id)
    }
    return { merchant, tenant, ids, wallets }
  })

for (const backend of TestDatabase.backends) {
  describe.skipIf(backend.skip)(`the renewal engine on ${backend.name}`, () => {
    const count = backend.name === "PostgreSQL" ? 1000 : 150

    // One database for the three tests (a PGlite initdb costs seconds of CPU), emptied at the start of
    // each: their subscriptions stay due as the shared clock moves, and each counts only its own.
    layer(services(backend.layer()), { excludeTestServices: true, timeout: "120 seconds" })((it) => {
      it.effect(
        `four workers in parallel over ${count} due subscriptions: one PAID invoice per cycle, one transfer per invoice`,
        () =>
          Effect.gen(function* () {
            yield* TestDatabase.reset
            yield* moveTo(start)
            const t0 = Date.now()
            const { merchant, ids } = yield* subscribe(count, 1000)
            const seeded = Date.now() - t0
            const sub0 = yield* Effect.flatMap(Store.SubscriptionsStore, (s) => s.lockById(ids[0]!))
            yield* moveTo(DateTime.add(sub0!.currentPeriodEnd, { minutes: 1 }))
            const billing = yield* Billing.Billing
            const t1 = Date.now()
            // As the renewals job does: a run the database could not serve in time (a lock wait past its
            // bound behind another worker on a loaded machine) rolled back whole, and is run again.
            const worker = billing.runDue(25).pipe(
              Effect.retry({
                while: (e) => e._tag === "ServiceUnavailable",
                schedule: Schedule.spaced("200 millis"),
                times: 20
              })
            )
            const claimed = yield* Effect.all(
              Array.from({ length: 4 }, () => worker),
              { concurrency: 4 }
            )
            const renewing = Date.now() - t1
            console.log(
              `${backend.name}: ${count} subscriptions created in ${seeded} ms; renewed by 4 workers in ${renewing} ms ` +
                `(${Math.round((count / renewing) * 1000)} renewals/s); claims per worker ${claimed.join(", ")}`
            )
            const sql = yield* SqlClient.SqlClient
            const perCycle = yield* sql<{ readonly n: number | string }>`
            SELECT count(*) AS n FROM invoices WHERE merchant_id = ${merchant.id} AND status = 'PAID'
            GROUP BY subscription_id, period_key HAVING count(*) > 1`
            expect(perCycle).toEqual([])
            const invoices = yield* sql<{
              readonly status: string
              readonly period_index: number
              readonly n: number | string
            }>`
            SELECT status, period_index, count(*) AS n FROM invoices WHERE merchant_id = ${merchant.id}
            GROUP BY status, period_index ORDER BY period_index`
            expect(invoices.map((r) => [r.status, r.period_index, Number(r.n)])).toEqual([
              ["PAID", 0, count],
              ["PAID", 1, count]
            ])
            const transfers = yield* sql<{ readonly n: number | string }>`
            SELECT count(*) AS n FROM ledger_transfers t JOIN invoices i ON t.id = i.id || ':' || i.attempt_count
            WHERE i.merchant_id = ${merchant.id} AND i.period_index = 1`
            expect(Number(transfers[0]!.n)).toBe(count)
            const payer = yield* Effect.flatMap(Wallet.Wallet, (w) => w.payer(merchant.sandboxPayer))
            expect(payer!.balance).toBe(Seed.SandboxPayerBalance - 2 * count * 1000)
            const again = yield* billing.runDue()
            expect(again).toBe(0)
          }).pipe(Effect.withClock(manual.clock)),
        300_000
      )

      it.effect(
        "workers in parallel over subscriptions three cycles late, across payers: every cycle paid once, in order",
        () =>
          Effect.gen(function* () {
            yield* TestDatabase.reset
            // The clock only moves forward, and the tests before this one have moved it.
            yield* moveTo(DateTime.unsafeMake("2033-01-15T05:00:00Z"))
            const { merchant, ids, wallets } = yield* subscribe(60, 1500, { count: 12, funds: 100_000 })
            const sub0 = (yield* Effect.flatMap(Store.SubscriptionsStore, (s) => s.lockById(ids[0]!)))!
            // Three renewals due at once: each batch pays a cycle, opens the next and attempts it, in turn.
            yield* moveTo(
              DateTime.add(Calendar.periodStart(sub0.billingCycleAnchor, "MONTH", 1, 3), { minutes: 1 })
            )
            const billing = yield* Billing.Billing
            const claims = yield* Effect.all(
              Array.from({ length: 3 }, () => billing.runDue(7)),
              { concurrency: 3 }
            ).pipe(Effect.exit)
            expect(Exit.isSuccess(claims)).toBe(true)
            const invoices = yield* Store.InvoicesStore
            for (const id of ids) {
              const cycles = yield* invoices.list(id, { limit: 10, offset: 0 })
              expect(cycles.map((i) => [i.periodIndex, i.status, i.attemptCount])).toEqual([
                [3, "PAID", 1],
                [2, "PAID", 1],
                [1, "PAID", 1],
                [0, "PAID", 1]
              ])
            }
            const wallet = yield* Wallet.Wallet
            // Five subscriptions per payer, four cycles each (the first paid at checkout).
            for (const payer of wallets)
              expect((yield* wallet.payer(payer))!.balance).toBe(100_000 - 5 * 4 * 1500)
            const sql = yield* SqlClient.SqlClient
            const events = yield* sql<{ readonly type: string; readonly n: number | string }>`
            SELECT type, count(*) AS n FROM events WHERE merchant_id = ${merchant.id} AND type = 'invoice.paid'
            GROUP BY type`
            // The first cycle's was emitted at checkout.
            expect(events.map((r) => Number(r.n))).toEqual([60 * 4])
            expect(yield* billing.runDue()).toBe(0)
          }).pipe(Effect.withClock(manual.clock)),
        120_000
      )

      it.effect(
        "resolves an attempt left CHARGING by a crash, before or after its transfer, without charging twice",
        () =>
          Effect.gen(function* () {
            yield* TestDatabase.reset
            const later = DateTime.unsafeMake("2032-03-31T05:00:00Z")
            yield* moveTo(later)
            const { merchant, ids } = yield* subscribe(2, 2500)
            const tx = yield* Store.Transactor
            const subscriptions = yield* Store.SubscriptionsStore
            const invoices = yield* Store.InvoicesStore
            const wallet = yield* Wallet.Wallet
            const balance = () => Effect.map(wallet.payer(merchant.sandboxPayer), (p) => p!.balance)
            const before = yield* balance()
            const first = yield* subscriptions.lockById(ids[0]!)
            const due = DateTime.add(first!.currentPeriodEnd, { minutes: 1 })
            yield* moveTo(due)

            /** What a worker commits before its transfer: the cycle opened and the attempt started. */
            const crashBeforeTransfer = (id: string) =>
              tx.withTransaction(
                Effect.gen(function* () {
                  const sub = (yield* subscriptions.lockById(id))!
                  const opened = Either.getOrThrow(
                    Subscription.openNextPeriod(
                      sub,
                      yield* invoices.latest(id),
                      due,
                      Invoice.InvoiceId.make(crypto.randomUUID())
                    )
                  )
                  const charging = Either.getOrThrow(Invoice.startAttempt(opened.invoice, due))
                  yield* invoices.insert(charging)
                  yield* subscriptions.update(
                    opened.subscription,
                    DateTime.add(due, { seconds: Billing.LeaseSeconds })
                  )
                  return charging
                })
              )

            // Crash 1: after the attempt started, before the transfer.
            yield* crashBeforeTransfer(ids[0]!)
            // Crash 2: after the transfer went through, before its outcome was recorded.
            const charging = yield* crashBeforeTransfer(ids[1]!)
            yield* wallet.transfer({
              id: Invoice.transferId(charging),
              environment: "test",
              payer: merchant.sandboxPayer,
              merchant: merchant.id,
              amount: Money.Laari(2500),
              fee: Money.Laari(25),
              memo: "crashed attempt"
            })
            expect(yield* balance()).toBe(before - 2500)

            const billing = yield* Billing.Billing
            // The claim lease keeps other workers off until it lapses.
            expect(yield* billing.runDue()).toBe(0)
            yield* moveTo(DateTime.add(due, { seconds: Billing.LeaseSeconds + 1 }))
            expect(yield* billing.runDue()).toBe(2)
            for (const id of ids) {
              const latest = (yield* invoices.latest(id))!
              expect(latest).toMatchObject({ status: "PAID", attemptCount: 1, periodIndex: 1 })
              expect(latest.paymentIntentId).toBe(Invoice.transferId(latest))
            }
            // Each subscription paid its renewal exactly once.
            expect(yield* balance()).toBe(before - 2 * 2500)
          }).pipe(Effect.withClock(manual.clock)),
        120_000
      )
    })
  })
}
