/**
 * A subscription's life on the testkit's controllable clock: consent on 31 January in Maldives time,
 * renewals on the last day of shorter months and back on the 31st, then a drained wallet, the retries
 * (+12 h, +24 h, +48 h after the first miss) and the end by dunning.
 *
 * Time moves only when the program says so: `ControllableClock.advanceTo` runs every renewal and retry
 * that falls due on the way, at its exact instant, as the service's workers would.
 */
import { Calendar, Checkout, type Ids, Notifications, Subscriptions, Wallet } from "@laari/core"
import { ControllableClock, Seed, Testkit } from "@laari/testkit"
import { DateTime, Effect } from "effect"

/** 10:00 in Malé on 31 January 2026: the consent moment, and so the billing cycle anchor. */
export const Start = "2026-01-31T05:00:00Z"
/** MVR 150.00 a month. */
export const Price = 15_000

/** A moment as a Maldivian reads it: `2026-02-28 10:00`. */
export const inMaldives = (t: DateTime.DateTime): string =>
  DateTime.formatIsoOffset(DateTime.unsafeMakeZoned(t, { timeZone: Calendar.MaldivesZone }))
    .slice(0, 16)
    .replace("T", " ")

/** What the merchant would have learnt by webhook, in order. */
export interface TimelineEntry {
  readonly at: string
  readonly type: string
  /** The subscription's or the invoice's status in the event. */
  readonly status: string
  /** For invoice events: the cycle, its attempts so far, and when the next retry is due. */
  readonly period?: string
  readonly amount?: number
  readonly attempts?: number
  readonly nextRetry?: string | null
  readonly failure?: string | null
}

/** The state at the end of each month the program steps over. */
export interface MonthEnd {
  readonly at: string
  readonly subscription: string
  readonly invoices: ReadonlyArray<string>
  readonly customerBalance: number
  readonly merchantBalance: number
}

export const program = Effect.gen(function* () {
  const clock = yield* ControllableClock.ControllableClock
  const seed = yield* Seed.Seed
  const checkout = yield* Checkout.Checkout
  const subscriptions = yield* Subscriptions.Subscriptions
  const notifications = yield* Notifications.Notifications
  const wallet = yield* Wallet.Wallet

  const merchant = yield* seed.merchant({ name: "Reef Gym", features: { subscriptionsLive: true } })
  const customer = yield* seed.customer({ environment: "live", phone: "+960 7654321", balance: 100_000 })
  const tenant: Ids.Tenant = { merchantId: merchant.id, environment: "live" }

  const session = yield* checkout.create(tenant, {
    mode: "SUBSCRIPTION",
    reference: "member-0042",
    title: "Reef Gym membership",
    description: null,
    returnUrl: null,
    amount: null,
    priceData: { name: "Monthly", amount: Price, interval: "MONTH", intervalCount: 1 }
  })
  // The customer pays on the hosted page with the one-time code sent to their wallet app.
  const challenge = yield* checkout.requestPayment(session.id, customer.phone)
  const [sent] = yield* notifications.list(customer.id)
  const settled = yield* checkout.pay(session.id, challenge.id, String(sent?.data.code))
  const subscription = settled.subscription!

  const snapshot = Effect.gen(function* () {
    const now = yield* clock.now
    const sub = yield* subscriptions.get(tenant, subscription.id)
    const invoices = yield* subscriptions.listInvoices(tenant, subscription.id, { limit: 100, offset: 0 })
    return {
      at: inMaldives(now),
      subscription: sub.status,
      // Oldest first, as a timeline reads.
      invoices: invoices.map((i) => `${i.periodKey} ${i.status}`).reverse(),
      customerBalance: (yield* wallet.payer(customer.id))?.balance ?? 0,
      merchantBalance: yield* seed.merchantBalance(merchant.id, "live")
    } satisfies MonthEnd
  })

  // Month by month, on the 1st at 10:00 in Malé: each step runs the renewal that fell due on the way.
  const months: Array<MonthEnd> = []
  const firstOf = (month: number) =>
    DateTime.unsafeMakeZoned(
      { year: 2026, month, day: 1, hours: 10 },
      // The parts are Malé's wall clock, not UTC's.
      { timeZone: Calendar.MaldivesZone, adjustForTimeZone: true }
    )
  for (const month of [2, 3, 4]) {
    yield* clock.advanceTo(firstOf(month))
    months.push(yield* snapshot)
  }

  // The customer spends their money elsewhere: MVR 50.00 is left, less than a cycle, before 30 April.
  yield* seed.setPayer(customer.id, { balance: 5_000 })
  for (const month of [5, 6, 7]) {
    yield* clock.advanceTo(firstOf(month))
    months.push(yield* snapshot)
  }

  const timeline: ReadonlyArray<TimelineEntry> = (yield* seed.events)
    .filter((e) => e.merchantId === merchant.id && e.subject === subscription.id)
    .map((e) => {
      const object = e.envelope.data.object as unknown as Record<string, unknown>
      const base = { at: inMaldives(e.createdAt), type: e.envelope.type, status: String(object.status) }
      if (object.object !== "invoice") return base
      const retry = object.next_retry_at as number | null
      return {
        ...base,
        period: String(object.period_key),
        amount: Number(object.amount),
        attempts: Number(object.attempt_count),
        nextRetry: retry === null ? null : inMaldives(DateTime.unsafeMake(retry * 1_000)),
        failure: object.failure_reason as string | null
      }
    })

  const ended = yield* subscriptions.get(tenant, subscription.id)
  return {
    anchor: inMaldives(subscription.billingCycleAnchor),
    months,
    timeline,
    ended: { status: ended.status, by: ended.cancellationInitiator, nextBillingAt: ended.nextBillingAt }
  }
})

/** The program in a fresh memory world whose clock starts at `Start`. */
export const run = program.pipe(Effect.provide(Testkit.layer({ start: Start })))
