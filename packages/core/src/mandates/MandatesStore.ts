/**
 * Mandates and their charges.
 */
import { Context, Effect } from "effect"
import type { ServiceUnavailable } from "../kernel/Errors.js"
import type { CustomerId, Lookup, Tenant } from "../kernel/Ids.js"
import type { Claim, FindById, NextDue, Page, ReferencedRepo } from "../kernel/Storage.js"
import type { Charge, Mandate, Status as MandateStatus } from "./Mandate.js"

export interface MandateFilter extends Page {
  readonly status?: MandateStatus | undefined
  readonly reference?: string | undefined
}

export interface MandatesStoreService extends ReferencedRepo<Mandate, MandateFilter> {
  /**
   * Says that the current transaction will next lock this mandate (`find` with `forUpdate`), so an adapter
   * that sends several statements in one round trip may send the lock with the statement that comes
   * before it. Optional: without it, or outside such a transaction, nothing happens.
   */
  readonly lockAhead?: (tenant: Tenant, lookup: Lookup) => Effect.Effect<void>
  /**
   * Says that the current transaction will soon lock this mandate by id (`lockById`), after its next
   * statement and before writing the mandate: like `lockAhead`, optional, and nothing happens without it.
   */
  readonly lockByIdAhead?: (id: string) => Effect.Effect<void>
  /** Any tenant's mandate by id, locked; for the customer's side (approval), which has no tenant. */
  readonly lockById: (id: string) => Effect.Effect<Mandate | undefined, ServiceUnavailable>
  /** Customer-side listing: the mandates bound to a wallet, newest first. */
  readonly listByCustomer: (
    customerId: CustomerId
  ) => Effect.Effect<ReadonlyArray<Mandate>, ServiceUnavailable>
  /** Mandates due to expire at `now`: lapsed approval links, lifetimes run out. */
  readonly claimExpiring: Claim<Mandate>
  /** The earliest moment a mandate becomes due to expire (setup window or lifetime), if any. */
  readonly nextExpiryAt: NextDue
}
export class MandatesStore extends Context.Tag("laari/Store/Mandates")<
  MandatesStore,
  MandatesStoreService
>() {}

export interface ChargesStoreService {
  readonly insert: (charge: Charge) => Effect.Effect<void, ServiceUnavailable>
  readonly find: FindById<Charge>
  readonly listByMandate: (mandateId: string) => Effect.Effect<ReadonlyArray<Charge>, ServiceUnavailable>
  /**
   * The newest `perMandate` charges of each mandate, newest first within each, in one go (a read API
   * listing mandates with their charges asks once, not once a mandate). Unknown ids have none.
   */
  readonly listByMandates: (
    mandateIds: ReadonlyArray<string>,
    perMandate: number
  ) => Effect.Effect<ReadonlyArray<Charge>, ServiceUnavailable>
}
export class ChargesStore extends Context.Tag("laari/Store/Charges")<ChargesStore, ChargesStoreService>() {}
