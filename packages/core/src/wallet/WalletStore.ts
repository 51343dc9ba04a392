/**
 * The wallet's storage ports: `LedgerReadsStore`, the reads of the ledger the `Balances` service needs (a
 * host with its own ledger brings them), and `MovementsStore`, where each movement across the network
 * (`RemoteLedger`) is committed pending before its call and settled after.
 */
import { Context, type DateTime, type Effect } from "effect"
import type { ServiceUnavailable } from "../kernel/Errors.js"
import type { CustomerId, Tenant } from "../kernel/Ids.js"
import type { Claim } from "../kernel/Storage.js"
import type { Cursor, Movement as BalanceMovement, PayerPayment } from "./Balance.js"
import type { Cause, Movement } from "./Movement.js"

export interface LedgerReadsStoreService {
  /** The tenant's merchant account balance now, exactly (nothing pending left out); 0 before any entry. */
  readonly available: (tenant: Tenant) => Effect.Effect<number, ServiceUnavailable>
  /**
   * Movements of the tenant's account, newest first (by `createdAt`, then transfer id, descending), at
   * most `limit`; `undefined` when `startingAfter` names no movement of the tenant.
   */
  readonly movements: (
    tenant: Tenant,
    cursor: Cursor
  ) => Effect.Effect<ReadonlyArray<BalanceMovement> | undefined, ServiceUnavailable>
  /** Every movement with `from <= createdAt < to`, oldest first (by `createdAt`, then transfer id). */
  readonly between: (
    tenant: Tenant,
    from: DateTime.Utc,
    to: DateTime.Utc
  ) => Effect.Effect<ReadonlyArray<BalanceMovement>, ServiceUnavailable>
  /** The customer's payments, newest first (by `createdAt`, then transfer id, descending), at most `limit`. */
  readonly payments: (
    customerId: CustomerId,
    limit: number
  ) => Effect.Effect<ReadonlyArray<PayerPayment>, ServiceUnavailable>
}
export class LedgerReadsStore extends Context.Tag("laari/Store/LedgerReads")<
  LedgerReadsStore,
  LedgerReadsStoreService
>() {}

export interface MovementsStoreService {
  /** Fails (a defect) when the id or the cause already has one: one movement per cause. */
  readonly insert: (movement: Movement) => Effect.Effect<void, ServiceUnavailable>
  /** The movement, locked until the transaction ends. */
  readonly lock: (id: string) => Effect.Effect<Movement | undefined, ServiceUnavailable>
  /** The movement of a cause, if it has one (unlocked). */
  readonly byCause: (cause: Cause, causeId: string) => Effect.Effect<Movement | undefined, ServiceUnavailable>
  /**
   * The pending movements under `holdKey`: how many, and their sum. Call under the lock of what the key
   * names, so no movement under it begins or settles meanwhile.
   */
  readonly held: (
    holdKey: string
  ) => Effect.Effect<{ readonly count: number; readonly amount: number }, ServiceUnavailable>
  /**
   * Whether a pending movement of the tenant's of `cause` carries `reference` (its detail's), after taking
   * the reference's lock until the transaction ends: causes checking one reference at once go one after
   * the other, each seeing the movement the one before committed.
   */
  readonly referenceHeld: (
    tenant: Tenant,
    cause: Cause,
    reference: string
  ) => Effect.Effect<boolean, ServiceUnavailable>
  readonly update: (movement: Movement) => Effect.Effect<void, ServiceUnavailable>
  /**
   * Up to `limit` pending movements due a look at `now`, oldest look first, locked, skipping those another
   * process holds. Call inside a transaction: the caller moves each one's next look later before it
   * commits (`Movement.postpone`), which leases it while the look takes its time.
   */
  readonly claimDue: Claim<Movement>
  /** The earliest next look of a pending movement, if any. */
  readonly nextDueAt: Effect.Effect<DateTime.Utc | undefined, ServiceUnavailable>
  /** How many movements are pending, and the oldest one's age: for `/readyz` and the metrics. */
  readonly pendingSummary: Effect.Effect<
    { readonly count: number; readonly oldest: DateTime.Utc | undefined },
    ServiceUnavailable
  >
}

export class MovementsStore extends Context.Tag("laari/Store/Movements")<
  MovementsStore,
  MovementsStoreService
>() {}
