/**
 * Invoices, one per subscription cycle: rows, mapping, and the port `Store.InvoicesStore`.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Ids, type Invoice, Store } from "@laari/core"
import { Effect, Layer } from "effect"
import { all, Column, one, repository, rows } from "./Repository.js"
import * as TenantRows from "./TenantRows.js"
import * as WriteBehind from "./WriteBehind.js"

const invoices = rows<Invoice.Invoice>({
  id: Column.as("id"),
  subscriptionId: Column.as("subscription_id"),
  merchantId: Column.as("merchant_id"),
  environment: Column.as("environment"),
  subscriptionReference: Column.as("subscription_reference"),
  periodIndex: Column.int("period_index"),
  periodKey: Column.as("period_key"),
  periodStart: Column.date("period_start"),
  periodEnd: Column.date("period_end"),
  amount: Column.int("amount"),
  amountRefunded: Column.refunded,
  status: Column.as("status"),
  attemptCount: Column.int("attempt_count"),
  nextRetryAt: Column.dateOrNull("next_retry_at"),
  failureReason: Column.as("failure_reason"),
  paymentIntentId: Column.as("payment_intent_id"),
  paidAt: Column.dateOrNull("paid_at"),
  lastAttemptAt: Column.dateOrNull("last_attempt_at"),
  voidedAt: Column.dateOrNull("voided_at"),
  createdAt: Column.date("created_at")
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

/** Invoices are sets (`WriteBehind.RowSet`): the renewal engine writes a batch of them in one go. */
const inserted = WriteBehind.insertInto("invoices_inserted", "invoices", invoices.columns)
// By id alone: what names the cycle is fixed, so an update that disagrees changes only the rest.
const updated = WriteBehind.updateOf("invoices_updated", "invoices", invoices.columns, invoiceImmutable, [
  "id"
])

export const makeInvoices = Effect.map(SqlClient.SqlClient, (sql) => {
  const map = Effect.map(all(invoices.fromRow))
  // Held (`WriteBehind`). Writes to one subscription's invoices share a key, so they are sent one after
  // the other: closing a cycle's invoice and opening the next one's in one statement could run in
  // either order, and `invoices_open` allows one open invoice at a time.
  const hold = (set: WriteBehind.RowSet, i: Invoice.Invoice) =>
    WriteBehind.holdRows(
      sql,
      [`invoice:${i.id}`, `invoices_of:${i.subscriptionId}`],
      [[set, invoices.toRow(i)]]
    )

  return repository({
    // No ON CONFLICT: a second invoice for a cycle (`invoices_period`) must die, never be swallowed, so
    // no cycle is ever charged twice.
    insert: (i: Invoice.Invoice) => hold(inserted, i),
    update: (i: Invoice.Invoice) => hold(updated, i),

    find: TenantRows.make(sql, "invoices", invoices.fromRow).findById,

    latest: (subscriptionId: string) =>
      Ids.isUuid(subscriptionId)
        ? sql`SELECT * FROM invoices WHERE subscription_id = ${subscriptionId}
            ORDER BY period_index DESC LIMIT 1`.pipe(Effect.map(one(invoices.fromRow)))
        : Effect.succeed(undefined),

    latestOf: (subscriptionIds: ReadonlyArray<string>) => {
      const valid = subscriptionIds.filter(Ids.isUuid)
      return valid.length === 0
        ? Effect.succeed([])
        : sql`SELECT DISTINCT ON (subscription_id) * FROM invoices
            WHERE subscription_id IN ${sql.in(valid)}
            ORDER BY subscription_id, period_index DESC`.pipe(map)
    },

    list: (subscriptionId: string, page: Store.Page) =>
      Ids.isUuid(subscriptionId)
        ? sql`SELECT * FROM invoices WHERE subscription_id = ${subscriptionId}
            ORDER BY period_index DESC
            LIMIT ${page.limit} OFFSET ${page.offset}`.pipe(map)
        : Effect.succeed([]),

    listBySubscriptions: (subscriptionIds: ReadonlyArray<string>, perSubscription: number) => {
      const valid = subscriptionIds.filter(Ids.isUuid)
      return valid.length === 0
        ? Effect.succeed([])
        : sql`SELECT * FROM (
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
