/**
 * The outbox: appending an event numbers it for its subject, stores its envelope, and in the same
 * transaction queues one delivery per endpoint subscribed to it and wakes the delivery workers (the
 * notification is sent on commit, so a worker never looks before the rows are visible). Also the
 * listings of `GET /events` and the ops API.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { EventLog, Events, Ids } from "@laari/core"
import { Effect, Layer } from "effect"
import { fromDate, repository, toDate } from "./Repository.js"
import * as WriteBehind from "./WriteBehind.js"

/** `EventLog.FailureTypes` as SQL literals (event type names: letters, dots and underscores only). */
export const failureTypes = EventLog.FailureTypes.map((t) => `'${t}'`).join(", ")

/** The channel that wakes delivery workers. */
export const DeliveryChannel = "laari_deliveries"

interface EventRow {
  readonly id: string
  readonly merchant_id: string
  readonly environment: string
  readonly subject: string
  readonly created_at: Date
  /** The envelope's stored text, exactly as delivered. */
  readonly envelope: string
}

/** A stored event: its owner and its envelope's exact text (what is signed and sent). */
export type StoredEvent = EventLog.Stored

/** The stored event with its envelope parsed, for readers that want the values. */
export const parsed = EventLog.parsed

const fromRow = (row: EventRow): StoredEvent => ({
  id: row.id,
  merchantId: row.merchant_id as Ids.MerchantId,
  environment: row.environment as Ids.Environment,
  createdAt: fromDate(row.created_at),
  subject: row.subject,
  text: row.envelope
})

export type EventFilter = EventLog.Filter

/**
 * The envelope's text around its sequence number: `before + n + after` is exactly
 * `JSON.stringify(Events.seal(draft, n).envelope)`. The number is the first `"sequence"` key, at the
 * top level, since the fields before it (id, type, version, time, mode) cannot contain one.
 */
export const envelopeAround = (draft: Events.Draft): readonly [string, string] => {
  const text = JSON.stringify(Events.seal(draft, 0).envelope)
  const marker = ',"sequence":0,'
  const at = text.indexOf(marker)
  return [text.slice(0, at + marker.length - 2), text.slice(at + marker.length - 1)]
}

/**
 * An event's writes, as sets (`WriteBehind.RowSet`): each subject's next number (a subject appears once
 * in a flush: its key), the envelopes with their numbers in the order held, one delivery per subscribed
 * endpoint, and the wake-up when there is any.
 */
const EventSets = {
  sequences: {
    name: "event_sequences_moved",
    text: `INSERT INTO event_sequences (subject, value)
      SELECT v.subject, 1 FROM json_to_recordset($1) AS v(subject text)
      ON CONFLICT (subject) DO UPDATE SET value = event_sequences.value + 1 RETURNING subject, value`
  },
  events: {
    name: "events_inserted",
    text: `INSERT INTO events (id, merchant_id, environment, type, subject, created_at, envelope)
      SELECT v.id, v.merchant_id, v.environment, v.type, v.subject, v.created_at,
             (v.before || s.value::text || v.after)::json
      FROM ROWS FROM (json_to_recordset($1) AS (id text, merchant_id uuid, environment text, type text,
             subject text, created_at timestamptz, before text, after text))
           WITH ORDINALITY AS v(id, merchant_id, environment, type, subject, created_at, before, after, n)
      JOIN event_sequences_moved s ON s.subject = v.subject
      ORDER BY v.n
      RETURNING id, merchant_id, environment, type, created_at`
  },
  deliveries: {
    name: "event_deliveries_due",
    text: `INSERT INTO webhook_deliveries
        (id, merchant_id, endpoint_id, event_id, event_type, attempt, resend, status, due_at, created_at)
      SELECT gen_random_uuid(), w.merchant_id, w.id, e.id, e.type, 1, false, 'PENDING', e.created_at, e.created_at
      FROM events_inserted e JOIN webhook_endpoints w
        ON w.merchant_id = e.merchant_id AND w.environment = e.environment
      WHERE w.status = 'ENABLED' AND w.deleted_at IS NULL
        AND ('*' = ANY (w.enabled_events) OR e.type = ANY (w.enabled_events))
      RETURNING 1`
  },
  wake: WriteBehind.wakeAfter("event_deliveries_wake", "event_deliveries_due", DeliveryChannel, "event")
} satisfies Record<string, WriteBehind.RowSet>

export const makeEvents = Effect.map(SqlClient.SqlClient, (sql) =>
  repository({
    // One statement, held until the transaction's next statement (`WriteBehind`): the subject's next
    // number, the envelope with it (see `envelopeAround`), one delivery per subscribed endpoint, and the
    // wake-up. Two events of one subject are two statements (the key), as the number must move twice.
    append: (draft: Events.Draft) => {
      const [before, after] = envelopeAround(draft)
      return WriteBehind.holdRows(
        sql,
        [`event_sequence:${draft.subject}`],
        [
          [EventSets.sequences, { subject: draft.subject }],
          [
            EventSets.events,
            {
              id: draft.id,
              merchant_id: draft.merchantId,
              environment: draft.environment,
              type: draft.type,
              subject: draft.subject,
              created_at: toDate(draft.createdAt),
              before,
              after
            }
          ],
          [EventSets.deliveries],
          [EventSets.wake]
        ]
      )
    },

    /** Newest first: the reverse of the order they were recorded in. */
    list: (filter: EventFilter) => {
      if (filter.merchantId !== undefined && !Ids.isUuid(filter.merchantId)) return Effect.succeed([])
      const where = [sql`true`]
      if (filter.merchantId !== undefined) where.push(sql`merchant_id = ${filter.merchantId}`)
      if (filter.environment !== undefined) where.push(sql`environment = ${filter.environment}`)
      if (filter.type !== undefined) where.push(sql`type = ${filter.type}`)
      if (filter.createdFrom !== undefined) where.push(sql`created_at >= ${toDate(filter.createdFrom)}`)
      return sql<EventRow>`SELECT id, merchant_id, environment, subject, created_at, envelope::text AS envelope
        FROM events WHERE ${sql.and(where)} ORDER BY position DESC
        LIMIT ${filter.limit} OFFSET ${filter.offset ?? 0}`.pipe(Effect.map((rows) => rows.map(fromRow)))
    },

    /**
     * A merchant's refusals and missed attempts about one subject (`EventLog.failuresAbout`). The types
     * are written out, not sent, so that the plan can use the partial index on them (migration 0021).
     */
    failuresAbout: (
      merchantId: Ids.MerchantId,
      environment: Ids.Environment,
      subject: string,
      limit: number
    ) =>
      sql<EventRow>`SELECT id, merchant_id, environment, subject, created_at, envelope::text AS envelope
        FROM events WHERE subject = ${subject} AND type IN (${sql.literal(failureTypes)})
          AND merchant_id = ${merchantId} AND environment = ${environment}
        ORDER BY position DESC LIMIT ${limit}`.pipe(Effect.map((rows) => rows.map(fromRow))),

    /** One of a merchant's events in one environment. */
    find: (merchantId: Ids.MerchantId, environment: Ids.Environment, id: string) =>
      sql<EventRow>`SELECT id, merchant_id, environment, subject, created_at, envelope::text AS envelope
        FROM events WHERE id = ${id} AND merchant_id = ${merchantId} AND environment = ${environment}`.pipe(
        Effect.map((rows) => (rows[0] === undefined ? undefined : fromRow(rows[0])))
      )
  })
)

export const outboxLayer: Layer.Layer<Events.Outbox, never, SqlClient.SqlClient> = Layer.effect(
  Events.Outbox,
  Effect.map(makeEvents, (events) => ({ append: events.append }))
)

/** The event log (core's `EventLog`): the listings and lookups of the events the outbox recorded. */
export const eventLogLayer: Layer.Layer<EventLog.EventLog, never, SqlClient.SqlClient> = Layer.effect(
  EventLog.EventLog,
  Effect.map(makeEvents, (events) => ({
    list: events.list,
    find: (tenant, id) => events.find(tenant.merchantId, tenant.environment, id),
    failuresAbout: (tenant, subject, limit) =>
      events.failuresAbout(tenant.merchantId, tenant.environment, subject, limit)
  }))
)
