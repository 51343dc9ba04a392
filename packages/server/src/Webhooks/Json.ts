/**
 * Read shapes of webhook endpoints and delivery attempts: camelCase, Maldives time.
 */
import { Calendar, type Webhook } from "@laari/core"
import type { WebhookDeliveryRead, WebhookEndpointRead } from "./Api.js"
import { timeOrNull } from "../Http/Fields.js"

export const endpoint = (e: Webhook.Endpoint): typeof WebhookEndpointRead.Type => ({
  id: e.id,
  url: e.url,
  enabledEvents: e.enabledEvents,
  description: e.description,
  status: e.status,
  statusReason: e.statusReason,
  createdAt: Calendar.formatMaldives(e.createdAt)
})

export const delivery = (a: Webhook.Attempt): typeof WebhookDeliveryRead.Type => ({
  id: a.id,
  endpointId: a.endpointId,
  eventId: a.eventId,
  eventType: a.eventType,
  attempt: a.attempt,
  status: a.status,
  responseStatus: a.responseStatus,
  responseBody: a.responseBody,
  error: a.error,
  durationMs: a.durationMs,
  attemptedAt: timeOrNull(a.attemptedAt),
  scheduledAt: Calendar.formatMaldives(a.dueAt),
  nextRetryAt: timeOrNull(a.nextRetryAt),
  resend: a.resend
})
