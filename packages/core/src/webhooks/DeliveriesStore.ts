/**
 * The delivery log's store of attempts (the host's `Sender` makes each one over HTTP). The outbox queues an event's first attempt to each endpoint subscribed to
 * it, in the event's own transaction (`Webhook.subscribes`, due at the event's time), and deleting an
 * endpoint fails what it still had to send (`WebhookEndpointsStore.remove`); here attempts are read,
 * resent, leased to workers and completed.
 */
import { Context, type DateTime, Duration, type Effect } from "effect"
import type { ServiceUnavailable } from "../kernel/Errors.js"
import type { Environment } from "../kernel/Ids.js"
import type { Attempt, AttemptStatus, Endpoint, Response, Secrets, Verdict } from "./Webhook.js"

/** A leased attempt with what sending it needs. */
export interface Claimed {
  readonly attempt: Attempt
  readonly merchantId: string
  readonly environment: Environment
  readonly url: string
  /** The endpoint's secrets, sealed as stored (`SecretSealer` opens them). */
  readonly secrets: Secrets
  /** The envelope's stored text: the body, byte for byte. */
  readonly body: string
}

/** Which attempts of an endpoint's log to read. */
export interface Filter {
  readonly eventId?: string | undefined
  readonly status?: AttemptStatus | undefined
  readonly limit: number
  readonly offset: number
}

/**
 * How long a worker holds an attempt: twice the attempt's own bound (`Webhook.AttemptTimeout`). A worker
 * that died loses its attempts after this, and another makes them again (at least once; a late duplicate
 * is what `webhook-id` is for).
 */
export const Lease = Duration.seconds(20)

/** Attempts in flight at once, over every worker of the store (every process and host on a database). */
export interface Caps {
  readonly perEndpoint: number
  /** For an endpoint whose attempts fail (a failing streak: `Endpoint.failingSince`). */
  readonly perFailingEndpoint: number
  /** For all the endpoints of a merchant in one environment. */
  readonly perMerchant: number
}

/** What an attempt came to, to record. */
export interface Completion {
  readonly response: Response
  /** `Webhook.verdict` on the response. */
  readonly verdict: Verdict
  readonly at: DateTime.Utc
  /** The id of the next attempt, when the verdict has one. */
  readonly nextId: string
}

export interface DeliveriesStoreService {
  /** The endpoint's log, newest first (in the order queued). */
  readonly list: (
    endpointId: string,
    filter: Filter
  ) => Effect.Effect<ReadonlyArray<Attempt>, ServiceUnavailable>
  /**
   * Queues one more attempt of `eventId` to the endpoint, due `now`, numbered after the event's last
   * attempt there, without automatic retries (`resend`); `undefined` when the event is not one of the
   * endpoint's merchant and environment. Wakes the workers.
   */
  readonly resend: (
    endpoint: Endpoint,
    eventId: string,
    id: string,
    now: DateTime.Utc
  ) => Effect.Effect<Attempt | undefined, ServiceUnavailable>
  /**
   * Leases (for `Lease`) up to `limit` attempts due at `now` of enabled endpoints, earliest due first,
   * skipping attempts another worker holds, endpoints in `busy` (those the caller already has enough in
   * flight for), and whatever would take past its cap what is in flight (leased and not run out): an
   * endpoint's `caps.perEndpoint`, or `caps.perFailingEndpoint` while it has a failing streak (a slow or
   * dead endpoint then holds one slot, not a merchant's share), and a merchant's environment's
   * `caps.perMerchant`. The caps hold over every worker of the store at once, whichever leased what; a
   * dead worker's leases count until they run out.
   */
  readonly claim: (
    now: DateTime.Utc,
    limit: number,
    busy: ReadonlyArray<string>,
    caps: Caps
  ) => Effect.Effect<ReadonlyArray<Claimed>, ServiceUnavailable>
  /**
   * Records an attempt's outcome in one transaction: the log entry (its response, and its next attempt's
   * time), the next attempt (`completion.nextId`, due `verdict.next`) when there is one, and, unless it
   * was a resend, what the outcome does to the endpoint (`Webhook.afterAttempt`: its failing streak,
   * disabling it). An attempt already recorded (by a worker whose lease ran out) is left as it is.
   */
  readonly complete: (claimed: Claimed, completion: Completion) => Effect.Effect<void, ServiceUnavailable>
  /** When the next pending attempt of an enabled endpoint becomes due (its lease included). */
  readonly nextDueAt: Effect.Effect<DateTime.Utc | undefined, ServiceUnavailable>
}
export class DeliveriesStore extends Context.Tag("laari/Store/WebhookDeliveries")<
  DeliveriesStore,
  DeliveriesStoreService
>() {}
