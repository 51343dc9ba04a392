/**
 * Secrets a deployment makes for itself, kept in `server_secrets` so every process uses the same ones:
 * 32 random bytes each, made by whichever process needs one first. The adapters use them directly; the
 * front ends through the port (`Platform/ServerSecrets`, `layer`).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { randomBytes } from "node:crypto"
import { Effect, Layer } from "effect"
import * as Port from "../Platform/ServerSecrets.js"
import { repository } from "./Repository.js"

/** Makes the secret `name` unless there is one; two processes racing keep the first. */
export const create = (sql: SqlClient.SqlClient, name: string): Effect.Effect<void, SqlError> =>
  sql`INSERT INTO server_secrets (name, value, created_at)
    VALUES (${name}, ${randomBytes(32).toString("hex")}, now())
    ON CONFLICT (name) DO NOTHING`.pipe(Effect.asVoid)

/** The secret `name`, if there is one. */
export const read = (
  sql: SqlClient.SqlClient,
  name: string
): Effect.Effect<Uint8Array | undefined, SqlError> =>
  Effect.map(
    sql<{ readonly value: string }>`SELECT value FROM server_secrets WHERE name = ${name}`,
    (rows) => (rows[0] === undefined ? undefined : new Uint8Array(Buffer.from(rows[0].value, "hex")))
  )

/** The secret `name`, made first if there is none. */
export const ensure = (sql: SqlClient.SqlClient, name: string): Effect.Effect<Uint8Array, SqlError> =>
  Effect.zipRight(
    create(sql, name),
    Effect.flatMap(read(sql, name), (secret) =>
      secret === undefined
        ? Effect.dieMessage(`no server secret ${name} after making one`)
        : Effect.succeed(secret)
    )
  )

/** `read` and `ensure` on the database of the context: for modules outside `Sql/`, which hold no SQL client. */
export const ofContext = {
  read: (name: string): Effect.Effect<Uint8Array | undefined, SqlError, SqlClient.SqlClient> =>
    Effect.flatMap(SqlClient.SqlClient, (sql) => read(sql, name)),
  ensure: (name: string): Effect.Effect<Uint8Array, SqlError, SqlClient.SqlClient> =>
    Effect.flatMap(SqlClient.SqlClient, (sql) => ensure(sql, name))
}

/** The port over this database. */
export const layer: Layer.Layer<Port.ServerSecrets, never, SqlClient.SqlClient> = Layer.effect(
  Port.ServerSecrets,
  Effect.map(SqlClient.SqlClient, (sql) => repository({ ensure: (name: string) => ensure(sql, name) }))
)
