/**
 * What the schema of checkout sessions, subscriptions and invoices refuses, on PGlite and (with
 * DATABASE_URL) PostgreSQL: a duplicate reference is `DuplicateReference` and leaves the caller's
 * transaction usable; a second subscription for a session or a second invoice for a cycle dies; and each
 * rule is a named constraint.
 */
import { expect } from "@effect/vitest"
import { Calendar, CheckoutSession, Ids, Invoice, Store, Subscription } from "@laari/core"
import { Cause, Effect, Exit } from "effect"
import {
  uuid,
  hours,
  T0,
  right,
  freshMerchant,
  paymentRequest,
  subscriptionRequest,
  openSession,
  subscribe,
  paidCycle,
  brokenConstraint,
  ids
} from "../support/SubscriptionRows.js"
import * as TestDatabase from "../support/TestDatabase.js"

TestDatabase.eachBackend("SQL checkout sessions, subscriptions and invoices", (it) => {
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
        Subscription.openNextPeriod(a.subscription, a.invoice, renewal, Invoice.InvoiceId.make(yield* uuid))
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
      expect(brokenConstraint(yield* Effect.exit(invoices.insert(paidAgain)))).toBe("23505 invoices_period")
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
        [{ failureReason: "card-declined" as Invoice.FailureReason }, "23514 invoices_failure_reason_check"],
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
})
