/**
 * Mandates and their charges.
 */
import { Context, type DateTime, Effect } from "effect"
import type { ServiceUnavailable } from "../kernel/Errors.js"
import type { CustomerId, Lookup, Tenant } from "../kernel/Ids.js"
import type { DuplicateReference, Page } from "../kernel/Storage.js"
import type { Charge, Mandate, Status as MandateStatus } from "./Mandate.js"

export interface MandateFilter extends Page {
  readonly status?: MandateStatus | undefined
  readonly reference?: string | undefined
}

export interface MandatesRepo {
  /** Fails with `DuplicateReference` when the tenant already has a mandate with that reference. */
  readonly insert: (mandate: Mandate) => Effect.Effect<void, DuplicateReference | ServiceUnavailable>
  readonly update: (mandate: Mandate) => Effect.Effect<void, ServiceUnavailable>
  /** Finds one of the tenant's mandates; `forUpdate` locks it until the transaction ends. */
  readonly find: (
    tenant: Tenant,
    lookup: Lookup,
    options?: { readonly forUpdate?: boolean }
  ) => Effect.Effect<Mandate | undefined, ServiceUnavailable>
  /** Any tenant's mandate by id, locked; for the customer's side (approval), which has no tenant. */
  readonly lockById: (id: string) => Effect.Effect<Mandate | undefined, ServiceUnavailable>
  /** Newest first. */
  readonly list: (
    tenant: Tenant,
    filter: MandateFilter
  ) => Effect.Effect<ReadonlyArray<Mandate>, ServiceUnavailable>
  /** Customer-side listing: the mandates bound to a wallet, newest first. */
  readonly listByCustomer: (
    customerId: CustomerId
  ) => Effect.Effect<ReadonlyArray<Mandate>, ServiceUnavailable>
  /**
   * Claims up to `limit` mandates due to expire at `now` (lapsed approval links, lifetimes run out),
   * locked, skipping rows another worker holds. Call inside a transaction.
   */
  readonly claimExpiring: (
    now: DateTime.Utc,
    limit: number
  ) => Effect.Effect<ReadonlyArray<Mandate>, ServiceUnavailable>
  /** The earliest moment a mandate becomes due to expire (setup window or lifetime), if any. */
  readonly nextExpiryAt: Effect.Effect<DateTime.Utc | undefined, ServiceUnavailable>
}
export class MandatesStore extends Context.Tag("laari/Store/Mandates")<MandatesStore, MandatesRepo>() {}

export interface ChargesRepo {
  readonly insert: (charge: Charge) => Effect.Effect<void, ServiceUnavailable>
  /** One of the tenant's charges by id; another tenant's (or an id that is no UUID) is none. */
  readonly find: (tenant: Tenant, id: string) => Effect.Effect<Charge | undefined, ServiceUnavailable>
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
export class ChargesStore extends Context.Tag("laari/Store/Charges")<ChargesStore, ChargesRepo>() {}
