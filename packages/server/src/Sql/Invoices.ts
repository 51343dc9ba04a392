/**
 * Invoices, one per subscription cycle: rows, mapping, and the port `Store.InvoicesStore`.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Ids, type Invoice, Store, type Subscription } from "@laari/core"
import { Effect, Layer } from "effect"
import { fromDate, fromDateOrNull, int, one, repository, toDate, toDateOrNull } from "./Repository.js"
import * as TenantRows from "./TenantRows.js"
import * as WriteBehind from "./WriteBehind.js"

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

    find: TenantRows.make(sql, "invoices", invoiceFromRow).findById,

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
