/**
 * What the webhook store reads and writes, in the service's terms and as rows: the delivery log's
 * attempts, the endpoints' sealed secrets, what a worker claims, and the bounds on claiming (`Lease`, `Caps`). The queries are in
 * `Sql.ts`.
 */
import type { Ids, Webhook, WebhookEndpoint } from "@laari/core"
import { type DateTime, Duration } from "effect"
import { fromDate, fromDateOrNull, int, intOrNull } from "../Sql/Repository.js"
import type { EndpointRow } from "../Sql/WebhookEndpoints.js"
import * as Secrets from "./Secrets.js"

export type { EndpointRow } from "../Sql/WebhookEndpoints.js"
/** Who owns what is read: a merchant in one environment, or (ops) a merchant in both. */
export type Owner = WebhookEndpoint.Owner

export type SealedSecrets = Pick<EndpointRow, "secret" | "previous_secret" | "previous_secret_expires_at">

/** The row's secrets, opened; a secret that does not open is a defect (a master key missing: `Secrets`). */
export const secretsFromRow = (ring: Secrets.Keyring, id: string, row: SealedSecrets): Webhook.Secrets => ({
  secret: Secrets.open(ring, id, row.secret),
  previousSecret: row.previous_secret === null ? null : Secrets.open(ring, id, row.previous_secret),
  previousSecretExpiresAt: fromDateOrNull(row.previous_secret_expires_at)
})

/** One entry of the delivery log. */
export interface Attempt {
  readonly id: string
  readonly endpointId: string
  readonly eventId: string
  readonly eventType: string
  readonly attempt: number
  readonly resend: boolean
  readonly status: Webhook.AttemptStatus
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

export interface AttemptRow {
  readonly id: string
  readonly endpoint_id: string
  readonly event_id: string
  readonly event_type: string
  readonly attempt: number
  readonly resend: boolean
  readonly status: Webhook.AttemptStatus
  readonly response_status: number | null
  readonly response_body: string | null
  readonly error: string | null
  readonly duration_ms: number | null
  readonly attempted_at: Date | null
  readonly next_retry_at: Date | null
  readonly due_at: Date
  readonly created_at: Date
}

export const attemptFromRow = (row: AttemptRow): Attempt => ({
  id: row.id,
  endpointId: row.endpoint_id,
  eventId: row.event_id,
  eventType: row.event_type,
  attempt: int(row.attempt),
  resend: row.resend,
  status: row.status,
  responseStatus: intOrNull(row.response_status),
  responseBody: row.response_body,
  error: row.error,
  durationMs: intOrNull(row.duration_ms),
  attemptedAt: fromDateOrNull(row.attempted_at),
  nextRetryAt: fromDateOrNull(row.next_retry_at),
  dueAt: fromDate(row.due_at),
  createdAt: fromDate(row.created_at)
})

/** A leased attempt with what sending it needs. */
export interface Claimed {
  readonly attempt: Attempt
  readonly merchantId: string
  readonly environment: Ids.Environment
  readonly url: string
  readonly secrets: Webhook.Secrets
  /** The envelope's stored text: the body, byte for byte. */
  readonly body: string
}

export interface DeliveryFilter {
  readonly eventId?: string | undefined
  readonly status?: Webhook.AttemptStatus | undefined
  readonly limit: number
  readonly offset: number
}

/**
 * How long a worker holds an attempt: twice the attempt's own bound. A worker that died loses its attempts
 * after this, and another makes them again (at least once; a late duplicate is what `webhook-id` is for).
 */
export const Lease = Duration.seconds(20)

/** Attempts in flight at once, over every process and host on the database (`Delivery.Limits`). */
export interface Caps {
  readonly perEndpoint: number
  /** For an endpoint whose attempts fail (a failing streak: `failing_since`). */
  readonly perFailingEndpoint: number
  /** For all the endpoints of a merchant in one environment. */
  readonly perMerchant: number
}
