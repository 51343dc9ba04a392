/**
 * Handlers of the webhook endpoint and event endpoints.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Auth, Calendar, Webhook } from "@laari/core"
import { DateTime, Duration, Effect } from "effect"
import { Api } from "../Api.js"
import { page } from "../Http/Fields.js"
import { idempotent } from "../Http/Idempotent.js"
import * as OptionalBody from "../Http/OptionalBody.js"
import { withScope } from "../Http/Security.js"
import { arrayText, makeEvents } from "../Sql/Events.js"
import { RotateSecret, WebhookEndpointsApi } from "./Api.js"
import * as Json from "./Json.js"
import { Endpoints } from "./Endpoints.js"
import { WebhookStore } from "./Sql.js"

const json = (text: string) => HttpServerResponse.text(text, { contentType: "application/json" })

export const WebhookEndpointsLive = HttpApiBuilder.group(Api, "webhookEndpoints", (handlers) =>
  Effect.gen(function* () {
    const endpoints = yield* Endpoints
    return handlers
      .handle("create", ({ headers, payload }) =>
        withScope("webhooks:write", (principal) =>
          idempotent(
            WebhookEndpointsApi.endpoints.create,
            { principal, key: headers["idempotency-key"], payload },
            endpoints
              .create(principal, {
                url: payload.url,
                enabledEvents: payload.enabled_events,
                description: payload.description ?? null
              })
              .pipe(Effect.map(({ endpoint, secret }) => ({ ...Json.endpoint(endpoint), secret }))),
            endpoints.concealed(principal, (body) => body.id)
          )
        )
      )
      .handle("list", ({ urlParams }) =>
        withScope("webhooks:write", (principal) =>
          Effect.map(endpoints.list(principal, page(urlParams)), (list) => list.map(Json.endpoint))
        )
      )
      .handle("get", ({ path }) =>
        withScope("webhooks:write", (principal) =>
          Effect.map(endpoints.get(principal, path.id), Json.endpoint)
        )
      )
      .handle("update", ({ headers, path, payload }) =>
        withScope("webhooks:write", (principal) =>
          idempotent(
            WebhookEndpointsApi.endpoints.update,
            { principal, key: headers["idempotency-key"], payload },
            endpoints
              .update(principal, path.id, {
                url: payload.url,
                enabledEvents: payload.enabled_events,
                description: payload.description,
                status: payload.status
              })
              .pipe(Effect.map(Json.endpoint))
          )
        )
      )
      .handle("delete", ({ path }) =>
        withScope("webhooks:write", (principal) =>
          Effect.map(endpoints.remove(principal, path.id), (e) => ({ id: e.id, deleted: true as const }))
        )
      )
      .handle("rotateSecret", ({ headers, path }) =>
        withScope("webhooks:write", (principal) =>
          Effect.flatMap(OptionalBody.read(RotateSecret), (body) =>
            idempotent(
              WebhookEndpointsApi.endpoints.rotateSecret,
              { principal, key: headers["idempotency-key"], payload: body },
              endpoints
                .rotate(
                  principal,
                  path.id,
                  body.expire_previous_after_seconds === undefined
                    ? undefined
                    : Duration.seconds(body.expire_previous_after_seconds)
                )
                .pipe(
                  Effect.map((r) => ({
                    secret: r.secret,
                    previousSecretExpiresAt: Calendar.formatMaldives(r.previousSecretExpiresAt)
                  }))
                ),
              endpoints.concealed(principal, () => path.id)
            )
          )
        )
      )
      .handle("deliveries", ({ path, urlParams }) =>
        withScope("webhooks:write", (principal) =>
          endpoints
            .deliveries(Auth.tenantOf(principal), path.id, {
              eventId: urlParams.event_id,
              status: urlParams.status,
              ...page(urlParams)
            })
            .pipe(Effect.map((list) => list.map(Json.delivery)))
        )
      )
      .handle("resend", ({ headers, path, payload }) =>
        withScope("webhooks:write", (principal) =>
          idempotent(
            WebhookEndpointsApi.endpoints.resend,
            { principal, key: headers["idempotency-key"], payload },
            Effect.map(endpoints.resend(principal, path.id, payload.event_id), Json.delivery)
          )
        )
      )
  })
)

export const OpsWebhooksLive = HttpApiBuilder.group(Api, "opsWebhooks", (handlers) =>
  Effect.gen(function* () {
    const store = yield* WebhookStore
    const endpoints = yield* Endpoints
    return handlers
      .handle("endpoints", ({ path, urlParams }) =>
        Effect.map(store.list({ merchantId: path.id }, page(urlParams)), (list) =>
          list.map((e) => ({ ...Json.endpoint(e), environment: e.environment }))
        )
      )
      .handle("deliveries", ({ path, urlParams }) =>
        endpoints
          .deliveries({ merchantId: path.id }, path.endpoint, {
            eventId: urlParams.event_id,
            status: urlParams.status,
            ...page(urlParams)
          })
          .pipe(Effect.map((list) => list.map(Json.delivery)))
      )
  })
)

export const EventsLive = HttpApiBuilder.group(Api, "events", (handlers) =>
  Effect.gen(function* () {
    const events = yield* makeEvents
    return handlers
      .handle("list", ({ urlParams }) =>
        withScope("webhooks:write", (principal) =>
          events
            .list({
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
            .pipe(Effect.map((list) => json(arrayText(list))))
        )
      )
      .handle("get", ({ path }) =>
        withScope("webhooks:write", (principal) =>
          events
            .find(principal.merchantId, principal.environment, path.id)
            .pipe(
              Effect.flatMap((e) =>
                e === undefined ? Effect.fail(new Webhook.EventNotFound()) : Effect.succeed(json(e.text))
              )
            )
        )
      )
  })
)
