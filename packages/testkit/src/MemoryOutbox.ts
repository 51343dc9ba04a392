/**
 * Memory adapters of what leaves the system: the event outbox (queueing webhook deliveries as it records),
 * its log, and the customers' notifications.
 */
import { Crypto, EventLog, Events, type Notifications } from "@laari/core"
import { Chunk, DateTime, Effect, HashMap, Option } from "effect"
import { queueFirst, subscribers } from "./MemoryDeliveries.js"
import type { MemoryDbService } from "./MemoryDb.js"
import { newestFirst } from "./MemoryRows.js"

/** An event recorded, numbered for its subject, and its first attempt queued to each subscribed endpoint. */
export const outbox = (db: MemoryDbService): Events.OutboxService => ({
  append: (draft) =>
    db.withTransaction(
      Effect.gen(function* () {
        const t = yield* db.get
        const sequence = Option.getOrElse(HashMap.get(t.eventSequences, draft.subject), () => 0) + 1
        const event = Events.seal(draft, sequence)
        const ids = yield* Effect.forEach(subscribers(t, event), () => Crypto.web.uuid)
        yield* db.update((tables) =>
          queueFirst(
            {
              ...tables,
              events: Chunk.append(tables.events, event),
              eventSequences: HashMap.set(tables.eventSequences, draft.subject, sequence)
            },
            event,
            ids
          )
        )
      })
    )
})

/** A kept event as the log reads it: the envelope's text is what `JSON.stringify` gives, as SQL keeps it. */
const stored = (e: Events.Event): EventLog.Stored => ({
  id: e.envelope.id,
  merchantId: e.merchantId,
  environment: e.environment,
  createdAt: e.createdAt,
  subject: e.subject,
  text: JSON.stringify(e.envelope)
})

export const eventLog = (db: MemoryDbService): EventLog.EventLogService => ({
  list: (filter) =>
    Effect.map(db.get, (t) => {
      const from = filter.createdFrom
      const offset = filter.offset ?? 0
      return Chunk.toReadonlyArray(Chunk.reverse(t.events))
        .filter(
          (e) =>
            (filter.merchantId === undefined || e.merchantId === filter.merchantId) &&
            (filter.environment === undefined || e.environment === filter.environment) &&
            (filter.type === undefined || e.envelope.type === filter.type) &&
            (from === undefined || DateTime.greaterThanOrEqualTo(e.createdAt, from))
        )
        .slice(offset, offset + filter.limit)
        .map(stored)
    }),
  find: (tenant, id) =>
    Effect.map(db.get, (t) => {
      const found = Chunk.findFirst(
        t.events,
        (e) =>
          e.envelope.id === id && e.merchantId === tenant.merchantId && e.environment === tenant.environment
      )
      return Option.isSome(found) ? stored(found.value) : undefined
    }),
  failuresAbout: (tenant, subject, limit) =>
    Effect.map(db.get, (t) =>
      Chunk.toReadonlyArray(Chunk.reverse(t.events))
        .filter(
          (e) =>
            e.subject === subject &&
            (EventLog.FailureTypes as ReadonlyArray<string>).includes(e.envelope.type) &&
            e.merchantId === tenant.merchantId &&
            e.environment === tenant.environment
        )
        .slice(0, limit)
        .map(stored)
    )
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
