/**
 * What every storage port shares (the `Transactor` that makes a command all or nothing is its own): the
 * duplicate-reference refusal, a page of a listing, and the operations several ports have alike (a
 * tenant's records found by id or reference, a background job's batch claimed).
 */
import { type DateTime, Effect, Schema } from "effect"
import type { ServiceUnavailable } from "./Errors.js"
import { type Lookup, type Tenant, lookup } from "./Ids.js"

/** A unique constraint refused the write: the merchant already has a resource with that reference. */
export class DuplicateReference extends Schema.TaggedError<DuplicateReference>()("DuplicateReference", {
  reference: Schema.String
}) {}

export interface Page {
  readonly limit: number
  readonly offset: number
}

/** One of the tenant's records by id or reference; `forUpdate` locks it until the transaction ends. */
export type Find<A> = (
  tenant: Tenant,
  lookup: Lookup,
  options?: { readonly forUpdate?: boolean }
) => Effect.Effect<A | undefined, ServiceUnavailable>

/**
 * How a service reads one of the tenant's records by a path's `{id}` (an id or the merchant's reference,
 * `Ids.lookup`): `find`, failing with `notFound()` when there is none; `forUpdate` locks it.
 */
export const findOrFail =
  <A, E>(find: Find<A>, notFound: () => E) =>
  (tenant: Tenant, idOrReference: string, forUpdate = false): Effect.Effect<A, E | ServiceUnavailable> =>
    Effect.flatMap(find(tenant, lookup(idOrReference), { forUpdate }), (found) =>
      found === undefined ? Effect.fail(notFound()) : Effect.succeed(found)
    )

/** One of the tenant's records by id; another tenant's (or an id that is no UUID) is none. */
export type FindById<A> = (tenant: Tenant, id: string) => Effect.Effect<A | undefined, ServiceUnavailable>

/** How a port reads the tenant's records a merchant names by id or reference: one (`Find`), or a page. */
export interface TenantReads<A, Filter extends Page = Page> {
  readonly find: Find<A>
  /** The tenant's records, newest first. */
  readonly list: (tenant: Tenant, filter: Filter) => Effect.Effect<ReadonlyArray<A>, ServiceUnavailable>
}

/**
 * The port of records a merchant names by its own reference too (mandates, QR codes, checkout sessions):
 * inserted, updated and read the same way, whatever the record.
 */
export interface ReferencedRepo<A, Filter extends Page = Page> extends TenantReads<A, Filter> {
  /** Fails with `DuplicateReference` when the tenant already has a record with that reference. */
  readonly insert: (record: A) => Effect.Effect<void, DuplicateReference | ServiceUnavailable>
  readonly update: (record: A) => Effect.Effect<void, ServiceUnavailable>
}

/**
 * A background job's batch: up to `limit` records due at `now`, locked, skipping rows another worker
 * holds. Call inside a transaction.
 */
export type Claim<A> = (
  now: DateTime.Utc,
  limit: number
) => Effect.Effect<ReadonlyArray<A>, ServiceUnavailable>

/** When the job that claims (`Claim`) has work next: the earliest moment a record falls due, if any. */
export type NextDue = Effect.Effect<DateTime.Utc | undefined, ServiceUnavailable>
