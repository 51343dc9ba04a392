/**
 * The rate limits' buckets and lock-outs, shared by every process and host (`Sql/RateBuckets`): a
 * token bucket per limit (`scope`) and key: its level in thousandths of a token at `at_ms` (the
 * database's clock), the tokens the last take got (`granted`, for the take's answer) and when it is full
 * again (`full_at_ms`), past which the row is the same as none and pruned. UNLOGGED: nothing here is
 * worth WAL, and a crash only refills the buckets. No index but the key, so updates stay HOT.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export const text = `
CREATE UNLOGGED TABLE rate_buckets (
  scope text NOT NULL,
  key text NOT NULL,
  level bigint NOT NULL CHECK (level >= 0),
  at_ms bigint NOT NULL,
  granted integer NOT NULL CHECK (granted >= 0),
  full_at_ms bigint NOT NULL,
  PRIMARY KEY (scope, key)
);
`

export const migration = Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(text))
