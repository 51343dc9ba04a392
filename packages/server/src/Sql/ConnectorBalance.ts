/**
 * `Store.LedgerReadsStore`'s balance reads over laari's own movements (`wallet_movements`), for an
 * environment whose money lives in the wallet provider's core, where the built-in ledger holds none of it.
 * Posted payments add their net; reversals (refunds) take their amount away once pending, so a refund
 * whose outcome is not yet known is never spent twice; payments count only once posted. A movement's time
 * in the balance is when the core posted it (the day of the core's statement, which reconciliation
 * compares with), and its id the transfer id the core holds. Which environments these serve is the
 * wallet connector's choice (`WalletConnector/Balance.ts`).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type * as Statement from "@effect/sql/Statement"
import { Balance, type Ids, Movement } from "@laari/core"
import { type DateTime, Effect } from "effect"
import { all, Column, int, isStorable, repository, rows, toDate } from "./Repository.js"

const movement = rows<Balance.Movement>({
  transferId: Column.as("id"),
  kind: Column.as("kind"),
  net: Column.int("net"),
  fee: Column.int("fee"),
  createdAt: Column.date("at"),
  source: {
    columns: ["cause", "cause_id", "detail"],
    read: (row) =>
      Movement.balanceSource({
        cause: row.cause as Movement.Cause,
        causeId: row.cause_id as string,
        detail: typeof row.detail === "string" ? JSON.parse(row.detail) : row.detail
      }),
    write: () => undefined
  }
})

export const make = Effect.map(SqlClient.SqlClient, (sql) => {
  /** The tenant's posted movements, with `condition`, in `order`, at most `limit`. */
  const select = (
    tenant: Ids.Tenant,
    condition: Statement.Fragment,
    order: "ASC" | "DESC",
    limit: number | null
  ) =>
    sql`WITH m AS (
        SELECT id::text AS id, kind, cause, cause_id, detail, coalesce(posted_at, settled_at) AS at,
          CASE WHEN kind = 'payment' THEN amount - fee ELSE -amount END AS net,
          CASE WHEN kind = 'payment' THEN fee ELSE 0 END AS fee
        FROM wallet_movements
        WHERE merchant_id = ${tenant.merchantId} AND environment = ${tenant.environment} AND status = 'posted')
      SELECT * FROM m WHERE ${condition}
      ORDER BY at ${sql.literal(order)}, id COLLATE "C" ${sql.literal(order)}
      ${limit === null ? sql.literal("") : sql`LIMIT ${limit}`}`.pipe(Effect.map(all(movement.fromRow)))

  return repository({
    available: (tenant: Ids.Tenant) =>
      sql<{ readonly available: string | number }>`SELECT coalesce(sum(CASE
          WHEN kind = 'payment' AND status = 'posted' THEN amount - fee
          WHEN kind = 'reversal' AND status IN ('posted', 'pending') THEN -amount
          ELSE 0 END), 0) AS available
        FROM wallet_movements WHERE merchant_id = ${tenant.merchantId} AND environment = ${tenant.environment}`.pipe(
        Effect.map((found) => int(found[0]?.available ?? 0))
      ),
    movements: (tenant: Ids.Tenant, cursor: Balance.Cursor) =>
      Effect.gen(function* () {
        if (cursor.startingAfter === undefined) return yield* select(tenant, sql`true`, "DESC", cursor.limit)
        if (!isStorable(cursor.startingAfter)) return undefined
        const [after] = yield* select(tenant, sql`m.id = ${cursor.startingAfter}`, "DESC", 1)
        if (after === undefined) return undefined
        return yield* select(
          tenant,
          sql`(m.at, m.id COLLATE "C") < (${toDate(after.createdAt)}, ${after.transferId} COLLATE "C")`,
          "DESC",
          cursor.limit
        )
      }),
    between: (tenant: Ids.Tenant, from: DateTime.Utc, to: DateTime.Utc) =>
      select(tenant, sql`m.at >= ${toDate(from)} AND m.at < ${toDate(to)}`, "ASC", null)
  })
})
