/**
 * The SQL adapters of checkout sessions, subscriptions and invoices, on PGlite and (with DATABASE_URL)
 * PostgreSQL: every field round-trips, tenant scoping, what the schema refuses (a duplicate reference is
 * `DuplicateReference` and leaves the caller's transaction usable; a second subscription for a session or
 * a second invoice for a cycle dies), the claims of the renewal engine and the expiry sweep (with
 * SKIP LOCKED between connections on PostgreSQL), list order and paging, index use, and migrating a
 * database that already has data.
 */
import * as Migrator from "@effect/sql/Migrator"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import { describe, expect, it, layer } from "@effect/vitest"
import { Calendar, CheckoutSession, Crypto, Ids, Invoice, Store, Subscription } from "@laari/core"
import { Seed } from "@laari/testkit"
import { Cause, DateTime, Deferred, Effect, Either, Exit, Fiber, Layer, Option, Redacted } from "effect"
import { mandatesLayer } from "../src/Sql/Mandates.js"
import * as Migrations from "../src/Sql/Migrations.js"
import * as PgliteClient from "../src/Sql/Pglite/PgliteClient.js"
import { transactorLayer } from "../src/Sql/Store.js"
import { checkoutSessionsLayer } from "../src/Sql/CheckoutSessions.js"
import { invoicesLayer } from "../src/Sql/Invoices.js"
import { subscriptionsLayer } from "../src/Sql/Subscriptions.js"
import * as TestDatabase from "./support/TestDatabase.js"

const uuid = Effect.flatMap(Crypto.Crypto, (c) => c.uuid)
const at = (iso: string) => DateTime.unsafeMake(iso)
const iso = (t: DateTime.Utc | null | undefined) => (t == null ? t : DateTime.formatIso(t))
const hours = (t: DateTime.Utc, h: number) => Calendar.addHours(t, h)

/** Milliseconds everywhere, and a 31st: the clamped months of the billing calendar. */
const T0 = at("2030-01-31T10:15:30.123Z")

const right = <A, E>(either: Either.Either<A, E>): A =>
  Either.getOrThrowWith(either, (e) => new Error(`expected a Right, got ${JSON.stringify(e)}`))

// ---------------------------------------------------------------------------------------------------
// Fixtures, built with the models' own constructors and transitions
// ---------------------------------------------------------------------------------------------------

const freshMerchant = Effect.gen(function* () {
  const merchant = yield* (yield* Seed.Seed).merchant({ name: "Dhoni Streaming" })
  const tenant: Ids.Tenant = { merchantId: merchant.id, environment: "test" }
  return { merchant, tenant, payer: merchant.sandboxPayer }
})

const paymentRequest = (reference: string): CheckoutSession.Request => ({
  mode: null,
  reference,
  title: "Kopi and hedhikaa",
  description: "Table 4, two kopi",
  returnUrl: "https://bappa.mv/thanks?table=4",
  amount: 12_550,
  priceData: null
})

const subscriptionRequest = (
  reference: string,
  price: Partial<CheckoutSession.PriceDataRequest> = {}
): CheckoutSession.Request => ({
  mode: "SUBSCRIPTION",
  reference,
  title: "Dhoni Streaming Gold",
  description: null,
  returnUrl: null,
  amount: null,
  priceData: { name: "Gold", amount: 15_000, interval: "MONTH", intervalCount: null, ...price }
})

const openSession = (tenant: Ids.Tenant, request: CheckoutSession.Request, now: DateTime.Utc) =>
  Effect.map(uuid, (id) =>
    CheckoutSession.open(
      {
        id: CheckoutSession.CheckoutSessionId.make(id),
        ...tenant,
        terms: right(CheckoutSession.validate(request))
      },
      now
    )
  )

/**
 * A subscription session of `tenant`, opened five minutes before `now` and paid by `customerId` at `now`,
 * written as `Checkout.settle` writes it: the session first, then the subscription (due at `dueAt`, by
 * default when the engine next has work) and invoice 0, in one transaction.
 */
const subscribe = (
  tenant: Ids.Tenant,
  customerId: Ids.CustomerId,
  now: DateTime.Utc,
  options: {
    readonly dueAt?: DateTime.Utc | null
    readonly reference?: string
    readonly price?: Partial<CheckoutSession.PriceDataRequest>
  } = {}
) =>
  Effect.gen(function* () {
    const sessions = yield* Store.CheckoutSessionsStore
    const subscriptions = yield* Store.SubscriptionsStore
    const invoices = yield* Store.InvoicesStore
    const tx = yield* Store.Transactor
    const reference = options.reference ?? `sub-${yield* uuid}`
    const opened = yield* openSession(
      tenant,
      subscriptionRequest(reference, options.price),
      DateTime.subtract(now, { minutes: 5 })
    )
    yield* sessions.insert(opened)
    const activation = right(
      Subscription.activate(opened, customerId, now, {
        subscriptionId: Subscription.SubscriptionId.make(yield* uuid),
        invoiceId: Invoice.InvoiceId.make(yield* uuid),
        paymentId: yield* uuid
      })
    )
    const dueAt =
      options.dueAt === undefined
        ? (Subscription.nextDueAt(activation.subscription, activation.invoice) ?? null)
        : options.dueAt
    yield* tx.withTransaction(
      Effect.gen(function* () {
        yield* sessions.update(activation.session)
        yield* subscriptions.insert(activation.subscription, dueAt)
        yield* invoices.insert(activation.invoice)
      })
    )
    return { opened, ...activation }
  })

/** Invoice `n` of `sub`, opened at its period's start and paid by its first attempt. */
const paidCycle = (sub: Subscription.Subscription, n: number) =>
  Effect.gen(function* () {
    const start = Calendar.period(sub.billingCycleAnchor, sub.interval, sub.intervalCount, n).start
    const opened = Invoice.open(sub, n, start, Invoice.InvoiceId.make(yield* uuid))
    const charging = right(Invoice.startAttempt(opened, start))
    return right(Invoice.succeed(charging, `pay-${opened.id}`, DateTime.add(start, { seconds: 2 })))
  })

// ---------------------------------------------------------------------------------------------------
// Database helpers
// ---------------------------------------------------------------------------------------------------

/** The constraint a defect's SQL statement broke, and its SQLSTATE. */
const brokenConstraint = (exit: Exit.Exit<unknown, unknown>) => {
  if (Exit.isSuccess(exit)) return "succeeded"
  const defect = Option.getOrUndefined(Cause.dieOption(exit.cause))
  if (!(defect instanceof SqlError)) return `not a SqlError defect: ${Cause.pretty(exit.cause)}`
  const cause = defect.cause as { readonly code?: string; readonly constraint?: string }
  return `${cause.code} ${cause.constraint}`
}

/** The `due_at` the adapter stored, as ISO text (`null` when none). */
const storedDueAt = (id: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ readonly due_at: Date | null }>`SELECT due_at FROM subscriptions WHERE id = ${id}`,
      (rows) => {
        const d = rows[0]?.due_at
        return d == null ? null : d.toISOString()
      }
    )
  )

/** Whether the subscription's metadata is SQL NULL (not the JSON `null`). */
const metadataIsSqlNull = (id: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{
        readonly missing: boolean
      }>`SELECT metadata IS NULL AS missing FROM subscriptions WHERE id = ${id}`,
      (rows) => rows[0]?.missing
    )
  )

const tables = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(
    sql<{
      name: string
    }>`SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`,
    (rows) => rows.map((r) => r.name)
  )
)

const ids = (rows: ReadonlyArray<{ readonly id: string }>) => rows.map((r) => r.id)

for (const backend of TestDatabase.backends) {
  describe.skipIf(backend.skip)(backend.name, () => {
    layer(backend.layer(), { excludeTestServices: true, timeout: "60 seconds" })(
      "SQL checkout sessions, subscriptions and invoices",
      (it) => {
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
              expect(
                yield* subscriptions.find(tenant, Ids.lookup(sub.id), { forUpdate: true })
              ).toStrictEqual(sub)
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
              expect(yield* invoices.list(sub.id, { limit: 10, offset: 0 })).toStrictEqual([
                voided,
                a.invoice
              ])
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
              expect(
                yield* sessions.find(stranger, Ids.lookup(a.session.id), { forUpdate: true })
              ).toBeUndefined()
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
            expect((yield* subscriptions.find(live, Ids.lookup(sub.reference)))?.id).toBe(
              mineLive.subscription.id
            )
            expect((yield* subscriptions.find(tenant, Ids.lookup(sub.reference)))?.id).toBe(sub.id)
          })
        )

        it.effect(
          "lookups by something that is not a UUID (or not storable) find nothing instead of failing",
          () =>
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
              expect(
                yield* subscriptions.list(tenant, { reference: "ref\u0000", limit: 25, offset: 0 })
              ).toEqual([])
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

        it.effect(
          "a duplicate session reference is DuplicateReference and leaves the caller's transaction usable",
          () =>
            Effect.gen(function* () {
              const tx = yield* Store.Transactor
              const sessions = yield* Store.CheckoutSessionsStore
              const { tenant } = yield* freshMerchant
              const first = yield* openSession(tenant, paymentRequest(`dup-${yield* uuid}`), T0)
              yield* sessions.insert(first)
              // Another mode, the same reference: references are unique across both modes.
              const duplicate = yield* openSession(tenant, subscriptionRequest(first.reference), T0)
              const after = yield* openSession(tenant, paymentRequest(`after-${yield* uuid}`), T0)
              yield* tx.withTransaction(
                Effect.gen(function* () {
                  const refused = yield* Effect.flip(sessions.insert(duplicate))
                  expect(refused).toEqual(new Store.DuplicateReference({ reference: first.reference }))
                  // On PostgreSQL a failed statement would have aborted the transaction; this one was not.
                  yield* sessions.insert(after)
                })
              )
              expect((yield* sessions.find(tenant, Ids.lookup(after.id)))?.id).toBe(after.id)
              expect(yield* sessions.find(tenant, Ids.lookup(duplicate.id))).toBeUndefined()
              expect(yield* sessions.find(tenant, Ids.lookup(first.id))).toStrictEqual(first)
            })
        )

        it.effect("one subscription per session: a second one dies and its transaction rolls back", () =>
          Effect.gen(function* () {
            const tx = yield* Store.Transactor
            const subscriptions = yield* Store.SubscriptionsStore
            const { tenant, payer } = yield* freshMerchant
            const a = yield* subscribe(tenant, payer, T0)
            const second = { ...a.subscription, id: Subscription.SubscriptionId.make(yield* uuid) }
            const exit = yield* Effect.exit(tx.withTransaction(subscriptions.insert(second, T0)))
            expect(brokenConstraint(exit)).toBe("23505 subscriptions_checkout_session")
            expect(yield* subscriptions.lockById(second.id)).toBeUndefined()
            expect(yield* subscriptions.find(tenant, Ids.lookup(a.subscription.reference))).toStrictEqual(
              a.subscription
            )
          })
        )

        it.effect("a second invoice for the same cycle dies (not swallowed); the first stays", () =>
          Effect.gen(function* () {
            const tx = yield* Store.Transactor
            const invoices = yield* Store.InvoicesStore
            const { tenant, payer } = yield* freshMerchant
            const a = yield* subscribe(tenant, payer, T0)
            const renewal = a.subscription.currentPeriodEnd
            const next = right(
              Subscription.openNextPeriod(
                a.subscription,
                a.invoice,
                renewal,
                Invoice.InvoiceId.make(yield* uuid)
              )
            )
            yield* invoices.insert(next.invoice)
            // The same cycle opened again by a racing worker: another id, the same period key.
            const again = Invoice.open(next.subscription, 1, renewal, Invoice.InvoiceId.make(yield* uuid))
            expect(again.periodKey).toBe(next.invoice.periodKey)
            const exit = yield* Effect.exit(
              tx.withTransaction(
                Effect.gen(function* () {
                  yield* invoices.insert(again)
                  return "went on"
                })
              )
            )
            expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
            expect(brokenConstraint(exit)).toBe("23505 invoices_period")
            // Even a paid one: the cycle is taken whatever its state.
            const paidAgain = yield* paidCycle(next.subscription, 1)
            expect(brokenConstraint(yield* Effect.exit(invoices.insert(paidAgain)))).toBe(
              "23505 invoices_period"
            )
            expect(yield* invoices.latest(a.subscription.id)).toStrictEqual(next.invoice)
            expect(ids(yield* invoices.list(a.subscription.id, { limit: 10, offset: 0 }))).toEqual([
              next.invoice.id,
              a.invoice.id
            ])
          })
        )

        it.effect("each rule of the schema is a named constraint that refuses the row", () =>
          Effect.gen(function* () {
            const sessions = yield* Store.CheckoutSessionsStore
            const subscriptions = yield* Store.SubscriptionsStore
            const invoices = yield* Store.InvoicesStore
            const { tenant, payer } = yield* freshMerchant
            const other = yield* freshMerchant
            const payment = yield* openSession(tenant, paymentRequest(`c-${yield* uuid}`), T0)
            const plan = yield* openSession(tenant, subscriptionRequest(`c-${yield* uuid}`), T0)
            const price = plan.price!
            const sessionCases: ReadonlyArray<readonly [CheckoutSession.CheckoutSession, string]> = [
              [{ ...payment, amount: 99 }, "23514 checkout_sessions_amount_check"],
              [{ ...payment, price }, "23514 checkout_sessions_price"],
              [{ ...plan, price: null }, "23514 checkout_sessions_price"],
              [{ ...plan, amount: price.amount + 1 }, "23514 checkout_sessions_price"],
              [
                { ...payment, environment: "sandbox" as Ids.Environment },
                "23514 checkout_sessions_environment_check"
              ]
            ]
            for (const [row, constraint] of sessionCases)
              expect(brokenConstraint(yield* Effect.exit(sessions.insert(row))), constraint).toBe(constraint)
            // A completed subscription session names the subscription created from it (checked at commit).
            yield* sessions.insert(plan)
            const completedAlone = right(
              CheckoutSession.complete(plan, hours(T0, 1), {
                customerId: payer,
                paymentId: "pay",
                subscriptionId: Subscription.SubscriptionId.make(yield* uuid)
              })
            )
            expect(brokenConstraint(yield* Effect.exit(sessions.update(completedAlone)))).toBe(
              "23503 checkout_sessions_subscription"
            )
            expect((yield* sessions.find(tenant, Ids.lookup(plan.id)))?.status).toBe("OPEN")

            const a = yield* subscribe(tenant, payer, T0)
            const theirs = yield* subscribe(other.tenant, other.payer, T0)
            const fresh = yield* openSession(tenant, subscriptionRequest(`c-${yield* uuid}`), T0)
            const theirsFresh = yield* openSession(other.tenant, subscriptionRequest(`c-${yield* uuid}`), T0)
            yield* sessions.insert(fresh)
            yield* sessions.insert(theirsFresh)
            const sub = (overrides: Partial<Subscription.Subscription>) =>
              Effect.map(uuid, (id) => ({
                ...a.subscription,
                id: Subscription.SubscriptionId.make(id),
                checkoutSessionId: fresh.id,
                reference: fresh.reference,
                ...overrides
              }))
            const subscriptionCases: ReadonlyArray<readonly [Partial<Subscription.Subscription>, string]> = [
              [{ reference: "not-the-session-reference" }, "23503 subscriptions_session"],
              [{ checkoutSessionId: theirsFresh.id }, "23503 subscriptions_session"],
              [
                { checkoutSessionId: theirsFresh.id, reference: theirsFresh.reference },
                "23503 subscriptions_session"
              ],
              [{ merchantId: other.tenant.merchantId }, "23503 subscriptions_session"],
              [
                { checkoutSessionId: CheckoutSession.CheckoutSessionId.make(yield* uuid) },
                "23503 subscriptions_session"
              ],
              [{ currentPeriodEnd: a.subscription.currentPeriodStart }, "23514 subscriptions_period"],
              [{ interval: "DAY" as Calendar.Interval }, "23514 subscriptions_billing_interval_check"],
              [
                { cancellationInitiator: "BANK" as Subscription.Initiator },
                "23514 subscriptions_cancellation_initiator_check"
              ],
              [{ status: "PAUSED" as Subscription.Status }, "23514 subscriptions_status_check"],
              [{ amount: 99 }, "23514 subscriptions_amount_check"],
              [{ customerId: (yield* uuid) as Ids.CustomerId }, "23503 subscriptions_customer_id_fkey"]
            ]
            for (const [overrides, constraint] of subscriptionCases)
              expect(
                brokenConstraint(yield* Effect.exit(subscriptions.insert(yield* sub(overrides), null))),
                constraint
              ).toBe(constraint)

            const cycle1 = right(
              Subscription.openNextPeriod(
                a.subscription,
                a.invoice,
                a.subscription.currentPeriodEnd,
                Invoice.InvoiceId.make(yield* uuid)
              )
            ).invoice
            const cycle2 = Invoice.open(a.subscription, 2, T0, Invoice.InvoiceId.make(yield* uuid))
            const invoiceCases: ReadonlyArray<readonly [Partial<Invoice.Invoice>, string]> = [
              [{ subscriptionReference: "not-its-reference" }, "23503 invoices_subscription"],
              [{ merchantId: other.tenant.merchantId }, "23503 invoices_subscription"],
              [{ subscriptionId: theirs.subscription.id }, "23503 invoices_subscription"],
              [{ periodEnd: cycle1.periodStart }, "23514 invoices_bounds"],
              [{ periodKey: "30/04/2030" }, "23514 invoices_period_key_check"],
              [
                { failureReason: "card-declined" as Invoice.FailureReason },
                "23514 invoices_failure_reason_check"
              ],
              [{ status: "OVERDUE" as Invoice.Status, attemptCount: 1 }, "23514 invoices_status_check"],
              [{ amount: 99 }, "23514 invoices_amount_check"]
            ]
            for (const [overrides, constraint] of invoiceCases)
              expect(
                brokenConstraint(yield* Effect.exit(invoices.insert({ ...cycle1, ...overrides }))),
                constraint
              ).toBe(constraint)
            // Only one cycle open at a time: while cycle 1 is unpaid, cycle 2 cannot open.
            yield* invoices.insert(cycle1)
            expect(brokenConstraint(yield* Effect.exit(invoices.insert(cycle2)))).toBe("23505 invoices_open")
            yield* invoices.insert(yield* paidCycle(a.subscription, 2))
            expect((yield* invoices.latest(a.subscription.id))?.periodIndex).toBe(2)
          })
        )

        it.effect(
          "claimDue claims exactly the due subscriptions, earliest first, up to the limit; nextDueAt",
          () =>
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
              expect(
                ids(yield* tx.withTransaction(subscriptions.claimDue(at("2030-02-28T21:59:59Z"), 100)))
              ).toEqual([])
              expect(yield* storedDueAt(never!)).toBeNull()

              // Rescheduled by update: no longer due (null), or due later.
              const [first, second] = [made[2]!.subscription, made[0]!.subscription]
              yield* subscriptions.update(first, null)
              yield* subscriptions.update(second, at("2031-01-01T00:00:00Z"))
              expect(ids(yield* tx.withTransaction(subscriptions.claimDue(now, 100)))).toEqual([ms1, exact])
              expect(iso(yield* subscriptions.nextDueAt)).toBe("2030-03-01T00:00:00.499Z")
            })
        )

        it.effect(
          "claimExpiring claims exactly the open sessions past expiresAt, oldest first; nextExpiryAt",
          () =>
            Effect.gen(function* () {
              yield* TestDatabase.reset
              const tx = yield* Store.Transactor
              const sessions = yield* Store.CheckoutSessionsStore
              const { tenant, payer } = yield* freshMerchant
              expect(yield* sessions.nextExpiryAt).toBeUndefined()
              const now = at("2030-03-02T12:00:00.250Z")
              const opened = (hoursAgo: number) =>
                openSession(
                  tenant,
                  paymentRequest(`exp-${hoursAgo}`),
                  DateTime.subtract(now, { hours: hoursAgo })
                )
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
              const alreadyExpired = CheckoutSession.expire(
                yield* opened(40),
                DateTime.subtract(now, { hours: 16 })
              )
              for (const s of [
                stillOpen,
                lapsedNow,
                lapsedHour,
                lapsedMs,
                cancelled,
                completed,
                alreadyExpired
              ])
                yield* sessions.insert(s)
              expect(iso(yield* sessions.nextExpiryAt)).toBe(iso(lapsedHour.expiresAt))
              const claimed = yield* tx.withTransaction(sessions.claimExpiring(now, 100))
              expect(ids(claimed)).toEqual([lapsedHour.id, lapsedMs.id, lapsedNow.id])
              expect(claimed.every((s) => CheckoutSession.isDueToExpire(s, now))).toBe(true)
              expect(claimed[0]).toStrictEqual(lapsedHour)
              expect(ids(yield* tx.withTransaction(sessions.claimExpiring(now, 1)))).toEqual([lapsedHour.id])
              expect(
                ids(
                  yield* tx.withTransaction(
                    sessions.claimExpiring(DateTime.subtract(now, { millis: 1 }), 100)
                  )
                )
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

        it.effect(
          "invoices: newest cycle first, paged by limit and offset; latest is the highest period",
          () =>
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
              [
                `SELECT * FROM invoices WHERE subscription_id = ${id} ORDER BY period_index DESC LIMIT 1`,
                true
              ],
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

          it.effect(
            "a subscription locked by the engine holds a merchant's cancel until the engine commits",
            () =>
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
      }
    )
  })
}

// ---------------------------------------------------------------------------------------------------
// Migrating a database deployed before subscriptions
// ---------------------------------------------------------------------------------------------------

/** Migrates only `0001_init` and `0002_qr_codes`, as a database deployed before subscriptions would be. */
const migrateBeforeSubscriptions = Migrator.make({})({
  loader: Migrator.fromRecord({
    "0001_init": Migrations.migrations["0001_init"]!,
    "0002_qr_codes": Migrations.migrations["0002_qr_codes"]!
  }),
  table: "effect_sql_migrations"
})

/** A database at 0002 with a merchant, its payer, an outlet, a QR code and a mandate, migrated to the latest. */
const upgrade = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  expect(yield* migrateBeforeSubscriptions).toEqual([
    [1, "init"],
    [2, "qr_codes"]
  ])
  expect(yield* tables).not.toContain("subscriptions")
  const merchantId = (yield* uuid) as Ids.MerchantId
  const payerId = (yield* uuid) as Ids.CustomerId
  yield* sql`INSERT INTO customers ${sql.insert({
    id: payerId,
    environment: "test",
    phone: `+960 ${payerId}`,
    created_at: new Date()
  })}`
  yield* sql`INSERT INTO merchants ${sql.insert({
    id: merchantId,
    name: "Before subscriptions",
    city: "Male",
    mcc: "5999",
    fee_bps: 100,
    mandates_live: false,
    subscriptions_live: false,
    sandbox_payer_id: payerId,
    created_at: new Date()
  })}`
  const [outlet] = yield* sql<{ id: number }>`INSERT INTO outlets ${sql.insert({
    merchant_id: merchantId,
    name: "Majeedhee Magu",
    created_at: new Date()
  })} RETURNING id`
  yield* sql`INSERT INTO qr_codes ${sql.insert({
    id: yield* uuid,
    merchant_id: merchantId,
    environment: "test",
    outlet_id: outlet!.id,
    type: "STATIC",
    status: "ACTIVE",
    title: "Counter",
    payload: "payload",
    qrid: `LQ${(yield* uuid).replaceAll("-", "").slice(0, 22)}`,
    reference: "qr-before",
    created_at: new Date()
  })}`
  const mandates = yield* Store.MandatesStore
  const tenant: Ids.Tenant = { merchantId, environment: "test" }
  const mandateId = (yield* uuid) as Ids.MandateId
  yield* mandates.insert({
    id: mandateId,
    merchantId,
    environment: "test",
    reference: "mandate-before",
    status: "INITIATED",
    title: "Before subscriptions",
    description: null,
    perChargeCap: 10_000,
    periodCap: null,
    period: null,
    periodKey: null,
    periodCharged: 0,
    returnUrl: null,
    customerId: null,
    setupExpiresAt: at("2030-01-02T00:00:00Z"),
    expiresAt: at("2031-01-01T00:00:00Z"),
    approvedAt: null,
    revokedAt: null,
    revokedBy: null,
    declinedAt: null,
    expiredAt: null,
    createdAt: at("2030-01-01T00:00:00Z")
  })

  expect((yield* Migrations.run)[0]).toEqual([3, "subscriptions"])
  expect(yield* tables).toEqual(expect.arrayContaining(["checkout_sessions", "subscriptions", "invoices"]))
  // What was there is untouched, and the new adapters work beside it.
  expect((yield* mandates.find(tenant, Ids.lookup("mandate-before")))?.id).toBe(mandateId)
  const [qr] = yield* sql<{
    reference: string
  }>`SELECT reference FROM qr_codes WHERE merchant_id = ${merchantId}`
  expect(qr?.reference).toBe("qr-before")
  const a = yield* subscribe(tenant, payerId, T0)
  expect(yield* (yield* Store.SubscriptionsStore).find(tenant, Ids.lookup(a.subscription.id))).toStrictEqual(
    a.subscription
  )
  expect(yield* (yield* Store.InvoicesStore).latest(a.subscription.id)).toStrictEqual(a.invoice)
  expect(yield* Migrations.run).toEqual([])
})

/** Just what `upgrade` needs over `client`, which must not migrate by itself. */
const unmigrated = (client: Layer.Layer<SqlClient.SqlClient, SqlError>) =>
  Layer.mergeAll(
    transactorLayer,
    mandatesLayer,
    checkoutSessionsLayer,
    subscriptionsLayer,
    invoicesLayer,
    Crypto.layerWeb
  ).pipe(Layer.provideMerge(client))

describe("migrating a database that predates subscriptions", () => {
  it.live(
    "PGlite: 0003 applies over existing merchants, QR codes and mandates",
    () => upgrade.pipe(Effect.provide(unmigrated(PgliteClient.layer({})))),
    60_000
  )

  it.live.skipIf(TestDatabase.postgresUrl === undefined)(
    "PostgreSQL: 0003 applies over existing merchants, QR codes and mandates",
    () =>
      Effect.gen(function* () {
        const url = yield* TestDatabase.createDatabase(TestDatabase.postgresUrl!)
        yield* upgrade.pipe(
          Effect.provide(unmigrated(PgClient.layer({ url: Redacted.make(url), maxConnections: 2 })))
        )
      }).pipe(Effect.scoped),
    60_000
  )
})
