/**
 * The memory adapter of core's webhook delivery log (`DeliveriesStore`), with the outbox's part of it
 * (`queueFirst`: an event's first attempt to each subscribed endpoint) and a deleted endpoint's
 * (`failPending`). A transaction of `MemoryDb` runs alone, so a claim's caps count every lease there is,
 * as the SQL store's do over every process.
 */
import { DeliveriesStore, type Events, Webhook } from "@laari/core"
import { Chunk, DateTime, Effect, HashMap, Option } from "effect"
import type { MemoryDbService, Row, StoredAttempt, StoredEndpoint, Tables } from "./MemoryDb.js"
import { insertRow } from "./MemoryRows.js"

const attemptOf = ({
  merchantId: _m,
  leasedUntil: _l,
  body: _b,
  ...attempt
}: StoredAttempt): Webhook.Attempt => attempt

const endpointRow = (t: Tables, id: string): StoredEndpoint | undefined =>
  Option.getOrUndefined(HashMap.get(t.webhookEndpoints, id))?.value

const enabled = (e: StoredEndpoint | undefined): e is StoredEndpoint =>
  e !== undefined && e.status === "ENABLED" && e.deletedAt === null

const attempts = (t: Tables): Array<Row<StoredAttempt>> => Array.from(HashMap.values(t.webhookDeliveries))

const put = (t: Tables, a: StoredAttempt): Tables => {
  const row = Option.getOrUndefined(HashMap.get(t.webhookDeliveries, a.id))
  if (row !== undefined)
    return { ...t, webhookDeliveries: HashMap.set(t.webhookDeliveries, a.id, { ...row, value: a }) }
  return insertRow(t, "webhookDeliveries", a.id, a)
}

const pending = (
  base: Pick<StoredAttempt, "id" | "merchantId" | "endpointId" | "eventId" | "eventType" | "body">,
  attempt: number,
  resend: boolean,
  dueAt: DateTime.Utc,
  createdAt: DateTime.Utc
): StoredAttempt => ({
  ...base,
  attempt,
  resend,
  status: "PENDING",
  responseStatus: null,
  responseBody: null,
  error: null,
  durationMs: null,
  attemptedAt: null,
  nextRetryAt: null,
  dueAt,
  createdAt,
  leasedUntil: null
})

const byDue = (a: Row<StoredAttempt>, b: Row<StoredAttempt>) =>
  DateTime.toEpochMillis(a.value.dueAt) - DateTime.toEpochMillis(b.value.dueAt) || a.seq - b.seq

/** The endpoints an event goes to: its tenant's, enabled, subscribed to its type. */
export const subscribers = (t: Tables, event: Events.Event): ReadonlyArray<StoredEndpoint> =>
  Array.from(HashMap.values(t.webhookEndpoints))
    .sort((a, b) => a.seq - b.seq)
    .map((r) => r.value)
    .filter(
      (e) =>
        enabled(e) &&
        e.merchantId === event.merchantId &&
        e.environment === event.environment &&
        Webhook.subscribes(e.enabledEvents, event.envelope.type)
    )

/** The event's first attempt to each of `subscribers`, due when it happened; `ids` one for each. */
export const queueFirst = (t: Tables, event: Events.Event, ids: ReadonlyArray<string>): Tables =>
  subscribers(t, event).reduce(
    (tables, e, i) =>
      put(
        tables,
        pending(
          {
            id: ids[i]!,
            merchantId: e.merchantId,
            endpointId: e.id,
            eventId: event.envelope.id,
            eventType: event.envelope.type,
            body: JSON.stringify(event.envelope)
          },
          1,
          false,
          event.createdAt,
          event.createdAt
        )
      ),
    t
  )

/** A deleted endpoint's pending attempts, failed: it receives nothing more. */
export const failPending = (t: Tables, endpointId: string, now: DateTime.Utc): Tables =>
  attempts(t)
    .filter((r) => r.value.endpointId === endpointId && r.value.status === "PENDING")
    .reduce(
      (tables, r) =>
        put(tables, {
          ...r.value,
          status: "FAILED",
          error: "the endpoint was deleted",
          attemptedAt: now,
          durationMs: 0
        }),
      t
    )

const claimIn = (
  t: Tables,
  now: DateTime.Utc,
  limit: number,
  busy: ReadonlyArray<string>,
  caps: DeliveriesStore.Caps
): Array<Row<StoredAttempt>> => {
  const at = DateTime.toEpochMillis(now)
  const leased = (a: StoredAttempt) => a.leasedUntil !== null && DateTime.toEpochMillis(a.leasedUntil) > at
  const tenantOf = (e: StoredEndpoint) => `${e.merchantId}:${e.environment}`
  const endpointLoad = new Map<string, number>()
  const tenantLoad = new Map<string, number>()
  for (const { value: a } of attempts(t)) {
    const e = endpointRow(t, a.endpointId)
    if (a.status !== "PENDING" || !leased(a) || e === undefined) continue
    endpointLoad.set(e.id, (endpointLoad.get(e.id) ?? 0) + 1)
    tenantLoad.set(tenantOf(e), (tenantLoad.get(tenantOf(e)) ?? 0) + 1)
  }
  const skip = new Set(busy.map((id) => id.toLowerCase()))
  const due = attempts(t)
    .filter(
      (r) => r.value.status === "PENDING" && DateTime.toEpochMillis(r.value.dueAt) <= at && !leased(r.value)
    )
    .sort(byDue)
  // Per endpoint with room, its earliest due attempts, as many as fit; then per tenant, as many as fit.
  const fitting: Array<Row<StoredAttempt>> = []
  const taken = new Map<string, number>()
  const tenantTaken = new Map<string, number>()
  for (const r of due) {
    const e = endpointRow(t, r.value.endpointId)
    if (!enabled(e) || skip.has(e.id)) continue
    const cap = e.failingSince === null ? caps.perEndpoint : caps.perFailingEndpoint
    const tenant = tenantOf(e)
    if ((endpointLoad.get(e.id) ?? 0) + (taken.get(e.id) ?? 0) >= cap) continue
    taken.set(e.id, (taken.get(e.id) ?? 0) + 1)
    if ((tenantLoad.get(tenant) ?? 0) + (tenantTaken.get(tenant) ?? 0) >= caps.perMerchant) continue
    tenantTaken.set(tenant, (tenantTaken.get(tenant) ?? 0) + 1)
    fitting.push(r)
  }
  return fitting.slice(0, limit)
}

export const deliveries = (db: MemoryDbService): DeliveriesStore.DeliveriesStoreService => ({
  list: (endpointId, filter) =>
    Effect.map(db.get, (t) =>
      attempts(t)
        .filter(
          (r) =>
            r.value.endpointId === endpointId &&
            (filter.eventId === undefined || r.value.eventId === filter.eventId) &&
            (filter.status === undefined || r.value.status === filter.status)
        )
        .sort((a, b) => b.seq - a.seq)
        .slice(filter.offset, filter.offset + filter.limit)
        .map((r) => attemptOf(r.value))
    ),

  resend: (endpoint, eventId, id, now) =>
    db.modify((t) => {
      const event = Chunk.findFirst(
        t.events,
        (e) =>
          e.envelope.id === eventId &&
          e.merchantId === endpoint.merchantId &&
          e.environment === endpoint.environment
      )
      if (Option.isNone(event)) return [undefined, t]
      const last = attempts(t)
        .filter((r) => r.value.endpointId === endpoint.id && r.value.eventId === eventId)
        .reduce((n, r) => Math.max(n, r.value.attempt), 0)
      const attempt = pending(
        {
          id,
          merchantId: endpoint.merchantId,
          endpointId: endpoint.id,
          eventId,
          eventType: event.value.envelope.type,
          body: JSON.stringify(event.value.envelope)
        },
        last + 1,
        true,
        now,
        now
      )
      return [attemptOf(attempt), put(t, attempt)]
    }),

  claim: (now, limit, busy, caps) =>
    db.modify((t) => {
      const chosen = claimIn(t, now, limit, busy, caps)
      const until = DateTime.addDuration(now, DeliveriesStore.Lease)
      const claimed = chosen.map((r): DeliveriesStore.Claimed => {
        const e = endpointRow(t, r.value.endpointId)!
        return {
          attempt: attemptOf(r.value),
          merchantId: e.merchantId,
          environment: e.environment,
          url: e.url,
          secrets: {
            secret: e.secret,
            previousSecret: e.previousSecret,
            previousSecretExpiresAt: e.previousSecretExpiresAt
          },
          body: r.value.body
        }
      })
      return [claimed, chosen.reduce((tables, r) => put(tables, { ...r.value, leasedUntil: until }), t)]
    }),

  complete: (claimed, { response, verdict, at, nextId }) =>
    db.update((t) => {
      const row = Option.getOrUndefined(HashMap.get(t.webhookDeliveries, claimed.attempt.id))?.value
      if (row === undefined || row.status !== "PENDING") return t
      const recorded = put(t, {
        ...row,
        status: verdict.succeeded ? "SUCCEEDED" : "FAILED",
        leasedUntil: null,
        responseStatus: response.status,
        responseBody: response.body,
        error: response.error,
        durationMs: response.durationMs,
        attemptedAt: at,
        nextRetryAt: verdict.next
      })
      const e = endpointRow(recorded, row.endpointId)
      if (e === undefined) return recorded
      const next =
        verdict.next === null
          ? recorded
          : put(recorded, pending({ ...row, id: nextId }, row.attempt + 1, false, verdict.next, at))
      // A resend says nothing about the endpoint's health over time; only the automatic ones count.
      if (row.resend && !verdict.succeeded) return next
      const change = Webhook.afterAttempt(e.failingSince, verdict, at)
      const changed: StoredEndpoint = {
        ...e,
        failingSince: change.failingSince,
        ...(change.disable === null ? {} : { status: "DISABLED" as const, statusReason: change.disable })
      }
      const endpointAt = Option.getOrThrow(HashMap.get(next.webhookEndpoints, e.id))
      return {
        ...next,
        webhookEndpoints: HashMap.set(next.webhookEndpoints, e.id, { ...endpointAt, value: changed })
      }
    }),

  nextDueAt: Effect.map(db.get, (t) => {
    const times = attempts(t)
      .filter((r) => r.value.status === "PENDING" && enabled(endpointRow(t, r.value.endpointId)))
      .map((r) => {
        const due = DateTime.toEpochMillis(r.value.dueAt)
        return r.value.leasedUntil === null ? due : Math.max(due, DateTime.toEpochMillis(r.value.leasedUntil))
      })
    return times.length === 0 ? undefined : DateTime.unsafeMake(Math.min(...times))
  })
})
