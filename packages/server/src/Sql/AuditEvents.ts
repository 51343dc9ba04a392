/**
 * The audit log's rows (`audit_events`) and each chain's head (`audit_heads`): core's `AuditStore`. A row
 * and its head are written in the caller's transaction, held until its next statement (`WriteBehind`);
 * the head is locked first, so a chain's rows are appended one at a time, in order.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { AuditEvent, Ids, Store } from "@laari/core"
import { Effect, Layer } from "effect"
import { all, Column, int, isStorable, json, one, repository, rows, toDate } from "./Repository.js"
import * as WriteBehind from "./WriteBehind.js"

const events = rows<AuditEvent.Event>({
  id: Column.as("id"),
  chain: Column.as("chain"),
  seq: Column.int("seq"),
  merchantId: Column.as("merchant_id"),
  environment: Column.as("environment"),
  actor: {
    columns: ["actor_kind", "actor_id"],
    read: (row) => ({ kind: row.actor_kind as AuditEvent.ActorKind, id: row.actor_id as string }),
    write: (value, row) => {
      row.actor_kind = value.kind
      row.actor_id = value.id
    }
  },
  action: Column.as("action"),
  resourceType: Column.as("resource_type"),
  resourceId: Column.as("resource_id"),
  summary: {
    columns: ["summary"],
    // pg reads jsonb back as a value; PGlite too. Written as JSON text (`json`).
    read: (row) => (typeof row.summary === "string" ? JSON.parse(row.summary) : row.summary),
    write: (value, row) => {
      row.summary = json(value)
    }
  },
  address: Column.as("address"),
  userAgent: Column.as("user_agent"),
  requestId: Column.as("request_id"),
  // timestamptz keeps microseconds: the millisecond the hash was taken of comes back exactly.
  at: Column.date("at"),
  prevHash: Column.as("prev_hash"),
  hash: Column.as("hash")
})

interface HeadRow {
  readonly seq: unknown
  readonly hash: string
}

const headOf = (row: HeadRow): AuditEvent.Head => ({ seq: int(row.seq), hash: row.hash })

/** The key a held write names for a chain's head (`WriteBehind`: two writes of one head never share a flush). */
const headKey = (chain: string) => `audit_head:${chain}`

export const makeAuditEvents = Effect.map(SqlClient.SqlClient, (sql) => {
  const map = Effect.map(all(events.fromRow))

  /** The tenant's rows (and the merchant's of no environment), or every row for the operator. */
  const visible = (query: Store.AuditQuery) =>
    query.tenant === undefined
      ? sql`true`
      : sql`merchant_id = ${query.tenant.merchantId}
          AND (environment = ${query.tenant.environment} OR environment IS NULL)`

  return repository({
    lockHead: (chain: string) =>
      Effect.zipRight(
        // Made with no rows (seq 0) when the chain is new; a head another transaction is making waits for it.
        WriteBehind.hold(sql, [headKey(chain)], () => [
          {
            alias: "h",
            statement: sql`INSERT INTO audit_heads (chain, seq, hash)
              VALUES (${chain}, 0, ${AuditEvent.Genesis}) ON CONFLICT (chain) DO NOTHING`
          }
        ]),
        sql<HeadRow>`SELECT seq, hash FROM audit_heads WHERE chain = ${chain} FOR UPDATE`.pipe(
          Effect.map(one(headOf)),
          Effect.map((head) => (head === undefined || head.seq === 0 ? undefined : head))
        )
      ),

    append: (event: AuditEvent.Event) =>
      // One statement: the row and its head commit together or the statement fails whole.
      WriteBehind.hold(sql, [headKey(event.chain)], () => [
        { alias: "e", statement: sql`INSERT INTO audit_events ${sql.insert(events.toRow(event))}` },
        {
          alias: "h",
          statement: sql`UPDATE audit_heads SET seq = ${event.seq}, hash = ${event.hash}
            WHERE chain = ${event.chain}`
        }
      ]),

    list: (
      query: Store.AuditQuery,
      page: { readonly limit: number; readonly startingAfter?: string | undefined }
    ) => {
      if (query.tenant !== undefined && !Ids.isUuid(query.tenant.merchantId)) return Effect.succeed([])
      // Text PostgreSQL cannot hold matches no row.
      const texts = [query.actorId, query.action, query.resourceType, query.resourceId, page.startingAfter]
      if (texts.some((text) => text !== undefined && !isStorable(text))) return Effect.succeed([])
      const where = [visible(query)]
      if (query.actorKind !== undefined) where.push(sql`actor_kind = ${query.actorKind}`)
      if (query.actorId !== undefined) where.push(sql`actor_id = ${query.actorId}`)
      if (query.action !== undefined) where.push(sql`action = ${query.action}`)
      if (query.resourceType !== undefined) where.push(sql`resource_type = ${query.resourceType}`)
      if (query.resourceId !== undefined) where.push(sql`resource_id = ${query.resourceId}`)
      if (query.from !== undefined) where.push(sql`at >= ${toDate(query.from)}`)
      if (query.to !== undefined) where.push(sql`at < ${toDate(query.to)}`)
      // A cursor that is not one of the reader's rows finds no position: the page is empty.
      if (page.startingAfter !== undefined)
        where.push(sql`position < (SELECT position FROM audit_events
          WHERE id = ${page.startingAfter} AND ${visible(query)})`)
      return sql`SELECT * FROM audit_events WHERE ${sql.and(where)}
        ORDER BY position DESC LIMIT ${page.limit}`.pipe(map)
    },

    heads: sql<HeadRow & { readonly chain: string }>`SELECT chain, seq, hash FROM audit_heads
      ORDER BY chain COLLATE "C"`.pipe(
      Effect.map((found) => found.map((row) => ({ chain: row.chain, head: headOf(row) })))
    ),

    chainRows: (chain: string, afterSeq: number, limit: number) =>
      sql`SELECT * FROM audit_events WHERE chain = ${chain} AND seq > ${afterSeq}
        ORDER BY seq LIMIT ${limit}`.pipe(map)
  })
})

export const auditLayer: Layer.Layer<Store.AuditStore, never, SqlClient.SqlClient> = Layer.effect(
  Store.AuditStore,
  makeAuditEvents
)
