/**
 * `Store.LedgerReadsStore` over the ledger's tables: a merchant's movements are the transfers naming it in
 * the environment (`ledger_transfers` by merchant, environment and time, migration 0016's index), their
 * net the transfer's entry on its account and their fee the entry on the fee account, whatever the kind.
 * Ties in time are broken by id in byte order (`COLLATE "C"`), the order the memory adapter sorts in.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type * as Statement from "@effect/sql/Statement"
import { Balance, type Ids, Store } from "@laari/core"
import { type DateTime, Effect, Layer } from "effect"
import * as Ledger from "./Ledger.js"
import { all, Column, isStorable, repository, rows, toDate } from "./Repository.js"

const payment = rows<Balance.PayerPayment>({
  transferId: Column.as("id"),
  merchantId: Column.as("merchant_id"),
  environment: Column.as("environment"),
  amount: Column.int("amount"),
  createdAt: Column.date("created_at")
})

const movement = rows<Balance.Movement>({
  transferId: Column.as("id"),
  kind: Column.as("kind"),
  net: Column.int("net"),
  fee: Column.int("fee"),
  createdAt: Column.date("created_at")
})

export const make = (sql: SqlClient.SqlClient): Store.LedgerReadsStoreService => {
  const ledger = Ledger.make(sql)

  /** The tenant's movements, with `condition` on the transfer `t`, in `order`, at most `limit`. */
  const select = (
    tenant: Ids.Tenant,
    condition: Statement.Fragment,
    order: "ASC" | "DESC",
    limit: number | null
  ) =>
    // The page of transfers first, by the index alone; then each one's two entries by primary key. (Joined
    // first, PostgreSQL misjudges how many transfers the join keeps and scans them all.)
    sql`WITH t AS MATERIALIZED (
        SELECT id, kind, created_at FROM ledger_transfers t
        WHERE t.merchant_id = ${tenant.merchantId} AND t.environment = ${tenant.environment} AND ${condition}
        ORDER BY t.created_at ${sql.literal(order)}, t.id COLLATE "C" ${sql.literal(order)}
        ${limit === null ? sql.literal("") : sql`LIMIT ${limit}`})
      SELECT t.id, t.kind, t.created_at, coalesce(m.amount, 0) AS net, coalesce(f.amount, 0) AS fee
      FROM t
      LEFT JOIN ledger_entries m
        ON m.transfer_id = t.id AND m.account_id = ${Ledger.accountId.merchant(tenant.merchantId, tenant.environment)}
      LEFT JOIN ledger_entries f ON f.transfer_id = t.id AND f.account_id = ${Ledger.accountId.fee(tenant.environment)}
      ORDER BY t.created_at ${sql.literal(order)}, t.id COLLATE "C" ${sql.literal(order)}`.pipe(
      Effect.map(all(movement.fromRow))
    )

  const movements = (tenant: Ids.Tenant, cursor: Balance.Cursor) =>
    Effect.gen(function* () {
      if (cursor.startingAfter === undefined) return yield* select(tenant, sql`true`, "DESC", cursor.limit)
      if (!isStorable(cursor.startingAfter)) return undefined
      const [after] = yield* select(tenant, sql`t.id = ${cursor.startingAfter}`, "DESC", 1)
      if (after === undefined) return undefined
      return yield* select(
        tenant,
        sql`(t.created_at, t.id COLLATE "C") < (${toDate(after.createdAt)}, ${after.transferId} COLLATE "C")`,
        "DESC",
        cursor.limit
      )
    })

  return repository({
    available: (tenant: Ids.Tenant) =>
      ledger.balance({ kind: "merchant", merchantId: tenant.merchantId, environment: tenant.environment }),
    movements,
    between: (tenant: Ids.Tenant, from: DateTime.Utc, to: DateTime.Utc) =>
      select(tenant, sql`t.created_at >= ${toDate(from)} AND t.created_at < ${toDate(to)}`, "ASC", null),
    // The wallet app's list, by migration 0020's index.
    payments: (customerId: Ids.CustomerId, limit: number) =>
      sql`SELECT id, merchant_id, environment, amount, created_at FROM ledger_transfers
        WHERE customer_id = ${customerId} AND kind = 'payment'
        ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT ${limit}`.pipe(Effect.map(all(payment.fromRow)))
  } satisfies Record<keyof Store.LedgerReadsStoreService, unknown>)
}

export const ledgerReadsLayer: Layer.Layer<Store.LedgerReadsStore, never, SqlClient.SqlClient> = Layer.effect(
  Store.LedgerReadsStore,
  Effect.map(SqlClient.SqlClient, make)
)
