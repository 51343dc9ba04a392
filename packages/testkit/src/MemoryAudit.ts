/**
 * The audit log in memory (core's `AuditStore`), as the SQL store keeps it: rows in the order they were
 * appended (`position`), and each chain's head beside them, made with no rows when first locked. The
 * `MemoryDb` transaction the caller runs in is the lock.
 */
import { AuditEvent, type Store } from "@laari/core"
import { Chunk, DateTime, Effect, HashMap, Option } from "effect"
import type { MemoryDbService } from "./MemoryDb.js"

/** Whether `query`'s reader sees `e`: the tenant's rows and the merchant's of no environment, or all. */
const visible = (query: Store.AuditQuery, e: AuditEvent.Event): boolean =>
  query.tenant === undefined ||
  (e.merchantId === query.tenant.merchantId &&
    (e.environment === null || e.environment === query.tenant.environment))

const matches = (query: Store.AuditQuery, e: AuditEvent.Event): boolean =>
  visible(query, e) &&
  (query.actorKind === undefined || e.actor.kind === query.actorKind) &&
  (query.actorId === undefined || e.actor.id === query.actorId) &&
  (query.action === undefined || e.action === query.action) &&
  (query.resourceType === undefined || e.resourceType === query.resourceType) &&
  (query.resourceId === undefined || e.resourceId === query.resourceId) &&
  (query.from === undefined || DateTime.greaterThanOrEqualTo(e.at, query.from)) &&
  (query.to === undefined || DateTime.lessThan(e.at, query.to))

export const audit = (db: MemoryDbService): Store.AuditStoreService => ({
  lockHead: (chain) =>
    db.modify((t) => {
      const head = Option.getOrUndefined(HashMap.get(t.auditHeads, chain))
      if (head !== undefined) return [head.seq === 0 ? undefined : head, t]
      const made = { seq: 0, hash: AuditEvent.Genesis }
      return [undefined, { ...t, auditHeads: HashMap.set(t.auditHeads, chain, made) }]
    }),
  append: (event) =>
    db.update((t) => {
      // What the SQL table's constraints refuse.
      if (event.seq <= 0) throw new Error(`audit row ${event.id}: seq must be positive`)
      if (event.chain !== AuditEvent.chainOf(event.merchantId))
        throw new Error(`audit row ${event.id}: chain ${event.chain} is not its merchant's`)
      if (
        Chunk.some(
          t.auditEvents,
          (e) => e.id === event.id || (e.chain === event.chain && e.seq === event.seq)
        )
      )
        throw new Error(`audit row ${event.id}: its id or its place in ${event.chain} is taken`)
      return {
        ...t,
        auditEvents: Chunk.append(t.auditEvents, event),
        auditHeads: HashMap.set(t.auditHeads, event.chain, { seq: event.seq, hash: event.hash })
      }
    }),
  list: (query, page) =>
    Effect.map(db.get, (t) => {
      let newest = Chunk.toReadonlyArray(Chunk.reverse(t.auditEvents))
      if (page.startingAfter !== undefined) {
        const at = newest.findIndex((e) => e.id === page.startingAfter && visible(query, e))
        if (at < 0) return []
        newest = newest.slice(at + 1)
      }
      return newest.filter((e) => matches(query, e)).slice(0, page.limit)
    }),
  heads: Effect.map(db.get, (t) =>
    Array.from(t.auditHeads, ([chain, head]) => ({ chain, head })).sort((a, b) =>
      a.chain < b.chain ? -1 : a.chain > b.chain ? 1 : 0
    )
  ),
  chainRows: (chain, afterSeq, limit) =>
    Effect.map(db.get, (t) =>
      Chunk.toReadonlyArray(t.auditEvents)
        .filter((e) => e.chain === chain && e.seq > afterSeq)
        .sort((a, b) => a.seq - b.seq)
        .slice(0, limit)
    )
})
