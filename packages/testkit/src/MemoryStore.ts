/**
 * Memory adapters for every storage port of core: the repositories of `Store`, the idempotency store, the
 * outbox and customer notifications. Each operation is a transaction of `MemoryDb` (joining the caller's),
 * so "locked until the transaction ends" holds trivially: nothing else runs until it ends.
 */
import {
  type Balance,
  type CheckoutSession,
  Crypto,
  Events,
  Ids,
  Idempotency,
  type Invoice,
  Mandate,
  Money,
  Notifications,
  type QrCode,
  Store,
  type Subscription
} from "@laari/core"
import { Chunk, DateTime, Effect, HashMap, Layer, Option } from "effect"
import * as MemoryRefunds from "./MemoryRefunds.js"
import { MemoryDb, type MemoryDbService, type Row, type SubscriptionRow, type Tables } from "./MemoryDb.js"

/** Newest first: by creation time, then by insertion order. */
const newestFirst = <A extends { readonly createdAt: DateTime.Utc }>(rows: Iterable<Row<A>>): Array<A> =>
  Array.from(rows)
    .sort(
      (a, b) =>
        DateTime.toEpochMillis(b.value.createdAt) - DateTime.toEpochMillis(a.value.createdAt) || b.seq - a.seq
    )
    .map((row) => row.value)

const belongsTo = (m: { readonly merchantId: string; readonly environment: string }, tenant: Ids.Tenant) =>
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
  find: (tenant, lookup) => Effect.map(db.get, (t) => byLookup(t.mandates, tenant, lookup)),
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

/** The row `id` names (in any case), when it is the tenant's. */
const ownRow = <A extends { readonly merchantId: string; readonly environment: string }>(
  table: HashMap.HashMap<string, Row<A>>,
  tenant: Ids.Tenant,
  id: string
): A | undefined => {
  const found = Option.getOrUndefined(HashMap.get(table, id.toLowerCase()))?.value
  return found !== undefined &&
    found.merchantId === tenant.merchantId &&
    found.environment === tenant.environment
    ? found
    : undefined
}

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
export const challenges = (db: MemoryDbService, codeKey: Uint8Array): Store.ChallengesRepo => {
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

export const outlets = (db: MemoryDbService): Store.OutletsRepo => ({
  find: (merchantId, outletId) =>
    Effect.map(db.get, (t) => {
      const outlet = Option.getOrUndefined(HashMap.get(t.outlets, outletId))
      return outlet?.merchantId === merchantId ? outlet : undefined
    })
})

/**
 * What the SQL schema's CHECK constraints refuse (a defect there, so a defect here): a dynamic code has an
 * amount of at least 100 laari and an expiry, a static one neither; only an inactive code has its
 * `deactivatedAt`.
 */
const qrCodeProblem = (c: QrCode.QrCode): string | undefined => {
  if (c.type === "DYNAMIC" ? c.amount === null || c.amount < Money.MinAmount : c.amount !== null)
    return "amount does not fit its type"
  if ((c.type === "DYNAMIC") !== (c.expiresAt !== null)) return "expiresAt does not fit its type"
  if ((c.status === "INACTIVE") !== (c.deactivatedAt !== null)) return "deactivatedAt does not fit its status"
  return undefined
}

export const qrCodes = (db: MemoryDbService): Store.QrCodesRepo => ({
  insert: (code) =>
    db.withTransaction(
      Effect.gen(function* () {
        const t = yield* db.get
        if (HashMap.has(t.qrCodes, code.id)) return yield* Effect.dieMessage(`QR code ${code.id} exists`)
        const problem = qrCodeProblem(code)
        if (problem !== undefined) return yield* Effect.dieMessage(`QR code ${code.id}: ${problem}`)
        if (Option.getOrUndefined(HashMap.get(t.outlets, code.outletId))?.merchantId !== code.merchantId)
          return yield* Effect.dieMessage(`outlet ${code.outletId} is not merchant ${code.merchantId}'s`)
        const codes = Array.from(HashMap.values(t.qrCodes), (row) => row.value)
        if (codes.some((c) => belongsTo(c, code) && c.reference === code.reference))
          return yield* new Store.DuplicateReference({ reference: code.reference })
        // The scheme's key is global: across merchants and environments.
        if (codes.some((c) => c.qrid === code.qrid))
          return yield* Effect.dieMessage(`qrid ${code.qrid} exists`)
        yield* db.update((t) => {
          const [table, seq] = insertRow(t, t.qrCodes, code.id, code)
          return { ...t, qrCodes: table, seq }
        })
      })
    ),
  // Only what can change after creation, as in SQL: the rest is fixed by the printed payload.
  update: (code) =>
    db.withTransaction(
      Effect.gen(function* () {
        const row = Option.getOrUndefined(HashMap.get((yield* db.get).qrCodes, code.id))
        // Like an SQL UPDATE of a missing row (or of another tenant's): nothing happens.
        if (row === undefined || !belongsTo(row.value, code)) return
        const next: QrCode.QrCode = {
          ...row.value,
          status: code.status,
          deactivatedAt: code.deactivatedAt,
          title: code.title,
          description: code.description
        }
        const problem = qrCodeProblem(next)
        if (problem !== undefined) return yield* Effect.dieMessage(`QR code ${code.id}: ${problem}`)
        yield* db.update((t) => ({ ...t, qrCodes: HashMap.set(t.qrCodes, code.id, { ...row, value: next }) }))
      })
    ),
  find: (tenant, lookup) => Effect.map(db.get, (t) => byLookup(t.qrCodes, tenant, lookup)),
  lockByQrid: (environment, qrid) =>
    Effect.map(db.get, (t) => {
      for (const row of HashMap.values(t.qrCodes))
        if (row.value.qrid === qrid && row.value.environment === environment) return row.value
      return undefined
    }),
  list: (tenant, filter) =>
    Effect.map(db.get, (t) =>
      newestFirst(
        Array.from(HashMap.values(t.qrCodes)).filter(
          ({ value: c }) =>
            belongsTo(c, tenant) &&
            (filter.outletId === undefined || c.outletId === filter.outletId) &&
            (filter.type === undefined || c.type === filter.type)
        )
      ).slice(filter.offset, filter.offset + filter.limit)
    ),
  saveImage: (code, png) =>
    db.withTransaction(
      Effect.gen(function* () {
        const t = yield* db.get
        if (!HashMap.has(t.qrCodes, code.id)) return yield* Effect.dieMessage(`no QR code ${code.id}`)
        // A copy, as a database keeps one: the caller may reuse its buffer. A new image replaces the old.
        const image = { merchantId: code.merchantId, png: Uint8Array.from(png) }
        yield* db.update((t) => ({ ...t, qrImages: HashMap.set(t.qrImages, code.id, image) }))
      })
    ),
  image: (id) =>
    Effect.map(db.get, (t) => {
      if (!Ids.isUuid(id)) return undefined
      const image = Option.getOrUndefined(HashMap.get(t.qrImages, id.toLowerCase()))
      return image === undefined ? undefined : Uint8Array.from(image.png)
    })
})

/** What the SQL schema refuses for a payment (a defect there, so a defect here). */
const qrPaymentProblem = (t: Tables, p: QrCode.Payment): string | undefined => {
  const code = Option.getOrUndefined(HashMap.get(t.qrCodes, p.qrCodeId))?.value
  if (code === undefined) return `no QR code ${p.qrCodeId}`
  if (
    code.qrid !== p.qrid ||
    code.merchantId !== p.merchantId ||
    code.environment !== p.environment ||
    code.outletId !== p.outletId
  )
    return "qrid, merchant, environment and outlet must be its code's"
  if (!HashMap.has(t.customers, p.customerId)) return `no customer ${p.customerId}`
  if (p.amount < Money.MinAmount || p.fee < 0 || p.netAmount < 0 || p.fee + p.netAmount !== p.amount)
    return "amount, fee and netAmount do not add up"
  return undefined
}

export const qrPayments = (db: MemoryDbService): Store.QrPaymentsRepo => ({
  insert: (payment) =>
    db.withTransaction(
      Effect.gen(function* () {
        const t = yield* db.get
        if (HashMap.has(t.qrPayments, payment.id))
          return yield* Effect.dieMessage(`QR payment ${payment.id} exists`)
        const problem = qrPaymentProblem(t, payment)
        if (problem !== undefined) return yield* Effect.dieMessage(`QR payment ${payment.id}: ${problem}`)
        yield* db.update((t) => {
          const [table, seq] = insertRow(t, t.qrPayments, payment.id, payment)
          return { ...t, qrPayments: table, seq }
        })
      })
    ),
  find: (tenant, id) => Effect.map(db.get, (t) => ownRow(t.qrPayments, tenant, id)),
  listByCode: (qrCodeId) =>
    Effect.map(db.get, (t) =>
      newestFirst(
        Array.from(HashMap.values(t.qrPayments)).filter(
          (row) => row.value.qrCodeId === qrCodeId.toLowerCase()
        )
      )
    )
})

/** Earliest first by `at`, then by insertion order; rows without a moment are left out. */
const earliestFirst = <R extends { readonly seq: number }>(
  rows: Iterable<R>,
  at: (row: R) => DateTime.Utc | null | undefined
): Array<R> =>
  Array.from(rows)
    .filter((row) => at(row) != null)
    .sort((a, b) => DateTime.toEpochMillis(at(a)!) - DateTime.toEpochMillis(at(b)!) || a.seq - b.seq)

/** The earliest of `moments`, if any. */
const earliest = (moments: Iterable<DateTime.Utc | null | undefined>): DateTime.Utc | undefined => {
  let first: DateTime.Utc | undefined
  for (const at of moments)
    if (at != null && (first === undefined || DateTime.lessThan(at, first))) first = at
  return first
}

/** A row by a uuid key, as a `uuid` column finds it: in any letter case, and never by a malformed one. */
const byUuid = <A>(table: HashMap.HashMap<string, A>, id: string): A | undefined =>
  Ids.isUuid(id) ? Option.getOrUndefined(HashMap.get(table, id.toLowerCase())) : undefined

/** One of the tenant's records by id or by reference, like the SQL stores' `lookupKey`. */
const byLookup = <
  A extends { readonly merchantId: string; readonly environment: string; readonly reference: string }
>(
  table: HashMap.HashMap<string, { readonly value: A }>,
  tenant: Ids.Tenant,
  lookup: Ids.Lookup
): A | undefined => {
  if (lookup._tag === "ById") {
    const found = byUuid(table, lookup.id)?.value
    return found !== undefined && belongsTo(found, tenant) ? found : undefined
  }
  for (const row of HashMap.values(table))
    if (belongsTo(row.value, tenant) && row.value.reference === lookup.reference) return row.value
  return undefined
}

/**
 * What an SQL UPDATE of a record writes: the `mutable` fields of `incoming` over the `stored` row. Every
 * other field is fixed at insert and must be named in `fixed`, so a field added to the model does not
 * compile here until it is placed on one side.
 */
const updater =
  <A>() =>
  <M extends keyof A, F extends Exclude<keyof A, M>>(
    mutable: ReadonlyArray<M>,
    _fixed: ReadonlyArray<F> & ([Exclude<keyof A, M | F>] extends [never] ? unknown : never)
  ) =>
  (stored: A, incoming: A): A => {
    const next: { -readonly [K in keyof A]: A[K] } = { ...stored }
    for (const k of mutable) next[k] = incoming[k]
    return next
  }

/** A session's life changes these; what the merchant asked for is fixed at creation. */
const updateSession = updater<CheckoutSession.CheckoutSession>()(
  ["status", "customerId", "paymentId", "subscriptionId", "completedAt", "cancelledAt", "expiredAt"],
  [
    "id",
    "merchantId",
    "environment",
    "mode",
    "reference",
    "title",
    "description",
    "returnUrl",
    "amount",
    "price",
    "expiresAt",
    "createdAt"
  ]
)

/** A subscription's life changes these; the plan, the payer, the anchor and the origin are frozen at consent. */
const updateSubscription = updater<Subscription.Subscription>()(
  [
    "status",
    "currentPeriodIndex",
    "currentPeriodStart",
    "currentPeriodEnd",
    "nextBillingAt",
    "cancelAtPeriodEnd",
    "cancelledAt",
    "cancellationInitiator",
    "pastDueSince",
    "balanceWarnedFor",
    "metadata"
  ],
  [
    "id",
    "merchantId",
    "environment",
    "reference",
    "planName",
    "amount",
    "interval",
    "intervalCount",
    "checkoutSessionId",
    "customerId",
    "billingCycleAnchor",
    "createdAt"
  ]
)

/** Attempts change these; the cycle, its subscription and its amount are fixed when it opens. */
const updateInvoice = updater<Invoice.Invoice>()(
  [
    "status",
    "attemptCount",
    "nextRetryAt",
    "failureReason",
    "paymentIntentId",
    "paidAt",
    "lastAttemptAt",
    "voidedAt"
  ],
  [
    "id",
    "subscriptionId",
    "merchantId",
    "environment",
    "subscriptionReference",
    "periodIndex",
    "periodKey",
    "periodStart",
    "periodEnd",
    "amount",
    // Only a refund changes it (`RefundsRepo.setRefunded`), never an attempt.
    "amountRefunded",
    "createdAt"
  ]
)

export const checkoutSessions = (db: MemoryDbService): Store.CheckoutSessionsRepo => ({
  insert: (session) =>
    db.withTransaction(
      Effect.gen(function* () {
        const t = yield* db.get
        if (HashMap.has(t.checkoutSessions, session.id))
          return yield* Effect.dieMessage(`checkout session ${session.id} exists`)
        const taken = Array.from(HashMap.values(t.checkoutSessions)).some(
          (row) => belongsTo(row.value, session) && row.value.reference === session.reference
        )
        if (taken) return yield* new Store.DuplicateReference({ reference: session.reference })
        yield* db.update((t) => {
          const [table, seq] = insertRow(t, t.checkoutSessions, session.id, session)
          return { ...t, checkoutSessions: table, seq }
        })
      })
    ),
  // Only what a session's life changes, as in SQL (see `updateSession`).
  update: (session) =>
    db.update((t) => {
      const row = Option.getOrUndefined(HashMap.get(t.checkoutSessions, session.id))
      // Like an SQL UPDATE of a missing row (or of another tenant's): nothing happens.
      if (row === undefined || !belongsTo(row.value, session)) return t
      const next = updateSession(row.value, session)
      return { ...t, checkoutSessions: HashMap.set(t.checkoutSessions, session.id, { ...row, value: next }) }
    }),
  find: (tenant, lookup) => Effect.map(db.get, (t) => byLookup(t.checkoutSessions, tenant, lookup)),
  lockById: (id) => Effect.map(db.get, (t) => byUuid(t.checkoutSessions, id)?.value),
  list: (tenant, page) =>
    Effect.map(db.get, (t) =>
      newestFirst(
        Array.from(HashMap.values(t.checkoutSessions)).filter((row) => belongsTo(row.value, tenant))
      ).slice(page.offset, page.offset + page.limit)
    ),
  claimExpiring: (now, limit) =>
    Effect.map(db.get, (t) =>
      earliestFirst(
        Array.from(HashMap.values(t.checkoutSessions)).filter(
          (row) => row.value.status === "OPEN" && DateTime.lessThanOrEqualTo(row.value.expiresAt, now)
        ),
        (row) => row.value.expiresAt
      )
        .slice(0, limit)
        .map((row) => row.value)
    ),
  nextExpiryAt: Effect.map(db.get, (t) =>
    earliest(
      Array.from(HashMap.values(t.checkoutSessions), (row) =>
        row.value.status === "OPEN" ? row.value.expiresAt : undefined
      )
    )
  )
})

export const subscriptions = (db: MemoryDbService): Store.SubscriptionsRepo => ({
  insert: (subscription, dueAt) =>
    db.withTransaction(
      Effect.gen(function* () {
        const t = yield* db.get
        if (HashMap.has(t.subscriptions, subscription.id))
          return yield* Effect.dieMessage(`subscription ${subscription.id} exists`)
        // A foreign key, and a unique one: a subscription comes from exactly one checkout session.
        if (!HashMap.has(t.checkoutSessions, subscription.checkoutSessionId))
          return yield* Effect.dieMessage(`no checkout session ${subscription.checkoutSessionId}`)
        for (const row of HashMap.values(t.subscriptions))
          if (row.value.checkoutSessionId === subscription.checkoutSessionId)
            return yield* Effect.dieMessage(
              `checkout session ${subscription.checkoutSessionId} already has subscription ${row.value.id}`
            )
        yield* db.update((t) => ({
          ...t,
          subscriptions: HashMap.set(t.subscriptions, subscription.id, {
            seq: t.seq,
            value: subscription,
            dueAt
          }),
          seq: t.seq + 1
        }))
      })
    ),
  // Only what a subscription's life changes, as in SQL (see `updateSubscription`).
  update: (subscription, dueAt) =>
    db.update((t) => {
      const row = Option.getOrUndefined(HashMap.get(t.subscriptions, subscription.id))
      // Like an SQL UPDATE of a missing row (or of another tenant's): nothing happens.
      if (row === undefined || !belongsTo(row.value, subscription)) return t
      const next = updateSubscription(row.value, subscription)
      return {
        ...t,
        subscriptions: HashMap.set(t.subscriptions, subscription.id, { ...row, value: next, dueAt })
      }
    }),
  find: (tenant, lookup) => Effect.map(db.get, (t) => byLookup(t.subscriptions, tenant, lookup)),
  lockById: (id) => Effect.map(db.get, (t) => byUuid(t.subscriptions, id)?.value),
  lockMany: (ids) =>
    Effect.map(db.get, (t) =>
      Array.from(new Set(ids.filter(Ids.isUuid).map((id) => id.toLowerCase())))
        .sort()
        .flatMap((id) => {
          const row = Option.getOrUndefined(HashMap.get(t.subscriptions, id))
          return row === undefined ? [] : [row.value]
        })
    ),
  list: (tenant, filter) =>
    Effect.map(db.get, (t) =>
      newestFirst(
        Array.from(HashMap.values(t.subscriptions)).filter(
          ({ value: s }) =>
            belongsTo(s, tenant) &&
            (filter.status === undefined || s.status === filter.status) &&
            (filter.reference === undefined || s.reference === filter.reference)
        )
      ).slice(filter.offset, filter.offset + filter.limit)
    ),
  listByCustomer: (customerId) =>
    Effect.map(db.get, (t) =>
      newestFirst(
        Array.from(HashMap.values(t.subscriptions)).filter(
          (row) => Ids.isUuid(customerId) && row.value.customerId === customerId.toLowerCase()
        )
      )
    ),
  claimDue: (now, limit) =>
    Effect.map(db.get, (t) =>
      earliestFirst(
        Array.from(HashMap.values(t.subscriptions)).filter(
          (row) => row.dueAt !== null && DateTime.lessThanOrEqualTo(row.dueAt, now)
        ),
        (row: SubscriptionRow) => row.dueAt
      )
        .slice(0, limit)
        .map((row) => row.value)
    ),
  nextDueAt: Effect.map(db.get, (t) =>
    earliest(Array.from(HashMap.values(t.subscriptions), (row) => row.dueAt))
  )
})

/** A subscription's invoices, newest cycle first. */
const invoicesOf = (t: Tables, subscriptionId: string): Array<Invoice.Invoice> =>
  Ids.isUuid(subscriptionId)
    ? Array.from(HashMap.values(t.invoices))
        .filter((row) => row.value.subscriptionId === subscriptionId.toLowerCase())
        .map((row) => row.value)
        .sort((a, b) => b.periodIndex - a.periodIndex)
    : []

export const invoices = (db: MemoryDbService): Store.InvoicesRepo => ({
  insert: (invoice) =>
    db.withTransaction(
      Effect.gen(function* () {
        const t = yield* db.get
        if (HashMap.has(t.invoices, invoice.id))
          return yield* Effect.dieMessage(`invoice ${invoice.id} exists`)
        if (!HashMap.has(t.subscriptions, invoice.subscriptionId))
          return yield* Effect.dieMessage(`no subscription ${invoice.subscriptionId}`)
        // Unique per (subscription, period key): a cycle is charged at most once.
        for (const row of HashMap.values(t.invoices))
          if (
            row.value.subscriptionId === invoice.subscriptionId &&
            row.value.periodKey === invoice.periodKey
          )
            return yield* Effect.dieMessage(
              `subscription ${invoice.subscriptionId} already has an invoice for ${invoice.periodKey}`
            )
        yield* db.update((t) => {
          const [table, seq] = insertRow(t, t.invoices, invoice.id, invoice)
          return { ...t, invoices: table, seq }
        })
      })
    ),
  // Only what attempts change, as in SQL (see `updateInvoice`).
  update: (invoice) =>
    db.update((t) => {
      const row = Option.getOrUndefined(HashMap.get(t.invoices, invoice.id))
      // Like an SQL UPDATE of a missing row: nothing happens.
      if (row === undefined) return t
      const next = updateInvoice(row.value, invoice)
      return { ...t, invoices: HashMap.set(t.invoices, invoice.id, { ...row, value: next }) }
    }),
  find: (tenant, id) => Effect.map(db.get, (t) => ownRow(t.invoices, tenant, id)),
  latest: (subscriptionId) => Effect.map(db.get, (t) => invoicesOf(t, subscriptionId)[0]),
  latestOf: (subscriptionIds) =>
    Effect.map(db.get, (t) =>
      Array.from(new Set(subscriptionIds.map((id) => id.toLowerCase()))).flatMap((id) => {
        const latest = invoicesOf(t, id)[0]
        return latest === undefined ? [] : [latest]
      })
    ),
  list: (subscriptionId, page) =>
    Effect.map(db.get, (t) => invoicesOf(t, subscriptionId).slice(page.offset, page.offset + page.limit)),
  listBySubscriptions: (subscriptionIds, perSubscription) =>
    Effect.map(db.get, (t) =>
      Array.from(new Set(subscriptionIds.map((id) => id.toLowerCase()))).flatMap((id) =>
        invoicesOf(t, id).slice(0, perSubscription)
      )
    )
})

/** The idempotency table's key: every part of the scope. */
export const scopeKey = (s: Idempotency.Scope): string =>
  JSON.stringify([s.merchantId, s.environment, s.method, s.path, s.key])

export const idempotency = (db: MemoryDbService): Idempotency.IdempotencyStoreService => {
  const put = (scope: Idempotency.Scope, fingerprint: string, now: DateTime.Utc) =>
    db.update((t) => ({
      ...t,
      idempotency: HashMap.set(t.idempotency, scopeKey(scope), {
        scope,
        fingerprint,
        response: null,
        createdAt: now
      })
    }))
  return {
    // Memory transactions run one at a time, so a record seen here is committed and nobody else holds it.
    claim: (scope, fingerprint, now) =>
      db.modify((t): readonly [Idempotency.Claim, typeof t] => {
        const record = Option.getOrUndefined(HashMap.get(t.idempotency, scopeKey(scope)))
        if (record !== undefined) return [{ _tag: "Held", record }, t]
        const fresh: Idempotency.Record = { scope, fingerprint, response: null, createdAt: now }
        return [
          { _tag: "Claimed" },
          { ...t, idempotency: HashMap.set(t.idempotency, scopeKey(scope), fresh) }
        ]
      }),
    replace: put,
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
    purge: (now) =>
      db.modify((t) => {
        const kept = HashMap.filter(t.idempotency, (r) => !Idempotency.isExpired(r, now))
        return [HashMap.size(t.idempotency) - HashMap.size(kept), { ...t, idempotency: kept }]
      })
  }
}

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

/** Every storage port over the `MemoryDb` (the `Transactor` comes with `MemoryDb.layer`). */
export const layer: Layer.Layer<
  | Exclude<Store.Repositories, Balance.LedgerReads>
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
  Layer.effect(Store.ChallengesStore, Effect.zipWith(MemoryDb, Crypto.web.bytes(32), challenges)),
  Layer.effect(Store.Outlets, Effect.map(MemoryDb, outlets)),
  Layer.effect(Store.QrCodesStore, Effect.map(MemoryDb, qrCodes)),
  Layer.effect(Store.QrPaymentsStore, Effect.map(MemoryDb, qrPayments)),
  Layer.effect(Store.CheckoutSessionsStore, Effect.map(MemoryDb, checkoutSessions)),
  Layer.effect(Store.SubscriptionsStore, Effect.map(MemoryDb, subscriptions)),
  Layer.effect(Store.InvoicesStore, Effect.map(MemoryDb, invoices)),
  Layer.effect(Store.RefundsStore, Effect.map(MemoryDb, MemoryRefunds.refunds)),
  Layer.effect(Idempotency.IdempotencyStore, Effect.map(MemoryDb, idempotency)),
  Layer.effect(Events.Outbox, Effect.map(MemoryDb, outbox)),
  Layer.effect(Notifications.Notifications, Effect.map(MemoryDb, notifications))
)
