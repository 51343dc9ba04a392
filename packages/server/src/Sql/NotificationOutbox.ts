/**
 * The notification outbox in SQL: each notice is queued in the transaction that made it (beside its row
 * in `notifications`, which the wallet page reads), leased to a worker with `FOR UPDATE SKIP LOCKED`, and
 * completed with what followed (`Notice.verdict`): core's `NoticeOutbox` port (`portLayer`), and what only
 * the server does (a spent code leaves the outbox, `find` for tests and operators).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { DeliveriesStore, Notice, NoticeOutbox, Notifications } from "@laari/core"
import { Context, DateTime, Effect, Layer } from "effect"
import { makeNotifications, notificationsLayer as keptOnly } from "./Notifications.js"
import { fromDate, fromDateOrNull, int, repository, toDate } from "./Repository.js"
import * as WriteBehind from "./WriteBehind.js"

/** The channel that wakes notice workers (sent on commit, like the webhook outbox's). */
export const Channel = "laari_notices"

/** Why a notice was not delivered, as its row records it. */
export const Reasons = {
  expired: "the notice expired before it could be delivered",
  spent: "the code was used or locked before it was delivered"
} as const

const OutboxSets = {
  inserted: WriteBehind.insertInto(
    "notification_outbox_inserted",
    "notification_outbox",
    [
      "id",
      "customer_id",
      "environment",
      "kind",
      "payload",
      "status",
      "attempts",
      "due_at",
      "expires_at",
      "give_up_at",
      "created_at"
    ],
    "RETURNING 1"
  ),
  wake: WriteBehind.wakeAfter("notification_outbox_wake", "notification_outbox_inserted", Channel, "notice")
} satisfies Record<string, WriteBehind.RowSet>

/** A leased notice, with what sending it needs (`Notice.withPhone` made its body). */
export type Claimed = NoticeOutbox.Claimed

interface ClaimedRow {
  readonly id: string
  readonly kind: Notifications.Kind
  readonly attempts: number
  readonly payload: string
  readonly phone: string | null
  readonly expires_at: Date | null
  readonly give_up_at: Date
}

export type Status = "PENDING" | "DELIVERED" | "EXPIRED" | "FAILED"

/** A notice's delivery record (for tests and operators). */
export interface Entry {
  readonly id: string
  readonly kind: Notifications.Kind
  readonly status: Status
  readonly attempts: number
  readonly lastStatus: number | null
  readonly lastError: string | null
  readonly hasPayload: boolean
}

const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  // A code notice keeps its document only while it may still be sent.
  const keepPayload = sql`CASE WHEN kind = 'one_time_code' THEN NULL ELSE payload END`

  /** Marks due-or-not pending notices past their expiry `EXPIRED` (not those a worker holds now). */
  const expire = (now: DateTime.Utc) =>
    sql`UPDATE notification_outbox SET status = 'EXPIRED', payload = NULL, leased_until = NULL,
        last_error = ${Reasons.expired}, done_at = ${toDate(now)}
      WHERE id IN (SELECT id FROM notification_outbox
        WHERE status = 'PENDING' AND expires_at <= ${toDate(now)}
          AND (leased_until IS NULL OR leased_until <= ${toDate(now)})
        FOR UPDATE SKIP LOCKED)
      RETURNING id`.pipe(Effect.map((rows) => rows.length))

  return {
    /** Queues `n` in the caller's transaction (held: `WriteBehind`) and wakes the workers on commit. */
    queue: (n: Notifications.Notification) =>
      WriteBehind.holdRows(
        sql,
        [],
        [
          [
            OutboxSets.inserted,
            {
              id: n.id,
              customer_id: n.customerId,
              environment: n.environment,
              kind: n.kind,
              payload: Notice.stored(n),
              status: "PENDING",
              attempts: 0,
              due_at: toDate(n.createdAt),
              expires_at: n.expiresAt === undefined ? null : toDate(n.expiresAt),
              give_up_at: toDate(Notice.giveUpAt(n.createdAt)),
              created_at: toDate(n.createdAt)
            }
          ],
          [OutboxSets.wake]
        ]
      ),

    /** The code of notice `id` can approve nothing more: not delivered yet, it never will be. */
    spend: (id: string, now: DateTime.Utc) =>
      sql`UPDATE notification_outbox SET payload = NULL,
          last_error = CASE WHEN status = 'PENDING' THEN ${Reasons.spent} ELSE last_error END,
          done_at = CASE WHEN status = 'PENDING' THEN ${toDate(now)} ELSE done_at END,
          status = CASE WHEN status = 'PENDING' THEN 'EXPIRED' ELSE status END, leased_until = NULL
        WHERE id = ${id}`.pipe(Effect.asVoid),

    expire,

    /**
     * Leases up to `limit` due notices, skipping those another worker holds; first records as `EXPIRED`
     * those that expired undelivered, so none of them is ever sent late.
     */
    claim: (now: DateTime.Utc, limit: number) =>
      Effect.zipRight(
        expire(now),
        sql<ClaimedRow>`
          WITH due AS (
            SELECT id FROM notification_outbox
            WHERE status = 'PENDING' AND payload IS NOT NULL AND due_at <= ${toDate(now)}
              AND (leased_until IS NULL OR leased_until <= ${toDate(now)})
              AND (expires_at IS NULL OR expires_at > ${toDate(now)})
            ORDER BY due_at LIMIT ${limit}
            FOR UPDATE SKIP LOCKED),
          leased AS (
            UPDATE notification_outbox o
            SET leased_until = ${toDate(DateTime.addDuration(now, DeliveriesStore.Lease))}, attempts = o.attempts + 1
            FROM due WHERE o.id = due.id
            RETURNING o.id, o.kind, o.attempts, o.payload, o.customer_id, o.expires_at, o.give_up_at, o.due_at)
          SELECT l.id, l.kind, l.attempts, l.payload, c.phone, l.expires_at, l.give_up_at
          FROM leased l LEFT JOIN customers c ON c.id = l.customer_id
          ORDER BY l.due_at`.pipe(
          Effect.map((rows) =>
            rows.map(
              (row): Claimed => ({
                id: row.id,
                kind: row.kind,
                attempt: int(row.attempts),
                body: Notice.withPhone(row.payload, row.phone),
                expiresAt: fromDateOrNull(row.expires_at),
                giveUpAt: fromDate(row.give_up_at)
              })
            )
          )
        )
      ),

    /** `NoticeOutbox.complete`. */
    complete: (claimed: Claimed, { at, response, verdict }: NoticeOutbox.Completion) => {
      const mine = sql`id = ${claimed.id} AND status = 'PENDING' AND attempts = ${claimed.attempt}`
      const last = sql`last_status = ${response.status}, last_error = ${response.error}, leased_until = NULL`
      if (verdict.result === "delivered")
        return sql`UPDATE notification_outbox SET status = 'DELIVERED', ${last}, payload = ${keepPayload},
            done_at = ${toDate(at)} WHERE ${mine}`.pipe(Effect.asVoid)
      if (verdict.next !== null)
        return sql`UPDATE notification_outbox SET ${last}, due_at = ${toDate(verdict.next)} WHERE ${mine}`.pipe(
          Effect.asVoid
        )
      return sql`UPDATE notification_outbox SET ${last},
          status = ${verdict.result === "expired" ? "EXPIRED" : "FAILED"}, payload = ${keepPayload},
          done_at = ${toDate(at)} WHERE ${mine}`.pipe(Effect.asVoid)
    },

    /** When the next pending notice becomes due (its lease included). */
    nextDueAt: sql<{ readonly at: Date | null }>`
      SELECT min(greatest(due_at, coalesce(leased_until, due_at))) AS at
      FROM notification_outbox WHERE status = 'PENDING'`.pipe(
      Effect.map((rows) => (rows[0]?.at == null ? undefined : fromDate(new Date(rows[0].at))))
    ),

    find: (id: string) =>
      sql<{
        readonly id: string
        readonly kind: Notifications.Kind
        readonly status: Status
        readonly attempts: number
        readonly last_status: number | null
        readonly last_error: string | null
        readonly has_payload: boolean
      }>`SELECT id, kind, status, attempts, last_status, last_error, payload IS NOT NULL AS has_payload
        FROM notification_outbox WHERE id = ${id}`.pipe(
        Effect.map((rows) =>
          rows.map(
            (row): Entry => ({
              id: row.id,
              kind: row.kind,
              status: row.status,
              attempts: int(row.attempts),
              lastStatus: row.last_status === null ? null : int(row.last_status),
              lastError: row.last_error,
              hasPayload: row.has_payload
            })
          )
        ),
        Effect.map((rows) => rows[0])
      )
  }
})

type Repository = Effect.Effect.Success<typeof make>

export class NotificationOutbox extends Context.Tag("laari/server/NotificationOutbox")<
  NotificationOutbox,
  ReturnType<typeof repository<Repository>>
>() {}

export const layer = Layer.effect(NotificationOutbox, Effect.map(make, repository))

/** Core's `NoticeOutbox` port, over the server's outbox. */
export const portLayer: Layer.Layer<NoticeOutbox.NoticeOutbox, never, NotificationOutbox> = Layer.effect(
  NoticeOutbox.NoticeOutbox,
  Effect.map(
    NotificationOutbox,
    ({ claim, complete, expire, nextDueAt, queue }): NoticeOutbox.NoticeOutboxService => ({
      queue,
      expire,
      claim,
      complete,
      nextDueAt
    })
  )
)

/**
 * The `Notifications` port with the outbox: every notice is kept for the wallet page, as without it, and
 * queued for the notification service in the same transaction; a spent code leaves both.
 */
export const notificationsLayer: Layer.Layer<
  Notifications.Notifications,
  never,
  SqlClient.SqlClient | NotificationOutbox
> = Layer.effect(
  Notifications.Notifications,
  Effect.gen(function* () {
    const kept = yield* makeNotifications
    const outbox = yield* NotificationOutbox
    return {
      send: (n) => Effect.zipRight(kept.send(n), outbox.queue(n)),
      redactCode: (id, body) =>
        Effect.zipRight(
          kept.redactCode(id, body),
          Effect.flatMap(DateTime.now, (now) => outbox.spend(id, now))
        ),
      list: kept.list
    }
  })
)

/**
 * The ports of notices, below the engine: `Notifications` and core's `NoticeOutbox`. With a notification
 * service to send them to (`LAARI_NOTIFY_URL`, `notifyUrl`) the port also queues each notice in the
 * outbox; without one, it keeps them in laari only, and the outbox stays empty.
 */
export const ports = (
  notifyUrl: string | undefined
): Layer.Layer<Notifications.Notifications | NoticeOutbox.NoticeOutbox, never, SqlClient.SqlClient> =>
  Layer.merge(notifyUrl === undefined ? keptOnly : notificationsLayer, portLayer).pipe(Layer.provide(layer))
