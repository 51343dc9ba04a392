/**
 * Outlets, QR codes, their hosted PNGs and the payments they produce: rows, mapping, and the ports
 * `Store.OutletsStore`, `Store.QrCodesStore` and `Store.QrPaymentsStore`.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type * as Statement from "@effect/sql/Statement"
import { Ids, type QrCode, Store } from "@laari/core"
import { DateTime, Effect, Layer } from "effect"
import { outlets } from "./Merchants.js"
import { Column, isStorable, one, repository, rows, toDate, toDateOrNull } from "./Repository.js"
import * as TenantRows from "./TenantRows.js"

/** `outlets.id` and `outlet_id` are `integer`: anything outside it cannot name a row (and would not bind). */
const MaxInteger = 2_147_483_647
const isRowInteger = (n: number): boolean => Number.isSafeInteger(n) && n >= 1 && n <= MaxInteger

// ---------------------------------------------------------------------------------------------------
// outlets
// ---------------------------------------------------------------------------------------------------

export const makeOutlets = Effect.map(SqlClient.SqlClient, (sql) =>
  repository({
    find: (merchantId: Ids.MerchantId, outletId: number) =>
      Ids.isUuid(merchantId) && isRowInteger(outletId)
        ? sql`SELECT id, merchant_id, name FROM outlets
            WHERE id = ${outletId} AND merchant_id = ${merchantId}`.pipe(Effect.map(one(outlets.fromRow)))
        : Effect.succeed(undefined)
  })
)

export const outletsLayer: Layer.Layer<Store.OutletsStore, never, SqlClient.SqlClient> = Layer.effect(
  Store.OutletsStore,
  makeOutlets
)

// ---------------------------------------------------------------------------------------------------
// qr_codes and qr_images
// ---------------------------------------------------------------------------------------------------

const codes = rows<QrCode.QrCode>({
  id: Column.as("id"),
  merchantId: Column.as("merchant_id"),
  environment: Column.as("environment"),
  outletId: Column.as("outlet_id"),
  type: Column.as("type"),
  status: Column.as("status"),
  title: Column.as("title"),
  description: Column.as("description"),
  amount: Column.intOrNull("amount"),
  payload: Column.as("payload"),
  qrid: Column.as("qrid"),
  reference: Column.as("reference"),
  expiresAt: Column.dateOrNull("expires_at"),
  deactivatedAt: Column.dateOrNull("deactivated_at"),
  createdAt: Column.date("created_at")
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
  const table = TenantRows.make(sql, "qr_codes", codes.fromRow)

  return repository({
    // Only a taken reference is an answer: a qrid collision (never expected among 2^110 values) or an
    // outlet of another merchant still fails the statement, and that is a defect.
    insert: (c: QrCode.QrCode) => table.insertUnlessTaken(codes.toRow(c), c.reference),

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
        ? sql`SELECT * FROM qr_codes WHERE qrid = ${qrid} AND environment = ${environment}
            FOR UPDATE`.pipe(Effect.map(one(codes.fromRow)))
        : Effect.succeed(undefined),

    list: (tenant: Ids.Tenant, filter: Store.QrCodeFilter) => {
      if (filter.outletId !== undefined && !isRowInteger(filter.outletId)) return Effect.succeed([])
      const where: Array<Statement.Fragment> = []
      if (filter.outletId !== undefined) where.push(sql`outlet_id = ${filter.outletId}`)
      if (filter.type !== undefined) where.push(sql`type = ${filter.type}`)
      return table.list(tenant, filter, where)
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

const payments = rows<QrCode.Payment>({
  id: Column.as("id"),
  qrCodeId: Column.as("qr_code_id"),
  qrid: Column.as("qrid"),
  merchantId: Column.as("merchant_id"),
  environment: Column.as("environment"),
  outletId: Column.as("outlet_id"),
  customerId: Column.as("customer_id"),
  amount: Column.int("amount"),
  fee: Column.int("fee"),
  netAmount: Column.int("net_amount"),
  amountRefunded: Column.refunded,
  reference: Column.as("reference"),
  createdAt: Column.date("created_at")
})

export const makeQrPayments = Effect.map(SqlClient.SqlClient, (sql) => {
  const table = TenantRows.make(sql, "qr_payments", payments.fromRow)
  return repository({
    insert: (p: QrCode.Payment) =>
      sql`INSERT INTO qr_payments ${sql.insert(payments.toRow(p))}`.pipe(Effect.asVoid),
    find: table.findById,
    /** Newest first, like every list. */
    listByCode: (qrCodeId: string) => table.listBy("qr_code_id", qrCodeId)
  })
})

export const qrPaymentsLayer: Layer.Layer<Store.QrPaymentsStore, never, SqlClient.SqlClient> = Layer.effect(
  Store.QrPaymentsStore,
  makeQrPayments
)
