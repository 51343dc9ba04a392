/**
 * Approval challenges (one-time codes): rows, mapping, the port `Store.ChallengesStore`, and the server
 * secret that keys the code hashes.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { type Approval, Ids, Store } from "@laari/core"
import { type DateTime, Effect, Layer } from "effect"
import { all, Column, earliest, one, repository, rows, toDate } from "./Repository.js"
import * as ServerSecrets from "./ServerSecrets.js"

const challenges = rows<Approval.Challenge>({
  id: Column.as("id"),
  subjectKind: Column.as("subject_kind"),
  subjectId: Column.as("subject_id"),
  customerId: Column.as("customer_id"),
  environment: Column.as("environment"),
  codeHash: Column.as("code_hash"),
  attempts: Column.as("attempts"),
  expiresAt: Column.date("expires_at"),
  usedAt: Column.dateOrNull("used_at"),
  redactedAt: Column.dateOrNull("redacted_at"),
  createdAt: Column.date("created_at")
})

/**
 * The name of the code-hash key in `server_secrets`. The migration that added the table made it
 * (`Migrations/0004_code_hardening`), so the first start of a deployment makes the key and every process
 * reads it.
 */
const CodeKeyName = "one_time_codes"

export const makeChallenges = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  // Read in the transaction that uses it, a primary-key lookup: building the adapter touches no table,
  // and every process sees the one committed key. Missing (its row was removed), it is made again, and
  // commits or rolls back with the codes hashed under it.
  const codeKey = Effect.flatMap(ServerSecrets.read(sql, CodeKeyName), (found) =>
    found !== undefined ? Effect.succeed(found) : ServerSecrets.ensure(sql, CodeKeyName)
  )
  const map = Effect.map(all(challenges.fromRow))
  return repository({
    codeKey,
    insert: (c: Approval.Challenge) =>
      sql`INSERT INTO challenges ${sql.insert(challenges.toRow(c))}`.pipe(Effect.asVoid),
    update: (c: Approval.Challenge) =>
      sql`UPDATE challenges SET ${sql.update(challenges.toRow(c), ["id", "created_at"])} WHERE id = ${c.id}`.pipe(
        Effect.asVoid
      ),
    lock: (id: Ids.ChallengeId) =>
      Ids.isUuid(id)
        ? sql`SELECT * FROM challenges WHERE id = ${id} FOR UPDATE`.pipe(Effect.map(one(challenges.fromRow)))
        : Effect.succeed(undefined),
    // NO KEY UPDATE: queues the customer's approvals without blocking the foreign-key checks of rows
    // that reference the customer (those take KEY SHARE).
    lockCustomer: (customerId: Ids.CustomerId) =>
      Ids.isUuid(customerId)
        ? sql`SELECT id FROM customers WHERE id = ${customerId} FOR NO KEY UPDATE`.pipe(Effect.asVoid)
        : Effect.void,
    // Each arm has its index (challenges_subject, challenges_customer); UNION returns each row once.
    recent: (q: {
      readonly subjectKind: Approval.SubjectKind
      readonly subjectId: string
      readonly customerId: Ids.CustomerId
      readonly since: DateTime.Utc
    }) =>
      sql`SELECT * FROM challenges
          WHERE subject_kind = ${q.subjectKind} AND subject_id = ${q.subjectId} AND created_at > ${toDate(q.since)}
        UNION
        SELECT * FROM challenges
          WHERE customer_id = ${Ids.isUuid(q.customerId) ? q.customerId : null} AND created_at > ${toDate(q.since)}`.pipe(
        map
      ),
    claimUnredacted: (now: DateTime.Utc, limit: number) =>
      sql`SELECT * FROM challenges
        WHERE redacted_at IS NULL AND expires_at <= ${toDate(now)}
        ORDER BY expires_at
        LIMIT ${limit}
        FOR UPDATE SKIP LOCKED`.pipe(map),
    nextRedactionAt: sql<{ readonly at: Date | null }>`SELECT min(expires_at) AS at FROM challenges
      WHERE redacted_at IS NULL`.pipe(Effect.map(earliest))
  })
})

export const challengesLayer: Layer.Layer<Store.ChallengesStore, never, SqlClient.SqlClient> = Layer.effect(
  Store.ChallengesStore,
  makeChallenges
)
