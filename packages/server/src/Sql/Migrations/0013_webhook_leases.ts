/**
 * Each webhook claim counts the attempts in flight (leased) per endpoint and merchant, and reads each
 * endpoint's earliest due attempts.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export const text = `CREATE INDEX webhook_deliveries_leased ON webhook_deliveries (leased_until, endpoint_id)
      WHERE status = 'PENDING' AND leased_until IS NOT NULL;
      CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (endpoint_id, due_at, position)
      WHERE status = 'PENDING';`

export const migration = Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(text))
