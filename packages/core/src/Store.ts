/**
 * Storage ports: one repository per aggregate, and the `Transactor` that makes a command all or nothing.
 * Adapters: in memory (testkit), PGlite and PostgreSQL (server). All of them pass the same contract suite.
 */
import { Context, type DateTime, Effect, Schema } from "effect"
import type { NewKey, StoredKey } from "./ApiKey.js"
import type { Challenge } from "./Approval.js"
import type { Customer, Merchant, MerchantsStore, Outlet } from "./Merchant.js"
import type { LedgerReads } from "./Balance.js"
import type { ServiceUnavailable } from "./Errors.js"
import type { Outbox } from "./Events.js"
import type { IdempotencyStore } from "./Idempotency.js"
import type { Notifications } from "./Notifications.js"
import type { OAuthClientsStore } from "./OAuthClient.js"
import type { Wallet } from "./Wallet.js"
import type { WebhookEndpointsStore } from "./WebhookEndpoint.js"
import type { ChallengeId, CustomerId, Environment, Lookup, MerchantId, Tenant } from "./Ids.js"
import type { Charge, Mandate, Status as MandateStatus } from "./Mandate.js"
import type { CheckoutSession } from "./CheckoutSession.js"
import type { Invoice } from "./Invoice.js"
import type { Payment as QrPayment, QrCode, Type as QrType } from "./QrCode.js"
import type { Status as SubscriptionStatus, Subscription } from "./Subscription.js"
import type {
  Payment as RefundablePayment,
  ReferencedKind,
  Refund,
  Source as RefundSource
} from "./Refund.js"

export interface TransactorService {
  /**
   * Runs `effect` in one transaction: committed when it succeeds, rolled back when it fails or is
   * interrupted. Nested calls join the outer transaction.
   */
  readonly withTransaction: <A, E, R>(
    effect: Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E | ServiceUnavailable, R>
}

export class Transactor extends Context.Tag("laari/Transactor")<Transactor, TransactorService>() {}

/** A unique constraint refused the write: the merchant already has a resource with that reference. */
export class DuplicateReference extends Schema.TaggedError<DuplicateReference>()("DuplicateReference", {
  reference: Schema.String
}) {}

export interface Page {
  readonly limit: number
  readonly offset: number
}

// ---------------------------------------------------------------------------------------------------
// Merchants and customers (read side; `Merchant.MerchantsStore` creates and lists merchants)
// ---------------------------------------------------------------------------------------------------

export type { Customer, Merchant, Outlet } from "./Merchant.js"

export interface MerchantsRepo {
  readonly get: (id: MerchantId) => Effect.Effect<Merchant | undefined, ServiceUnavailable>
}
export class Merchants extends Context.Tag("laari/Store/Merchants")<Merchants, MerchantsRepo>() {}

/** A merchant that must exist (it owns a key or a resource): a missing one is a defect, not a 404. */
export const registeredMerchant = (
  merchants: MerchantsRepo,
  id: MerchantId
): Effect.Effect<Merchant, ServiceUnavailable> =>
  Effect.flatMap(merchants.get(id), (m) =>
    m === undefined ? Effect.dieMessage(`merchant ${id} is not registered`) : Effect.succeed(m)
  )

export interface OutletsRepo {
  /** The merchant's outlet, or `undefined` when it is unknown or another merchant's. */
  readonly find: (
    merchantId: MerchantId,
    outletId: number
  ) => Effect.Effect<Outlet | undefined, ServiceUnavailable>
}
export class Outlets extends Context.Tag("laari/Store/Outlets")<Outlets, OutletsRepo>() {}

export interface CustomersRepo {
  readonly get: (id: CustomerId) => Effect.Effect<Customer | undefined, ServiceUnavailable>
  readonly findByPhone: (
    environment: Environment,
    phone: string
  ) => Effect.Effect<Customer | undefined, ServiceUnavailable>
}
export class Customers extends Context.Tag("laari/Store/Customers")<Customers, CustomersRepo>() {}

// ---------------------------------------------------------------------------------------------------
// API keys (stored as keyed hashes; `ApiKeys` issues and checks them)
// ---------------------------------------------------------------------------------------------------

export interface ApiKeysRepo {
  /**
   * The secret keying the key hashes: made once per deployment (at its first use) and kept beside the
   * keys, so every process hashes a key the same way.
   */
  readonly hashKey: Effect.Effect<Uint8Array, ServiceUnavailable>
  readonly insert: (key: NewKey, now: DateTime.Utc) => Effect.Effect<void, ServiceUnavailable>
  /** The key with that hash, revoked or not (the caller refuses revoked keys). */
  readonly findByHash: (keyHash: string) => Effect.Effect<StoredKey | undefined, ServiceUnavailable>
  /** Replaces a key's hash `from` with `to`, if it still has `from`. */
  readonly upgradeHash: (keyId: string, from: string, to: string) => Effect.Effect<void, ServiceUnavailable>
  /** The merchant's keys, revoked ones too, oldest first. */
  readonly list: (merchantId: MerchantId) => Effect.Effect<ReadonlyArray<StoredKey>, ServiceUnavailable>
  /** `false` when the merchant has no such key or it was already revoked. */
  readonly revoke: (
    merchantId: MerchantId,
    keyId: string,
    now: DateTime.Utc
  ) => Effect.Effect<boolean, ServiceUnavailable>
}
export class ApiKeysStore extends Context.Tag("laari/Store/ApiKeys")<ApiKeysStore, ApiKeysRepo>() {}

// ---------------------------------------------------------------------------------------------------
// Mandates
// ---------------------------------------------------------------------------------------------------

export interface MandateFilter extends Page {
  readonly status?: MandateStatus | undefined
  readonly reference?: string | undefined
}

export interface MandatesRepo {
  /** Fails with `DuplicateReference` when the tenant already has a mandate with that reference. */
  readonly insert: (mandate: Mandate) => Effect.Effect<void, DuplicateReference | ServiceUnavailable>
  readonly update: (mandate: Mandate) => Effect.Effect<void, ServiceUnavailable>
  /** Finds one of the tenant's mandates; `forUpdate` locks it until the transaction ends. */
  readonly find: (
    tenant: Tenant,
    lookup: Lookup,
    options?: { readonly forUpdate?: boolean }
  ) => Effect.Effect<Mandate | undefined, ServiceUnavailable>
  /** Any tenant's mandate by id, locked; for the customer's side (approval), which has no tenant. */
  readonly lockById: (id: string) => Effect.Effect<Mandate | undefined, ServiceUnavailable>
  /** Newest first. */
  readonly list: (
    tenant: Tenant,
    filter: MandateFilter
  ) => Effect.Effect<ReadonlyArray<Mandate>, ServiceUnavailable>
  /** Customer-side listing: the mandates bound to a wallet, newest first. */
  readonly listByCustomer: (
    customerId: CustomerId
  ) => Effect.Effect<ReadonlyArray<Mandate>, ServiceUnavailable>
  /**
   * Claims up to `limit` mandates due to expire at `now` (lapsed approval links, lifetimes run out),
   * locked, skipping rows another worker holds. Call inside a transaction.
   */
  readonly claimExpiring: (
    now: DateTime.Utc,
    limit: number
  ) => Effect.Effect<ReadonlyArray<Mandate>, ServiceUnavailable>
  /** The earliest moment a mandate becomes due to expire (setup window or lifetime), if any. */
  readonly nextExpiryAt: Effect.Effect<DateTime.Utc | undefined, ServiceUnavailable>
}
export class MandatesStore extends Context.Tag("laari/Store/Mandates")<MandatesStore, MandatesRepo>() {}

export interface ChargesRepo {
  readonly insert: (charge: Charge) => Effect.Effect<void, ServiceUnavailable>
  /** One of the tenant's charges by id; another tenant's (or an id that is no UUID) is none. */
  readonly find: (tenant: Tenant, id: string) => Effect.Effect<Charge | undefined, ServiceUnavailable>
  readonly listByMandate: (mandateId: string) => Effect.Effect<ReadonlyArray<Charge>, ServiceUnavailable>
  /**
   * The newest `perMandate` charges of each mandate, newest first within each, in one go (a read API
   * listing mandates with their charges asks once, not once a mandate). Unknown ids have none.
   */
  readonly listByMandates: (
    mandateIds: ReadonlyArray<string>,
    perMandate: number
  ) => Effect.Effect<ReadonlyArray<Charge>, ServiceUnavailable>
}
export class ChargesStore extends Context.Tag("laari/Store/Charges")<ChargesStore, ChargesRepo>() {}

// ---------------------------------------------------------------------------------------------------
// Approval challenges (one-time codes)
// ---------------------------------------------------------------------------------------------------

export interface ChallengesRepo {
  /**
   * The secret keying the code hashes. Kept in the database beside the challenges (made once, at the
   * first start) and read where it is used, so every process of a deployment checks codes the same way.
   */
  readonly codeKey: Effect.Effect<Uint8Array, ServiceUnavailable>
  readonly insert: (challenge: Challenge) => Effect.Effect<void, ServiceUnavailable>
  readonly update: (challenge: Challenge) => Effect.Effect<void, ServiceUnavailable>
  /** Locked until the transaction ends, so two guesses cannot both count as the fifth. */
  readonly lock: (id: ChallengeId) => Effect.Effect<Challenge | undefined, ServiceUnavailable>
  /**
   * Holds the customer's lock until the transaction ends: their codes are issued and checked one at a
   * time, so concurrent requests on different subjects cannot together pass the customer's caps.
   */
  readonly lockCustomer: (customerId: CustomerId) => Effect.Effect<void, ServiceUnavailable>
  /** The challenges of the subject or of the customer (each once) created after `since`. */
  readonly recent: (query: {
    readonly subjectKind: Challenge["subjectKind"]
    readonly subjectId: string
    readonly customerId: CustomerId
    readonly since: DateTime.Utc
  }) => Effect.Effect<ReadonlyArray<Challenge>, ServiceUnavailable>
  /**
   * Up to `limit` challenges expired at `now` whose notice is not yet redacted, locked, skipping rows
   * another worker holds. Call inside a transaction.
   */
  readonly claimUnredacted: (
    now: DateTime.Utc,
    limit: number
  ) => Effect.Effect<ReadonlyArray<Challenge>, ServiceUnavailable>
  /** The earliest `expiresAt` of a challenge whose notice is not yet redacted, if any. */
  readonly nextRedactionAt: Effect.Effect<DateTime.Utc | undefined, ServiceUnavailable>
}
export class ChallengesStore extends Context.Tag("laari/Store/Challenges")<
  ChallengesStore,
  ChallengesRepo
>() {}

// ---------------------------------------------------------------------------------------------------
// QR codes
// ---------------------------------------------------------------------------------------------------

export interface QrCodeFilter extends Page {
  readonly outletId?: number | undefined
  readonly type?: QrType | undefined
}

export interface QrCodesRepo {
  /** Fails with `DuplicateReference` when the tenant already has a code with that reference. */
  readonly insert: (code: QrCode) => Effect.Effect<void, DuplicateReference | ServiceUnavailable>
  readonly update: (code: QrCode) => Effect.Effect<void, ServiceUnavailable>
  readonly find: (
    tenant: Tenant,
    lookup: Lookup,
    options?: { readonly forUpdate?: boolean }
  ) => Effect.Effect<QrCode | undefined, ServiceUnavailable>
  /** The code a scanned `qrid` names in `environment`, locked until the transaction ends. */
  readonly lockByQrid: (
    environment: Environment,
    qrid: string
  ) => Effect.Effect<QrCode | undefined, ServiceUnavailable>
  /** Newest first. */
  readonly list: (
    tenant: Tenant,
    filter: QrCodeFilter
  ) => Effect.Effect<ReadonlyArray<QrCode>, ServiceUnavailable>
  /** Keeps a static code's rendered PNG with it. */
  readonly saveImage: (code: QrCode, png: Uint8Array) => Effect.Effect<void, ServiceUnavailable>
  /** The PNG of a code by id, whoever's it is (served without a key: the id is unguessable). */
  readonly image: (id: string) => Effect.Effect<Uint8Array | undefined, ServiceUnavailable>
}
export class QrCodesStore extends Context.Tag("laari/Store/QrCodes")<QrCodesStore, QrCodesRepo>() {}

export interface QrPaymentsRepo {
  readonly insert: (payment: QrPayment) => Effect.Effect<void, ServiceUnavailable>
  /** One of the tenant's QR payments by id; another tenant's (or an id that is no UUID) is none. */
  readonly find: (tenant: Tenant, id: string) => Effect.Effect<QrPayment | undefined, ServiceUnavailable>
  /** Newest first. */
  readonly listByCode: (qrCodeId: string) => Effect.Effect<ReadonlyArray<QrPayment>, ServiceUnavailable>
}
export class QrPaymentsStore extends Context.Tag("laari/Store/QrPayments")<
  QrPaymentsStore,
  QrPaymentsRepo
>() {}

// ---------------------------------------------------------------------------------------------------
// Checkout sessions, subscriptions and invoices
// ---------------------------------------------------------------------------------------------------

export interface CheckoutSessionsRepo {
  /** Fails with `DuplicateReference` when the tenant already has a session with that reference. */
  readonly insert: (session: CheckoutSession) => Effect.Effect<void, DuplicateReference | ServiceUnavailable>
  readonly update: (session: CheckoutSession) => Effect.Effect<void, ServiceUnavailable>
  /** One of the tenant's sessions by id or reference; `forUpdate` locks it until the transaction ends. */
  readonly find: (
    tenant: Tenant,
    lookup: Lookup,
    options?: { readonly forUpdate?: boolean }
  ) => Effect.Effect<CheckoutSession | undefined, ServiceUnavailable>
  /** Any tenant's session by id, locked: for the customer's side (paying), which has no tenant. */
  readonly lockById: (id: string) => Effect.Effect<CheckoutSession | undefined, ServiceUnavailable>
  /** The tenant's sessions, newest first. */
  readonly list: (
    tenant: Tenant,
    page: Page
  ) => Effect.Effect<ReadonlyArray<CheckoutSession>, ServiceUnavailable>
  /** Up to `limit` `OPEN` sessions past `expiresAt`, locked, skipping rows another worker holds. */
  readonly claimExpiring: (
    now: DateTime.Utc,
    limit: number
  ) => Effect.Effect<ReadonlyArray<CheckoutSession>, ServiceUnavailable>
  /** The earliest `expiresAt` of an `OPEN` session, if any. */
  readonly nextExpiryAt: Effect.Effect<DateTime.Utc | undefined, ServiceUnavailable>
}
export class CheckoutSessionsStore extends Context.Tag("laari/Store/CheckoutSessions")<
  CheckoutSessionsStore,
  CheckoutSessionsRepo
>() {}

export interface SubscriptionFilter extends Page {
  readonly status?: SubscriptionStatus | undefined
  readonly reference?: string | undefined
}

export interface SubscriptionsRepo {
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
  readonly find: (
    tenant: Tenant,
    lookup: Lookup,
    options?: { readonly forUpdate?: boolean }
  ) => Effect.Effect<Subscription | undefined, ServiceUnavailable>
  /** Any tenant's subscription by id, locked (the engine, the customer's side, operations). */
  readonly lockById: (id: string) => Effect.Effect<Subscription | undefined, ServiceUnavailable>
  /** Several by id, locked in id order (so two callers cannot deadlock), ordered by id; missing ids are left out. */
  readonly lockMany: (
    ids: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlyArray<Subscription>, ServiceUnavailable>
  /** Newest first. */
  readonly list: (
    tenant: Tenant,
    filter: SubscriptionFilter
  ) => Effect.Effect<ReadonlyArray<Subscription>, ServiceUnavailable>
  /** The subscriptions a wallet pays, newest first. */
  readonly listByCustomer: (
    customerId: CustomerId
  ) => Effect.Effect<ReadonlyArray<Subscription>, ServiceUnavailable>
  /** Up to `limit` subscriptions with `dueAt <= now`, locked, skipping rows another worker holds. */
  readonly claimDue: (
    now: DateTime.Utc,
    limit: number
  ) => Effect.Effect<ReadonlyArray<Subscription>, ServiceUnavailable>
  /** The earliest `dueAt`, if any. */
  readonly nextDueAt: Effect.Effect<DateTime.Utc | undefined, ServiceUnavailable>
}
export class SubscriptionsStore extends Context.Tag("laari/Store/Subscriptions")<
  SubscriptionsStore,
  SubscriptionsRepo
>() {}

export interface InvoicesRepo {
  /** Unique per (subscription, period key): a second invoice for a cycle dies, so a cycle is charged once. */
  readonly insert: (invoice: Invoice) => Effect.Effect<void, ServiceUnavailable>
  readonly update: (invoice: Invoice) => Effect.Effect<void, ServiceUnavailable>
  /** One of the tenant's invoices by id; another tenant's (or an id that is no UUID) is none. */
  readonly find: (tenant: Tenant, id: string) => Effect.Effect<Invoice | undefined, ServiceUnavailable>
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
export class InvoicesStore extends Context.Tag("laari/Store/Invoices")<InvoicesStore, InvoicesRepo>() {}

// ---------------------------------------------------------------------------------------------------
// Refunds
// ---------------------------------------------------------------------------------------------------

export interface RefundFilter extends Page {
  readonly chargeId?: string | undefined
  readonly qrPaymentId?: string | undefined
  readonly invoiceId?: string | undefined
}

export interface RefundsRepo {
  /** Fails with `DuplicateReference` when the tenant already has a refund with that reference. */
  readonly insert: (refund: Refund) => Effect.Effect<void, DuplicateReference | ServiceUnavailable>
  /** One of the tenant's refunds by id or reference. */
  readonly find: (tenant: Tenant, lookup: Lookup) => Effect.Effect<Refund | undefined, ServiceUnavailable>
  /** Newest first. */
  readonly list: (
    tenant: Tenant,
    filter: RefundFilter
  ) => Effect.Effect<ReadonlyArray<Refund>, ServiceUnavailable>
  /**
   * The tenant's payment `source` names, locked until the transaction ends (so refunds of one payment
   * are decided one at a time); `undefined` when there is none or it is another tenant's.
   */
  readonly lockPayment: (
    tenant: Tenant,
    source: RefundSource
  ) => Effect.Effect<RefundablePayment | undefined, ServiceUnavailable>
  /**
   * The ids of the tenant's payments of `kind` whose merchant reference is `reference`, newest first,
   * at most `limit` (a charge's reference defaults to its mandate's and a QR payment's is its code's, so
   * several may share one).
   */
  readonly paymentIdsByReference: (
    tenant: Tenant,
    kind: ReferencedKind,
    reference: string,
    limit: number
  ) => Effect.Effect<ReadonlyArray<string>, ServiceUnavailable>
  /** Records how much of the payment (locked by `lockPayment`) has gone back in all. */
  readonly setRefunded: (
    source: RefundSource,
    amountRefunded: number
  ) => Effect.Effect<void, ServiceUnavailable>
}
export class RefundsStore extends Context.Tag("laari/Store/Refunds")<RefundsStore, RefundsRepo>() {}

// ---------------------------------------------------------------------------------------------------
// All together
// ---------------------------------------------------------------------------------------------------

/** Every repository port. */
export type Repositories =
  | Merchants
  | ApiKeysStore
  | Customers
  | MandatesStore
  | ChargesStore
  | ChallengesStore
  | Outlets
  | QrCodesStore
  | QrPaymentsStore
  | CheckoutSessionsStore
  | SubscriptionsStore
  | InvoicesStore
  | RefundsStore
  | LedgerReads

/**
 * Everything a storage adapter provides: transactions, the repositories, idempotency records, the event
 * outbox, customer notifications, the wallet ledger (in the same database, so they share transactions),
 * the merchants' own store, OAuth clients and webhook endpoints.
 */
export type Ports =
  | Transactor
  | Repositories
  | IdempotencyStore
  | Outbox
  | Notifications
  | Wallet
  | MerchantsStore
  | OAuthClientsStore
  | WebhookEndpointsStore
