/**
 * The delivery log's rows and how they read as core's `Webhook.Attempt`. The queries are in `Sql.ts`.
 */
import type { Webhook } from "@laari/core"
import { fromDate, fromDateOrNull, int, intOrNull } from "../Sql/Repository.js"

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

export const attemptFromRow = (row: AttemptRow): Webhook.Attempt => ({
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
