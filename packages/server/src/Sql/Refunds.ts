/**
 * Refunds: rows, mapping, and core's `RefundsStoreService` over them. A refund names its payment by a foreign
 * key of the payment's kind; the payment's `amount_refunded` is written only here, under the payment's
 * row lock (`lockPayment`), and a CHECK keeps it within the amount whatever the code does.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Ids, Refund, Store } from "@laari/core"
import { Effect, Layer } from "effect"
import { Column, type Field, int, isStorable, one, repository, rows } from "./Repository.js"
import * as TenantRows from "./TenantRows.js"

const column = { charge: "charge_id", qr_payment: "qr_payment_id", invoice: "invoice_id" } as const

/** The payment refunded: its kind, and its id in that kind's column (a foreign key), the others NULL. */
const source: Field<Refund.Source> = {
  columns: ["source_kind", ...Object.values(column)],
  read: (row) => {
    const kind = row.source_kind as Refund.SourceKind
    return { kind, id: row[column[kind]] as string }
  },
  write: (value, row) => {
    row.source_kind = value.kind
    Object.assign(row, Refund.sourceFields(value))
  }
}

const refunds = rows<Refund.Refund>({
  id: Column.as("id"),
  merchantId: Column.as("merchant_id"),
  environment: Column.as("environment"),
  source,
  customerId: Column.as("customer_id"),
  amount: Column.int("amount"),
  reason: Column.as("reason"),
  reference: Column.as("reference"),
  description: Column.as("description"),
  createdAt: Column.date("created_at")
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

  const table = TenantRows.make(sql, "refunds", refunds.fromRow)

  return repository({
    // A refund without a reference never conflicts (NULLs are distinct).
    insert: (r: Refund.Refund) => table.insertUnlessTaken(refunds.toRow(r), r.reference ?? ""),
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
      return table.list(tenant, filter, conditions)
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
