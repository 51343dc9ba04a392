/**
 * The port of the notice outbox: the `Notifications` port of a host whose notices
 * leave it queues each one here, in the transaction that made it; here due notices are leased to
 * workers and completed with what their attempt came to (`Notice.verdict`).
 */
import { Context, type DateTime, type Effect } from "effect"
import type { ServiceUnavailable } from "../kernel/Errors.js"
import type { Kind, Notification } from "../kernel/Notifications.js"
import type { Response } from "../webhooks/Webhook.js"
import type { Limits, Verdict } from "./Notice.js"

/** A leased notice, with what sending it needs. */
export interface Claimed extends Limits {
  readonly id: string
  readonly kind: Kind
  /** This attempt's number, 1-based. */
  readonly attempt: number
  /** The exact text to send: the stored document with the customer's phone as it is now. */
  readonly body: string
}

/** What an attempt came to, to record. */
export interface Completion {
  readonly response: Response
  /** `Notice.verdict` on the response. */
  readonly verdict: Verdict
  readonly at: DateTime.Utc
}

export interface NoticeOutboxService {
  /** Queues `notice` in the caller's transaction, due at once, and wakes the workers on commit. */
  readonly queue: (notice: Notification) => Effect.Effect<void, ServiceUnavailable>
  /**
   * Records as `EXPIRED` the pending notices whose expiry is past at `now` (not those a worker holds),
   * so none is ever sent late; how many.
   */
  readonly expire: (now: DateTime.Utc) => Effect.Effect<number, ServiceUnavailable>
  /**
   * Leases (for `DeliveriesStore.Lease`) up to `limit` notices due at `now` and not expired, earliest due
   * first, skipping those another worker holds; each lease counts one attempt.
   */
  readonly claim: (
    now: DateTime.Utc,
    limit: number
  ) => Effect.Effect<ReadonlyArray<Claimed>, ServiceUnavailable>
  /**
   * Records an attempt's outcome: delivered, due again at `verdict.next`, or over (expired, given up); a
   * one-time code's document goes once it is over. An attempt no longer leased to its worker (its lease
   * ran out and another took the notice) changes nothing.
   */
  readonly complete: (claimed: Claimed, completion: Completion) => Effect.Effect<void, ServiceUnavailable>
  /** When the next pending notice becomes due (its lease included). */
  readonly nextDueAt: Effect.Effect<DateTime.Utc | undefined, ServiceUnavailable>
}
export class NoticeOutbox extends Context.Tag("laari/Store/NoticeOutbox")<
  NoticeOutbox,
  NoticeOutboxService
>() {}
