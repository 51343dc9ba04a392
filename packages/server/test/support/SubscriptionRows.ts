/**
 * Rows for the SQL tests of checkout sessions, subscriptions and invoices, built with the models' own
 * constructors and transitions and written through the adapters, and what those tests read back from the
 * tables beside the adapters.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import { Calendar, CheckoutSession, Crypto, Ids, Invoice, Store, Subscription } from "@laari/core"
import { Seed } from "@laari/testkit"
import { Cause, DateTime, Effect, Either, Exit, Option } from "effect"

export const uuid = Effect.flatMap(Crypto.Crypto, (c) => c.uuid)
export const at = (iso: string) => DateTime.unsafeMake(iso)
export const iso = (t: DateTime.Utc | null | undefined) => (t == null ? t : DateTime.formatIso(t))
export const hours = (t: DateTime.Utc, h: number) => Calendar.addHours(t, h)

/** Milliseconds everywhere, and a 31st: the clamped months of the billing calendar. */
export const T0 = at("2030-01-31T10:15:30.123Z")

export const right = <A, E>(either: Either.Either<A, E>): A =>
  Either.getOrThrowWith(either, (e) => new Error(`expected a Right, got ${JSON.stringify(e)}`))

// ---------------------------------------------------------------------------------------------------
// Fixtures, built with the models' own constructors and transitions
// ---------------------------------------------------------------------------------------------------

export const freshMerchant = Effect.gen(function* () {
  const merchant = yield* (yield* Seed.Seed).merchant({ name: "Dhoni Streaming" })
  const tenant: Ids.Tenant = { merchantId: merchant.id, environment: "test" }
  return { merchant, tenant, payer: merchant.sandboxPayer }
})

export const paymentRequest = (reference: string): CheckoutSession.Request => ({
  mode: null,
  reference,
  title: "Kopi and hedhikaa",
  description: "Table 4, two kopi",
  returnUrl: "https://bappa.mv/thanks?table=4",
  amount: 12_550,
  priceData: null
})

export const subscriptionRequest = (
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

export const openSession = (tenant: Ids.Tenant, request: CheckoutSession.Request, now: DateTime.Utc) =>
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
export const subscribe = (
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
export const paidCycle = (sub: Subscription.Subscription, n: number) =>
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
export const brokenConstraint = (exit: Exit.Exit<unknown, unknown>) => {
  if (Exit.isSuccess(exit)) return "succeeded"
  const defect = Option.getOrUndefined(Cause.dieOption(exit.cause))
  if (!(defect instanceof SqlError)) return `not a SqlError defect: ${Cause.pretty(exit.cause)}`
  const cause = defect.cause as { readonly code?: string; readonly constraint?: string }
  return `${cause.code} ${cause.constraint}`
}

/** The `due_at` the adapter stored, as ISO text (`null` when none). */
export const storedDueAt = (id: string) =>
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
export const metadataIsSqlNull = (id: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{
        readonly missing: boolean
      }>`SELECT metadata IS NULL AS missing FROM subscriptions WHERE id = ${id}`,
      (rows) => rows[0]?.missing
    )
  )

/** The tables of the public schema, by name. */
export const tables = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(
    sql<{
      name: string
    }>`SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`,
    (rows) => rows.map((r) => r.name)
  )
)

/** The ids of `rows`, in their order. */
export const ids = (rows: ReadonlyArray<{ readonly id: string }>) => rows.map((r) => r.id)
