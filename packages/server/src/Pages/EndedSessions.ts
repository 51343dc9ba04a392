/**
 * Sessions ended by signing out, for the dashboard and the wallet: their cookies are sealed, so a saved
 * copy would otherwise work until it expires. Kept in the database (by the SHA-256 of the session's id,
 * never the id) so that every process and every host refuses it, across restarts; a row goes once the
 * session would have expired anyway.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { createHash, randomBytes } from "node:crypto"
import { Effect } from "effect"

/** A new session's id: 128 random bits, in hex. */
export const newId = (): string => randomBytes(16).toString("hex")

const hashOf = (id: string) => createHash("sha256").update(id).digest("hex")

export const make = Effect.map(SqlClient.SqlClient, (sql) => ({
  /** Whether session `id` was signed out. */
  isEnded: (id: string) =>
    Effect.map(
      sql<{ readonly n: number }>`SELECT 1 AS n FROM ended_sessions WHERE id_hash = ${hashOf(id)}`,
      (rows) => rows.length > 0
    ).pipe(Effect.orDie),
  /** Ends session `id`, which would have expired at `expiresAt`; forgets sessions past their expiry. */
  end: (id: string, expiresAt: Date) =>
    sql
      .withTransaction(
        Effect.zipRight(
          sql`DELETE FROM ended_sessions WHERE expires_at < now()`,
          sql`INSERT INTO ended_sessions (id_hash, expires_at)
            VALUES (${hashOf(id)}, ${expiresAt}) ON CONFLICT DO NOTHING`
        )
      )
      .pipe(Effect.asVoid, Effect.orDie)
}))
