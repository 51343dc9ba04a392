/**
 * Approval challenges (one-time codes): rows, mapping, the port `Store.ChallengesStore`, and the server
 * secret that keys the code hashes.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { type Approval, Ids, Store } from "@laari/core"
import { type DateTime, Effect, Layer } from "effect"
import { fromDate, fromDateOrNull, one, repository, toDate, toDateOrNull } from "./Repository.js"
import * as ServerSecrets from "./ServerSecrets.js"

interface ChallengeRow {
  readonly id: string
  readonly subject_kind: string
  readonly subject_id: string
  readonly customer_id: string
  readonly environment: string
  readonly code_hash: string
  readonly attempts: number
  readonly expires_at: Date
  readonly used_at: Date | null
  readonly redacted_at: Date | null
  readonly created_at: Date
}

const fromRow = (row: ChallengeRow): Approval.Challenge => ({
  id: row.id as Ids.ChallengeId,
  subjectKind: row.subject_kind as Approval.SubjectKind,
  subjectId: row.subject_id,
  customerId: row.customer_id as Ids.CustomerId,
  environment: row.environment as Ids.Environment,
  codeHash: row.code_hash,
  attempts: row.attempts,
  expiresAt: fromDate(row.expires_at),
  usedAt: fromDateOrNull(row.used_at),
  redactedAt: fromDateOrNull(row.redacted_at),
  createdAt: fromDate(row.created_at)
})

const toRow = (c: Approval.Challenge): ChallengeRow => ({
  id: c.id,
  subject_kind: c.subjectKind,
  subject_id: c.subjectId,
  customer_id: c.customerId,
  environment: c.environment,
  code_hash: c.codeHash,
  attempts: c.attempts,
  expires_at: toDate(c.expiresAt),
  used_at: toDateOrNull(c.usedAt),
  redacted_at: toDateOrNull(c.redactedAt),
  created_at: toDate(c.createdAt)
})

/** The name of the code-hash key in `server_secrets`. */
const CodeKeyName = "one_time_codes"

/**
 * Makes the key of the code hashes unless there is one. The migration that added `server_secrets` runs
 * it, so the first start of a deployment makes the key and every process reads it.
 */
export const createCodeKey = (sql: SqlClient.SqlClient): Effect.Effect<void, SqlError> =>
  ServerSecrets.create(sql, CodeKeyName)

export const makeChallenges = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  // Read in the transaction that uses it, a primary-key lookup: building the adapter touches no table,
  // and every process sees the one committed key. Missing (its row was removed), it is made again, and
  // commits or rolls back with the codes hashed under it.
  const codeKey = Effect.flatMap(ServerSecrets.read(sql, CodeKeyName), (found) =>
    found !== undefined ? Effect.succeed(found) : ServerSecrets.ensure(sql, CodeKeyName)
  )
  const map = (rows: ReadonlyArray<ChallengeRow>) => rows.map(fromRow)
  return repository({
    codeKey,
    insert: (c: Approval.Challenge) =>
      sql`INSERT INTO challenges ${sql.insert({ ...toRow(c) })}`.pipe(Effect.asVoid),
    update: (c: Approval.Challenge) => {
      const row = toRow(c)
      return sql`UPDATE challenges SET ${sql.update({ ...row }, ["id", "created_at"])} WHERE id = ${row.id}`.pipe(
        Effect.asVoid
      )
    },
    lock: (id: Ids.ChallengeId) =>
      Ids.isUuid(id)
        ? sql<ChallengeRow>`SELECT * FROM challenges WHERE id = ${id} FOR UPDATE`.pipe(
            Effect.map(one(fromRow))
          )
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
      sql<ChallengeRow>`SELECT * FROM challenges
          WHERE subject_kind = ${q.subjectKind} AND subject_id = ${q.subjectId} AND created_at > ${toDate(q.since)}
        UNION
        SELECT * FROM challenges
          WHERE customer_id = ${Ids.isUuid(q.customerId) ? q.customerId : null} AND created_at > ${toDate(q.since)}`.pipe(
        Effect.map(map)
      ),
    claimUnredacted: (now: DateTime.Utc, limit: number) =>
      sql<ChallengeRow>`SELECT * FROM challenges
        WHERE redacted_at IS NULL AND expires_at <= ${toDate(now)}
        ORDER BY expires_at
        LIMIT ${limit}
        FOR UPDATE SKIP LOCKED`.pipe(Effect.map(map)),
    nextRedactionAt: sql<{ readonly at: Date | null }>`SELECT min(expires_at) AS at FROM challenges
      WHERE redacted_at IS NULL`.pipe(Effect.map((rows) => fromDateOrNull(rows[0]?.at ?? null) ?? undefined))
  })
})

export const challengesLayer: Layer.Layer<Store.ChallengesStore, never, SqlClient.SqlClient> = Layer.effect(
  Store.ChallengesStore,
  makeChallenges
)
