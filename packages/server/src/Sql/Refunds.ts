/**
 * Refunds: rows, mapping, and core's `RefundsRepo` over them. A refund names its payment by a foreign
 * key of the payment's kind; the payment's `amount_refunded` is written only here, under the payment's
 * row lock (`lockPayment`), and a CHECK keeps it within the amount whatever the code does.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Ids, Refund, Store } from "@laari/core"
import { Effect, Layer } from "effect"
import { fromDate, int, isStorable, one, repository, toDate } from "./Repository.js"
import * as TenantRows from "./TenantRows.js"

interface RefundRow {
  readonly id: string
  readonly merchant_id: string
  readonly environment: string
  readonly source_kind: Refund.SourceKind
  readonly charge_id: string | null
  readonly qr_payment_id: string | null
  readonly invoice_id: string | null
  readonly customer_id: string
  readonly amount: number | string
  readonly reason: string | null
  readonly reference: string | null
  readonly description: string | null
  readonly created_at: Date
}

const column = { charge: "charge_id", qr_payment: "qr_payment_id", invoice: "invoice_id" } as const

const refundFromRow = (row: RefundRow): Refund.Refund => ({
  id: row.id as Refund.RefundId,
  merchantId: row.merchant_id as Ids.MerchantId,
  environment: row.environment as Ids.Environment,
  source: { kind: row.source_kind, id: row[column[row.source_kind]]! },
  customerId: row.customer_id as Ids.CustomerId,
  amount: int(row.amount),
  reason: row.reason as Refund.Reason | null,
  reference: row.reference,
  description: row.description,
  createdAt: fromDate(row.created_at)
})

const refundToRow = (r: Refund.Refund): RefundRow => ({
  id: r.id,
  merchant_id: r.merchantId,
  environment: r.environment,
  source_kind: r.source.kind,
  ...Refund.sourceFields(r.source),
  customer_id: r.customerId,
  amount: r.amount,
  reason: r.reason,
  reference: r.reference,
  description: r.description,
  created_at: toDate(r.createdAt)
})

interface PaymentRow {
  readonly merchant_id: string
  readonly environment: string
  readonly customer_id: string
  readonly amount: number | string
  readonly amount_refunded: number | string
  readonly settled: boolean
}

export const makeRefunds = Effect.map(SqlClient.SqlClient, (sql) => {
  const tenantIs = (tenant: Ids.Tenant) =>
    sql`merchant_id = ${tenant.merchantId} AND environment = ${tenant.environment}`

  const paymentOf =
    (source: Refund.Source) =>
    (row: PaymentRow): Refund.Payment => ({
      source: { kind: source.kind, id: source.id.toLowerCase() },
      merchantId: row.merchant_id as Ids.MerchantId,
      environment: row.environment as Ids.Environment,
      customerId: row.customer_id as Ids.CustomerId,
      amount: int(row.amount),
      amountRefunded: int(row.amount_refunded),
      settled: row.settled
    })

  /** The payment's row, locked; an invoice's payer is its subscription's customer (not locked). */
  const lockPayment = (tenant: Ids.Tenant, source: Refund.Source) => {
    if (!Ids.isUuid(source.id)) return Effect.succeed(undefined)
    const id = source.id.toLowerCase()
    const statement =
      source.kind === "charge"
        ? sql<PaymentRow>`SELECT merchant_id, environment, customer_id, amount, amount_refunded, true AS settled
            FROM mandate_charges WHERE id = ${id} AND ${tenantIs(tenant)} FOR UPDATE`
        : source.kind === "qr_payment"
          ? sql<PaymentRow>`SELECT merchant_id, environment, customer_id, amount, amount_refunded, true AS settled
              FROM qr_payments WHERE id = ${id} AND ${tenantIs(tenant)} FOR UPDATE`
          : sql<PaymentRow>`SELECT i.merchant_id, i.environment, s.customer_id, i.amount, i.amount_refunded,
                i.status = 'PAID' AS settled
              FROM invoices i JOIN subscriptions s ON s.id = i.subscription_id
              WHERE i.id = ${id} AND i.merchant_id = ${tenant.merchantId} AND i.environment = ${tenant.environment}
              FOR UPDATE OF i`
    return statement.pipe(Effect.map(one(paymentOf(source))))
  }

  const setRefunded = (source: Refund.Source, amountRefunded: number) => {
    const id = source.id.toLowerCase()
    const statement =
      source.kind === "charge"
        ? sql`UPDATE mandate_charges SET amount_refunded = ${amountRefunded} WHERE id = ${id}`
        : source.kind === "qr_payment"
          ? sql`UPDATE qr_payments SET amount_refunded = ${amountRefunded} WHERE id = ${id}`
          : sql`UPDATE invoices SET amount_refunded = ${amountRefunded} WHERE id = ${id}`
    return Effect.asVoid(statement)
  }

  /** Newest first, like every list; served by the `*_reference` indexes of 0018. */
  const paymentIdsByReference = (
    tenant: Ids.Tenant,
    kind: Refund.ReferencedKind,
    reference: string,
    limit: number
  ) =>
    !isStorable(reference)
      ? Effect.succeed([])
      : (kind === "charge"
          ? sql<{ readonly id: string }>`SELECT id FROM mandate_charges
              WHERE ${tenantIs(tenant)} AND reference = ${reference}
              ORDER BY created_at DESC, position DESC LIMIT ${limit}`
          : sql<{ readonly id: string }>`SELECT id FROM qr_payments
              WHERE ${tenantIs(tenant)} AND reference = ${reference}
              ORDER BY created_at DESC, position DESC LIMIT ${limit}`
        ).pipe(Effect.map((rows) => rows.map((row) => row.id)))

  const table = TenantRows.make(sql, "refunds", refundFromRow)

  return repository({
    // A refund without a reference never conflicts (NULLs are distinct).
    insert: (r: Refund.Refund) => table.insertUnlessTaken({ ...refundToRow(r) }, r.reference ?? ""),
    find: (tenant: Ids.Tenant, lookup: Ids.Lookup) => table.find(tenant, lookup),
    list: (tenant: Ids.Tenant, filter: Store.RefundFilter) => {
      const by = [
        ["charge_id", filter.chargeId],
        ["qr_payment_id", filter.qrPaymentId],
        ["invoice_id", filter.invoiceId]
      ] as const
      // An id that is no UUID matches no refund.
      if (by.some(([, id]) => id !== undefined && !Ids.isUuid(id))) return Effect.succeed([])
      const conditions = by.flatMap(([name, id]) =>
        id === undefined ? [] : [sql`${sql(name)} = ${id.toLowerCase()}`]
      )
      return sql<RefundRow>`SELECT * FROM refunds WHERE ${sql.and([tenantIs(tenant), ...conditions])}
        ORDER BY created_at DESC, position DESC LIMIT ${filter.limit} OFFSET ${filter.offset}`.pipe(
        Effect.map((rows) => rows.map(refundFromRow))
      )
    },
    lockPayment,
    paymentIdsByReference,
    setRefunded
  })
})

export const refundsLayer: Layer.Layer<Store.RefundsStore, never, SqlClient.SqlClient> = Layer.effect(
  Store.RefundsStore,
  makeRefunds
)
