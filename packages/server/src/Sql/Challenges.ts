/**
 * Approval challenges (one-time codes): rows, mapping, and the port `Store.ChallengesStore`.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { type Approval, Ids, Store } from "@laari/core"
import { Effect, Layer } from "effect"
import { fromDate, fromDateOrNull, one, repository, toDate, toDateOrNull } from "./Repository.js"

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
  created_at: toDate(c.createdAt)
})

export const makeChallenges = Effect.map(SqlClient.SqlClient, (sql) =>
  repository({
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
        : Effect.succeed(undefined)
  })
)

export const challengesLayer: Layer.Layer<Store.ChallengesStore, never, SqlClient.SqlClient> = Layer.effect(
  Store.ChallengesStore,
  makeChallenges
)
