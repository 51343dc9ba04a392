/**
 * Customers as the wallet provider's core knows them: the wallet a customer is linked to
 * (`customers.wallet_id`), and the customer a wallet found there by phone becomes. Failures are left as
 * the SQL client's: the wallet connector says what they mean to its callers.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { Ids } from "@laari/core"
import { Effect } from "effect"

export const make = Effect.map(SqlClient.SqlClient, (sql) => ({
  /**
   * The wallet in the core of `customerId`: the one linked to it, else the wallet named by laari's
   * customer id (the sandbox payers a provider seeds).
   */
  walletIdOf: (customerId: Ids.CustomerId) =>
    sql<{
      readonly wallet_id: string | null
    }>`SELECT wallet_id FROM customers WHERE id = ${customerId}`.pipe(
      Effect.map((rows) => rows[0]?.wallet_id ?? customerId)
    ),

  /**
   * Makes the holder of `phone` in `environment` laari's customer `id`, linked to `walletId`; a customer
   * of that phone already there is linked instead. Two first approvals at once: one row, both see it.
   */
  link: (id: string, environment: Ids.Environment, phone: string, walletId: string) =>
    Effect.asVoid(
      sql`INSERT INTO customers (id, environment, phone, name, created_at, wallet_id)
        VALUES (${id}, ${environment}, ${phone}, NULL, now(), ${walletId})
        ON CONFLICT (environment, phone) DO UPDATE SET wallet_id = EXCLUDED.wallet_id`
    )
}))
