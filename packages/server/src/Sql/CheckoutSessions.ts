/**
 * Checkout sessions: rows, mapping, and the port `Store.CheckoutSessionsStore`.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { type Calendar, type CheckoutSession, Store } from "@laari/core"
import { DateTime, Effect, Layer } from "effect"
import { all, Column, earliest, type Field, int, repository, rows, toDate } from "./Repository.js"
import * as TenantRows from "./TenantRows.js"
import * as WriteBehind from "./WriteBehind.js"

/** All four columns are set or none is (`checkout_sessions_price`). */
const price: Field<CheckoutSession.CheckoutSession["price"]> = {
  columns: ["price_name", "price_amount", "price_interval", "price_interval_count"],
  read: (row) =>
    row.price_name === null
      ? null
      : {
          name: row.price_name as string,
          amount: int(row.price_amount),
          interval: row.price_interval as Calendar.Interval,
          intervalCount: int(row.price_interval_count)
        },
  write: (p, row) => {
    row.price_name = p?.name ?? null
    row.price_amount = p?.amount ?? null
    row.price_interval = p?.interval ?? null
    row.price_interval_count = p?.intervalCount ?? null
  }
}

const sessions = rows<CheckoutSession.CheckoutSession>({
  id: Column.as("id"),
  merchantId: Column.as("merchant_id"),
  environment: Column.as("environment"),
  mode: Column.as("mode"),
  status: Column.as("status"),
  reference: Column.as("reference"),
  title: Column.as("title"),
  description: Column.as("description"),
  returnUrl: Column.as("return_url"),
  amount: Column.int("amount"),
  price,
  customerId: Column.as("customer_id"),
  paymentId: Column.as("payment_id"),
  subscriptionId: Column.as("subscription_id"),
  expiresAt: Column.date("expires_at"),
  completedAt: Column.dateOrNull("completed_at"),
  cancelledAt: Column.dateOrNull("cancelled_at"),
  expiredAt: Column.dateOrNull("expired_at"),
  createdAt: Column.date("created_at")
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
  const table = TenantRows.make(sql, "checkout_sessions", sessions.fromRow)

  return repository({
    insert: (s: CheckoutSession.CheckoutSession) => table.insertUnlessTaken(sessions.toRow(s), s.reference),

    // Held until the transaction's next statement (`WriteBehind`), as are the updates below.
    update: (s: CheckoutSession.CheckoutSession) =>
      WriteBehind.hold(sql, [`checkout_session:${s.id}`], () => [
        {
          alias: "s",
          statement: sql`UPDATE checkout_sessions SET ${sql.update(sessions.toRow(s), sessionImmutable)}
            WHERE id = ${s.id} AND merchant_id = ${s.merchantId} AND environment = ${s.environment}`
        }
      ]),

    find: table.find,
    lockById: table.lockById,
    list: table.list,

    // `CheckoutSession.isDueToExpire`: open, at or past `expiresAt`. Oldest first, so a backlog drains in order.
    claimExpiring: (now: DateTime.Utc, limit: number) =>
      sql`SELECT * FROM checkout_sessions
        WHERE status = 'OPEN' AND expires_at <= ${toDate(now)}
        ORDER BY expires_at
        LIMIT ${limit}
        FOR UPDATE SKIP LOCKED`.pipe(Effect.map(all(sessions.fromRow))),

    nextExpiryAt: sql<{ readonly at: Date | null }>`SELECT min(expires_at) AS at
      FROM checkout_sessions WHERE status = 'OPEN'`.pipe(Effect.map(earliest))
  })
})

export const checkoutSessionsLayer: Layer.Layer<Store.CheckoutSessionsStore, never, SqlClient.SqlClient> =
  Layer.effect(Store.CheckoutSessionsStore, makeCheckoutSessions)
