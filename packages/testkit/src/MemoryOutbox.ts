/** Memory adapters of what leaves the system: the event outbox and the customers' notifications. */
import { Events, type Notifications } from "@laari/core"
import { Chunk, Effect, HashMap, Option } from "effect"
import type { MemoryDbService } from "./MemoryDb.js"
import { newestFirst } from "./MemoryRows.js"

export const outbox = (db: MemoryDbService): Events.OutboxService => ({
  append: (draft) =>
    db.update((t) => {
      const sequence = Option.getOrElse(HashMap.get(t.eventSequences, draft.subject), () => 0) + 1
      return {
        ...t,
        events: Chunk.append(t.events, Events.seal(draft, sequence)),
        eventSequences: HashMap.set(t.eventSequences, draft.subject, sequence)
      }
    })
})

export const notifications = (db: MemoryDbService): Notifications.NotificationsService => ({
  send: (notification) =>
    db.update((t) => ({ ...t, notifications: Chunk.append(t.notifications, notification) })),
  redactCode: (id, body) =>
    db.update((t) => ({
      ...t,
      notifications: Chunk.map(t.notifications, (n) => {
        if (n.id !== id) return n
        const { code: _code, ...data } = n.data
        return { ...n, body, data }
      })
    })),
  list: (customerId) =>
    Effect.map(db.get, (t) =>
      newestFirst(
        Chunk.toReadonlyArray(t.notifications).flatMap((value, seq) =>
          value.customerId === customerId ? [{ seq, value }] : []
        )
      )
    )
})
