/**
 * Checkout sessions, subscriptions and their invoices: rows, mapping, and the ports
 * `Store.CheckoutSessionsStore`, `Store.SubscriptionsStore` and `Store.InvoicesStore`.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { type Calendar, type CheckoutSession, Ids, type Invoice, Store, type Subscription } from "@laari/core"
import { type DateTime, Effect, Layer } from "effect"
import {
  fromDate,
  fromDateOrNull,
  int,
  intOrNull,
  isStorable,
  json,
  lockClause,
  lookupKey,
  one,
  repository,
  toDate,
  toDateOrNull
} from "./Repository.js"
import * as WriteBehind from "./WriteBehind.js"

/** Text PostgreSQL can hold: a NUL character cannot be stored, so no row has one (and it would not bind). */

// ---------------------------------------------------------------------------------------------------
// checkout_sessions
// ---------------------------------------------------------------------------------------------------

interface SessionRow {
  readonly id: string
  readonly merchant_id: string
  readonly environment: string
  readonly mode: string
  readonly status: string
  readonly reference: string
  readonly title: string
  readonly description: string | null
  readonly return_url: string | null
  readonly amount: number | string
  readonly price_name: string | null
  readonly price_amount: number | string | null
  readonly price_interval: string | null
  readonly price_interval_count: number | null
  readonly customer_id: string | null
  readonly payment_id: string | null
  readonly subscription_id: string | null
  readonly expires_at: Date
  readonly completed_at: Date | null
  readonly cancelled_at: Date | null
  readonly expired_at: Date | null
  readonly created_at: Date
}

const sessionFromRow = (row: SessionRow): CheckoutSession.CheckoutSession => ({
  id: row.id as CheckoutSession.CheckoutSessionId,
  merchantId: row.merchant_id as Ids.MerchantId,
  environment: row.environment as Ids.Environment,
  mode: row.mode as CheckoutSession.Mode,
  status: row.status as CheckoutSession.Status,
  reference: row.reference,
  title: row.title,
  description: row.description,
  returnUrl: row.return_url,
  amount: int(row.amount),
  // All four are set or none is (`checkout_sessions_price`).
  price:
    row.price_name === null
      ? null
      : {
          name: row.price_name,
          amount: int(row.price_amount),
          interval: row.price_interval as Calendar.Interval,
          intervalCount: int(row.price_interval_count)
        },
  customerId: row.customer_id as Ids.CustomerId | null,
  paymentId: row.payment_id,
  subscriptionId: row.subscription_id as Subscription.SubscriptionId | null,
  expiresAt: fromDate(row.expires_at),
  completedAt: fromDateOrNull(row.completed_at),
  cancelledAt: fromDateOrNull(row.cancelled_at),
  expiredAt: fromDateOrNull(row.expired_at),
  createdAt: fromDate(row.created_at)
})

const sessionToRow = (s: CheckoutSession.CheckoutSession): SessionRow => ({
  id: s.id,
  merchant_id: s.merchantId,
  environment: s.environment,
  mode: s.mode,
  status: s.status,
  reference: s.reference,
  title: s.title,
  description: s.description,
  return_url: s.returnUrl,
  amount: s.amount,
  price_name: s.price?.name ?? null,
  price_amount: s.price?.amount ?? null,
  price_interval: s.price?.interval ?? null,
  price_interval_count: s.price?.intervalCount ?? null,
  customer_id: s.customerId,
  payment_id: s.paymentId,
  subscription_id: s.subscriptionId,
  expires_at: toDate(s.expiresAt),
  completed_at: toDateOrNull(s.completedAt),
  cancelled_at: toDateOrNull(s.cancelledAt),
  expired_at: toDateOrNull(s.expiredAt),
  created_at: toDate(s.createdAt)
})

/** Fixed at creation: who owns the session, how it is addressed, what the merchant asked for, and when. */
const sessionImmutable = [
  "id",
  "merchant_id",
  "environment",
  "mode",
  "reference",
  "title",
  "description",
  "return_url",
  "amount",
  "price_name",
  "price_amount",
  "price_interval",
  "price_interval_count",
  "expires_at",
  "created_at"
] as const

export const makeCheckoutSessions = Effect.map(SqlClient.SqlClient, (sql) => {
  const map = Effect.map((rows: ReadonlyArray<SessionRow>) => rows.map(sessionFromRow))

  return repository({
    // ON CONFLICT on the reference constraint rather than catching 23505: a failed statement would abort
    // the caller's transaction on PostgreSQL, and the caller may want to carry on.
    insert: (s: CheckoutSession.CheckoutSession) =>
      sql`INSERT INTO checkout_sessions ${sql.insert({ ...sessionToRow(s) })}
          ON CONFLICT ON CONSTRAINT checkout_sessions_reference DO NOTHING
          RETURNING id`.pipe(
        Effect.flatMap((rows) =>
          rows.length === 1
            ? Effect.void
            : Effect.fail(new Store.DuplicateReference({ reference: s.reference }))
        )
      ),

    // Held until the transaction's next statement (`WriteBehind`), as are the updates below.
    update: (s: CheckoutSession.CheckoutSession) => {
      const row = sessionToRow(s)
      return WriteBehind.hold(sql, [`checkout_session:${row.id}`], () => [
        {
          alias: "s",
          statement: sql`UPDATE checkout_sessions SET ${sql.update({ ...row }, sessionImmutable)}
            WHERE id = ${row.id} AND merchant_id = ${row.merchant_id} AND environment = ${row.environment}`
        }
      ])
    },

    find: (tenant: Ids.Tenant, lookup: Ids.Lookup, options?: { readonly forUpdate?: boolean }) => {
      const key = lookupKey(sql, lookup)
      if (key === undefined || !Ids.isUuid(tenant.merchantId)) return Effect.succeed(undefined)
      return sql<SessionRow>`SELECT * FROM checkout_sessions
        WHERE merchant_id = ${tenant.merchantId} AND environment = ${tenant.environment} AND ${key}
        ${sql.literal(lockClause(options))}`.pipe(Effect.map(one(sessionFromRow)))
    },

    lockById: (id: string) =>
      Ids.isUuid(id)
        ? sql<SessionRow>`SELECT * FROM checkout_sessions WHERE id = ${id} FOR UPDATE`.pipe(
            Effect.map(one(sessionFromRow))
          )
        : Effect.succeed(undefined),

    list: (tenant: Ids.Tenant, page: Store.Page) =>
      !Ids.isUuid(tenant.merchantId)
        ? Effect.succeed([])
        : sql<SessionRow>`SELECT * FROM checkout_sessions
            WHERE merchant_id = ${tenant.merchantId} AND environment = ${tenant.environment}
            ORDER BY created_at DESC, position DESC LIMIT ${page.limit} OFFSET ${page.offset}`.pipe(
            Effect.map((rows) => rows.map(sessionFromRow))
          ),

    // `CheckoutSession.isDueToExpire`: open, at or past `expiresAt`. Oldest first, so a backlog drains in order.
    claimExpiring: (now: DateTime.Utc, limit: number) =>
      sql<SessionRow>`SELECT * FROM checkout_sessions
        WHERE status = 'OPEN' AND expires_at <= ${toDate(now)}
        ORDER BY expires_at
        LIMIT ${limit}
        FOR UPDATE SKIP LOCKED`.pipe(map),

    nextExpiryAt: sql<{ readonly at: Date | null }>`SELECT min(expires_at) AS at
      FROM checkout_sessions WHERE status = 'OPEN'`.pipe(
      Effect.map((rows) => fromDateOrNull(rows[0]?.at ?? null) ?? undefined)
    )
  })
})

export const checkoutSessionsLayer: Layer.Layer<Store.CheckoutSessionsStore, never, SqlClient.SqlClient> =
  Layer.effect(Store.CheckoutSessionsStore, makeCheckoutSessions)

// ---------------------------------------------------------------------------------------------------
// subscriptions
// ---------------------------------------------------------------------------------------------------

interface SubscriptionRow {
  readonly id: string
  readonly merchant_id: string
  readonly environment: string
  readonly reference: string
  readonly status: string
  readonly plan_name: string
  readonly amount: number | string
  readonly billing_interval: string
  readonly interval_count: number
  readonly checkout_session_id: string
  readonly customer_id: string
  readonly billing_cycle_anchor: Date
  readonly current_period_index: number
  readonly current_period_start: Date
  readonly current_period_end: Date
  readonly next_billing_at: Date | null
  readonly cancel_at_period_end: boolean
  readonly cancelled_at: Date | null
  readonly cancellation_initiator: string | null
  readonly past_due_since: Date | null
  readonly balance_warned_for: number | null
  /** Read back as an object; written as JSON text (`json`), which the column parses. */
  readonly metadata: { readonly [key: string]: string } | string | null
  readonly created_at: Date
  readonly due_at: Date | null
}

const subscriptionFromRow = (row: SubscriptionRow): Subscription.Subscription => ({
  id: row.id as Subscription.SubscriptionId,
  merchantId: row.merchant_id as Ids.MerchantId,
  environment: row.environment as Ids.Environment,
  reference: row.reference,
  status: row.status as Subscription.Status,
  planName: row.plan_name,
  amount: int(row.amount),
  interval: row.billing_interval as Calendar.Interval,
  intervalCount: int(row.interval_count),
  checkoutSessionId: row.checkout_session_id as CheckoutSession.CheckoutSessionId,
  customerId: row.customer_id as Ids.CustomerId,
  billingCycleAnchor: fromDate(row.billing_cycle_anchor),
  currentPeriodIndex: int(row.current_period_index),
  currentPeriodStart: fromDate(row.current_period_start),
  currentPeriodEnd: fromDate(row.current_period_end),
  nextBillingAt: fromDateOrNull(row.next_billing_at),
  cancelAtPeriodEnd: row.cancel_at_period_end,
  cancelledAt: fromDateOrNull(row.cancelled_at),
  cancellationInitiator: row.cancellation_initiator as Subscription.Initiator | null,
  pastDueSince: fromDateOrNull(row.past_due_since),
  balanceWarnedFor: intOrNull(row.balance_warned_for),
  metadata: typeof row.metadata === "string" ? JSON.parse(row.metadata) : row.metadata,
  createdAt: fromDate(row.created_at)
})

const subscriptionToRow = (s: Subscription.Subscription, dueAt: DateTime.Utc | null): SubscriptionRow => ({
  id: s.id,
  merchant_id: s.merchantId,
  environment: s.environment,
  reference: s.reference,
  status: s.status,
  plan_name: s.planName,
  amount: s.amount,
  billing_interval: s.interval,
  interval_count: s.intervalCount,
  checkout_session_id: s.checkoutSessionId,
  customer_id: s.customerId,
  billing_cycle_anchor: toDate(s.billingCycleAnchor),
  current_period_index: s.currentPeriodIndex,
  current_period_start: toDate(s.currentPeriodStart),
  current_period_end: toDate(s.currentPeriodEnd),
  next_billing_at: toDateOrNull(s.nextBillingAt),
  cancel_at_period_end: s.cancelAtPeriodEnd,
  cancelled_at: toDateOrNull(s.cancelledAt),
  cancellation_initiator: s.cancellationInitiator,
  past_due_since: toDateOrNull(s.pastDueSince),
  balance_warned_for: s.balanceWarnedFor,
  // SQL NULL, not the JSON `null` that `json(null)` would store.
  metadata: s.metadata === null ? null : json(s.metadata),
  created_at: toDate(s.createdAt),
  due_at: toDateOrNull(dueAt)
})

/** Fixed at consent: who owns the subscription, how it is addressed, the plan, the payer, the anchor, its origin. */
const subscriptionImmutable = [
  "id",
  "merchant_id",
  "environment",
  "reference",
  "plan_name",
  "amount",
  "billing_interval",
  "interval_count",
  "checkout_session_id",
  "customer_id",
  "billing_cycle_anchor",
  "created_at"
] as const

export const makeSubscriptions = Effect.map(SqlClient.SqlClient, (sql) => {
  const map = Effect.map((rows: ReadonlyArray<SubscriptionRow>) => rows.map(subscriptionFromRow))
  let updated: WriteBehind.RowSet | undefined

  return repository({
    // No ON CONFLICT: a second subscription for a session (or a reused id) is a defect, and dies.
    insert: (s: Subscription.Subscription, dueAt: DateTime.Utc | null) =>
      sql`INSERT INTO subscriptions ${sql.insert({ ...subscriptionToRow(s, dueAt) })}`.pipe(Effect.asVoid),

    // A set (`WriteBehind.RowSet`): the renewal engine updates a batch of subscriptions in one go.
    update: (s: Subscription.Subscription, dueAt: DateTime.Utc | null) => {
      // The metadata as JSON within the set's JSON, not as text.
      const row = { ...subscriptionToRow(s, dueAt), metadata: s.metadata }
      // Every row has the same columns: the set is made once, from the first.
      updated ??= WriteBehind.updateOf(
        "subscriptions_updated",
        "subscriptions",
        Object.keys(row),
        subscriptionImmutable,
        ["id", "merchant_id", "environment"]
      )
      const set = updated
      return WriteBehind.holdRows(sql, [`subscription:${row.id}`], [[set, row]])
    },

    find: (tenant: Ids.Tenant, lookup: Ids.Lookup, options?: { readonly forUpdate?: boolean }) => {
      const key = lookupKey(sql, lookup)
      if (key === undefined || !Ids.isUuid(tenant.merchantId)) return Effect.succeed(undefined)
      return sql<SubscriptionRow>`SELECT * FROM subscriptions
        WHERE merchant_id = ${tenant.merchantId} AND environment = ${tenant.environment} AND ${key}
        ${sql.literal(lockClause(options))}`.pipe(Effect.map(one(subscriptionFromRow)))
    },

    lockById: (id: string) =>
      Ids.isUuid(id)
        ? sql<SubscriptionRow>`SELECT * FROM subscriptions WHERE id = ${id} FOR UPDATE`.pipe(
            Effect.map(one(subscriptionFromRow))
          )
        : Effect.succeed(undefined),

    // ORDER BY under FOR UPDATE locks the rows in that order, so two batches cannot deadlock.
    lockMany: (ids: ReadonlyArray<string>) => {
      const valid = ids.filter(Ids.isUuid)
      return valid.length === 0
        ? Effect.succeed([])
        : sql<SubscriptionRow>`SELECT * FROM subscriptions WHERE id IN ${sql.in(valid)}
            ORDER BY id FOR UPDATE`.pipe(map)
    },

    list: (tenant: Ids.Tenant, filter: Store.SubscriptionFilter) => {
      if (!Ids.isUuid(tenant.merchantId)) return Effect.succeed([])
      if (filter.reference !== undefined && !isStorable(filter.reference)) return Effect.succeed([])
      const where = [sql`merchant_id = ${tenant.merchantId}`, sql`environment = ${tenant.environment}`]
      if (filter.status !== undefined) where.push(sql`status = ${filter.status}`)
      if (filter.reference !== undefined) where.push(sql`reference = ${filter.reference}`)
      return sql<SubscriptionRow>`SELECT * FROM subscriptions WHERE ${sql.and(where)}
        ORDER BY created_at DESC, position DESC
        LIMIT ${filter.limit} OFFSET ${filter.offset}`.pipe(map)
    },

    listByCustomer: (customerId: Ids.CustomerId) =>
      Ids.isUuid(customerId)
        ? sql<SubscriptionRow>`SELECT * FROM subscriptions WHERE customer_id = ${customerId}
            ORDER BY created_at DESC, position DESC`.pipe(map)
        : Effect.succeed([]),

    // Earliest work first. The locks last until the caller's transaction ends: call it inside one, or
    // they are gone as soon as the statement returns.
    claimDue: (now: DateTime.Utc, limit: number) =>
      sql<SubscriptionRow>`SELECT * FROM subscriptions
        WHERE due_at <= ${toDate(now)}
        ORDER BY due_at
        LIMIT ${limit}
        FOR UPDATE SKIP LOCKED`.pipe(map),

    nextDueAt: sql<{ readonly at: Date | null }>`SELECT min(due_at) AS at
      FROM subscriptions WHERE due_at IS NOT NULL`.pipe(
      Effect.map((rows) => fromDateOrNull(rows[0]?.at ?? null) ?? undefined)
    )
  })
})

export const subscriptionsLayer: Layer.Layer<Store.SubscriptionsStore, never, SqlClient.SqlClient> =
  Layer.effect(Store.SubscriptionsStore, makeSubscriptions)

// ---------------------------------------------------------------------------------------------------
// invoices
// ---------------------------------------------------------------------------------------------------

interface InvoiceRow {
  readonly id: string
  readonly subscription_id: string
  readonly merchant_id: string
  readonly environment: string
  readonly subscription_reference: string
  readonly period_index: number
  readonly period_key: string
  readonly period_start: Date
  readonly period_end: Date
  readonly amount: number | string
  /** Written only by a refund (`Refunds`), never by the billing engine: read, not written, here. */
  readonly amount_refunded?: number | string
  readonly status: string
  readonly attempt_count: number
  readonly next_retry_at: Date | null
  readonly failure_reason: string | null
  readonly payment_intent_id: string | null
  readonly paid_at: Date | null
  readonly last_attempt_at: Date | null
  readonly voided_at: Date | null
  readonly created_at: Date
}

const invoiceFromRow = (row: InvoiceRow): Invoice.Invoice => ({
  id: row.id as Invoice.InvoiceId,
  subscriptionId: row.subscription_id as Subscription.SubscriptionId,
  merchantId: row.merchant_id as Ids.MerchantId,
  environment: row.environment as Ids.Environment,
  subscriptionReference: row.subscription_reference,
  periodIndex: int(row.period_index),
  periodKey: row.period_key,
  periodStart: fromDate(row.period_start),
  periodEnd: fromDate(row.period_end),
  amount: int(row.amount),
  amountRefunded: int(row.amount_refunded ?? 0),
  status: row.status as Invoice.Status,
  attemptCount: int(row.attempt_count),
  nextRetryAt: fromDateOrNull(row.next_retry_at),
  failureReason: row.failure_reason as Invoice.FailureReason | null,
  paymentIntentId: row.payment_intent_id,
  paidAt: fromDateOrNull(row.paid_at),
  lastAttemptAt: fromDateOrNull(row.last_attempt_at),
  voidedAt: fromDateOrNull(row.voided_at),
  createdAt: fromDate(row.created_at)
})

const invoiceToRow = (i: Invoice.Invoice): InvoiceRow => ({
  id: i.id,
  subscription_id: i.subscriptionId,
  merchant_id: i.merchantId,
  environment: i.environment,
  subscription_reference: i.subscriptionReference,
  period_index: i.periodIndex,
  period_key: i.periodKey,
  period_start: toDate(i.periodStart),
  period_end: toDate(i.periodEnd),
  amount: i.amount,
  status: i.status,
  attempt_count: i.attemptCount,
  next_retry_at: toDateOrNull(i.nextRetryAt),
  failure_reason: i.failureReason,
  payment_intent_id: i.paymentIntentId,
  paid_at: toDateOrNull(i.paidAt),
  last_attempt_at: toDateOrNull(i.lastAttemptAt),
  voided_at: toDateOrNull(i.voidedAt),
  created_at: toDate(i.createdAt)
})

/** Fixed when the cycle opens: whose cycle the invoice is, which one, and what it charges. */
const invoiceImmutable = [
  "id",
  "subscription_id",
  "merchant_id",
  "environment",
  "subscription_reference",
  "period_index",
  "period_key",
  "period_start",
  "period_end",
  "amount",
  "created_at"
] as const

export const makeInvoices = Effect.map(SqlClient.SqlClient, (sql) => {
  const map = Effect.map((rows: ReadonlyArray<InvoiceRow>) => rows.map(invoiceFromRow))
  let inserted: WriteBehind.RowSet | undefined
  let updated: WriteBehind.RowSet | undefined

  return repository({
    // No ON CONFLICT: a second invoice for a cycle (`invoices_period`) must die, never be swallowed, so
    // no cycle is ever charged twice.
    // Held (`WriteBehind`). Writes to one subscription's invoices share a key, so they are sent one after
    // the other: closing a cycle's invoice and opening the next one's in one statement could run in
    // either order, and `invoices_open` allows one open invoice at a time.
    insert: (i: Invoice.Invoice) => {
      const row = invoiceToRow(i)
      // Every row has the same columns: each set is made once, from the first.
      inserted ??= WriteBehind.insertInto("invoices_inserted", "invoices", Object.keys(row))
      const set = inserted
      return WriteBehind.holdRows(sql, [`invoice:${i.id}`, `invoices_of:${i.subscriptionId}`], [[set, row]])
    },

    update: (i: Invoice.Invoice) => {
      const row = invoiceToRow(i)
      // By id alone: what names the cycle is fixed, so an update that disagrees changes only the rest.
      updated ??= WriteBehind.updateOf("invoices_updated", "invoices", Object.keys(row), invoiceImmutable, [
        "id"
      ])
      const set = updated
      return WriteBehind.holdRows(
        sql,
        [`invoice:${row.id}`, `invoices_of:${row.subscription_id}`],
        [[set, row]]
      )
    },

    find: (tenant: Ids.Tenant, id: string) =>
      Ids.isUuid(id)
        ? sql<InvoiceRow>`SELECT * FROM invoices WHERE id = ${id.toLowerCase()}
            AND merchant_id = ${tenant.merchantId} AND environment = ${tenant.environment}`.pipe(
            Effect.map(one(invoiceFromRow))
          )
        : Effect.succeed(undefined),

    latest: (subscriptionId: string) =>
      Ids.isUuid(subscriptionId)
        ? sql<InvoiceRow>`SELECT * FROM invoices WHERE subscription_id = ${subscriptionId}
            ORDER BY period_index DESC LIMIT 1`.pipe(Effect.map(one(invoiceFromRow)))
        : Effect.succeed(undefined),

    latestOf: (subscriptionIds: ReadonlyArray<string>) => {
      const valid = subscriptionIds.filter(Ids.isUuid)
      return valid.length === 0
        ? Effect.succeed([])
        : sql<InvoiceRow>`SELECT DISTINCT ON (subscription_id) * FROM invoices
            WHERE subscription_id IN ${sql.in(valid)}
            ORDER BY subscription_id, period_index DESC`.pipe(map)
    },

    list: (subscriptionId: string, page: Store.Page) =>
      Ids.isUuid(subscriptionId)
        ? sql<InvoiceRow>`SELECT * FROM invoices WHERE subscription_id = ${subscriptionId}
            ORDER BY period_index DESC
            LIMIT ${page.limit} OFFSET ${page.offset}`.pipe(map)
        : Effect.succeed([]),

    listBySubscriptions: (subscriptionIds: ReadonlyArray<string>, perSubscription: number) => {
      const valid = subscriptionIds.filter(Ids.isUuid)
      return valid.length === 0
        ? Effect.succeed([])
        : sql<InvoiceRow>`SELECT * FROM (
              SELECT *, row_number() OVER (PARTITION BY subscription_id ORDER BY period_index DESC) AS nth
              FROM invoices WHERE subscription_id IN ${sql.in(valid)}
            ) i WHERE nth <= ${perSubscription} ORDER BY subscription_id, period_index DESC`.pipe(map)
    }
  })
})

export const invoicesLayer: Layer.Layer<Store.InvoicesStore, never, SqlClient.SqlClient> = Layer.effect(
  Store.InvoicesStore,
  makeInvoices
)
