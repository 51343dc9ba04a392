/**
 * Memory adapters for every storage port of core: the repositories of `Store`, the idempotency store, the
 * outbox and its log, and customer notifications. Each operation is a transaction of `MemoryDb` (joining the caller's),
 * so "locked until the transaction ends" holds trivially: nothing else runs until it ends.
 *
 * The adapters are written one area a file (`MemoryDirectory`, `MemoryMandates`, `MemoryQrCodes`,
 * `MemoryBilling`, `MemoryIdempotency`, `MemoryOutbox`, over the shared `MemoryRows`); this module names
 * them all again, so `MemoryStore.mandates` and the rest stay where a host finds them, and layers them.
 */
import {
  type Balance,
  Crypto,
  EventLog,
  Events,
  Idempotency,
  Notifications,
  OAuthClient,
  Store,
  WebhookEndpoint
} from "@laari/core"
import { Effect, Layer } from "effect"
import { checkoutSessions, invoices, subscriptions } from "./MemoryBilling.js"
import { MemoryDb } from "./MemoryDb.js"
import { apiKeys, customers, merchants, outlets } from "./MemoryDirectory.js"
import { idempotency } from "./MemoryIdempotency.js"
import { oauthClients } from "./MemoryOAuthClients.js"
import { webhookEndpoints } from "./MemoryWebhookEndpoints.js"
import { challenges, charges, mandates } from "./MemoryMandates.js"
import { eventLog, notifications, outbox } from "./MemoryOutbox.js"
import { qrCodes, qrPayments } from "./MemoryQrCodes.js"
import * as MemoryRefunds from "./MemoryRefunds.js"

export { checkoutSessions, invoices, subscriptions } from "./MemoryBilling.js"
export { apiKeys, customers, merchants, outlets } from "./MemoryDirectory.js"
export { idempotency, scopeKey } from "./MemoryIdempotency.js"
export { oauthClients } from "./MemoryOAuthClients.js"
export { webhookEndpoints } from "./MemoryWebhookEndpoints.js"
export { challenges, charges, expiryMoment, mandates } from "./MemoryMandates.js"
export { eventLog, notifications, outbox } from "./MemoryOutbox.js"
export { qrCodes, qrPayments } from "./MemoryQrCodes.js"

/** Every storage port over the `MemoryDb` (the `Transactor` comes with `MemoryDb.layer`). */
export const layer: Layer.Layer<
  | Exclude<Store.Repositories, Balance.LedgerReads>
  | Idempotency.IdempotencyStore
  | Events.Outbox
  | EventLog.EventLog
  | Notifications.Notifications
  | OAuthClient.OAuthClientsStore
  | WebhookEndpoint.WebhookEndpointsStore
  | WebhookEndpoint.SecretSealer,
  never,
  MemoryDb
> = Layer.mergeAll(
  Layer.effect(Store.Merchants, Effect.map(MemoryDb, merchants)),
  Layer.effect(Store.ApiKeysStore, Effect.zipWith(MemoryDb, Crypto.web.bytes(32), apiKeys)),
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
  Layer.effect(EventLog.EventLog, Effect.map(MemoryDb, eventLog)),
  Layer.effect(Notifications.Notifications, Effect.map(MemoryDb, notifications)),
  Layer.effect(OAuthClient.OAuthClientsStore, Effect.map(MemoryDb, oauthClients)),
  Layer.effect(WebhookEndpoint.WebhookEndpointsStore, Effect.map(MemoryDb, webhookEndpoints)),
  // Nothing in memory is at rest: secrets are kept as they are.
  Layer.succeed(WebhookEndpoint.SecretSealer, WebhookEndpoint.plainSealer)
)
