/**
 * Storage ports, gathered: each feature's repositories live in its folder (`mandates/MandatesStore.ts`, ...),
 * re-exported here as the `Store` namespace hosts and adapters use, with the union of every port an adapter
 * provides. Features import their own ports, never this module.
 */
import type { Outbox } from "./Events.js"
import type { ChallengesStore } from "./approvals/ChallengesStore.js"
import type { AuditStore } from "./audit/AuditStore.js"
import type { CheckoutSessionsStore, InvoicesStore, SubscriptionsStore } from "./billing/BillingStore.js"
import type { ApiKeysStore } from "./directory/ApiKeysStore.js"
import type {
  CustomersStore,
  MerchantRegistryStore,
  MerchantsStore,
  OutletsStore
} from "./directory/MerchantsStore.js"
import type { OAuthClientsStore } from "./directory/OAuthClientsStore.js"
import type { EventLog } from "./kernel/EventLog.js"
import type { IdempotencyStore } from "./kernel/IdempotencyStore.js"
import type { Notifications } from "./kernel/Notifications.js"
import type { Transactor } from "./kernel/Transactor.js"
import type { ChargesStore, MandatesStore } from "./mandates/MandatesStore.js"
import type { QrCodesStore, QrPaymentsStore } from "./qr/QrStore.js"
import type { RefundsStore } from "./refunds/RefundsStore.js"
import type { Wallet } from "./wallet/Wallet.js"
import type { LedgerReadsStore } from "./wallet/WalletStore.js"
import type { WebhookEndpointsStore } from "./webhooks/WebhookEndpointsStore.js"
import type { PeopleStore } from "./people/PeopleStore.js"

export * from "./kernel/Storage.js"
export * from "./kernel/Transactor.js"
export * from "./kernel/IdempotencyStore.js"
export * from "./directory/MerchantsStore.js"
export * from "./directory/ApiKeysStore.js"
export * from "./directory/OAuthClientsStore.js"
export * from "./mandates/MandatesStore.js"
export * from "./approvals/ChallengesStore.js"
export * from "./qr/QrStore.js"
export * from "./billing/BillingStore.js"
export * from "./refunds/RefundsStore.js"
export * from "./wallet/WalletStore.js"
export * from "./webhooks/WebhookEndpointsStore.js"
export * from "./audit/AuditStore.js"
export * from "./people/PeopleStore.js"

// ---------------------------------------------------------------------------------------------------
// All together
// ---------------------------------------------------------------------------------------------------

/** Every repository port. */
export type Repositories =
  | MerchantsStore
  | ApiKeysStore
  | CustomersStore
  | MandatesStore
  | ChargesStore
  | ChallengesStore
  | OutletsStore
  | QrCodesStore
  | QrPaymentsStore
  | CheckoutSessionsStore
  | SubscriptionsStore
  | InvoicesStore
  | RefundsStore
  | LedgerReadsStore

/**
 * Everything a storage adapter provides: transactions, the repositories, idempotency records, the event
 * outbox and its log, customer notifications, the wallet ledger (in the same database, so they share transactions),
 * the merchant registry, OAuth clients, webhook endpoints, the audit log (written in the transaction of
 * the change it records) and people's accounts, teams and sessions.
 */
export type Ports =
  | Transactor
  | Repositories
  | IdempotencyStore
  | Outbox
  | EventLog
  | Notifications
  | Wallet
  | MerchantRegistryStore
  | OAuthClientsStore
  | WebhookEndpointsStore
  | AuditStore
  | PeopleStore
