/**
 * An in-memory database with real transaction semantics.
 *
 * The model: one immutable `Tables` value holds every table, and a single variable points at the current
 * one. A transaction holds the database's only permit from start to end, remembers the `Tables` it started
 * from, and puts it back if it fails, dies or is interrupted. Writes never mutate a table, they replace it
 * (persistent `HashMap`s and `Chunk`s), so keeping a snapshot is keeping a pointer.
 *
 * Every read and write of the memory adapters runs through `withTransaction`: alone it is a tiny
 * transaction of its own, inside a command it joins the command's. So operations are serialized and no
 * reader ever sees another transaction's uncommitted writes: it cannot even run until that one ends.
 */
import {
  type ApiKey,
  type AuditEvent,
  type Approval,
  type CheckoutSession,
  type Events,
  type Idempotency,
  type Invoice,
  type Mandate,
  type Notifications,
  type OAuthClient,
  type PeopleNotices,
  type Person,
  type QrCode,
  type Refund,
  Store,
  type Subscription,
  type Wallet,
  type Webhook
} from "@laari/core"
import { Chunk, Context, type DateTime, Effect, Exit, FiberRef, HashMap, Layer } from "effect"

/** A row with its insertion number, which breaks ties between rows created at the same moment. */
export interface Row<A> {
  readonly seq: number
  readonly value: A
}

/** A subscription's row: the record, and when the renewal engine next has work for it (`null`: never). */
export interface SubscriptionRow extends Row<Subscription.Subscription> {
  readonly dueAt: DateTime.Utc | null
}

/** A merchant's row: the record, and when it was created (merchants are listed oldest first). */
export interface MerchantRow extends Row<Store.Merchant> {
  readonly createdAt: DateTime.Utc
}

/** A customer wallet's settings; its balance is the ledger account `customer:<id>` in `balances`. */
export interface WalletSettings {
  readonly customerId: string
  readonly environment: "test" | "live"
  readonly limit: number | null
  readonly frozen: boolean
  readonly blockedByRules: boolean
  readonly timeZone: string
}

/** A rendered image as stored: a copy of the bytes, so the renderer's buffer can change afterwards. */
export interface QrImage {
  readonly merchantId: string
  readonly png: Uint8Array
}

/** One leg of a ledger posting: a positive amount credits `account`, a negative one debits it. */
export interface Entry {
  readonly postingId: string
  readonly account: string
  readonly amount: number
}

/**
 * A transfer between a customer and a merchant as the ledger records it (SQL's `ledger_transfers`): its
 * kind (`payment`, `refund`, ...), whose it is and when; its money is the entries of posting `postingId`.
 */
export interface TransferRecord {
  readonly id: string
  readonly postingId: string
  readonly kind: string
  readonly environment: "test" | "live"
  readonly merchantId: string
  /** The customer whose wallet paid or was refunded. */
  readonly payer: string
  /** What moved between the two, fee included. */
  readonly amount: number
  readonly createdAt: DateTime.Utc
}

export interface StoredEndpoint extends Webhook.Endpoint, Webhook.Secrets {
  readonly deletedAt: DateTime.Utc | null
}

/** An attempt of the delivery log, with what the SQL store joins in: the owner, the lease, the body. */
export interface StoredAttempt extends Webhook.Attempt {
  readonly merchantId: string
  readonly leasedUntil: DateTime.Utc | null
  /** The event's envelope text, as the log keeps it: what is sent. */
  readonly body: string
}

/** A notice of the outbox (`NoticeOutbox`), as the SQL store keeps it. */
export interface StoredNotice {
  readonly id: string
  readonly customerId: string
  readonly kind: Notifications.Kind
  /** The stored document (`Notice.stored`); dropped once a code's notice is over. */
  readonly payload: string | null
  readonly status: "PENDING" | "DELIVERED" | "EXPIRED" | "FAILED"
  readonly attempts: number
  readonly dueAt: DateTime.Utc
  readonly expiresAt: DateTime.Utc | null
  readonly giveUpAt: DateTime.Utc
  readonly leasedUntil: DateTime.Utc | null
  readonly lastStatus: number | null
  readonly lastError: string | null
}

export interface Tables {
  /** Counter for `Row.seq`. */
  readonly seq: number
  readonly merchants: HashMap.HashMap<string, MerchantRow>
  readonly customers: HashMap.HashMap<string, Store.Customer>
  /** API keys by id. */
  readonly apiKeys: HashMap.HashMap<string, Row<ApiKey.StoredKey>>
  /** OAuth clients by id (not `clientId`), and their tokens by id. */
  readonly oauthClients: HashMap.HashMap<string, Row<OAuthClient.Client>>
  readonly oauthTokens: HashMap.HashMap<string, OAuthClient.Token>
  /** Webhook endpoints by id, their (sealed) secrets and deletion with them. */
  readonly webhookEndpoints: HashMap.HashMap<string, Row<StoredEndpoint>>
  /** The delivery log, by attempt id. */
  readonly webhookDeliveries: HashMap.HashMap<string, Row<StoredAttempt>>
  /** The notice outbox, by notice id. */
  readonly noticeOutbox: HashMap.HashMap<string, Row<StoredNotice>>
  readonly mandates: HashMap.HashMap<string, Row<Mandate.Mandate>>
  readonly charges: HashMap.HashMap<string, Row<Mandate.Charge>>
  readonly challenges: HashMap.HashMap<string, Approval.Challenge>
  /** Outlets by their number, which counts up from 1 like a `serial` column. */
  readonly outlets: HashMap.HashMap<number, Store.Outlet>
  readonly qrCodes: HashMap.HashMap<string, Row<QrCode.QrCode>>
  /** A static code's PNG, by code id. */
  readonly qrImages: HashMap.HashMap<string, QrImage>
  readonly qrPayments: HashMap.HashMap<string, Row<QrCode.Payment>>
  readonly checkoutSessions: HashMap.HashMap<string, Row<CheckoutSession.CheckoutSession>>
  readonly subscriptions: HashMap.HashMap<string, SubscriptionRow>
  readonly invoices: HashMap.HashMap<string, Row<Invoice.Invoice>>
  readonly refunds: HashMap.HashMap<string, Row<Refund.Refund>>
  /** Keyed by `scopeKey(scope)`. */
  readonly idempotency: HashMap.HashMap<string, Idempotency.Record>
  /** Oldest first. */
  readonly events: Chunk.Chunk<Events.Event>
  /** The last `sequence` given per event subject. */
  readonly eventSequences: HashMap.HashMap<string, number>
  /** Oldest first. */
  readonly notifications: Chunk.Chunk<Notifications.Notification>
  // The ledger (see MemoryWallet).
  readonly wallets: HashMap.HashMap<string, WalletSettings>
  readonly balances: HashMap.HashMap<string, number>
  readonly transfers: HashMap.HashMap<string, Wallet.TransferReceipt>
  readonly entries: Chunk.Chunk<Entry>
  /** Oldest first. */
  readonly transferLog: Chunk.Chunk<TransferRecord>
  /** The audit log, oldest first (as appended). */
  readonly auditEvents: Chunk.Chunk<AuditEvent.Event>
  /** Each audit chain's head: its last row's number and hash (seq 0 while it has none). */
  readonly auditHeads: HashMap.HashMap<string, AuditEvent.Head>
  /** People's accounts by id (`MemoryPeople`). */
  readonly users: HashMap.HashMap<string, Row<Store.Account>>
  /** Memberships by `<merchant id>:<user id>`. */
  readonly memberships: HashMap.HashMap<string, Row<Person.Membership>>
  readonly invitations: HashMap.HashMap<string, Row<Store.StoredInvitation>>
  /** Recovery codes by `<user id>:<code hash>`. */
  readonly recoveryCodes: HashMap.HashMap<string, RecoveryCode>
  /** People's sessions by id. */
  readonly userSessions: HashMap.HashMap<string, Row<Store.StoredSession>>
  /** Invitations' messages as queued (`MemoryPeopleNotices`), oldest first. */
  readonly peopleNotices: Chunk.Chunk<PeopleNotices.InvitationNotice>
}

/** A recovery code as stored: its keyed hash, and when it was used. */
export interface RecoveryCode {
  readonly userId: string
  readonly codeHash: string
  readonly usedAt: DateTime.Utc | null
}

export const empty: Tables = {
  seq: 0,
  merchants: HashMap.empty(),
  customers: HashMap.empty(),
  apiKeys: HashMap.empty(),
  oauthClients: HashMap.empty(),
  oauthTokens: HashMap.empty(),
  webhookEndpoints: HashMap.empty(),
  webhookDeliveries: HashMap.empty(),
  noticeOutbox: HashMap.empty(),
  mandates: HashMap.empty(),
  charges: HashMap.empty(),
  challenges: HashMap.empty(),
  outlets: HashMap.empty(),
  qrCodes: HashMap.empty(),
  qrImages: HashMap.empty(),
  qrPayments: HashMap.empty(),
  checkoutSessions: HashMap.empty(),
  subscriptions: HashMap.empty(),
  invoices: HashMap.empty(),
  refunds: HashMap.empty(),
  idempotency: HashMap.empty(),
  events: Chunk.empty(),
  eventSequences: HashMap.empty(),
  notifications: Chunk.empty(),
  wallets: HashMap.empty(),
  balances: HashMap.empty(),
  transfers: HashMap.empty(),
  entries: Chunk.empty(),
  transferLog: Chunk.empty(),
  auditEvents: Chunk.empty(),
  auditHeads: HashMap.empty(),
  users: HashMap.empty(),
  memberships: HashMap.empty(),
  invitations: HashMap.empty(),
  recoveryCodes: HashMap.empty(),
  userSessions: HashMap.empty(),
  peopleNotices: Chunk.empty()
}

export interface MemoryDbService extends Store.TransactorService {
  /** Never fails of its own accord: memory cannot be unavailable. */
  readonly withTransaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  readonly inParts: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** The tables as the current transaction sees them. */
  readonly get: Effect.Effect<Tables>
  /** Replaces the tables, inside the current transaction (or a transaction of its own). */
  readonly update: (f: (tables: Tables) => Tables) => Effect.Effect<void>
  /** `update` that also returns a value computed from the old tables. */
  readonly modify: <A>(f: (tables: Tables) => readonly [A, Tables]) => Effect.Effect<A>
}

export class MemoryDb extends Context.Tag("laari/testkit/MemoryDb")<MemoryDb, MemoryDbService>() {}

export const make = (initial: Tables = empty): Effect.Effect<MemoryDbService> =>
  Effect.sync(() => {
    let current = initial
    const lock = Effect.unsafeMakeSemaphore(1)
    // Set while a fiber (or a fiber it forked) runs inside a transaction: nested calls join it.
    const inTransaction = FiberRef.unsafeMake(false)
    // Set while a transaction runs `inParts`: a transaction opened then is a savepoint.
    const parts = FiberRef.unsafeMake(false)

    const withTransaction = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
      Effect.flatMap(FiberRef.get(inTransaction), (joined) =>
        joined
          ? Effect.flatMap(FiberRef.get(parts), (part) =>
              part ? savepoint(Effect.locally(effect, parts, false)) : effect
            )
          : lock.withPermits(1)(
              Effect.suspend(() => {
                const snapshot = current
                return effect.pipe(
                  Effect.locally(inTransaction, true),
                  // Runs on failure, defect and interruption alike: nothing of the transaction survives.
                  Effect.onExit((exit) =>
                    Exit.isSuccess(exit)
                      ? Effect.void
                      : Effect.sync(() => {
                          current = snapshot
                        })
                  )
                )
              })
            )
      )

    // Inside the transaction, which holds the only permit: the tables as they were are the savepoint.
    const savepoint = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
      Effect.suspend(() => {
        const snapshot = current
        return Effect.onExit(effect, (exit) =>
          Exit.isSuccess(exit)
            ? Effect.void
            : Effect.sync(() => {
                current = snapshot
              })
        )
      })

    const modify = <A>(f: (tables: Tables) => readonly [A, Tables]): Effect.Effect<A> =>
      withTransaction(
        Effect.sync(() => {
          const [a, next] = f(current)
          current = next
          return a
        })
      )

    return {
      withTransaction,
      inParts: (effect) =>
        Effect.flatMap(FiberRef.get(inTransaction), (joined) =>
          joined ? Effect.locally(effect, parts, true) : effect
        ),
      get: withTransaction(Effect.sync(() => current)),
      update: (f) => modify((t) => [undefined, f(t)]),
      modify
    }
  })

/** The database and the `Transactor` over it. */
export const layer: Layer.Layer<MemoryDb | Store.Transactor> = Layer.effectContext(
  Effect.map(make(), (db) => Context.make(MemoryDb, db).pipe(Context.add(Store.Transactor, db)))
)
