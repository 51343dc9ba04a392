/**
 * Handlers of the webhook endpoint and event endpoints.
 */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Auth, Calendar, Deliveries, EventLog, Reads, Webhook } from "@laari/core"
import { DateTime, Duration, Effect } from "effect"
import { page } from "../Http/Fields.js"
import * as Operation from "../Http/Operation.js"
import * as OptionalBody from "../Http/OptionalBody.js"
import { EventsApi, OpsWebhooksApi, RotateSecret, WebhookEndpointsApi } from "./Api.js"
import * as Json from "./Json.js"
import { Endpoints } from "./Endpoints.js"

const json = (text: string) => HttpServerResponse.text(text, { contentType: "application/json" })

export const WebhookEndpointsLive = Effect.map(
  Effect.all([Endpoints, Deliveries.Deliveries]),
  ([endpoints, deliveries]) =>
    Operation.handlers(
      WebhookEndpointsApi,
      (handlers) =>
        handlers
          .handle("create", ({ payload }) =>
            Effect.flatMap(Operation.principal, (principal) =>
              endpoints.create(principal, {
                url: payload.url,
                enabledEvents: payload.enabled_events,
                description: payload.description ?? null
              })
            ).pipe(Effect.map(({ endpoint, secret }) => ({ ...Json.endpoint(endpoint), secret })))
          )
          .handle("list", ({ urlParams }) =>
            Effect.flatMap(Operation.principal, (principal) =>
              endpoints.list(principal, page(urlParams))
            ).pipe(Effect.map((list) => list.map(Json.endpoint)))
          )
          .handle("get", ({ path }) =>
            Effect.flatMap(Operation.principal, (principal) => endpoints.get(principal, path.id)).pipe(
              Effect.map(Json.endpoint)
            )
          )
          .handle("update", ({ path, payload }) =>
            Effect.flatMap(Operation.principal, (principal) =>
              endpoints.update(principal, path.id, {
                url: payload.url,
                enabledEvents: payload.enabled_events,
                description: payload.description,
                status: payload.status
              })
            ).pipe(Effect.map(Json.endpoint))
          )
          .handle("delete", ({ path }) =>
            Effect.flatMap(Operation.principal, (principal) => endpoints.remove(principal, path.id)).pipe(
              Effect.map((e) => ({ id: e.id, deleted: true as const }))
            )
          )
          .handle("rotateSecret", ({ path }) =>
            Effect.all([Operation.principal, OptionalBody.read(RotateSecret)]).pipe(
              Effect.flatMap(([principal, body]) =>
                endpoints.rotate(
                  principal,
                  path.id,
                  body.expire_previous_after_seconds === undefined
                    ? undefined
                    : Duration.seconds(body.expire_previous_after_seconds)
                )
              ),
              Effect.map((r) => ({
                secret: r.secret,
                previousSecretExpiresAt: Calendar.formatMaldives(r.previousSecretExpiresAt)
              }))
            )
          )
          .handle("deliveries", ({ path, urlParams }) =>
            Operation.tenant.pipe(
              Effect.flatMap((tenant) =>
                deliveries.list(tenant, path.id, {
                  eventId: urlParams.event_id,
                  status: urlParams.status,
                  ...page(urlParams)
                })
              ),
              Effect.map((list) => list.map(Json.delivery))
            )
          )
          .handle("resend", ({ path, payload }) =>
            Effect.flatMap(Operation.principal, (principal) =>
              deliveries.resend(Auth.tenantOf(principal), path.id, payload.event_id)
            ).pipe(Effect.map(Json.delivery))
          ),
      // The responses that show a secret are kept without it (`Replay`).
      {
        conceal: {
          create: (principal) => endpoints.concealed(principal, (body) => body.id),
          rotateSecret: (principal, request) =>
            endpoints.concealed(principal, () => (request.path as { readonly id: string }).id)
        }
      }
    )
)

export const OpsWebhooksLive = Operation.handlers(OpsWebhooksApi, (handlers) =>
  Effect.gen(function* () {
    const endpoints = yield* Endpoints
    const deliveries = yield* Deliveries.Deliveries
    return handlers
      .handle("endpoints", ({ path, urlParams }) =>
        Effect.map(endpoints.ofMerchant(path.id, page(urlParams)), (list) =>
          list.map((e) => ({ ...Json.endpoint(e), environment: e.environment }))
        )
      )
      .handle("deliveries", ({ path, urlParams }) =>
        deliveries
          .list({ merchantId: path.id }, path.endpoint, {
            eventId: urlParams.event_id,
            status: urlParams.status,
            ...page(urlParams)
          })
          .pipe(Effect.map((list) => list.map(Json.delivery)))
      )
  })
)

export const EventsLive = Operation.handlers(EventsApi, (handlers) =>
  Effect.gen(function* () {
    const reads = yield* Reads.Reads
    return handlers
      .handle("list", ({ urlParams }) =>
        Effect.flatMap(Operation.principal, (principal) =>
          reads
            .events({
              merchantId: principal.merchantId,
              environment: principal.environment,
              type: urlParams.type,
              // `created` is whole seconds: after second n is from second n + 1.
              createdFrom:
                urlParams.created_after === undefined
                  ? undefined
                  : DateTime.unsafeMake((urlParams.created_after + 1) * 1000),
              ...page(urlParams)
            })
            .pipe(Effect.map((list) => json(EventLog.arrayText(list))))
        )
      )
      .handle("get", ({ path }) =>
        Effect.flatMap(Operation.principal, (principal) =>
          reads
            .event(Auth.tenantOf(principal), path.id)
            .pipe(
              Effect.flatMap((e) =>
                e === undefined ? Effect.fail(new Webhook.EventNotFound()) : Effect.succeed(json(e.text))
              )
            )
        )
      )
  })
)
