/**
 * Memory adapters of the mandates' repositories: mandates, their charges and the challenges that approve
 * them. Each operation is a transaction of `MemoryDb` (joining the caller's).
 */
import { Mandate, Store } from "@laari/core"
import { DateTime, Effect, HashMap, Option } from "effect"
import type { MemoryDbService, Tables } from "./MemoryDb.js"
import {
  byLookup,
  insertRow,
  matching,
  newestFirst,
  ownRow,
  referenceTaken,
  tenantPage
} from "./MemoryRows.js"

/** The moment `m` becomes due to expire, if it can still expire (see `Mandate.isDueToExpire`). */
export const expiryMoment = (m: Mandate.Mandate): DateTime.Utc | undefined =>
  m.status === "INITIATED"
    ? m.setupExpiresAt
    : m.status === "ACTIVE" || m.status === "SUSPENDED"
      ? m.expiresAt
      : undefined

export const mandates = (db: MemoryDbService): Store.MandatesStoreService => ({
  insert: (mandate) =>
    db.withTransaction(
      Effect.gen(function* () {
        const t = yield* db.get
        if (HashMap.has(t.mandates, mandate.id))
          return yield* Effect.dieMessage(`mandate ${mandate.id} exists`)
        if (referenceTaken(t.mandates, mandate))
          return yield* new Store.DuplicateReference({ reference: mandate.reference })
        yield* db.update((t) => insertRow(t, "mandates", mandate.id, mandate))
      })
    ),
  update: (mandate) =>
    db.update((t) =>
      Option.match(HashMap.get(t.mandates, mandate.id), {
        // Like an SQL UPDATE of a missing row: nothing happens.
        onNone: () => t,
        onSome: (row) => ({ ...t, mandates: HashMap.set(t.mandates, mandate.id, { ...row, value: mandate }) })
      })
    ),
  find: (tenant, lookup) => Effect.map(db.get, (t) => byLookup(t.mandates, tenant, lookup)),
  lockById: (id) =>
    Effect.map(db.get, (t) => Option.getOrUndefined(HashMap.get(t.mandates, id.toLowerCase()))?.value),
  list: (tenant, filter) =>
    Effect.map(db.get, (t) =>
      tenantPage(t.mandates, tenant, filter, matching(filter, ["status", "reference"]))
    ),
  listByCustomer: (customerId) =>
    Effect.map(db.get, (t) =>
      newestFirst(Array.from(HashMap.values(t.mandates)).filter((row) => row.value.customerId === customerId))
    ),
  claimExpiring: (now, limit) =>
    Effect.map(db.get, (t) =>
      Array.from(HashMap.values(t.mandates))
        .map((row) => row.value)
        .filter((m) => Mandate.isDueToExpire(m, now))
        .sort((a, b) => DateTime.toEpochMillis(expiryMoment(a)!) - DateTime.toEpochMillis(expiryMoment(b)!))
        .slice(0, limit)
    ),
  nextExpiryAt: Effect.map(db.get, (t) => {
    let next: DateTime.Utc | undefined
    for (const row of HashMap.values(t.mandates)) {
      const at = expiryMoment(row.value)
      if (at !== undefined && (next === undefined || DateTime.lessThan(at, next))) next = at
    }
    return next
  })
})

export const charges = (db: MemoryDbService): Store.ChargesStoreService => ({
  insert: (charge) =>
    db.withTransaction(
      Effect.gen(function* () {
        const t = yield* db.get
        if (HashMap.has(t.charges, charge.id)) return yield* Effect.dieMessage(`charge ${charge.id} exists`)
        yield* db.update((t) => insertRow(t, "charges", charge.id, charge))
      })
    ),
  find: (tenant, id) => Effect.map(db.get, (t) => ownRow(t.charges, tenant, id)),
  listByMandate: (mandateId) =>
    Effect.map(db.get, (t) =>
      newestFirst(Array.from(HashMap.values(t.charges)).filter((row) => row.value.mandateId === mandateId))
    ),
  listByMandates: (mandateIds, perMandate) =>
    Effect.map(db.get, (t) => {
      const all = newestFirst(HashMap.values(t.charges))
      return Array.from(new Set(mandateIds.map((id) => id.toLowerCase()))).flatMap((id) =>
        all.filter((c) => c.mandateId === id).slice(0, perMandate)
      )
    })
})

/** `codeKey`: any bytes do; the layer gives each store fresh random ones. */
export const challenges = (db: MemoryDbService, codeKey: Uint8Array): Store.ChallengesStoreService => {
  const all = (t: Tables) => Array.from(HashMap.values(t.challenges))
  return {
    codeKey: Effect.succeed(codeKey),
    insert: (challenge) =>
      db.withTransaction(
        Effect.gen(function* () {
          const t = yield* db.get
          if (HashMap.has(t.challenges, challenge.id))
            return yield* Effect.dieMessage(`challenge ${challenge.id} exists`)
          yield* db.update((t) => ({ ...t, challenges: HashMap.set(t.challenges, challenge.id, challenge) }))
        })
      ),
    update: (challenge) =>
      db.update((t) =>
        HashMap.has(t.challenges, challenge.id)
          ? { ...t, challenges: HashMap.set(t.challenges, challenge.id, challenge) }
          : t
      ),
    lock: (id) => Effect.map(db.get, (t) => Option.getOrUndefined(HashMap.get(t.challenges, id))),
    // Transactions are serialized already: holding the customer adds nothing.
    lockCustomer: () => Effect.void,
    recent: (q) =>
      Effect.map(db.get, (t) =>
        all(t).filter(
          (c) =>
            DateTime.greaterThan(c.createdAt, q.since) &&
            ((c.subjectKind === q.subjectKind && c.subjectId === q.subjectId) ||
              c.customerId === q.customerId)
        )
      ),
    claimUnredacted: (now, limit) =>
      Effect.map(db.get, (t) =>
        all(t)
          .filter((c) => c.redactedAt === null && DateTime.lessThanOrEqualTo(c.expiresAt, now))
          .sort((a, b) => DateTime.toEpochMillis(a.expiresAt) - DateTime.toEpochMillis(b.expiresAt))
          .slice(0, limit)
      ),
    nextRedactionAt: Effect.map(db.get, (t) =>
      all(t)
        .filter((c) => c.redactedAt === null)
        .reduce<DateTime.Utc | undefined>(
          (min, c) => (min === undefined || DateTime.lessThan(c.expiresAt, min) ? c.expiresAt : min),
          undefined
        )
    )
  }
}
