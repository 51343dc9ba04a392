/**
 * Memory adapters for every storage port of core: the repositories of `Store`, the idempotency store, the
 * outbox and customer notifications. Each operation is a transaction of `MemoryDb` (joining the caller's),
 * so "locked until the transaction ends" holds trivially: nothing else runs until it ends.
 */
import { Events, type Ids, Idempotency, Mandate, Notifications, Store } from "@laari/core"
import { Chunk, DateTime, Effect, HashMap, Layer, Option } from "effect"
import { MemoryDb, type MemoryDbService, type Row, type Tables } from "./MemoryDb.js"

/** Newest first: by creation time, then by insertion order. */
const newestFirst = <A extends { readonly createdAt: DateTime.Utc }>(rows: Iterable<Row<A>>): Array<A> =>
  Array.from(rows)
    .sort(
      (a, b) =>
        DateTime.toEpochMillis(b.value.createdAt) - DateTime.toEpochMillis(a.value.createdAt) || b.seq - a.seq
    )
    .map((row) => row.value)

const belongsTo = (m: Mandate.Mandate, tenant: Ids.Tenant) =>
  m.merchantId === tenant.merchantId && m.environment === tenant.environment

/** The moment `m` becomes due to expire, if it can still expire (see `Mandate.isDueToExpire`). */
export const expiryMoment = (m: Mandate.Mandate): DateTime.Utc | undefined =>
  m.status === "INITIATED"
    ? m.setupExpiresAt
    : m.status === "ACTIVE" || m.status === "SUSPENDED"
      ? m.expiresAt
      : undefined

const insertRow = <A>(
  t: Tables,
  table: HashMap.HashMap<string, Row<A>>,
  id: string,
  value: A
): [HashMap.HashMap<string, Row<A>>, number] => [HashMap.set(table, id, { seq: t.seq, value }), t.seq + 1]

export const merchants = (db: MemoryDbService): Store.MerchantsRepo => ({
  get: (id) => Effect.map(db.get, (t) => Option.getOrUndefined(HashMap.get(t.merchants, id)))
})

export const customers = (db: MemoryDbService): Store.CustomersRepo => ({
  get: (id) => Effect.map(db.get, (t) => Option.getOrUndefined(HashMap.get(t.customers, id))),
  findByPhone: (environment, phone) =>
    Effect.map(db.get, (t) =>
      Array.from(HashMap.values(t.customers)).find((c) => c.environment === environment && c.phone === phone)
    )
})

export const mandates = (db: MemoryDbService): Store.MandatesRepo => ({
  insert: (mandate) =>
    db.withTransaction(
      Effect.gen(function* () {
        const t = yield* db.get
        if (HashMap.has(t.mandates, mandate.id))
          return yield* Effect.dieMessage(`mandate ${mandate.id} exists`)
        const taken = Array.from(HashMap.values(t.mandates)).some(
          (row) => belongsTo(row.value, mandate) && row.value.reference === mandate.reference
        )
        if (taken) return yield* new Store.DuplicateReference({ reference: mandate.reference })
        yield* db.update((t) => {
          const [table, seq] = insertRow(t, t.mandates, mandate.id, mandate)
          return { ...t, mandates: table, seq }
        })
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
  find: (tenant, lookup) =>
    Effect.map(db.get, (t) => {
      if (lookup._tag === "ById") {
        const m = Option.getOrUndefined(HashMap.get(t.mandates, lookup.id))?.value
        return m !== undefined && belongsTo(m, tenant) ? m : undefined
      }
      for (const row of HashMap.values(t.mandates))
        if (belongsTo(row.value, tenant) && row.value.reference === lookup.reference) return row.value
      return undefined
    }),
  lockById: (id) =>
    Effect.map(db.get, (t) => Option.getOrUndefined(HashMap.get(t.mandates, id.toLowerCase()))?.value),
  list: (tenant, filter) =>
    Effect.map(db.get, (t) =>
      newestFirst(
        Array.from(HashMap.values(t.mandates)).filter(
          ({ value: m }) =>
            belongsTo(m, tenant) &&
            (filter.status === undefined || m.status === filter.status) &&
            (filter.reference === undefined || m.reference === filter.reference)
        )
      ).slice(filter.offset, filter.offset + filter.limit)
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

export const charges = (db: MemoryDbService): Store.ChargesRepo => ({
  insert: (charge) =>
    db.withTransaction(
      Effect.gen(function* () {
        const t = yield* db.get
        if (HashMap.has(t.charges, charge.id)) return yield* Effect.dieMessage(`charge ${charge.id} exists`)
        yield* db.update((t) => {
          const [table, seq] = insertRow(t, t.charges, charge.id, charge)
          return { ...t, charges: table, seq }
        })
      })
    ),
  listByMandate: (mandateId) =>
    Effect.map(db.get, (t) =>
      newestFirst(Array.from(HashMap.values(t.charges)).filter((row) => row.value.mandateId === mandateId))
    )
})

export const challenges = (db: MemoryDbService): Store.ChallengesRepo => ({
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
  lock: (id) => Effect.map(db.get, (t) => Option.getOrUndefined(HashMap.get(t.challenges, id)))
})

/** The idempotency table's key: every part of the scope. */
export const scopeKey = (s: Idempotency.Scope): string =>
  JSON.stringify([s.merchantId, s.environment, s.method, s.path, s.key])

export const idempotency = (db: MemoryDbService): Idempotency.IdempotencyStoreService => ({
  reserve: (scope, fingerprint, now) =>
    db.modify((t) => {
      const existing = Option.getOrUndefined(HashMap.get(t.idempotency, scopeKey(scope)))
      if (existing !== undefined) return [existing, t]
      const record: Idempotency.Record = { scope, fingerprint, response: null, createdAt: now }
      return [undefined, { ...t, idempotency: HashMap.set(t.idempotency, scopeKey(scope), record) }]
    }),
  takeOver: (previous, fingerprint, now) =>
    db.modify((t) => {
      const key = scopeKey(previous.scope)
      const current = Option.getOrUndefined(HashMap.get(t.idempotency, key))
      // Compare-and-set on `createdAt`: whoever replaced the record first changed it.
      if (current === undefined || !DateTime.Equivalence(current.createdAt, previous.createdAt))
        return [false, t]
      const record: Idempotency.Record = {
        scope: previous.scope,
        fingerprint,
        response: null,
        createdAt: now
      }
      return [true, { ...t, idempotency: HashMap.set(t.idempotency, key, record) }]
    }),
  complete: (scope, response) =>
    db.update((t) =>
      Option.match(HashMap.get(t.idempotency, scopeKey(scope)), {
        onNone: () => t,
        onSome: (r) => ({
          ...t,
          idempotency: HashMap.set(t.idempotency, scopeKey(scope), { ...r, response })
        })
      })
    ),
  release: (scope) =>
    db.update((t) => {
      const r = Option.getOrUndefined(HashMap.get(t.idempotency, scopeKey(scope)))
      // A stored response describes committed work: it is never released, only purged.
      return r === undefined || r.response !== null
        ? t
        : { ...t, idempotency: HashMap.remove(t.idempotency, scopeKey(scope)) }
    }),
  purge: (now) =>
    db.modify((t) => {
      const kept = HashMap.filter(t.idempotency, (r) => !Idempotency.isExpired(r, now))
      return [HashMap.size(t.idempotency) - HashMap.size(kept), { ...t, idempotency: kept }]
    })
})

export const outbox = (db: MemoryDbService): Events.OutboxService => ({
  append: (event) => db.update((t) => ({ ...t, events: Chunk.append(t.events, event) }))
})

export const notifications = (db: MemoryDbService): Notifications.NotificationsService => ({
  send: (notification) =>
    db.update((t) => ({ ...t, notifications: Chunk.append(t.notifications, notification) })),
  list: (customerId) =>
    Effect.map(db.get, (t) =>
      newestFirst(
        Chunk.toReadonlyArray(t.notifications).flatMap((value, seq) =>
          value.customerId === customerId ? [{ seq, value }] : []
        )
      )
    )
})

/** Every storage port over the `MemoryDb` (the `Transactor` comes with `MemoryDb.layer`). */
export const layer: Layer.Layer<
  | Store.Merchants
  | Store.Customers
  | Store.MandatesStore
  | Store.ChargesStore
  | Store.ChallengesStore
  | Idempotency.IdempotencyStore
  | Events.Outbox
  | Notifications.Notifications,
  never,
  MemoryDb
> = Layer.mergeAll(
  Layer.effect(Store.Merchants, Effect.map(MemoryDb, merchants)),
  Layer.effect(Store.Customers, Effect.map(MemoryDb, customers)),
  Layer.effect(Store.MandatesStore, Effect.map(MemoryDb, mandates)),
  Layer.effect(Store.ChargesStore, Effect.map(MemoryDb, charges)),
  Layer.effect(Store.ChallengesStore, Effect.map(MemoryDb, challenges)),
  Layer.effect(Idempotency.IdempotencyStore, Effect.map(MemoryDb, idempotency)),
  Layer.effect(Events.Outbox, Effect.map(MemoryDb, outbox)),
  Layer.effect(Notifications.Notifications, Effect.map(MemoryDb, notifications))
)
