/**
 * Checkout sessions, subscriptions and invoices.
 */
import { Context, type DateTime, Effect } from "effect"
import type { CheckoutSession } from "./CheckoutSession.js"
import type { Invoice } from "./Invoice.js"
import type { Status as SubscriptionStatus, Subscription } from "./Subscription.js"
import type { ServiceUnavailable } from "../kernel/Errors.js"
import type { CustomerId } from "../kernel/Ids.js"
import type { Claim, FindById, NextDue, Page, ReferencedRepo, TenantReads } from "../kernel/Storage.js"

export interface CheckoutSessionsStoreService extends ReferencedRepo<CheckoutSession> {
  /** Any tenant's session by id, locked: for the customer's side (paying), which has no tenant. */
  readonly lockById: (id: string) => Effect.Effect<CheckoutSession | undefined, ServiceUnavailable>
  /** `OPEN` sessions past `expiresAt`. */
  readonly claimExpiring: Claim<CheckoutSession>
  /** The earliest `expiresAt` of an `OPEN` session, if any. */
  readonly nextExpiryAt: NextDue
}
export class CheckoutSessionsStore extends Context.Tag("laari/Store/CheckoutSessions")<
  CheckoutSessionsStore,
  CheckoutSessionsStoreService
>() {}

export interface SubscriptionFilter extends Page {
  readonly status?: SubscriptionStatus | undefined
  readonly reference?: string | undefined
}

export interface SubscriptionsStoreService extends TenantReads<Subscription, SubscriptionFilter> {
  /**
   * `dueAt` is when the renewal engine next has work for the subscription (`null`: never again); the
   * engine claims by it. One subscription per checkout session (a constraint: a second insert dies).
   */
  readonly insert: (
    subscription: Subscription,
    dueAt: DateTime.Utc | null
  ) => Effect.Effect<void, ServiceUnavailable>
  readonly update: (
    subscription: Subscription,
    dueAt: DateTime.Utc | null
  ) => Effect.Effect<void, ServiceUnavailable>
  /** Any tenant's subscription by id, locked (the engine, the customer's side, operations). */
  readonly lockById: (id: string) => Effect.Effect<Subscription | undefined, ServiceUnavailable>
  /** Several by id, locked in id order (so two callers cannot deadlock), ordered by id; missing ids are left out. */
  readonly lockMany: (
    ids: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlyArray<Subscription>, ServiceUnavailable>
  /** The subscriptions a wallet pays, newest first. */
  readonly listByCustomer: (
    customerId: CustomerId
  ) => Effect.Effect<ReadonlyArray<Subscription>, ServiceUnavailable>
  /** Subscriptions with `dueAt <= now`. */
  readonly claimDue: Claim<Subscription>
  /** The earliest `dueAt`, if any. */
  readonly nextDueAt: NextDue
}
export class SubscriptionsStore extends Context.Tag("laari/Store/Subscriptions")<
  SubscriptionsStore,
  SubscriptionsStoreService
>() {}

export interface InvoicesStoreService {
  /** Unique per (subscription, period key): a second invoice for a cycle dies, so a cycle is charged once. */
  readonly insert: (invoice: Invoice) => Effect.Effect<void, ServiceUnavailable>
  readonly update: (invoice: Invoice) => Effect.Effect<void, ServiceUnavailable>
  readonly find: FindById<Invoice>
  /** The invoice of the subscription's latest period (the open one, if any). */
  readonly latest: (subscriptionId: string) => Effect.Effect<Invoice | undefined, ServiceUnavailable>
  /** `latest` of each subscription, in one go; a subscription without invoices has none in the result. */
  readonly latestOf: (
    subscriptionIds: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlyArray<Invoice>, ServiceUnavailable>
  /** Newest first, one per cycle. */
  readonly list: (
    subscriptionId: string,
    page: Page
  ) => Effect.Effect<ReadonlyArray<Invoice>, ServiceUnavailable>
  /** `list`'s first `perSubscription` of each subscription, in one go. Unknown ids have none. */
  readonly listBySubscriptions: (
    subscriptionIds: ReadonlyArray<string>,
    perSubscription: number
  ) => Effect.Effect<ReadonlyArray<Invoice>, ServiceUnavailable>
}
export class InvoicesStore extends Context.Tag("laari/Store/Invoices")<
  InvoicesStore,
  InvoicesStoreService
>() {}
