/**
 * Sessions ended by signing out (`Platform/EndedSessions`), kept in `ended_sessions` by the SHA-256 of
 * the session's id, never the id; a row goes once the session would have expired anyway.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { createHash } from "node:crypto"
import { Effect, Layer } from "effect"
import * as Port from "../Platform/EndedSessions.js"

const hashOf = (id: string) => createHash("sha256").update(id).digest("hex")

/** The port over this database. */
export const layer: Layer.Layer<Port.EndedSessions, never, SqlClient.SqlClient> = Layer.effect(
  Port.EndedSessions,
  Effect.map(SqlClient.SqlClient, (sql) => ({
    isEnded: (id: string) =>
      Effect.map(
        sql<{ readonly n: number }>`SELECT 1 AS n FROM ended_sessions WHERE id_hash = ${hashOf(id)}`,
        (rows) => rows.length > 0
      ).pipe(Effect.orDie),
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
)
