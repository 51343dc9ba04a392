/**
 * Memory adapters of the billing repositories: checkout sessions, the subscriptions they start and the
 * invoices of their cycles. An update writes only what the SQL UPDATE writes (see `updater`).
 */
import { type CheckoutSession, Ids, type Invoice, Store, type Subscription } from "@laari/core"
import { DateTime, Effect, HashMap, Option } from "effect"
import type { MemoryDbService, SubscriptionRow, Tables } from "./MemoryDb.js"
import {
  belongsTo,
  byLookup,
  byUuid,
  earliest,
  earliestFirst,
  insertRow,
  matching,
  newestFirst,
  ownRow,
  referenceTaken,
  tenantPage
} from "./MemoryRows.js"

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
    // Only a refund changes it (`RefundsStoreService.setRefunded`), never an attempt.
    "amountRefunded",
    "createdAt"
  ]
)

export const checkoutSessions = (db: MemoryDbService): Store.CheckoutSessionsStoreService => ({
  insert: (session) =>
    db.withTransaction(
      Effect.gen(function* () {
        const t = yield* db.get
        if (HashMap.has(t.checkoutSessions, session.id))
          return yield* Effect.dieMessage(`checkout session ${session.id} exists`)
        if (referenceTaken(t.checkoutSessions, session))
          return yield* new Store.DuplicateReference({ reference: session.reference })
        yield* db.update((t) => insertRow(t, "checkoutSessions", session.id, session))
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
  list: (tenant, page) => Effect.map(db.get, (t) => tenantPage(t.checkoutSessions, tenant, page)),
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

export const subscriptions = (db: MemoryDbService): Store.SubscriptionsStoreService => ({
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
      tenantPage(t.subscriptions, tenant, filter, matching(filter, ["status", "reference"]))
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

export const invoices = (db: MemoryDbService): Store.InvoicesStoreService => ({
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
        yield* db.update((t) => insertRow(t, "invoices", invoice.id, invoice))
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
