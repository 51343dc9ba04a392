/**
 * Mandates and their charges: rows, mapping, and the ports `Store.MandatesStore` and `Store.ChargesStore`.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type * as Statement from "@effect/sql/Statement"
import { Ids, type Mandate, Store } from "@laari/core"
import { type DateTime, Effect, Layer } from "effect"
import { all, Column, earliest, lookupKey, repository, rows, toDate } from "./Repository.js"
import * as Ledger from "./Ledger.js"
import * as TenantRows from "./TenantRows.js"
import * as WriteBehind from "./WriteBehind.js"

// ---------------------------------------------------------------------------------------------------
// mandates
// ---------------------------------------------------------------------------------------------------

const mandates = rows<Mandate.Mandate>({
  id: Column.as("id"),
  merchantId: Column.as("merchant_id"),
  environment: Column.as("environment"),
  reference: Column.as("reference"),
  status: Column.as("status"),
  title: Column.as("title"),
  description: Column.as("description"),
  perChargeCap: Column.int("per_charge_cap"),
  periodCap: Column.intOrNull("period_cap"),
  period: Column.as("period"),
  periodKey: Column.as("period_key"),
  periodCharged: Column.int("period_charged"),
  returnUrl: Column.as("return_url"),
  customerId: Column.as("customer_id"),
  setupExpiresAt: Column.date("setup_expires_at"),
  expiresAt: Column.date("expires_at"),
  approvedAt: Column.dateOrNull("approved_at"),
  revokedAt: Column.dateOrNull("revoked_at"),
  revokedBy: Column.as("revoked_by"),
  declinedAt: Column.dateOrNull("declined_at"),
  expiredAt: Column.dateOrNull("expired_at"),
  createdAt: Column.date("created_at")
})

/** Fixed at creation: who owns the mandate and how it is addressed. */
const immutable = ["id", "merchant_id", "environment", "reference", "created_at"] as const

export const makeMandates = Effect.map(SqlClient.SqlClient, (sql) => {
  /**
   * Locks a mandate and, in the same statement, its payer's wallet (the order every command locks them
   * in), and remembers the wallet for the command's transaction (`WriteBehind.Locked`): the charge
   * then reads and debits it without another round trip. Under READ COMMITTED a row locked after a
   * wait is returned as last committed, so the balance is current.
   */
  const lockStatement = (tenant: Ids.Tenant, key: Statement.Fragment) =>
    sql<{ readonly payer: Ledger.AccountRow | string | null }>`WITH m AS (
        SELECT * FROM mandates
        WHERE merchant_id = ${tenant.merchantId} AND environment = ${tenant.environment} AND ${key}
        FOR UPDATE),
      a AS (
        SELECT * FROM ledger_accounts WHERE id = (SELECT 'customer:' || customer_id FROM m)
        FOR UPDATE)
      SELECT m.*, (SELECT row_to_json(a) FROM a) AS payer FROM m`

  const lockWithPayer = (tenant: Ids.Tenant, key: Statement.Fragment) =>
    lockStatement(tenant, key).pipe(
      Effect.flatMap((rows) => {
        const row = rows[0]
        if (row === undefined) return Effect.succeed(undefined)
        const mandate = mandates.fromRow(row)
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

  const table = TenantRows.make(sql, "mandates", mandates.fromRow)

  // The lock a keyed charge takes, sent with the key's claim (`WriteBehind.Ahead`): one round trip less.
  // Not guarded: it sends nothing itself, so it cannot fail.
  const lockAhead = (tenant: Ids.Tenant, lookup: Ids.Lookup): Effect.Effect<void> => {
    const key = lookupKey(sql, lookup)
    return key === undefined ? Effect.void : WriteBehind.Ahead.send(lockStatement(tenant, key))
  }

  // A settlement's lock of its charge's mandate, sent with the movement's lock: it reads the one row,
  // so the movement's settled state held meanwhile does not stop its answer being served.
  const lockByIdAhead = (id: string): Effect.Effect<void> => {
    const statement = table.lockByIdStatement(id)
    return statement === undefined
      ? Effect.void
      : WriteBehind.Ahead.send(statement, [`mandate:${id}`, `mandate:${id.toLowerCase()}`])
  }

  const repo = repository({
    insert: (m: Mandate.Mandate) => table.insertUnlessTaken(mandates.toRow(m), m.reference),

    // Held until the transaction's next statement (`WriteBehind`).
    update: (m: Mandate.Mandate) =>
      WriteBehind.hold(sql, [`mandate:${m.id}`], () => [
        {
          alias: "m",
          statement: sql`UPDATE mandates SET ${sql.update(mandates.toRow(m), immutable)}
                 WHERE id = ${m.id} AND merchant_id = ${m.merchantId}`
        }
      ]),

    // Locking, the charge's read: the mandate with its payer's wallet row in one statement.
    find: (tenant: Ids.Tenant, lookup: Ids.Lookup, options?: { readonly forUpdate?: boolean }) => {
      if (options?.forUpdate !== true) return table.find(tenant, lookup)
      const key = lookupKey(sql, lookup)
      return key === undefined ? Effect.succeed(undefined) : lockWithPayer(tenant, key)
    },

    lockById: table.lockById,

    list: table.list,

    listByCustomer: (customerId: Ids.CustomerId) => table.listBy("customer_id", customerId),

    // The two conditions of `Mandate.isDueToExpire`, each served by its partial index.
    claimExpiring: (now: DateTime.Utc, limit: number) =>
      sql`SELECT * FROM mandates
        WHERE (status = 'INITIATED' AND setup_expires_at <= ${toDate(now)})
           OR (status IN ('ACTIVE', 'SUSPENDED') AND expires_at <= ${toDate(now)})
        LIMIT ${limit}
        FOR UPDATE SKIP LOCKED`.pipe(Effect.map(all(mandates.fromRow))),

    nextExpiryAt: sql<{ readonly at: Date | null }>`SELECT least(
        (SELECT min(setup_expires_at) FROM mandates WHERE status = 'INITIATED'),
        (SELECT min(expires_at) FROM mandates WHERE status IN ('ACTIVE', 'SUSPENDED'))
      ) AS at`.pipe(Effect.map(earliest))
  })
  return { ...repo, lockAhead, lockByIdAhead }
})

export const mandatesLayer: Layer.Layer<Store.MandatesStore, never, SqlClient.SqlClient> = Layer.effect(
  Store.MandatesStore,
  makeMandates
)

// ---------------------------------------------------------------------------------------------------
// mandate_charges
// ---------------------------------------------------------------------------------------------------

const charges = rows<Mandate.Charge>({
  id: Column.as("id"),
  mandateId: Column.as("mandate_id"),
  merchantId: Column.as("merchant_id"),
  environment: Column.as("environment"),
  customerId: Column.as("customer_id"),
  amount: Column.int("amount"),
  description: Column.as("description"),
  reference: Column.as("reference"),
  fee: Column.int("fee"),
  netAmount: Column.int("net_amount"),
  amountRefunded: Column.refunded,
  periodKey: Column.as("period_key"),
  periodCharged: Column.int("period_charged"),
  createdAt: Column.date("created_at")
})

export const makeCharges = Effect.map(SqlClient.SqlClient, (sql) => {
  const table = TenantRows.make(sql, "mandate_charges", charges.fromRow)
  return repository({
    insert: (c: Mandate.Charge) =>
      WriteBehind.hold(sql, [], () => [
        { alias: "c", statement: sql`INSERT INTO mandate_charges ${sql.insert(charges.toRow(c))}` }
      ]),
    find: table.findById,
    /** Newest first, like every list. */
    listByMandate: (mandateId: string) => table.listBy("mandate_id", mandateId),
    listByMandates: (mandateIds: ReadonlyArray<string>, perMandate: number) => {
      const valid = mandateIds.filter(Ids.isUuid)
      return valid.length === 0
        ? Effect.succeed([])
        : sql`SELECT * FROM (
              SELECT *, row_number() OVER (PARTITION BY mandate_id ORDER BY created_at DESC, position DESC) AS nth
              FROM mandate_charges WHERE mandate_id IN ${sql.in(valid)}
            ) c WHERE nth <= ${perMandate} ORDER BY mandate_id, created_at DESC, position DESC`.pipe(
            Effect.map(all(charges.fromRow))
          )
    }
  })
})

export const chargesLayer: Layer.Layer<Store.ChargesStore, never, SqlClient.SqlClient> = Layer.effect(
  Store.ChargesStore,
  makeCharges
)
