/**
 * Subscriptions: rows, mapping, and the port `Store.SubscriptionsStore` (their invoices are in
 * `Invoices`, the checkout sessions that start them in `CheckoutSessions`).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { type Calendar, type CheckoutSession, Ids, Store, type Subscription } from "@laari/core"
import { DateTime, Effect, Layer } from "effect"
import {
  fromDate,
  fromDateOrNull,
  int,
  intOrNull,
  isStorable,
  json,
  repository,
  toDate,
  toDateOrNull
} from "./Repository.js"
import * as TenantRows from "./TenantRows.js"
import * as WriteBehind from "./WriteBehind.js"

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
  const table = TenantRows.make(sql, "subscriptions", subscriptionFromRow)
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

    find: table.find,
    lockById: table.lockById,

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
