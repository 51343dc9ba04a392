/**
 * The manual clock's time (LAARI_CLOCK=manual), so a restart goes on from it: one row.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export const text = `CREATE TABLE manual_clock (
      id boolean PRIMARY KEY DEFAULT true CHECK (id),
      now_ms bigint NOT NULL
    );`

export const migration = Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(text))
