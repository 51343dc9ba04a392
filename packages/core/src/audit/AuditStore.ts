/**
 * The audit log's storage: append-only rows in chains, and each chain's head (its last row's number and
 * hash), written together so that deleting a chain's last rows is found too (`AuditEvent.checkEnd`).
 */
import { Context, type DateTime, type Effect } from "effect"
import type { ServiceUnavailable } from "../kernel/Errors.js"
import type { Environment } from "../kernel/Ids.js"
import type { ActorKind, Event, Head } from "./AuditEvent.js"

/** Which rows a reader asks for; every field narrows. */
export interface AuditQuery {
  /** One merchant's rows in one environment (and those of no environment), or every row (the operator). */
  readonly tenant?: { readonly merchantId: string; readonly environment: Environment } | undefined
  readonly actorKind?: ActorKind | undefined
  readonly actorId?: string | undefined
  readonly action?: string | undefined
  readonly resourceType?: string | undefined
  readonly resourceId?: string | undefined
  /** From this instant, inclusive. */
  readonly from?: DateTime.Utc | undefined
  /** Until this instant, exclusive. */
  readonly to?: DateTime.Utc | undefined
}

export interface AuditStoreService {
  /**
   * The chain's head, locked until the transaction ends, so its rows are appended one at a time; made
   * (with no rows) if the chain has none yet.
   */
  readonly lockHead: (chain: string) => Effect.Effect<Head | undefined, ServiceUnavailable>
  /** Appends `event` and makes it the chain's head, in the caller's transaction. */
  readonly append: (event: Event) => Effect.Effect<void, ServiceUnavailable>
  /** Newest first: up to `limit` rows matching `query`, after the row `startingAfter` (an id). */
  readonly list: (
    query: AuditQuery,
    page: { readonly limit: number; readonly startingAfter?: string | undefined }
  ) => Effect.Effect<ReadonlyArray<Event>, ServiceUnavailable>
  /** Every chain with its head, in chain order. */
  readonly heads: Effect.Effect<
    ReadonlyArray<{ readonly chain: string; readonly head: Head }>,
    ServiceUnavailable
  >
  /** Up to `limit` rows of `chain` after row `afterSeq`, in order: what `verify` reads, a page at a time. */
  readonly chainRows: (
    chain: string,
    afterSeq: number,
    limit: number
  ) => Effect.Effect<ReadonlyArray<Event>, ServiceUnavailable>
}

export class AuditStore extends Context.Tag("laari/Store/Audit")<AuditStore, AuditStoreService>() {}
