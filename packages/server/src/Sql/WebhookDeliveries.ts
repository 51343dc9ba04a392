/**
 * The SQL adapter of core's delivery log (`DeliveriesStore`): one row per attempt, and how it reads as
 * core's `Webhook.Attempt`. Deliveries are queued by the outbox (`Sql/Events`); here they are read,
 * resent, leased to a worker with `FOR UPDATE SKIP LOCKED` and completed. The endpoints themselves are
 * core's `WebhookEndpoints`, stored by `Sql/WebhookEndpoints`.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { DeliveriesStore, Webhook } from "@laari/core"
import { DateTime, Effect, Layer } from "effect"
import { DeliveryChannel } from "./Events.js"
import { fromDate, fromDateOrNull, int, intOrNull, repository, toDate } from "./Repository.js"
import { type EndpointRow, endpointColumns } from "./WebhookEndpoints.js"

export interface AttemptRow {
  readonly id: string
  readonly endpoint_id: string
  readonly event_id: string
  readonly event_type: string
  readonly attempt: number
  readonly resend: boolean
  readonly status: Webhook.AttemptStatus
  readonly response_status: number | null
  readonly response_body: string | null
  readonly error: string | null
  readonly duration_ms: number | null
  readonly attempted_at: Date | null
  readonly next_retry_at: Date | null
  readonly due_at: Date
  readonly created_at: Date
}

export const attemptFromRow = (row: AttemptRow): Webhook.Attempt => ({
  id: row.id,
  endpointId: row.endpoint_id,
  eventId: row.event_id,
  eventType: row.event_type,
  attempt: int(row.attempt),
  resend: row.resend,
  status: row.status,
  responseStatus: intOrNull(row.response_status),
  responseBody: row.response_body,
  error: row.error,
  durationMs: intOrNull(row.duration_ms),
  attemptedAt: fromDateOrNull(row.attempted_at),
  nextRetryAt: fromDateOrNull(row.next_retry_at),
  dueAt: fromDate(row.due_at),
  createdAt: fromDate(row.created_at)
})

// Advisory lock, two-key form (apart from the migrations' one-key lock and a registration's,
// `Sql/WebhookEndpoints`): claims take it in turn.
const ClaimLock = 7_302_620

/** The delivery log; each method does what core's `DeliveriesStore` says, in SQL. */
const makeDeliveries = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  return {
    list: (endpointId: string, filter: DeliveriesStore.Filter) => {
      const where = [sql`endpoint_id = ${endpointId}`]
      if (filter.eventId !== undefined) where.push(sql`event_id = ${filter.eventId}`)
      if (filter.status !== undefined) where.push(sql`status = ${filter.status}`)
      return sql<AttemptRow>`SELECT * FROM webhook_deliveries WHERE ${sql.and(where)}
        ORDER BY position DESC LIMIT ${filter.limit} OFFSET ${filter.offset}`.pipe(
        Effect.map((rows) => rows.map(attemptFromRow))
      )
    },

    resend: (endpoint: Webhook.Endpoint, eventId: string, id: string, now: DateTime.Utc) =>
      Effect.gen(function* () {
        const at = toDate(now)
        const rows = yield* sql<AttemptRow>`INSERT INTO webhook_deliveries
            (id, merchant_id, endpoint_id, event_id, event_type, attempt, resend, status, due_at, created_at)
          SELECT ${id}, e.merchant_id, ${endpoint.id}, e.id, e.type,
            1 + coalesce((SELECT max(attempt) FROM webhook_deliveries
              WHERE endpoint_id = ${endpoint.id} AND event_id = e.id), 0),
            true, 'PENDING', ${at}, ${at}
          FROM events e WHERE e.id = ${eventId}
            AND e.merchant_id = ${endpoint.merchantId} AND e.environment = ${endpoint.environment}
          RETURNING *`
        if (rows[0] === undefined) return undefined
        yield* sql`SELECT pg_notify(${DeliveryChannel}, 'resend')`
        return attemptFromRow(rows[0])
      }),

    claim: (now: DateTime.Utc, limit: number, busy: ReadonlyArray<string>, caps: DeliveriesStore.Caps) => {
      const at = toDate(now)
      // What an endpoint may have in flight: its cap, or one while its attempts fail (a slow or dead
      // endpoint then holds one slot, not a merchant's share, until an attempt succeeds).
      const endpointCap = sql`CASE WHEN w.failing_since IS NULL THEN ${caps.perEndpoint}::int
        ELSE ${caps.perFailingEndpoint}::int END`
      return sql
        .withTransaction(
          Effect.zipRight(
            sql`SELECT pg_advisory_xact_lock(${ClaimLock}::int, 0)`,
            sql<
              AttemptRow &
                Omit<EndpointRow, "id" | "status" | "created_at"> & {
                  readonly body: string
                  readonly attempt_id: string
                }
            >`
        WITH flying AS (
          SELECT d.endpoint_id, w.merchant_id, w.environment
          FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id
          WHERE d.status = 'PENDING' AND d.leased_until > ${at}),
        endpoint_load AS (SELECT endpoint_id, count(*)::int AS n FROM flying GROUP BY endpoint_id),
        tenant_load AS (
          SELECT merchant_id, environment, count(*)::int AS n FROM flying GROUP BY merchant_id, environment),
        open_endpoints AS (
          SELECT w.id, w.merchant_id, w.environment,
            ${endpointCap} - coalesce(el.n, 0) AS endpoint_room,
            ${caps.perMerchant}::int - coalesce(tl.n, 0) AS tenant_room
          FROM webhook_endpoints w
            LEFT JOIN endpoint_load el ON el.endpoint_id = w.id
            LEFT JOIN tenant_load tl ON tl.merchant_id = w.merchant_id AND tl.environment = w.environment
          WHERE w.status = 'ENABLED' AND w.deleted_at IS NULL
            AND NOT (w.id = ANY (${busy as Array<string>}::uuid[]))
            AND ${endpointCap} > coalesce(el.n, 0)
            AND ${caps.perMerchant}::int > coalesce(tl.n, 0)),
        -- Per endpoint with room, its earliest due attempts, as many as fit: one index probe each, so a
        -- capped endpoint's backlog, however long, is never read.
        fitting AS (
          SELECT c.*,
            row_number() OVER (PARTITION BY c.merchant_id, c.environment ORDER BY c.due_at, c.position) AS tenant_rank
          FROM (
            SELECT d.id, d.due_at, d.position, o.merchant_id, o.environment, o.tenant_room
            FROM open_endpoints o CROSS JOIN LATERAL (
              SELECT d.id, d.due_at, d.position FROM webhook_deliveries d
              WHERE d.endpoint_id = o.id AND d.status = 'PENDING' AND d.due_at <= ${at}
                AND (d.leased_until IS NULL OR d.leased_until <= ${at})
              ORDER BY d.due_at, d.position LIMIT o.endpoint_room) d) c),
        chosen AS (
          SELECT id FROM fitting WHERE tenant_rank <= tenant_room ORDER BY due_at, position LIMIT ${limit}),
        due AS (
          SELECT d.id FROM webhook_deliveries d
          WHERE d.id IN (SELECT id FROM chosen) AND d.status = 'PENDING'
            AND (d.leased_until IS NULL OR d.leased_until <= ${at})
          FOR UPDATE OF d SKIP LOCKED),
        leased AS (
          UPDATE webhook_deliveries d SET leased_until = ${toDate(DateTime.addDuration(now, DeliveriesStore.Lease))}
          FROM due WHERE d.id = due.id RETURNING d.*)
        SELECT l.*, l.id AS attempt_id, w.merchant_id, w.environment, w.url, w.secret, w.previous_secret,
          w.previous_secret_expires_at, e.envelope::text AS body
        FROM leased l JOIN webhook_endpoints w ON w.id = l.endpoint_id JOIN events e ON e.id = l.event_id`
          )
        )
        .pipe(
          Effect.map((rows) =>
            rows.map(
              (row): DeliveriesStore.Claimed => ({
                attempt: attemptFromRow({ ...row, id: row.attempt_id }),
                merchantId: row.merchant_id,
                environment: row.environment,
                url: row.url,
                secrets: {
                  secret: row.secret,
                  previousSecret: row.previous_secret,
                  previousSecretExpiresAt: fromDateOrNull(row.previous_secret_expires_at)
                },
                body: row.body
              })
            )
          )
        )
    },

    complete: (claimed: DeliveriesStore.Claimed, completion: DeliveriesStore.Completion) => {
      const { attempt } = claimed
      const { response, verdict, at, nextId } = completion
      const record = (status: Webhook.AttemptStatus) =>
        sql`UPDATE webhook_deliveries SET status = ${status}, leased_until = NULL,
            response_status = ${response.status}, response_body = ${response.body}, error = ${response.error},
            duration_ms = ${response.durationMs}, attempted_at = ${toDate(at)},
            next_retry_at = ${verdict.next === null ? null : toDate(verdict.next)}
          WHERE id = ${attempt.id} AND status = 'PENDING' RETURNING endpoint_id`
      // The common case in one statement: a success ends any failing streak (`Webhook.afterAttempt`).
      if (verdict.succeeded)
        return sql`WITH d AS (${record("SUCCEEDED")})
          UPDATE webhook_endpoints w SET failing_since = NULL FROM d
          WHERE w.id = d.endpoint_id AND w.failing_since IS NOT NULL`.pipe(Effect.asVoid)
      return sql.withTransaction(
        Effect.gen(function* () {
          const [endpoint] = yield* sql<EndpointRow>`SELECT ${sql.literal(endpointColumns)}
            FROM webhook_endpoints WHERE id = ${attempt.endpointId} FOR UPDATE`
          const updated = yield* record("FAILED")
          if (updated.length === 0 || endpoint === undefined) return
          if (verdict.next !== null)
            yield* sql`INSERT INTO webhook_deliveries
                (id, merchant_id, endpoint_id, event_id, event_type, attempt, resend, status, due_at, created_at)
              VALUES (${nextId}, ${endpoint.merchant_id}, ${endpoint.id}, ${attempt.eventId}, ${attempt.eventType},
                ${attempt.attempt + 1}, false, 'PENDING', ${toDate(verdict.next)}, ${toDate(at)})`
          // A resend says nothing about the endpoint's health over time; only the automatic ones count.
          if (attempt.resend) return
          const change = Webhook.afterAttempt(fromDateOrNull(endpoint.failing_since), verdict, at)
          yield* sql`UPDATE webhook_endpoints SET
              failing_since = ${change.failingSince === null ? null : toDate(change.failingSince)}
              ${change.disable === null ? sql`` : sql`, status = 'DISABLED', status_reason = ${change.disable}`}
            WHERE id = ${endpoint.id}`
        })
      )
    },

    nextDueAt: sql<{ readonly at: Date | null }>`
      SELECT min(greatest(d.due_at, coalesce(d.leased_until, d.due_at))) AS at
      FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id
      WHERE d.status = 'PENDING' AND w.status = 'ENABLED' AND w.deleted_at IS NULL`.pipe(
      Effect.map((rows) => (rows[0]?.at == null ? undefined : fromDate(new Date(rows[0].at))))
    )
  }
})

/** Core's `DeliveriesStore` over the database. */
export const deliveriesLayer: Layer.Layer<DeliveriesStore.DeliveriesStore, never, SqlClient.SqlClient> =
  Layer.effect(
    DeliveriesStore.DeliveriesStore,
    Effect.map(makeDeliveries, (store): DeliveriesStore.DeliveriesStoreService => repository(store))
  )
