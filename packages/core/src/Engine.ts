/**
 * The one composition root of core: every domain service wired from the ports a host brings. The
 * server (over PostgreSQL or PGlite), the testkit (over memory) and a host platform (over its own
 * adapters) all provide their ports to this layer.
 */
import { Layer } from "effect"
import { ApiKeys } from "./ApiKeys.js"
import { Approvals } from "./Approvals.js"
import * as Background from "./Background.js"
import { Balances } from "./Balances.js"
import { Billing } from "./Billing.js"
import { Checkout } from "./Checkout.js"
import type * as Crypto from "./Crypto.js"
import { Mandates } from "./Mandates.js"
import { Merchants } from "./Merchants.js"
import { OAuthClients } from "./OAuthClients.js"
import type * as QrImages from "./QrImages.js"
import { QrCodes } from "./QrCodes.js"
import { Refunds } from "./Refunds.js"
import type * as Store from "./Store.js"
import { Subscriptions } from "./Subscriptions.js"
import { WalletAccess } from "./WalletAccess.js"
import { WebhookEndpoints } from "./WebhookEndpoints.js"
import type * as Work from "./Work.js"

/**
 * What a host brings: storage and its transactions, the idempotency store, the outbox, notifications,
 * the wallet ledger, randomness and keyed hashing, and a renderer for static QR images.
 */
export type Ports = Store.Ports | Crypto.Crypto | QrImages.QrImages

/** What the engine gives: the services, and `Work.Jobs`, the background work a host's workers run. */
export type Services =
  | Merchants
  | ApiKeys
  | Approvals
  | WalletAccess
  | Mandates
  | QrCodes
  | Checkout
  | Subscriptions
  | Billing
  | Refunds
  | Balances
  | OAuthClients
  | WebhookEndpoints
  | Work.Jobs

/** Every service of core over `Ports`. */
export const layer: Layer.Layer<Services, never, Ports> = Background.jobs.pipe(
  Layer.provideMerge(
    Layer.mergeAll(
      Mandates.Default,
      QrCodes.Default,
      Checkout.Default,
      Billing.Default,
      WalletAccess.Default,
      Refunds.Default,
      Balances.Default,
      Merchants.Default,
      ApiKeys.Default,
      OAuthClients.Default,
      WebhookEndpoints.Default
    )
  ),
  Layer.provideMerge(Subscriptions.Default),
  Layer.provideMerge(Approvals.Default)
)
