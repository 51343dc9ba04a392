/**
 * The one composition root of core: every domain service wired from the ports a host brings. The
 * server (over PostgreSQL or PGlite), the testkit (over memory) and a host platform (over its own
 * adapters) all provide their ports to this layer.
 */
import { Layer } from "effect"
import { ApiKeys } from "./directory/ApiKeys.js"
import { Audit } from "./audit/Audit.js"
import { Approvals } from "./approvals/Approvals.js"
import { Balances } from "./wallet/Balances.js"
import { Billing } from "./billing/Billing.js"
import { Checkout } from "./billing/Checkout.js"
import { CheckoutPayments } from "./billing/CheckoutPayments.js"
import type * as Crypto from "./kernel/Crypto.js"
import { Deliveries } from "./webhooks/Deliveries.js"
import type { DeliveriesStore } from "./webhooks/DeliveriesStore.js"
import { KeyedCommands } from "./kernel/KeyedCommands.js"
import { MandateCharges } from "./mandates/MandateCharges.js"
import { Resolver } from "./Resolver.js"
import { Mandates } from "./mandates/Mandates.js"
import { Merchants } from "./directory/Merchants.js"
import type { NoticeOutbox } from "./notices/NoticeOutbox.js"
import { Notices } from "./notices/Notices.js"
import { OAuthClients } from "./directory/OAuthClients.js"
import type * as QrImages from "./qr/QrImages.js"
import { Reads } from "./Reads.js"
import { QrCodes } from "./qr/QrCodes.js"
import { QrPayments } from "./qr/QrPayments.js"
import { Refunds } from "./refunds/Refunds.js"
import type * as Store from "./Store.js"
import { Subscriptions } from "./billing/Subscriptions.js"
import { WalletAccess } from "./mandates/WalletAccess.js"
import { WebhookEndpoints } from "./webhooks/WebhookEndpoints.js"
import type * as WallClock from "./kernel/WallClock.js"

/**
 * What a host brings: storage and its transactions, the idempotency store, the outbox, notifications,
 * the wallet ledger, the webhook delivery log, the notice outbox, randomness and keyed hashing, wall
 * time (`WallClock`, for signatures), and a renderer for static QR images. The delivery log and the
 * notice outbox are apart from `Store.Ports`: a host may keep them beside its store (the server does,
 * with the webhooks and its notifications), as long as the outbox queues into the one and its
 * `Notifications` port into the other.
 */
export type Ports =
  | Store.Ports
  | DeliveriesStore
  | NoticeOutbox
  | Crypto.Crypto
  | WallClock.WallClock
  | QrImages.QrImages

/**
 * What the engine gives: the services. Their background work is not among them: a host lists it with its
 * own (`Background.engine`) and provides `Work.Jobs` once.
 */
export type Services =
  | Merchants
  | ApiKeys
  | Approvals
  | WalletAccess
  | Mandates
  | MandateCharges
  | Resolver
  | QrCodes
  | QrPayments
  | Checkout
  | CheckoutPayments
  | Subscriptions
  | Billing
  | Refunds
  | Balances
  | OAuthClients
  | WebhookEndpoints
  | Deliveries
  | Notices
  | Reads
  | KeyedCommands
  | Audit

/** Every service of core over `Ports`. */
export const layer: Layer.Layer<Services, never, Ports> = Layer.mergeAll(
  Mandates.Default,
  QrCodes.Default,
  Checkout.Default,
  WalletAccess.Default,
  Balances.Default,
  Merchants.Default,
  ApiKeys.Default,
  OAuthClients.Default,
  WebhookEndpoints.Default,
  Deliveries.Default,
  Notices.Default,
  Reads.Default,
  KeyedCommands.Default
).pipe(
  Layer.provideMerge(Resolver.Default),
  // Under the resolver, which settles each kind of payment through the core.
  Layer.provideMerge(
    Layer.mergeAll(
      Billing.Default,
      Refunds.Default,
      MandateCharges.Default,
      QrPayments.Default,
      CheckoutPayments.Default
    )
  ),
  Layer.provideMerge(Subscriptions.Default),
  Layer.provideMerge(Approvals.Default),
  // Beneath every service: each notes the changes it makes in the audit log.
  Layer.provideMerge(Audit.Default)
)
