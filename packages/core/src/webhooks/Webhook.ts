/**
 * Webhook endpoints and their deliveries: the model, the field rules, the
 * retry schedule, the decisions taken after each attempt and the Standard Webhooks signature's format.
 * Sending and storage are ports (`DeliveriesStore`, `WebhookEndpoint`); what is decided here is pure.
 */
import { DateTime, Duration, Encoding, Schema } from "effect"
import type { Environment, MerchantId } from "../kernel/Ids.js"
import { Type, Types } from "../kernel/EventType.js"

export const EndpointStatus = Schema.Literal("ENABLED", "DISABLED").annotations({
  description: "`ENABLED`: events are delivered to it; `DISABLED`: nothing is sent to it"
})
export type EndpointStatus = typeof EndpointStatus.Type

/** One entry of the delivery log per attempt: `PENDING` until it has been made. */
export const AttemptStatus = Schema.Literal("PENDING", "SUCCEEDED", "FAILED").annotations({
  description:
    "`PENDING`: not made yet; `SUCCEEDED`: the endpoint answered 2xx; `FAILED`: any other answer, or none"
})
export type AttemptStatus = typeof AttemptStatus.Type

/** Every event type, as one entry of `enabled_events`. */
export const Wildcard = "*"

const enabledEventsDescription = `Event types to receive, or \`["*"]\` for all of them: ${Types.map((t) => `\`${t}\``).join(", ")}`

/** `enabled_events`: event types of `Types` without repeats, or `["*"]` for all of them. */
export const EnabledEvents = Schema.Array(Schema.Union(Type, Schema.Literal(Wildcard)))
  .pipe(
    Schema.minItems(1, { message: () => 'must list at least one event type, or "*"' }),
    Schema.maxItems(Types.length, { message: () => `must list at most ${Types.length} event types` }),
    Schema.filter((events) => new Set(events).size === events.length || "must not repeat an event type"),
    Schema.filter(
      (events) => !events.includes(Wildcard) || events.length === 1 || '"*" must be the only entry'
    )
  )
  .annotations({
    identifier: "EnabledEvents",
    description: enabledEventsDescription,
    // The last two filters have no JSON Schema of their own, so the document would show the `maxItems`
    // filter's stock description in place of this one.
    jsonSchema: { description: enabledEventsDescription }
  })
export type EnabledEvents = typeof EnabledEvents.Type

/** Whether an endpoint listening for `enabled` receives events of `type`. */
export const subscribes = (enabled: ReadonlyArray<string>, type: Type): boolean =>
  enabled.includes(Wildcard) || enabled.includes(type)

export interface Endpoint {
  readonly id: string
  readonly merchantId: MerchantId
  readonly environment: Environment
  readonly url: string
  readonly enabledEvents: ReadonlyArray<string>
  readonly description: string | null
  readonly status: EndpointStatus
  /** Why a `DISABLED` endpoint is disabled: by the merchant, or by the service after failing. */
  readonly statusReason: string | null
  /** Since when every attempt has failed; `null` after a success. */
  readonly failingSince: DateTime.Utc | null
  readonly createdAt: DateTime.Utc
}

/** The secrets an endpoint signs with: the current one, and the one it replaced until it expires. */
export interface Secrets {
  readonly secret: string
  readonly previousSecret: string | null
  readonly previousSecretExpiresAt: DateTime.Utc | null
}

/** The secrets to sign an attempt at `now` with: the current first, then a previous one not yet expired. */
export const signingSecrets = (s: Secrets, now: DateTime.Utc): ReadonlyArray<string> =>
  s.previousSecret !== null &&
  s.previousSecretExpiresAt !== null &&
  DateTime.lessThan(now, s.previousSecretExpiresAt)
    ? [s.secret, s.previousSecret]
    : [s.secret]

/** How long the previous secret keeps signing after a rotation, unless the merchant says otherwise. */
export const DefaultRotationOverlap = Duration.hours(24)
/** The longest overlap a rotation may ask for. */
export const MaxRotationOverlapSeconds = 7 * 24 * 60 * 60

// ---------------------------------------------------------------------------------------------------------
// Attempts.

/** A `2xx` within this is success; anything slower is a failed attempt. */
export const AttemptTimeout = Duration.seconds(10)
/** How much of a response body the log keeps. */
export const LoggedBodyBytes = 1024

/**
 * The wait before each retry, after the attempt it follows: the first attempt runs at once, then these
 * nine, about three days in all (75 h 35 min 5 s). The schedule lives here and nowhere else.
 */
export const RetryDelays: ReadonlyArray<Duration.Duration> = [
  Duration.seconds(5),
  Duration.minutes(5),
  Duration.minutes(30),
  Duration.hours(2),
  Duration.hours(5),
  Duration.hours(10),
  Duration.hours(14),
  Duration.hours(20),
  Duration.hours(24)
]

/** Attempts of one automatic delivery, the first included. */
export const MaxAttempts = RetryDelays.length + 1

/**
 * When the attempt after `attempt` (1-based) runs if this one, made `at`, fails; `null` after the last
 * one, and for a resend, which the merchant asked for once.
 */
export const nextRetryAt = (attempt: number, at: DateTime.Utc, resend: boolean): DateTime.Utc | null => {
  if (resend || attempt < 1 || attempt >= MaxAttempts) return null
  return DateTime.addDuration(at, RetryDelays[attempt - 1]!)
}

/** An endpoint whose every attempt has failed for this long is disabled. */
export const DisableAfter = Duration.days(3)

export interface Outcome {
  readonly succeeded: boolean
  /** What the log says about a failure: `HTTP 500`, `timed out after 10 s`, `connection refused`. */
  readonly summary: string
}

/** What an attempt's outcome does to its endpoint. */
export interface EndpointChange {
  readonly failingSince: DateTime.Utc | null
  /** Set when the endpoint is to be disabled now, with the reason it shows. */
  readonly disable: string | null
}

/**
 * A success clears the failing streak; a failure starts one, or continues it and disables the endpoint
 * once it has lasted `DisableAfter`.
 */
export const afterAttempt = (
  failingSince: DateTime.Utc | null,
  outcome: Outcome,
  at: DateTime.Utc
): EndpointChange => {
  if (outcome.succeeded) return { failingSince: null, disable: null }
  const since = failingSince ?? at
  const expired = DateTime.greaterThanOrEqualTo(at, DateTime.addDuration(since, DisableAfter))
  return {
    failingSince: since,
    disable: expired
      ? `Disabled by laari: every delivery failed for 3 days (since ${DateTime.formatIso(since)}); last: ${outcome.summary}`
      : null
  }
}

/** One entry of the delivery log. */
export interface Attempt {
  readonly id: string
  readonly endpointId: string
  readonly eventId: string
  readonly eventType: string
  /** 1-based, counting the resends with the automatic attempts. */
  readonly attempt: number
  /** Asked for by the merchant: never retried, and no sign of the endpoint's health. */
  readonly resend: boolean
  readonly status: AttemptStatus
  readonly responseStatus: number | null
  readonly responseBody: string | null
  readonly error: string | null
  readonly durationMs: number | null
  readonly attemptedAt: DateTime.Utc | null
  readonly nextRetryAt: DateTime.Utc | null
  /** When a `PENDING` attempt is to be made. */
  readonly dueAt: DateTime.Utc
  readonly createdAt: DateTime.Utc
}

/** What an attempt got back, as the log keeps it. */
export interface Response {
  /** The HTTP status, or `null` when none arrived. */
  readonly status: number | null
  /** The first `LoggedBodyBytes` of the body, as text. */
  readonly body: string | null
  /** Why no `2xx` arrived: `HTTP 500`, `timed out after 10 s`, `connection refused`... */
  readonly error: string | null
  readonly durationMs: number
}

/** A `2xx` is a delivery; anything else, or no answer, is a failed attempt. */
// Stryker disable next-line ConditionalExpression: `null >= 200` is false, so the `null` check decides nothing the range does not
export const succeeded = (r: Response): boolean => r.status !== null && r.status >= 200 && r.status < 300

/**
 * How an attempt ends, as counted: `delivered`; `failed`, another attempt follows; `gave_up`, none
 * follows (the last automatic attempt, or a resend).
 */
export const Results = ["delivered", "failed", "gave_up"] as const
export type Result = (typeof Results)[number]

/** What follows from one attempt's response: the outcome the endpoint sees, the next attempt, the count. */
export interface Verdict extends Outcome {
  /** When the next attempt runs; `null` when none follows. */
  readonly next: DateTime.Utc | null
  readonly result: Result
}

/** The verdict on `attempt`, made `at`, that got `response`. */
export const verdict = (
  attempt: Pick<Attempt, "attempt" | "resend">,
  response: Response,
  at: DateTime.Utc
): Verdict => {
  const ok = succeeded(response)
  const next = ok ? null : nextRetryAt(attempt.attempt, at, attempt.resend)
  return {
    succeeded: ok,
    summary: response.error ?? `HTTP ${response.status}`,
    next,
    result: ok ? "delivered" : next === null ? "gave_up" : "failed"
  }
}

// ---------------------------------------------------------------------------------------------------------
// Signatures (Standard Webhooks): `v1,` + base64 HMAC-SHA256 of `id.timestamp.body`, keyed by the
// secret's decoded bytes, one per signing secret in `webhook-signature`, the current one first.

/** What is signed. */
export const signedContent = (id: string, timestamp: number, body: string): string =>
  `${id}.${timestamp}.${body}`

/** One signature, from its HMAC-SHA256 digest. */
export const signature = (digest: Uint8Array): string => `v1,${Encoding.encodeBase64(digest)}`

/** The three headers of one attempt, from its signatures (`signature`), the current secret's first. */
export const headers = (
  id: string,
  timestamp: number,
  signatures: ReadonlyArray<string>
): Record<string, string> => ({
  "webhook-id": id,
  "webhook-timestamp": String(timestamp),
  "webhook-signature": signatures.join(" ")
})

export const DisabledByMerchant = "Disabled by the merchant"

/**
 * Endpoints a merchant may have in one environment, deleted ones not counted. Every endpoint multiplies
 * each event into one more attempt, so the bound keeps one merchant's share of the delivery work bounded.
 */
export const MaxEndpoints = 16

// ---------------------------------------------------------------------------------------------------------
// Errors.

export class WebhookEndpointNotFound extends Schema.TaggedError<WebhookEndpointNotFound>()(
  "WebhookEndpointNotFound",
  { message: Schema.optionalWith(Schema.String, { default: () => "Webhook endpoint not found" }) }
) {}

export class EventNotFound extends Schema.TaggedError<EventNotFound>()("EventNotFound", {
  message: Schema.optionalWith(Schema.String, { default: () => "Event not found" })
}) {}

export class EndpointLimitReached extends Schema.TaggedError<EndpointLimitReached>()(
  "WebhookEndpointLimitReached",
  {
    message: Schema.optionalWith(Schema.String, {
      default: () =>
        `A merchant can have at most ${MaxEndpoints} webhook endpoints in each environment; delete one before registering another`
    })
  }
) {}
