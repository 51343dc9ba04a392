/**
 * Checkout sessions: rows, mapping, and the port `Store.CheckoutSessionsStore`.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { type Calendar, type CheckoutSession, Ids, Store, type Subscription } from "@laari/core"
import { DateTime, Effect, Layer } from "effect"
import { fromDate, fromDateOrNull, int, repository, toDate, toDateOrNull } from "./Repository.js"
import * as TenantRows from "./TenantRows.js"
import * as WriteBehind from "./WriteBehind.js"

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
  const table = TenantRows.make(sql, "checkout_sessions", sessionFromRow)

  return repository({
    insert: (s: CheckoutSession.CheckoutSession) =>
      table.insertUnlessTaken({ ...sessionToRow(s) }, s.reference),

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

    find: table.find,
    lockById: table.lockById,

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
