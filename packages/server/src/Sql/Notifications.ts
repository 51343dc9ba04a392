/**
 * Customer notifications: rows, mapping, and the port `Notifications.Notifications`.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Ids, Notifications } from "@laari/core"
import { Effect, Layer } from "effect"
import { all, Column, repository, rows } from "./Repository.js"
import * as WriteBehind from "./WriteBehind.js"

/** A notice's `expiresAt` is not kept here: only its delivery (`Notify`) needs it. */
const notifications = rows<Notifications.Notification>({
  id: Column.as("id"),
  customerId: Column.as("customer_id"),
  environment: Column.as("environment"),
  kind: Column.as("kind"),
  title: Column.as("title"),
  body: Column.as("body"),
  data: Column.as("data"),
  createdAt: Column.date("created_at")
})

/** Notifications are a set (`WriteBehind.RowSet`): a renewal batch sends many in one go. */
const inserted = WriteBehind.insertInto("notifications_inserted", "notifications", notifications.columns)

export const makeNotifications = Effect.map(SqlClient.SqlClient, (sql) =>
  repository({
    // Held until the transaction's next statement (`WriteBehind`).
    send: (n: Notifications.Notification) =>
      WriteBehind.holdRows(sql, [], [[inserted, notifications.toRow(n)]]),
    redactCode: (id: string, body: string) =>
      sql`UPDATE notifications SET body = ${body}, data = data - 'code' WHERE id = ${id}`.pipe(Effect.asVoid),
    list: (customerId: Ids.CustomerId) =>
      Ids.isUuid(customerId)
        ? sql`SELECT * FROM notifications WHERE customer_id = ${customerId}
            ORDER BY created_at DESC, position DESC`.pipe(Effect.map(all(notifications.fromRow)))
        : Effect.succeed([])
  })
)

export const notificationsLayer: Layer.Layer<Notifications.Notifications, never, SqlClient.SqlClient> =
  Layer.effect(Notifications.Notifications, makeNotifications)
