/**
 * People's notices in SQL (`people_notices`): queued in the caller's transaction, leased to a worker with `FOR UPDATE SKIP LOCKED`, completed with what
 * an attempt came to (`Notice.verdict`). The document holds the invitation's link, a secret: it is
 * blanked once delivered, and once expired whether delivered or not; none is ever leased past its
 * expiry. The documents are `People/Notices`'s.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { DeliveriesStore, Notice, type NoticeOutbox } from "@laari/core"
import { Context, DateTime, Effect, Layer } from "effect"
import { fromDate, fromDateOrNull, int, repository, toDate } from "./Repository.js"

export const Reasons = {
  expired: "the notice expired before it could be delivered"
} as const

export type Kind = "team_invitation"

export interface Row {
  readonly id: string
  readonly kind: Kind
  readonly merchantId: string
  readonly email: string
  /** The JSON document sent. */
  readonly document: string
  readonly createdAt: DateTime.Utc
  readonly expiresAt: DateTime.Utc
}

/** A leased notice: `Notice.verdict`'s limits, the attempt, and the exact text to send. */
export interface Claimed extends Notice.Limits {
  readonly id: string
  readonly attempt: number
  readonly body: string
}

/** A notice's delivery record, for tests and operators. */
export interface Entry {
  readonly id: string
  readonly kind: Kind
  readonly merchantId: string
  readonly email: string
  readonly document: string | null
  readonly createdAt: DateTime.Utc
  readonly expiresAt: DateTime.Utc
  readonly deliveredAt: DateTime.Utc | null
  readonly attempts: number
  readonly nextAttemptAt: DateTime.Utc | null
  readonly lastStatus: number | null
  readonly lastError: string | null
}

interface EntryRow {
  readonly id: string
  readonly kind: Kind
  readonly merchant_id: string
  readonly email: string
  readonly document: string | null
  readonly created_at: Date
  readonly expires_at: Date
  readonly delivered_at: Date | null
  readonly attempts: number
  readonly next_attempt_at: Date | null
  readonly last_status: number | null
  readonly last_error: string | null
}

const entryOf = (row: EntryRow): Entry => ({
  id: row.id,
  kind: row.kind,
  merchantId: row.merchant_id,
  email: row.email,
  document: row.document,
  createdAt: fromDate(row.created_at),
  expiresAt: fromDate(row.expires_at),
  deliveredAt: fromDateOrNull(row.delivered_at),
  attempts: int(row.attempts),
  nextAttemptAt: fromDateOrNull(row.next_attempt_at),
  lastStatus: row.last_status === null ? null : int(row.last_status),
  lastError: row.last_error
})

const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  /**
   * Blanks the documents of notices expired at `now`, delivered or not (not one a worker holds now);
   * how many were still to be sent.
   */
  const expire = (now: DateTime.Utc) =>
    sql<{ readonly pending: boolean }>`UPDATE people_notices SET document = NULL, next_attempt_at = NULL,
        leased_until = NULL,
        last_error = CASE WHEN delivered_at IS NULL THEN ${Reasons.expired} ELSE last_error END
      WHERE id IN (SELECT id FROM people_notices
        WHERE document IS NOT NULL AND expires_at <= ${toDate(now)}
          AND (leased_until IS NULL OR leased_until <= ${toDate(now)})
        FOR UPDATE SKIP LOCKED)
      RETURNING delivered_at IS NULL AS pending`.pipe(
      Effect.map((rows) => rows.filter((r) => r.pending).length)
    )

  return {
    /**
     * Queues `row` in the caller's transaction, due at once when `send` (a notification service is
     * configured; the worker polls every second), else kept only to be read (`pending`).
     */
    insert: (row: Row, send: boolean) =>
      sql`INSERT INTO people_notices ${sql.insert({
        id: row.id,
        kind: row.kind,
        merchant_id: row.merchantId,
        email: row.email,
        document: row.document,
        created_at: toDate(row.createdAt),
        expires_at: toDate(row.expiresAt),
        attempts: 0,
        next_attempt_at: send ? toDate(row.createdAt) : null
      })}`.pipe(Effect.asVoid),

    expire,

    /**
     * Leases (`DeliveriesStore.Lease`) up to `limit` notices due at `now`, earliest first, skipping those
     * another worker holds; the expired are blanked first, so none is sent late.
     */
    claim: (now: DateTime.Utc, limit: number) =>
      Effect.zipRight(
        expire(now),
        sql<{
          readonly id: string
          readonly attempts: number
          readonly document: string
          readonly expires_at: Date
          readonly created_at: Date
        }>`
          WITH due AS (
            SELECT id FROM people_notices
            WHERE document IS NOT NULL AND delivered_at IS NULL AND next_attempt_at <= ${toDate(now)}
              AND expires_at > ${toDate(now)}
              AND (leased_until IS NULL OR leased_until <= ${toDate(now)})
            ORDER BY next_attempt_at LIMIT ${limit}
            FOR UPDATE SKIP LOCKED)
          UPDATE people_notices p
          SET leased_until = ${toDate(DateTime.addDuration(now, DeliveriesStore.Lease))}, attempts = p.attempts + 1
          FROM due WHERE p.id = due.id
          RETURNING p.id, p.attempts, p.document, p.expires_at, p.created_at`.pipe(
          Effect.map((rows) =>
            rows.map(
              (row): Claimed => ({
                id: row.id,
                attempt: int(row.attempts),
                body: row.document,
                expiresAt: fromDate(row.expires_at),
                giveUpAt: Notice.giveUpAt(fromDate(row.created_at))
              })
            )
          )
        )
      ),

    /**
     * Records an attempt: delivered (the document, its link, blanked), due again at `verdict.next`, or
     * over (expired, given up: blanked too). An attempt whose lease another worker took changes nothing.
     */
    complete: (claimed: Claimed, { at, response, verdict }: NoticeOutbox.Completion) => {
      const mine = sql`id = ${claimed.id} AND delivered_at IS NULL AND attempts = ${claimed.attempt}`
      const last = sql`last_status = ${response.status}, last_error = ${response.error}, leased_until = NULL`
      if (verdict.result === "delivered")
        return sql`UPDATE people_notices SET ${last}, delivered_at = ${toDate(at)}, document = NULL,
            next_attempt_at = NULL WHERE ${mine}`.pipe(Effect.asVoid)
      if (verdict.next !== null)
        return sql`UPDATE people_notices SET ${last}, next_attempt_at = ${toDate(verdict.next)}
            WHERE ${mine}`.pipe(Effect.asVoid)
      return sql`UPDATE people_notices SET ${last}, document = NULL, next_attempt_at = NULL
          WHERE ${mine}`.pipe(Effect.asVoid)
    },

    /** When the next notice to send becomes due (its lease included). */
    nextDueAt: sql<{ readonly at: Date | null }>`
      SELECT min(greatest(next_attempt_at, coalesce(leased_until, next_attempt_at))) AS at
      FROM people_notices WHERE next_attempt_at IS NOT NULL AND document IS NOT NULL`.pipe(
      Effect.map((rows) => (rows[0]?.at == null ? undefined : fromDate(new Date(rows[0].at))))
    ),

    /** The merchant's notices whose document is still kept and not expired at `now`, newest first. */
    pending: (merchantId: string, now: DateTime.Utc) =>
      sql<EntryRow>`SELECT id, kind, merchant_id, email, document, created_at, expires_at, delivered_at,
          attempts, next_attempt_at, last_status, last_error
        FROM people_notices
        WHERE merchant_id = ${merchantId} AND document IS NOT NULL AND expires_at > ${toDate(now)}
        ORDER BY position DESC`.pipe(Effect.map((rows) => rows.map(entryOf))),

    find: (id: string) =>
      sql<EntryRow>`SELECT id, kind, merchant_id, email, document, created_at, expires_at, delivered_at,
          attempts, next_attempt_at, last_status, last_error
        FROM people_notices WHERE id = ${id}`.pipe(
        Effect.map((rows) => (rows[0] === undefined ? undefined : entryOf(rows[0])))
      )
  }
})

type Repository = Effect.Effect.Success<typeof make>

export class PeopleNoticesStore extends Context.Tag("laari/server/PeopleNoticesStore")<
  PeopleNoticesStore,
  ReturnType<typeof repository<Repository>>
>() {}

export const layer: Layer.Layer<PeopleNoticesStore, never, SqlClient.SqlClient> = Layer.effect(
  PeopleNoticesStore,
  Effect.map(make, repository)
)
