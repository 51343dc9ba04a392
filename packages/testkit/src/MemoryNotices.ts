/**
 * The memory adapter of core's notice outbox (`NoticeOutbox`), as the SQL store keeps it: a notice is
 * leased to one worker at a time, never claimed once expired, and an attempt whose lease another worker
 * took changes nothing when it completes. A code's document goes once its notice is over.
 */
import { DeliveriesStore, Notice, type NoticeOutbox } from "@laari/core"
import { DateTime, Effect, HashMap, Option } from "effect"
import type { MemoryDbService, Row, StoredNotice, Tables } from "./MemoryDb.js"
import { insertRow } from "./MemoryRows.js"

const rows = (t: Tables): Array<Row<StoredNotice>> => Array.from(HashMap.values(t.noticeOutbox))

const put = (t: Tables, row: Row<StoredNotice>, value: StoredNotice): Tables => ({
  ...t,
  noticeOutbox: HashMap.set(t.noticeOutbox, value.id, { ...row, value })
})

const free = (n: StoredNotice, now: DateTime.Utc) =>
  n.leasedUntil === null || DateTime.lessThanOrEqualTo(n.leasedUntil, now)

/** The document a notice keeps once it is over: none for a code. */
const kept = (n: StoredNotice) => (n.kind === "one_time_code" ? null : n.payload)

/** `t` with its pending, unleased notices expired at `now` recorded `EXPIRED`, and how many. */
const expired = (t: Tables, now: DateTime.Utc): [number, Tables] => {
  const due = rows(t).filter(
    ({ value: n }) =>
      n.status === "PENDING" && n.expiresAt !== null && !Notice.sendable(n, now) && free(n, now)
  )
  const next = due.reduce(
    (acc, row) =>
      put(acc, row, {
        ...row.value,
        status: "EXPIRED",
        payload: null,
        leasedUntil: null
      }),
    t
  )
  return [due.length, next]
}

const ms = DateTime.toEpochMillis

export const notices = (db: MemoryDbService): NoticeOutbox.NoticeOutboxService => ({
  queue: (n) =>
    db.update((t) =>
      insertRow(t, "noticeOutbox", n.id, {
        id: n.id,
        customerId: n.customerId,
        kind: n.kind,
        payload: Notice.stored(n),
        status: "PENDING",
        attempts: 0,
        dueAt: n.createdAt,
        expiresAt: n.expiresAt ?? null,
        giveUpAt: Notice.giveUpAt(n.createdAt),
        leasedUntil: null,
        lastStatus: null,
        lastError: null
      })
    ),

  expire: (now) => db.modify((t) => expired(t, now)),

  claim: (now, limit) =>
    db.modify((before) => {
      const [, t] = expired(before, now)
      const due = rows(t)
        .filter(
          ({ value: n }) =>
            n.status === "PENDING" &&
            n.payload !== null &&
            DateTime.lessThanOrEqualTo(n.dueAt, now) &&
            free(n, now) &&
            Notice.sendable(n, now)
        )
        .sort((a, b) => ms(a.value.dueAt) - ms(b.value.dueAt) || a.seq - b.seq)
        .slice(0, limit)
      const leasedUntil = DateTime.addDuration(now, DeliveriesStore.Lease)
      const claimed = due.map(({ value: n }): NoticeOutbox.Claimed => {
        const phone = Option.getOrUndefined(HashMap.get(t.customers, n.customerId))?.phone ?? null
        return {
          id: n.id,
          kind: n.kind,
          attempt: n.attempts + 1,
          body: Notice.withPhone(n.payload!, phone),
          expiresAt: n.expiresAt,
          giveUpAt: n.giveUpAt
        }
      })
      const leased = due.reduce(
        (acc, row) => put(acc, row, { ...row.value, attempts: row.value.attempts + 1, leasedUntil }),
        t
      )
      return [claimed, leased]
    }),

  complete: (claimed, { response, verdict }) =>
    db.update((t) => {
      const row = Option.getOrUndefined(HashMap.get(t.noticeOutbox, claimed.id))
      if (row === undefined || row.value.status !== "PENDING" || row.value.attempts !== claimed.attempt)
        return t
      const last = { ...row.value, lastStatus: response.status, lastError: response.error, leasedUntil: null }
      if (verdict.result === "delivered")
        return put(t, row, { ...last, status: "DELIVERED", payload: kept(last) })
      if (verdict.next !== null) return put(t, row, { ...last, dueAt: verdict.next })
      return put(t, row, {
        ...last,
        status: verdict.result === "expired" ? "EXPIRED" : "FAILED",
        payload: kept(last)
      })
    }),

  nextDueAt: Effect.map(db.get, (t) =>
    rows(t)
      .filter((r) => r.value.status === "PENDING")
      .map(({ value: n }) =>
        n.leasedUntil !== null && ms(n.leasedUntil) > ms(n.dueAt) ? n.leasedUntil : n.dueAt
      )
      .reduce<DateTime.Utc | undefined>(
        (min, at) => (min === undefined || ms(at) < ms(min) ? at : min),
        undefined
      )
  )
})
