/**
 * Mandates and their charges: rows, mapping, and the ports `Store.MandatesStore` and `Store.ChargesStore`.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type * as Statement from "@effect/sql/Statement"
import { Ids, type Mandate, Store } from "@laari/core"
import { type DateTime, Effect, Layer } from "effect"
import {
  fromDate,
  fromDateOrNull,
  int,
  intOrNull,
  lookupKey,
  repository,
  toDate,
  toDateOrNull
} from "./Repository.js"
import * as Ledger from "./Ledger.js"
import * as TenantRows from "./TenantRows.js"
import * as WriteBehind from "./WriteBehind.js"

// ---------------------------------------------------------------------------------------------------
// mandates
// ---------------------------------------------------------------------------------------------------

interface MandateRow {
  readonly id: string
  readonly merchant_id: string
  readonly environment: string
  readonly reference: string
  readonly status: string
  readonly title: string
  readonly description: string | null
  readonly per_charge_cap: number | string
  readonly period_cap: number | string | null
  readonly period: string | null
  readonly period_key: string | null
  readonly period_charged: number | string
  readonly return_url: string | null
  readonly customer_id: string | null
  readonly setup_expires_at: Date
  readonly expires_at: Date
  readonly approved_at: Date | null
  readonly revoked_at: Date | null
  readonly revoked_by: string | null
  readonly declined_at: Date | null
  readonly expired_at: Date | null
  readonly created_at: Date
}

const mandateFromRow = (row: MandateRow): Mandate.Mandate => ({
  id: row.id as Ids.MandateId,
  merchantId: row.merchant_id as Ids.MerchantId,
  environment: row.environment as Ids.Environment,
  reference: row.reference,
  status: row.status as Mandate.Status,
  title: row.title,
  description: row.description,
  perChargeCap: int(row.per_charge_cap),
  periodCap: intOrNull(row.period_cap),
  period: row.period as "MONTH" | null,
  periodKey: row.period_key,
  periodCharged: int(row.period_charged),
  returnUrl: row.return_url,
  customerId: row.customer_id as Ids.CustomerId | null,
  setupExpiresAt: fromDate(row.setup_expires_at),
  expiresAt: fromDate(row.expires_at),
  approvedAt: fromDateOrNull(row.approved_at),
  revokedAt: fromDateOrNull(row.revoked_at),
  revokedBy: row.revoked_by as Mandate.RevokedBy | null,
  declinedAt: fromDateOrNull(row.declined_at),
  expiredAt: fromDateOrNull(row.expired_at),
  createdAt: fromDate(row.created_at)
})

const mandateToRow = (m: Mandate.Mandate): MandateRow => ({
  id: m.id,
  merchant_id: m.merchantId,
  environment: m.environment,
  reference: m.reference,
  status: m.status,
  title: m.title,
  description: m.description,
  per_charge_cap: m.perChargeCap,
  period_cap: m.periodCap,
  period: m.period,
  period_key: m.periodKey,
  period_charged: m.periodCharged,
  return_url: m.returnUrl,
  customer_id: m.customerId,
  setup_expires_at: toDate(m.setupExpiresAt),
  expires_at: toDate(m.expiresAt),
  approved_at: toDateOrNull(m.approvedAt),
  revoked_at: toDateOrNull(m.revokedAt),
  revoked_by: m.revokedBy,
  declined_at: toDateOrNull(m.declinedAt),
  expired_at: toDateOrNull(m.expiredAt),
  created_at: toDate(m.createdAt)
})

/** Fixed at creation: who owns the mandate and how it is addressed. */
const immutable = ["id", "merchant_id", "environment", "reference", "created_at"] as const

export const makeMandates = Effect.map(SqlClient.SqlClient, (sql) => {
  const map = Effect.map((rows: ReadonlyArray<MandateRow>) => rows.map(mandateFromRow))

  /**
   * Locks a mandate and, in the same statement, its payer's wallet (the order every command locks them
   * in), and remembers the wallet for the command's transaction (`WriteBehind.Locked`): the charge
   * then reads and debits it without another round trip. Under READ COMMITTED a row locked after a
   * wait is returned as last committed, so the balance is current.
   */
  const lockWithPayer = (tenant: Ids.Tenant, key: Statement.Fragment) =>
    sql<MandateRow & { readonly payer: Ledger.AccountRow | null }>`WITH m AS (
        SELECT * FROM mandates
        WHERE merchant_id = ${tenant.merchantId} AND environment = ${tenant.environment} AND ${key}
        FOR UPDATE),
      a AS (
        SELECT * FROM ledger_accounts WHERE id = (SELECT 'customer:' || customer_id FROM m)
        FOR UPDATE)
      SELECT m.*, (SELECT row_to_json(a) FROM a) AS payer FROM m`.pipe(
      Effect.flatMap((rows) => {
        const row = rows[0]
        if (row === undefined) return Effect.succeed(undefined)
        const mandate = mandateFromRow(row)
        const payer = typeof row.payer === "string" ? JSON.parse(row.payer) : row.payer
        return payer === null || mandate.customerId === null
          ? Effect.succeed(mandate)
          : Effect.as(
              WriteBehind.Locked.remember(
                Ledger.accountId.customer(mandate.customerId),
                Ledger.payerFromRow({ ...payer, created_at: new Date(payer.created_at) })
              ),
              mandate
            )
      })
    )

  const table = TenantRows.make(sql, "mandates", mandateFromRow)

  return repository({
    insert: (m: Mandate.Mandate) => table.insertUnlessTaken({ ...mandateToRow(m) }, m.reference),

    // Held until the transaction's next statement (`WriteBehind`).
    update: (m: Mandate.Mandate) => {
      const row = mandateToRow(m)
      return WriteBehind.hold(sql, [`mandate:${row.id}`], () => [
        {
          alias: "m",
          statement: sql`UPDATE mandates SET ${sql.update({ ...row }, immutable)}
                 WHERE id = ${row.id} AND merchant_id = ${row.merchant_id}`
        }
      ])
    },

    // Locking, the charge's read: the mandate with its payer's wallet row in one statement.
    find: (tenant: Ids.Tenant, lookup: Ids.Lookup, options?: { readonly forUpdate?: boolean }) => {
      if (options?.forUpdate !== true) return table.find(tenant, lookup)
      const key = lookupKey(sql, lookup)
      return key === undefined ? Effect.succeed(undefined) : lockWithPayer(tenant, key)
    },

    lockById: table.lockById,

    list: (tenant: Ids.Tenant, filter: Store.MandateFilter) => {
      const where = [sql`merchant_id = ${tenant.merchantId}`, sql`environment = ${tenant.environment}`]
      if (filter.status !== undefined) where.push(sql`status = ${filter.status}`)
      if (filter.reference !== undefined) where.push(sql`reference = ${filter.reference}`)
      return sql<MandateRow>`SELECT * FROM mandates WHERE ${sql.and(where)}
        ORDER BY created_at DESC, position DESC
        LIMIT ${filter.limit} OFFSET ${filter.offset}`.pipe(map)
    },

    listByCustomer: (customerId: Ids.CustomerId) =>
      Ids.isUuid(customerId)
        ? sql<MandateRow>`SELECT * FROM mandates WHERE customer_id = ${customerId}
            ORDER BY created_at DESC, position DESC`.pipe(map)
        : Effect.succeed([]),

    // The two conditions of `Mandate.isDueToExpire`, each served by its partial index.
    claimExpiring: (now: DateTime.Utc, limit: number) =>
      sql<MandateRow>`SELECT * FROM mandates
        WHERE (status = 'INITIATED' AND setup_expires_at <= ${toDate(now)})
           OR (status IN ('ACTIVE', 'SUSPENDED') AND expires_at <= ${toDate(now)})
        LIMIT ${limit}
        FOR UPDATE SKIP LOCKED`.pipe(map),

    nextExpiryAt: sql<{ readonly at: Date | null }>`SELECT least(
        (SELECT min(setup_expires_at) FROM mandates WHERE status = 'INITIATED'),
        (SELECT min(expires_at) FROM mandates WHERE status IN ('ACTIVE', 'SUSPENDED'))
      ) AS at`.pipe(Effect.map((rows) => fromDateOrNull(rows[0]?.at ?? null) ?? undefined))
  })
})

export const mandatesLayer: Layer.Layer<Store.MandatesStore, never, SqlClient.SqlClient> = Layer.effect(
  Store.MandatesStore,
  makeMandates
)

// ---------------------------------------------------------------------------------------------------
// mandate_charges
// ---------------------------------------------------------------------------------------------------

interface ChargeRow {
  readonly id: string
  readonly mandate_id: string
  readonly merchant_id: string
  readonly environment: string
  readonly customer_id: string
  readonly amount: number | string
  readonly description: string
  readonly reference: string
  readonly fee: number | string
  readonly net_amount: number | string
  /** Written only by a refund (`Refunds`), never by an insert: read, not written, here. */
  readonly amount_refunded?: number | string
  readonly period_key: string
  readonly period_charged: number | string
  readonly created_at: Date
}

const chargeFromRow = (row: ChargeRow): Mandate.Charge => ({
  id: row.id,
  mandateId: row.mandate_id as Ids.MandateId,
  merchantId: row.merchant_id as Ids.MerchantId,
  environment: row.environment as Ids.Environment,
  customerId: row.customer_id as Ids.CustomerId,
  amount: int(row.amount),
  description: row.description,
  reference: row.reference,
  fee: int(row.fee),
  netAmount: int(row.net_amount),
  amountRefunded: int(row.amount_refunded ?? 0),
  periodKey: row.period_key,
  periodCharged: int(row.period_charged),
  createdAt: fromDate(row.created_at)
})

const chargeToRow = (c: Mandate.Charge): ChargeRow => ({
  id: c.id,
  mandate_id: c.mandateId,
  merchant_id: c.merchantId,
  environment: c.environment,
  customer_id: c.customerId,
  amount: c.amount,
  description: c.description,
  reference: c.reference,
  fee: c.fee,
  net_amount: c.netAmount,
  period_key: c.periodKey,
  period_charged: c.periodCharged,
  created_at: toDate(c.createdAt)
})

export const makeCharges = Effect.map(SqlClient.SqlClient, (sql) =>
  repository({
    insert: (c: Mandate.Charge) =>
      WriteBehind.hold(sql, [], () => [
        { alias: "c", statement: sql`INSERT INTO mandate_charges ${sql.insert({ ...chargeToRow(c) })}` }
      ]),
    find: TenantRows.make(sql, "mandate_charges", chargeFromRow).findById,
    /** Newest first, like every list. */
    listByMandate: (mandateId: string) =>
      Ids.isUuid(mandateId)
        ? sql<ChargeRow>`SELECT * FROM mandate_charges WHERE mandate_id = ${mandateId}
            ORDER BY created_at DESC, position DESC`.pipe(Effect.map((rows) => rows.map(chargeFromRow)))
        : Effect.succeed([]),
    listByMandates: (mandateIds: ReadonlyArray<string>, perMandate: number) => {
      const valid = mandateIds.filter(Ids.isUuid)
      return valid.length === 0
        ? Effect.succeed([])
        : sql<ChargeRow>`SELECT * FROM (
              SELECT *, row_number() OVER (PARTITION BY mandate_id ORDER BY created_at DESC, position DESC) AS nth
              FROM mandate_charges WHERE mandate_id IN ${sql.in(valid)}
            ) c WHERE nth <= ${perMandate} ORDER BY mandate_id, created_at DESC, position DESC`.pipe(
            Effect.map((rows) => rows.map(chargeFromRow))
          )
    }
  })
)

export const chargesLayer: Layer.Layer<Store.ChargesStore, never, SqlClient.SqlClient> = Layer.effect(
  Store.ChargesStore,
  makeCharges
)
