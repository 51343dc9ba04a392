/**
 * Customer notifications: rows, mapping, and the port `Notifications.Notifications`.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Ids, Notifications } from "@laari/core"
import { Effect, Layer } from "effect"
import { fromDate, repository, toDate } from "./Repository.js"
import * as WriteBehind from "./WriteBehind.js"

interface NotificationRow {
  readonly id: string
  readonly customer_id: string
  readonly environment: string
  readonly kind: string
  readonly title: string
  readonly body: string
  readonly data: { readonly [key: string]: unknown }
  readonly created_at: Date
}

const fromRow = (row: NotificationRow): Notifications.Notification => ({
  id: row.id,
  customerId: row.customer_id as Ids.CustomerId,
  environment: row.environment as Ids.Environment,
  kind: row.kind as Notifications.Kind,
  title: row.title,
  body: row.body,
  data: row.data,
  createdAt: fromDate(row.created_at)
})

/** Notifications are a set (`WriteBehind.RowSet`): a renewal batch sends many in one go. */
const inserted = WriteBehind.insertInto("notifications_inserted", "notifications", [
  "id",
  "customer_id",
  "environment",
  "kind",
  "title",
  "body",
  "data",
  "created_at"
])

export const makeNotifications = Effect.map(SqlClient.SqlClient, (sql) =>
  repository({
    // Held until the transaction's next statement (`WriteBehind`).
    send: (n: Notifications.Notification) =>
      WriteBehind.holdRows(
        sql,
        [],
        [
          [
            inserted,
            {
              id: n.id,
              customer_id: n.customerId,
              environment: n.environment,
              kind: n.kind,
              title: n.title,
              body: n.body,
              data: n.data,
              created_at: toDate(n.createdAt)
            }
          ]
        ]
      ),
    redactCode: (id: string, body: string) =>
      sql`UPDATE notifications SET body = ${body}, data = data - 'code' WHERE id = ${id}`.pipe(Effect.asVoid),
    list: (customerId: Ids.CustomerId) =>
      Ids.isUuid(customerId)
        ? sql<NotificationRow>`SELECT * FROM notifications WHERE customer_id = ${customerId}
            ORDER BY created_at DESC, position DESC`.pipe(Effect.map((rows) => rows.map(fromRow)))
        : Effect.succeed([])
  })
)

export const notificationsLayer: Layer.Layer<Notifications.Notifications, never, SqlClient.SqlClient> =
  Layer.effect(Notifications.Notifications, makeNotifications)
