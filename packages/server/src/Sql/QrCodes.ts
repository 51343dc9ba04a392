/**
 * Outlets, QR codes, their hosted PNGs and the payments they produce: rows, mapping, and the ports
 * `Store.Outlets`, `Store.QrCodesStore` and `Store.QrPaymentsStore`.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Ids, type QrCode, Store } from "@laari/core"
import { DateTime, Effect, Layer } from "effect"
import {
  fromDate,
  fromDateOrNull,
  int,
  intOrNull,
  isStorable,
  one,
  repository,
  toDate,
  toDateOrNull
} from "./Repository.js"
import * as TenantRows from "./TenantRows.js"

/** `outlets.id` and `outlet_id` are `integer`: anything outside it cannot name a row (and would not bind). */
const MaxInteger = 2_147_483_647
const isRowInteger = (n: number): boolean => Number.isSafeInteger(n) && n >= 1 && n <= MaxInteger

// ---------------------------------------------------------------------------------------------------
// outlets
// ---------------------------------------------------------------------------------------------------

interface OutletRow {
  readonly id: number
  readonly merchant_id: string
  readonly name: string
}

const outletFromRow = (row: OutletRow): Store.Outlet => ({
  id: row.id,
  merchantId: row.merchant_id as Ids.MerchantId,
  name: row.name
})

export const makeOutlets = Effect.map(SqlClient.SqlClient, (sql) =>
  repository({
    find: (merchantId: Ids.MerchantId, outletId: number) =>
      Ids.isUuid(merchantId) && isRowInteger(outletId)
        ? sql<OutletRow>`SELECT id, merchant_id, name FROM outlets
            WHERE id = ${outletId} AND merchant_id = ${merchantId}`.pipe(Effect.map(one(outletFromRow)))
        : Effect.succeed(undefined)
  })
)

export const outletsLayer: Layer.Layer<Store.Outlets, never, SqlClient.SqlClient> = Layer.effect(
  Store.Outlets,
  makeOutlets
)

// ---------------------------------------------------------------------------------------------------
// qr_codes and qr_images
// ---------------------------------------------------------------------------------------------------

interface QrCodeRow {
  readonly id: string
  readonly merchant_id: string
  readonly environment: string
  readonly outlet_id: number
  readonly type: string
  readonly status: string
  readonly title: string
  readonly description: string | null
  readonly amount: number | string | null
  readonly payload: string
  readonly qrid: string
  readonly reference: string
  readonly expires_at: Date | null
  readonly deactivated_at: Date | null
  readonly created_at: Date
}

const codeFromRow = (row: QrCodeRow): QrCode.QrCode => ({
  id: row.id,
  merchantId: row.merchant_id as Ids.MerchantId,
  environment: row.environment as Ids.Environment,
  outletId: row.outlet_id,
  type: row.type as QrCode.Type,
  status: row.status as QrCode.Status,
  title: row.title,
  description: row.description,
  amount: intOrNull(row.amount),
  payload: row.payload,
  qrid: row.qrid,
  reference: row.reference,
  expiresAt: fromDateOrNull(row.expires_at),
  deactivatedAt: fromDateOrNull(row.deactivated_at),
  createdAt: fromDate(row.created_at)
})

const codeToRow = (c: QrCode.QrCode): QrCodeRow => ({
  id: c.id,
  merchant_id: c.merchantId,
  environment: c.environment,
  outlet_id: c.outletId,
  type: c.type,
  status: c.status,
  title: c.title,
  description: c.description,
  amount: c.amount,
  payload: c.payload,
  qrid: c.qrid,
  reference: c.reference,
  expires_at: toDateOrNull(c.expiresAt),
  deactivated_at: toDateOrNull(c.deactivatedAt),
  created_at: toDate(c.createdAt)
})

interface ImageRow {
  readonly png: Uint8Array
}

/**
 * The bytes as a plain `Uint8Array`: pg returns a `Buffer` (a subclass), PGlite a `Uint8Array`. A view,
 * not a copy.
 */
const bytes = (png: Uint8Array): Uint8Array => new Uint8Array(png.buffer, png.byteOffset, png.byteLength)

export const makeQrCodes = Effect.map(SqlClient.SqlClient, (sql) => {
  const map = Effect.map((rows: ReadonlyArray<QrCodeRow>) => rows.map(codeFromRow))
  const table = TenantRows.make(sql, "qr_codes", codeFromRow)

  return repository({
    // Only a taken reference is an answer: a qrid collision (never expected among 2^110 values) or an
    // outlet of another merchant still fails the statement, and that is a defect.
    insert: (c: QrCode.QrCode) => table.insertUnlessTaken({ ...codeToRow(c) }, c.reference),

    // Only what can change after creation: the rest is fixed by the payload, which is already printed.
    update: (c: QrCode.QrCode) =>
      sql`UPDATE qr_codes SET ${sql.update({
        status: c.status,
        deactivated_at: toDateOrNull(c.deactivatedAt),
        title: c.title,
        description: c.description
      })}
          WHERE id = ${c.id} AND merchant_id = ${c.merchantId} AND environment = ${c.environment}`.pipe(
        Effect.asVoid
      ),

    find: table.find,

    lockByQrid: (environment: Ids.Environment, qrid: string) =>
      isStorable(qrid)
        ? sql<QrCodeRow>`SELECT * FROM qr_codes WHERE qrid = ${qrid} AND environment = ${environment}
            FOR UPDATE`.pipe(Effect.map(one(codeFromRow)))
        : Effect.succeed(undefined),

    list: (tenant: Ids.Tenant, filter: Store.QrCodeFilter) => {
      if (!Ids.isUuid(tenant.merchantId)) return Effect.succeed([])
      if (filter.outletId !== undefined && !isRowInteger(filter.outletId)) return Effect.succeed([])
      const where = [sql`merchant_id = ${tenant.merchantId}`, sql`environment = ${tenant.environment}`]
      if (filter.outletId !== undefined) where.push(sql`outlet_id = ${filter.outletId}`)
      if (filter.type !== undefined) where.push(sql`type = ${filter.type}`)
      return sql<QrCodeRow>`SELECT * FROM qr_codes WHERE ${sql.and(where)}
        ORDER BY created_at DESC, position DESC
        LIMIT ${filter.limit} OFFSET ${filter.offset}`.pipe(map)
    },

    // A code has one image: rendering again replaces it.
    saveImage: (c: QrCode.QrCode, png: Uint8Array) =>
      Effect.flatMap(
        DateTime.now,
        (now) =>
          sql`INSERT INTO qr_images ${sql.insert({
            qr_code_id: c.id,
            merchant_id: c.merchantId,
            png,
            created_at: toDate(now)
          })}
          ON CONFLICT (qr_code_id) DO UPDATE SET png = EXCLUDED.png, created_at = EXCLUDED.created_at`
      ).pipe(Effect.asVoid),

    image: (id: string) =>
      Ids.isUuid(id)
        ? sql<ImageRow>`SELECT png FROM qr_images WHERE qr_code_id = ${id}`.pipe(
            Effect.map(one((row) => bytes(row.png)))
          )
        : Effect.succeed(undefined)
  })
})

export const qrCodesLayer: Layer.Layer<Store.QrCodesStore, never, SqlClient.SqlClient> = Layer.effect(
  Store.QrCodesStore,
  makeQrCodes
)

// ---------------------------------------------------------------------------------------------------
// qr_payments
// ---------------------------------------------------------------------------------------------------

interface QrPaymentRow {
  readonly id: string
  readonly qr_code_id: string
  readonly qrid: string
  readonly merchant_id: string
  readonly environment: string
  readonly outlet_id: number
  readonly customer_id: string
  readonly amount: number | string
  readonly fee: number | string
  readonly net_amount: number | string
  /** Written only by a refund (`Refunds`), never by an insert: read, not written, here. */
  readonly amount_refunded?: number | string
  readonly reference: string
  readonly created_at: Date
}

const paymentFromRow = (row: QrPaymentRow): QrCode.Payment => ({
  id: row.id,
  qrCodeId: row.qr_code_id,
  qrid: row.qrid,
  merchantId: row.merchant_id as Ids.MerchantId,
  environment: row.environment as Ids.Environment,
  outletId: row.outlet_id,
  customerId: row.customer_id as Ids.CustomerId,
  amount: int(row.amount),
  fee: int(row.fee),
  netAmount: int(row.net_amount),
  amountRefunded: int(row.amount_refunded ?? 0),
  reference: row.reference,
  createdAt: fromDate(row.created_at)
})

const paymentToRow = (p: QrCode.Payment): QrPaymentRow => ({
  id: p.id,
  qr_code_id: p.qrCodeId,
  qrid: p.qrid,
  merchant_id: p.merchantId,
  environment: p.environment,
  outlet_id: p.outletId,
  customer_id: p.customerId,
  amount: p.amount,
  fee: p.fee,
  net_amount: p.netAmount,
  reference: p.reference,
  created_at: toDate(p.createdAt)
})

export const makeQrPayments = Effect.map(SqlClient.SqlClient, (sql) =>
  repository({
    insert: (p: QrCode.Payment) =>
      sql`INSERT INTO qr_payments ${sql.insert({ ...paymentToRow(p) })}`.pipe(Effect.asVoid),
    find: TenantRows.make(sql, "qr_payments", paymentFromRow).findById,
    /** Newest first, like every list. */
    listByCode: (qrCodeId: string) =>
      Ids.isUuid(qrCodeId)
        ? sql<QrPaymentRow>`SELECT * FROM qr_payments WHERE qr_code_id = ${qrCodeId}
            ORDER BY created_at DESC, position DESC`.pipe(Effect.map((rows) => rows.map(paymentFromRow)))
        : Effect.succeed([])
  })
)

export const qrPaymentsLayer: Layer.Layer<Store.QrPaymentsStore, never, SqlClient.SqlClient> = Layer.effect(
  Store.QrPaymentsStore,
  makeQrPayments
)
