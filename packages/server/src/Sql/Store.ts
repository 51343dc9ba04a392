/**
 * Every core port over one `SqlClient`: the `Transactor`, the repositories (merchants, mandates, outlets, QR codes and
 * their payments, checkout sessions, subscriptions and their invoices), the outbox, notifications,
 * idempotency keys, the built-in ledger behind `Wallet`, the audit log and people's accounts. The same adapters serve PostgreSQL and PGlite.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { type Crypto, type Notifications, Store } from "@laari/core"
import { Effect, FiberRef, Layer, Option } from "effect"
import { auditLayer } from "./AuditEvents.js"
import { ledgerReadsLayer } from "./Balance.js"
import { challengesLayer } from "./Challenges.js"
import { eventLogLayer, outboxLayer } from "./Events.js"
import { idempotencyLayer } from "./Idempotency.js"
import { walletLayer } from "./Ledger.js"
import { chargesLayer, mandatesLayer } from "./Mandates.js"
import { apiKeysLayer, customersLayer, merchantsLayer, merchantsStoreLayer } from "./Merchants.js"
import { storeLayer as oauthClientsLayer } from "./OAuthClients.js"
import * as PgBatch from "./Pg/PgBatch.js"
import * as PgTransaction from "./PgTransaction.js"
import { peopleLayer } from "./People.js"
import { outletsLayer, qrCodesLayer, qrPaymentsLayer } from "./QrCodes.js"
import { refundsLayer } from "./Refunds.js"
import { committing, guard, inTransaction } from "./Repository.js"
import type * as RowCache from "./RowCache.js"
import { checkoutSessionsLayer } from "./CheckoutSessions.js"
import { invoicesLayer } from "./Invoices.js"
import { subscriptionsLayer } from "./Subscriptions.js"
import * as WriteBehind from "./WriteBehind.js"
import { storeLayer as webhookEndpointsLayer } from "./WebhookEndpoints.js"

/**
 * One transaction around a command, with write-behind (`WriteBehind`); nested calls join the outer one.
 * Where the database lends sessions for it (`PgBatch.BatchSessions`: the pool's connections, PGlite's
 * one session) its statements go in batches (`PgTransaction`).
 * A database that cannot be reached (at BEGIN, mid-way or at COMMIT) is `ServiceUnavailable`; at COMMIT
 * its `OutcomeUnknown` kind, which tells the client to retry with the same key. A transaction opened
 * `inParts` is a savepoint: the transaction's own (`WriteBehind.Savepoints`), or, in a transaction
 * opened otherwise, the SQL client's.
 */
export const transactorLayer: Layer.Layer<Store.Transactor, never, SqlClient.SqlClient> = Layer.effect(
  Store.Transactor,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    // BEGIN and COMMIT ride with the statements around them (`PgTransaction`).
    const sessions = yield* Effect.serviceOption(PgBatch.BatchSessions)
    const begin = Option.isSome(sessions)
      ? PgTransaction.over(sessions.value).transaction
      : WriteBehind.transaction(sql)
    const transaction = committing(inTransaction(sql, begin))
    // Set while a transaction runs `inParts`: a transaction opened then is a savepoint of it.
    const parts = FiberRef.unsafeMake(false)
    const savepoint = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      Effect.flatMap(Effect.serviceOption(WriteBehind.Savepoints), (savepoints) =>
        Option.isSome(savepoints) ? savepoints.value.run(effect) : sql.withTransaction(effect)
      )
    const open = Effect.map(Effect.serviceOption(SqlClient.TransactionConnection), Option.isSome)
    return {
      withTransaction: (effect) =>
        Effect.flatMap(Effect.zip(FiberRef.get(parts), open), ([part, joined]) =>
          guard(part && joined ? savepoint(Effect.locally(effect, parts, false)) : transaction(effect))
        ),
      inParts: (effect) =>
        Effect.flatMap(open, (joined) => (joined ? Effect.locally(effect, parts, true) : effect))
    }
  })
)

/** The ports of `@laari/core` that a SQL database provides. */
export type Ports = Store.Ports

/**
 * Every port but `Notifications`, whose implementation depends on where notices go: the database picks
 * it once, from its configuration (`Database.layer`, `NotificationOutbox.ports`).
 */
export const layer: Layer.Layer<
  Exclude<Ports, Notifications.Notifications>,
  never,
  SqlClient.SqlClient | RowCache.RowCache | Crypto.Crypto
> = Layer.mergeAll(
  transactorLayer,
  merchantsLayer,
  merchantsStoreLayer,
  apiKeysLayer,
  customersLayer,
  mandatesLayer,
  chargesLayer,
  challengesLayer,
  outletsLayer,
  qrCodesLayer,
  qrPaymentsLayer,
  checkoutSessionsLayer,
  subscriptionsLayer,
  invoicesLayer,
  refundsLayer,
  idempotencyLayer,
  outboxLayer,
  eventLogLayer,
  walletLayer,
  ledgerReadsLayer,
  oauthClientsLayer,
  webhookEndpointsLayer,
  auditLayer,
  peopleLayer
)
