/**
 * Sign-in codes of the wallet app are challenges whose subject is the customer's wallet; the dashboard
 * lists a merchant's checkout sessions.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export const text = `ALTER TABLE challenges DROP CONSTRAINT challenges_subject_kind_check,
      ADD CONSTRAINT challenges_subject_kind_check CHECK (subject_kind IN ('mandate', 'checkout', 'wallet'));
      CREATE INDEX checkout_sessions_merchant ON checkout_sessions (merchant_id, environment, created_at DESC, position DESC);`

export const migration = Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(text))
