/**
 * The event log port: the events the outbox recorded, read back as delivered (`GET /events`, the
 * GraphQL `events`, the dashboard, the operator API). The outbox (`Events.Outbox`) writes; this reads.
 * An event is kept as its envelope's exact text, the bytes that were signed and sent.
 */
import { Context, type DateTime, type Effect } from "effect"
import type { ServiceUnavailable } from "./Errors.js"
import type { Envelope, Event } from "./Outbox.js"
import type { Environment, MerchantId, Tenant } from "./Ids.js"

/** A recorded event: its owner and its envelope's exact text (what is signed and sent). */
export interface Stored {
  readonly id: string
  readonly merchantId: MerchantId
  readonly environment: Environment
  readonly createdAt: DateTime.Utc
  readonly subject: string
  readonly text: string
}

/** Which events, newest first; every field unset is every event (the operator's view). */
export interface Filter {
  readonly merchantId?: string | undefined
  readonly environment?: Environment | undefined
  readonly type?: string | undefined
  /** Only events created at or after this instant. */
  readonly createdFrom?: DateTime.Utc | undefined
  readonly limit: number
  readonly offset?: number | undefined
}

export interface EventLogService {
  /** Newest first: the reverse of the order they were recorded in. A merchant id that is no UUID has none. */
  readonly list: (filter: Filter) => Effect.Effect<ReadonlyArray<Stored>, ServiceUnavailable>
  /** One of the tenant's events by id; another tenant's is none. */
  readonly find: (tenant: Tenant, id: string) => Effect.Effect<Stored | undefined, ServiceUnavailable>
  /**
   * The tenant's `FailureTypes` events about one subject (`Outbox.subjectOf`: a mandate's refused charges,
   * a subscription's missed renewal attempts), newest first, at most `limit`.
   */
  readonly failuresAbout: (
    tenant: Tenant,
    subject: string,
    limit: number
  ) => Effect.Effect<ReadonlyArray<Stored>, ServiceUnavailable>
}
/** The events that tell of something refused or missed: what `failuresAbout` reads. */
export const FailureTypes = ["mandate.charge.failed", "invoice.payment_failed"] as const

export class EventLog extends Context.Tag("laari/EventLog")<EventLog, EventLogService>() {}

/** The stored event with its envelope parsed, for readers that want the values. */
export const parsed = (e: Stored): Event => ({
  merchantId: e.merchantId,
  environment: e.environment,
  createdAt: e.createdAt,
  subject: e.subject,
  envelope: JSON.parse(e.text) as Envelope
})

/** A JSON array of stored envelopes, each exactly as stored. */
export const arrayText = (events: ReadonlyArray<Stored>): string => `[${events.map((e) => e.text).join(",")}]`
