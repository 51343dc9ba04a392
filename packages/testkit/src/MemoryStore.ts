/**
 * Memory adapters for every storage port of core: the repositories of `Store`, the idempotency store, the
 * outbox and its log, customer notifications, the webhook delivery log, the audit log and people's accounts. Each operation is a transaction of `MemoryDb` (joining the caller's),
 * so "locked until the transaction ends" holds trivially: nothing else runs until it ends.
 *
 * The adapters are written one area a file (`MemoryDirectory`, `MemoryMandates`, `MemoryQrCodes`,
 * `MemoryBilling`, `MemoryIdempotency`, `MemoryOutbox`, `MemoryDeliveries`, `MemoryAudit`, `MemoryPeople`, over the shared `MemoryRows`); this module names
 * them all again, so `MemoryStore.mandates` and the rest stay where a host finds them, and layers them.
 */
import {
  Crypto,
  DeliveriesStore,
  EventLog,
  Events,
  NoticeOutbox,
  Notifications,
  SecretSealer,
  Store
} from "@laari/core"
import { type Context, Effect, Layer } from "effect"
import { audit } from "./MemoryAudit.js"
import { checkoutSessions, invoices, subscriptions } from "./MemoryBilling.js"
import { MemoryDb, type MemoryDbService } from "./MemoryDb.js"
import { deliveries } from "./MemoryDeliveries.js"
import { notices } from "./MemoryNotices.js"
import { people } from "./MemoryPeople.js"
import { apiKeys, customers, merchants, outlets } from "./MemoryDirectory.js"
import { idempotency } from "./MemoryIdempotency.js"
import { oauthClients } from "./MemoryOAuthClients.js"
import { webhookEndpoints } from "./MemoryWebhookEndpoints.js"
import { challenges, charges, mandates } from "./MemoryMandates.js"
import { eventLog, notifications, outbox } from "./MemoryOutbox.js"
import { qrCodes, qrPayments } from "./MemoryQrCodes.js"
import * as MemoryRefunds from "./MemoryRefunds.js"

export { audit } from "./MemoryAudit.js"
export { checkoutSessions, invoices, subscriptions } from "./MemoryBilling.js"
export { apiKeys, customers, merchants, outlets } from "./MemoryDirectory.js"
export { idempotency, scopeKey } from "./MemoryIdempotency.js"
export { oauthClients } from "./MemoryOAuthClients.js"
export { people } from "./MemoryPeople.js"
export { webhookEndpoints } from "./MemoryWebhookEndpoints.js"
export { deliveries } from "./MemoryDeliveries.js"
export { challenges, charges, expiryMoment, mandates } from "./MemoryMandates.js"
export { eventLog, notifications, outbox } from "./MemoryOutbox.js"
export { qrCodes, qrPayments } from "./MemoryQrCodes.js"

/** The port `tag` as the adapter `make` builds it over the `MemoryDb`. */
const overDb = <I, S>(
  tag: Context.Tag<I, S>,
  make: (db: MemoryDbService) => S
): Layer.Layer<I, never, MemoryDb> => Layer.effect(tag, Effect.map(MemoryDb, make))

/** Every storage port over the `MemoryDb` (the `Transactor` comes with `MemoryDb.layer`). */
export const layer: Layer.Layer<
  | Exclude<Store.Repositories, Store.LedgerReadsStore>
  | Store.IdempotencyStore
  | Events.Outbox
  | EventLog.EventLog
  | Notifications.Notifications
  | Store.OAuthClientsStore
  | Store.WebhookEndpointsStore
  | Store.AuditStore
  | Store.PeopleStore
  | SecretSealer.SecretSealer
  | DeliveriesStore.DeliveriesStore
  | NoticeOutbox.NoticeOutbox,
  never,
  MemoryDb
> = Layer.mergeAll(
  overDb(Store.MerchantsStore, merchants),
  Layer.effect(Store.ApiKeysStore, Effect.zipWith(MemoryDb, Crypto.web.bytes(32), apiKeys)),
  overDb(Store.CustomersStore, customers),
  overDb(Store.MandatesStore, mandates),
  overDb(Store.ChargesStore, charges),
  Layer.effect(Store.ChallengesStore, Effect.zipWith(MemoryDb, Crypto.web.bytes(32), challenges)),
  overDb(Store.OutletsStore, outlets),
  overDb(Store.QrCodesStore, qrCodes),
  overDb(Store.QrPaymentsStore, qrPayments),
  overDb(Store.CheckoutSessionsStore, checkoutSessions),
  overDb(Store.SubscriptionsStore, subscriptions),
  overDb(Store.InvoicesStore, invoices),
  overDb(Store.RefundsStore, MemoryRefunds.refunds),
  overDb(Store.IdempotencyStore, idempotency),
  overDb(Events.Outbox, outbox),
  overDb(EventLog.EventLog, eventLog),
  overDb(Notifications.Notifications, notifications),
  overDb(Store.OAuthClientsStore, oauthClients),
  overDb(Store.WebhookEndpointsStore, webhookEndpoints),
  overDb(DeliveriesStore.DeliveriesStore, deliveries),
  overDb(NoticeOutbox.NoticeOutbox, notices),
  overDb(Store.AuditStore, audit),
  overDb(Store.PeopleStore, people),
  // Nothing in memory is at rest: secrets are kept as they are.
  Layer.succeed(SecretSealer.SecretSealer, SecretSealer.plainSealer)
)
