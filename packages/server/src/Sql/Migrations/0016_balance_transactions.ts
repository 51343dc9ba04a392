/**
 * A merchant's balance transactions and settlement days read its transfers newest first or by day
 * (`Sql/Balance`); ties in time in byte order of the id.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export const text = `
CREATE INDEX ledger_transfers_merchant
  ON ledger_transfers (merchant_id, environment, created_at DESC, id COLLATE "C" DESC)
  WHERE merchant_id IS NOT NULL;
`

export const migration = Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(text))
