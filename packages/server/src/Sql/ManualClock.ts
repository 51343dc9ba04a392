/**
 * The manual clock's time (`LAARI_CLOCK=manual`), kept in `manual_clock` so a restart goes on from it:
 * one row, which never goes back.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type { Errors } from "@laari/core"
import { Effect } from "effect"
import { guard } from "./Repository.js"

export interface Kept {
  /** The time kept, in epoch milliseconds; `undefined` on a new database. */
  readonly saved: number | undefined
  /** Keeps `millis`, unless a later time is kept already. */
  readonly save: (millis: number) => Effect.Effect<void, Errors.ServiceUnavailable>
}

/** The kept time, and how to keep a later one. */
export const make: Effect.Effect<Kept, SqlError, SqlClient.SqlClient> = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const saved = yield* sql<{ readonly now_ms: number | string }>`SELECT now_ms FROM manual_clock`
  return {
    saved: saved[0] === undefined ? undefined : Number(saved[0].now_ms),
    save: (millis) =>
      guard(
        sql`INSERT INTO manual_clock (id, now_ms) VALUES (true, ${millis})
          ON CONFLICT (id) DO UPDATE SET now_ms = GREATEST(manual_clock.now_ms, EXCLUDED.now_ms)`
      ).pipe(Effect.asVoid)
  }
})
