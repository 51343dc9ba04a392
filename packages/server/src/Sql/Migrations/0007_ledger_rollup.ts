/**
 * House accounts (merchant, fee, funding) are no longer moved inside a payment: their entries wait,
 * `rolled = false`, until `Ledger.rollUp` folds them into the balance. Every entry so far is folded.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export const text = `ALTER TABLE ledger_entries ADD COLUMN rolled boolean NOT NULL DEFAULT true;
      CREATE INDEX ledger_entries_unrolled ON ledger_entries (account_id) WHERE NOT rolled;`

export const migration = Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(text))
