/**
 * The HTTP answers of the webhook endpoints' and events' errors. An endpoint lists the ones it can fail
 * with (`addError`); an error is answered by the schemas its endpoint lists.
 */
import { Webhook } from "@laari/core"
import * as Problem from "../Http/Problem.js"

export const WebhookEndpointNotFound = Problem.plain(
  Webhook.WebhookEndpointNotFound,
  "WebhookEndpointNotFound",
  404,
  "Webhook endpoint not found",
  "WEBHOOK_ENDPOINT_NOT_FOUND"
)
export const EventNotFound = Problem.plain(
  Webhook.EventNotFound,
  "EventNotFound",
  404,
  "Event not found",
  "EVENT_NOT_FOUND"
)
export const WebhookEndpointLimitReached = Problem.coded(
  Webhook.EndpointLimitReached,
  () => "WEBHOOK_ENDPOINT_LIMIT_REACHED",
  "WebhookEndpointLimitReached",
  409,
  `The merchant already has ${Webhook.MaxEndpoints} webhook endpoints in this environment; delete one first`,
  ["WEBHOOK_ENDPOINT_LIMIT_REACHED"]
)
