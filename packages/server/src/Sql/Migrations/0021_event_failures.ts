/**
 * The dashboard lists a mandate's refused charges and a subscription's missed renewals from their
 * events (`Sql/Events` failuresAbout): indexed for those two types only, so other events cost nothing more.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export const text = `CREATE INDEX events_failures ON events (subject, position DESC)
      WHERE type IN ('mandate.charge.failed', 'invoice.payment_failed');`

export const migration = Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(text))
