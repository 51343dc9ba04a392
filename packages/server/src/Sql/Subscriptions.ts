/**
 * Subscriptions: rows, mapping, and the port `Store.SubscriptionsStore` (their invoices are in
 * `Invoices`, the checkout sessions that start them in `CheckoutSessions`).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Ids, Store, type Subscription } from "@laari/core"
import { DateTime, Effect, Layer } from "effect"
import {
  all,
  Column,
  earliest,
  type Field,
  json,
  repository,
  rows,
  toDate,
  toDateOrNull
} from "./Repository.js"
import * as TenantRows from "./TenantRows.js"
import * as WriteBehind from "./WriteBehind.js"

/** Read back as an object; written as JSON text (`json`), which the column parses, or as SQL NULL. */
const metadata: Field<Subscription.Subscription["metadata"]> = {
  columns: ["metadata"],
  read: (row) => (typeof row.metadata === "string" ? JSON.parse(row.metadata) : row.metadata),
  write: (value, row) => {
    // SQL NULL, not the JSON `null` that `json(null)` would store.
    row.metadata = value === null ? null : json(value)
  }
}

const subscriptions = rows<Subscription.Subscription>({
  id: Column.as("id"),
  merchantId: Column.as("merchant_id"),
  environment: Column.as("environment"),
  reference: Column.as("reference"),
  status: Column.as("status"),
  planName: Column.as("plan_name"),
  amount: Column.int("amount"),
  interval: Column.as("billing_interval"),
  intervalCount: Column.int("interval_count"),
  checkoutSessionId: Column.as("checkout_session_id"),
  customerId: Column.as("customer_id"),
  billingCycleAnchor: Column.date("billing_cycle_anchor"),
  currentPeriodIndex: Column.int("current_period_index"),
  currentPeriodStart: Column.date("current_period_start"),
  currentPeriodEnd: Column.date("current_period_end"),
  nextBillingAt: Column.dateOrNull("next_billing_at"),
  cancelAtPeriodEnd: Column.as("cancel_at_period_end"),
  cancelledAt: Column.dateOrNull("cancelled_at"),
  cancellationInitiator: Column.as("cancellation_initiator"),
  pastDueSince: Column.dateOrNull("past_due_since"),
  balanceWarnedFor: Column.intOrNull("balance_warned_for"),
  metadata,
  createdAt: Column.date("created_at")
})

/** The row, with when the renewal engine next has work for it (`due_at`, not the model's). */
const subscriptionToRow = (s: Subscription.Subscription, dueAt: DateTime.Utc | null) => ({
  ...subscriptions.toRow(s),
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

/** Updates are a set (`WriteBehind.RowSet`): the renewal engine updates a batch of subscriptions in one go. */
const updated = WriteBehind.updateOf(
  "subscriptions_updated",
  "subscriptions",
  [...subscriptions.columns, "due_at"],
  subscriptionImmutable,
  ["id", "merchant_id", "environment"]
)

export const makeSubscriptions = Effect.map(SqlClient.SqlClient, (sql) => {
  const map = Effect.map(all(subscriptions.fromRow))
  const table = TenantRows.make(sql, "subscriptions", subscriptions.fromRow)

  return repository({
    // No ON CONFLICT: a second subscription for a session (or a reused id) is a defect, and dies.
    insert: (s: Subscription.Subscription, dueAt: DateTime.Utc | null) =>
      sql`INSERT INTO subscriptions ${sql.insert(subscriptionToRow(s, dueAt))}`.pipe(Effect.asVoid),

    update: (s: Subscription.Subscription, dueAt: DateTime.Utc | null) =>
      WriteBehind.holdRows(
        sql,
        [`subscription:${s.id}`],
        // The metadata as JSON within the set's JSON, not as text.
        [[updated, { ...subscriptionToRow(s, dueAt), metadata: s.metadata }]]
      ),

    find: table.find,
    lockById: table.lockById,

    // ORDER BY under FOR UPDATE locks the rows in that order, so two batches cannot deadlock.
    lockMany: (ids: ReadonlyArray<string>) => {
      const valid = ids.filter(Ids.isUuid)
      return valid.length === 0
        ? Effect.succeed([])
        : sql`SELECT * FROM subscriptions WHERE id IN ${sql.in(valid)} ORDER BY id FOR UPDATE`.pipe(map)
    },

    list: table.list,

    listByCustomer: (customerId: Ids.CustomerId) => table.listBy("customer_id", customerId),

    // Earliest work first. The locks last until the caller's transaction ends: call it inside one, or
    // they are gone as soon as the statement returns.
    claimDue: (now: DateTime.Utc, limit: number) =>
      sql`SELECT * FROM subscriptions
        WHERE due_at <= ${toDate(now)}
        ORDER BY due_at
        LIMIT ${limit}
        FOR UPDATE SKIP LOCKED`.pipe(map),

    nextDueAt: sql<{ readonly at: Date | null }>`SELECT min(due_at) AS at
      FROM subscriptions WHERE due_at IS NOT NULL`.pipe(Effect.map(earliest))
  })
})

export const subscriptionsLayer: Layer.Layer<Store.SubscriptionsStore, never, SqlClient.SqlClient> =
  Layer.effect(Store.SubscriptionsStore, makeSubscriptions)
