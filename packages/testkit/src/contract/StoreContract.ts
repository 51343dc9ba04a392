/**
 * THE store contract: the behaviour every storage adapter (memory here; PGlite and PostgreSQL in the
 * server) must show, as one vitest suite an adapter registers with
 *
 * ```ts
 * StoreContract.suite("memory", () => Testkit.ports())
 * ```
 *
 * The suite builds one layer from `makeLayer()` for all its tests, puts core's `Engine` on top (rendering
 * with `MemoryQrImages.placeholder`: images are the renderer's business, not the store's, and the
 * placeholder's bytes are predictable), and runs on the real clock (no `TestClock`): store methods get
 * explicit times, and the service tests run on a manual clock of their own. Every test makes its own
 * merchant, so tests share a database without sharing data; the few store methods that are global
 * (`claimExpiring`, `nextExpiryAt`, `claimDue`, `nextDueAt`, `purge`, the deliveries' and notices' `claim`) are tested with dates in 1950, which no
 * other test uses, inside transactions that are rolled back.
 *
 * The tests live in `contract/`: one module a port under `contract/ports/`, the services run over this
 * store under `contract/services/`, and what they share in `contract/Helpers.ts`. Each registers its
 * describe block with the suite's `it`, so all of them run over the one layer (one database an adapter).
 */
import { layer } from "@effect/vitest"
import { Engine, WallClock } from "@laari/core"
import { Layer } from "effect"
import type { AllCorePorts } from "./support/Helpers.js"
import * as ApiKeys from "./ports/ApiKeys.js"
import * as Audit from "./ports/Audit.js"
import * as BalanceReads from "./ports/BalanceReads.js"
import * as Charges from "./ports/Charges.js"
import * as CheckoutSessions from "./ports/CheckoutSessions.js"
import * as EventLog from "./ports/EventLog.js"
import * as IdempotencyStore from "./ports/IdempotencyStore.js"
import * as Invoices from "./ports/Invoices.js"
import * as Mandates from "./ports/Mandates.js"
import * as OAuthClients from "./ports/OAuthClients.js"
import * as Merchants from "./ports/Merchants.js"
import * as MerchantsStore from "./ports/MerchantsStore.js"
import * as NoticeOutbox from "./ports/NoticeOutbox.js"
import * as Outbox from "./ports/Outbox.js"
import * as People from "./ports/People.js"
import * as QrCodes from "./ports/QrCodes.js"
import * as Subscriptions from "./ports/Subscriptions.js"
import * as Transactions from "./ports/Transactions.js"
import * as Wallet from "./ports/Wallet.js"
import * as WebhookDeliveries from "./ports/WebhookDeliveries.js"
import * as WebhookEndpoints from "./ports/WebhookEndpoints.js"
import * as MandatesOnStore from "./services/MandatesOnStore.js"
import * as PaymentReadsOnStore from "./services/PaymentReadsOnStore.js"
import * as QrCodesOnStore from "./services/QrCodesOnStore.js"
import * as ReadsOnStore from "./services/ReadsOnStore.js"
import * as RefundsOnStore from "./services/RefundsOnStore.js"
import * as MemoryQrImages from "../MemoryQrImages.js"
import type { Seed } from "../Seed.js"

export {
  type AllCorePorts,
  cycleInvoice,
  freshMerchant,
  merchantWithOutlet,
  plain,
  qrRequest,
  subscribe,
  tenantOf
} from "./support/Helpers.js"

/** The port contracts, in the order they run. */
const ports = [
  Merchants,
  MerchantsStore,
  ApiKeys,
  OAuthClients,
  WebhookEndpoints,
  WebhookDeliveries,
  NoticeOutbox,
  Mandates,
  Transactions,
  Charges,
  Wallet,
  BalanceReads,
  IdempotencyStore,
  Outbox,
  EventLog,
  QrCodes,
  CheckoutSessions,
  Subscriptions,
  Invoices,
  Audit,
  People
]

/** The services of core over the adapter's store, after the ports. */
const services = [QrCodesOnStore, MandatesOnStore, RefundsOnStore, PaymentReadsOnStore, ReadsOnStore]

export const suite = (name: string, makeLayer: () => Layer.Layer<AllCorePorts | Seed, unknown>): void => {
  // Wall time is no store's: the system's, as a host brings it.
  const host = Layer.merge(
    MemoryQrImages.layer,
    WallClock.layer(() => Date.now())
  )
  const engine = Engine.layer.pipe(Layer.provideMerge(host), Layer.provideMerge(makeLayer()))

  // The layer is a database and its migrations: the hook budget of the repository's projects (120 s,
  // vitest.shared.ts), which a 2-core machine shared with a CPU hog needs.
  layer(engine, { excludeTestServices: true, timeout: "120 seconds" })(`store contract: ${name}`, (it) => {
    for (const part of ports) part.tests(it)
    for (const part of services) part.tests(it)
  })
}
