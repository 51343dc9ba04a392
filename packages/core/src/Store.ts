/**
 * Storage ports, gathered: each feature's repositories live in its folder (`mandates/MandatesStore.ts`, ...),
 * re-exported here as the `Store` namespace hosts and adapters use, with the union of every port an adapter
 * provides. Features import their own ports, never this module.
 */
import type { Outbox } from "./Events.js"
import type { ChallengesStore } from "./approvals/ChallengesStore.js"
import type { CheckoutSessionsStore, InvoicesStore, SubscriptionsStore } from "./billing/BillingStore.js"
import type { ApiKeysStore } from "./directory/ApiKeysStore.js"
import type { Customers, Merchants, Outlets } from "./directory/MerchantsStore.js"
import type { MerchantsStore } from "./directory/Merchant.js"
import type { OAuthClientsStore } from "./directory/OAuthClient.js"
import type { EventLog } from "./kernel/EventLog.js"
import type { IdempotencyStore } from "./kernel/Idempotency.js"
import type { Notifications } from "./kernel/Notifications.js"
import type { Transactor } from "./kernel/Storage.js"
import type { ChargesStore, MandatesStore } from "./mandates/MandatesStore.js"
import type { QrCodesStore, QrPaymentsStore } from "./qr/QrStore.js"
import type { RefundsStore } from "./refunds/RefundsStore.js"
import type { LedgerReads } from "./wallet/Balance.js"
import type { Wallet } from "./wallet/Wallet.js"
import type { WebhookEndpointsStore } from "./webhooks/WebhookEndpoint.js"

export * from "./kernel/Storage.js"
export * from "./directory/MerchantsStore.js"
export * from "./directory/ApiKeysStore.js"
export * from "./mandates/MandatesStore.js"
export * from "./approvals/ChallengesStore.js"
export * from "./qr/QrStore.js"
export * from "./billing/BillingStore.js"
export * from "./refunds/RefundsStore.js"

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
 * outbox and its log, customer notifications, the wallet ledger (in the same database, so they share transactions),
 * the merchants' own store, OAuth clients and webhook endpoints.
 */
export type Ports =
  | Transactor
  | Repositories
  | IdempotencyStore
  | Outbox
  | EventLog
  | Notifications
  | Wallet
  | MerchantsStore
  | OAuthClientsStore
  | WebhookEndpointsStore
