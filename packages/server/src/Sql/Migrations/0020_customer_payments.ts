/**
 * The wallet app lists a customer's payments newest first (`Sql/Balance`), whatever paid them.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export const text = `CREATE INDEX ledger_transfers_customer
      ON ledger_transfers (customer_id, created_at DESC, id COLLATE "C" DESC) WHERE kind = 'payment';`

export const migration = Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(text))
