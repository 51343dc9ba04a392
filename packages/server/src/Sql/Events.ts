/**
 * The outbox: event rows, mapping, the port `Events.Outbox`, and the listing the ops API reads.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Events, Ids } from "@laari/core"
import { Effect, Layer } from "effect"
import { fromDate, json, repository, toDate } from "./Repository.js"

interface EventRow {
  readonly id: string
  readonly merchant_id: string
  readonly environment: string
  readonly type: string
  readonly created_at: Date
  readonly envelope: Events.Envelope
}

const fromRow = (row: EventRow): Events.Event => ({
  merchantId: row.merchant_id as Ids.MerchantId,
  environment: row.environment as Ids.Environment,
  createdAt: fromDate(row.created_at),
  envelope: row.envelope
})

export interface EventFilter {
  readonly merchantId?: string | undefined
  readonly type?: string | undefined
  readonly limit: number
}

export const makeEvents = Effect.map(SqlClient.SqlClient, (sql) =>
  repository({
    append: (event: Events.Event) =>
      sql`INSERT INTO events (id, merchant_id, environment, type, created_at, envelope)
          VALUES (${event.envelope.id}, ${event.merchantId}, ${event.environment}, ${event.envelope.type},
                  ${toDate(event.createdAt)}, ${json(event.envelope)}::json)`.pipe(Effect.asVoid),

    /** Newest first: the reverse of the order they were recorded in. */
    list: (filter: EventFilter) => {
      if (filter.merchantId !== undefined && !Ids.isUuid(filter.merchantId)) return Effect.succeed([])
      const where = [sql`true`]
      if (filter.merchantId !== undefined) where.push(sql`merchant_id = ${filter.merchantId}`)
      if (filter.type !== undefined) where.push(sql`type = ${filter.type}`)
      return sql<EventRow>`SELECT id, merchant_id, environment, type, created_at, envelope FROM events
        WHERE ${sql.and(where)} ORDER BY position DESC LIMIT ${filter.limit}`.pipe(
        Effect.map((rows) => rows.map(fromRow))
      )
    }
  })
)

export const outboxLayer: Layer.Layer<Events.Outbox, never, SqlClient.SqlClient> = Layer.effect(
  Events.Outbox,
  Effect.map(makeEvents, (events) => ({ append: events.append }))
)
