/**
 * Dashboard sessions ended by signing out, by the SHA-256 of their id, until they would have expired.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export const migration = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => sql`CREATE TABLE ended_sessions (
      id_hash text PRIMARY KEY,
      expires_at timestamptz NOT NULL
    )`
)
