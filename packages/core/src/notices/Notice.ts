/**
 * The pure rules of delivering a customer notice to the wallet provider's notification service: the
 * retry schedule, how long a notice is worth delivering, and what an attempt leads to.
 * A one-time code is never sent after it expired. What the service receives is `Document`. The outbox is
 * `NoticeOutbox`, the sending `Notices`.
 */
import { DateTime, Duration } from "effect"
import type { Kind, Notification } from "../kernel/Notifications.js"
import { type Response, succeeded } from "../webhooks/Webhook.js"

// ---------------------------------------------------------------------------------------------------------
// The document

/**
 * The JSON document POSTed (snake_case, Unix seconds, keys in this order). `customer.phone` is read when
 * the attempt is made (the number to reach now); everything else is fixed when the notice is made.
 */
export interface Document {
  /** The notice's id; also the `webhook-id` of every attempt, so a receiver drops repeats by it. */
  readonly id: string
  readonly type: Kind
  readonly created: number
  /** When the notice stops being of use (a one-time code's expiry); `null` for the others. */
  readonly expires: number | null
  readonly livemode: boolean
  readonly customer: { readonly id: string; readonly phone: string | null }
  readonly title: string
  readonly body: string
  /** Details by type: amounts (laari), ids; `data.code` is the six-digit code of a `one_time_code`. */
  readonly data: { readonly [key: string]: unknown }
}

const seconds = (t: DateTime.Utc) => Math.floor(DateTime.toEpochMillis(t) / 1000)

/** The document of `n`, its phone still `null`: the text stored in the outbox. */
export const stored = (n: Notification): string =>
  JSON.stringify({
    id: n.id,
    type: n.kind,
    created: seconds(n.createdAt),
    expires: n.expiresAt === undefined ? null : seconds(n.expiresAt),
    livemode: n.environment === "live",
    customer: { id: n.customerId, phone: null },
    title: n.title,
    body: n.body,
    data: n.data
  } satisfies Document)

/** The text sent: the stored document with the customer's phone. Same phone, same bytes. */
export const withPhone = (text: string, phone: string | null): string => {
  const document = JSON.parse(text) as { customer: { phone: string | null } }
  document.customer.phone = phone
  return JSON.stringify(document)
}

// ---------------------------------------------------------------------------------------------------------
// Delivery

/** A notice not delivered within this of being made is given up (`FAILED`); the record stays. */
export const DeliveryWindow = Duration.hours(24)

/**
 * The wait before each retry after the attempt it follows: quick at first (a code lives five minutes),
 * then hourly until `DeliveryWindow` is over. The first attempt runs as soon as the notice commits.
 */
export const RetryDelays: ReadonlyArray<Duration.Duration> = [
  Duration.seconds(5),
  Duration.seconds(15),
  Duration.seconds(30),
  Duration.minutes(1),
  Duration.minutes(2),
  Duration.minutes(5),
  Duration.minutes(10),
  Duration.minutes(30),
  Duration.hours(1)
]

/** The wait after attempt `attempt` (1-based): the last delay repeats. */
export const delayAfter = (attempt: number): Duration.Duration =>
  RetryDelays[Math.min(Math.max(attempt, 1), RetryDelays.length) - 1]!

/** When a notice made at `createdAt` is given up. */
export const giveUpAt = (createdAt: DateTime.Utc): DateTime.Utc =>
  DateTime.addDuration(createdAt, DeliveryWindow)

/** When a notice stops being worth sending: its expiry (a one-time code's), and `giveUpAt`. */
export interface Limits {
  readonly expiresAt: DateTime.Utc | null
  readonly giveUpAt: DateTime.Utc
}

export type AfterFailure =
  | { readonly _tag: "Retry"; readonly at: DateTime.Utc }
  /** The next attempt would come after the notice expired: it is dropped, never sent late. */
  | { readonly _tag: "Expired" }
  /** The next attempt would come after `giveUpAt`. */
  | { readonly _tag: "GaveUp" }

/** What follows attempt `attempt` (1-based), made `at`, failing. */
export const afterFailure = (attempt: number, at: DateTime.Utc, limits: Limits): AfterFailure => {
  const next = DateTime.addDuration(at, delayAfter(attempt))
  if (limits.expiresAt !== null && DateTime.greaterThanOrEqualTo(next, limits.expiresAt))
    return { _tag: "Expired" }
  if (DateTime.greaterThan(next, limits.giveUpAt)) return { _tag: "GaveUp" }
  return { _tag: "Retry", at: next }
}

/** Whether a notice may still be sent `at`: never once it expired (a code is never sent late). */
export const sendable = (limits: Limits, at: DateTime.Utc): boolean =>
  limits.expiresAt === null || DateTime.lessThan(at, limits.expiresAt)

/**
 * How an attempt is counted: `delivered`; `failed`, retried later; `expired`, a code whose next try would
 * come too late, dropped (or one that expired before it was sent); `gave_up`, a day of failures.
 */
export const Results = ["delivered", "failed", "expired", "gave_up"] as const
export type Result = (typeof Results)[number]

/** What an attempt comes to: its count, and the next attempt's time when one follows. */
export interface Verdict {
  readonly result: Result
  readonly next: DateTime.Utc | null
}

/** The verdict on attempt `attempt` (1-based) of a notice with `limits`, made `at`, that got `response`. */
export const verdict = (
  claimed: Limits & { readonly attempt: number },
  response: Response,
  at: DateTime.Utc
): Verdict => {
  if (succeeded(response)) return { result: "delivered", next: null }
  const after = afterFailure(claimed.attempt, at, claimed)
  switch (after._tag) {
    case "Retry":
      return { result: "failed", next: after.at }
    case "Expired":
      return { result: "expired", next: null }
    case "GaveUp":
      return { result: "gave_up", next: null }
  }
}
