/**
 * Handlers of the webhook endpoint and event endpoints.
 */
import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Auth, Calendar, Crypto, Errors, Webhook } from "@laari/core"
import { DateTime, Duration, Effect } from "effect"
import { Api } from "../Api.js"
import { ServerConfigTag } from "../Config.js"
import { page } from "../Http/Fields.js"
import { idempotent } from "../Http/Idempotent.js"
import * as OptionalBody from "../Http/OptionalBody.js"
import { withScope } from "../Http/Security.js"
import { arrayText, makeEvents } from "../Sql/Events.js"
import * as Address from "./Address.js"
import { RotateSecret, WebhookEndpointsApi } from "./Api.js"
import * as Json from "./Json.js"
import * as Signing from "./Signing.js"
import { WebhookStore } from "./Sql.js"

const json = (text: string) => HttpServerResponse.text(text, { contentType: "application/json" })

export const WebhookEndpointsLive = HttpApiBuilder.group(Api, "webhookEndpoints", (handlers) =>
  Effect.gen(function* () {
    const store = yield* WebhookStore
    const crypto = yield* Crypto.Crypto
    const config = yield* ServerConfigTag
    const policy: Address.Policy = { allowPrivate: config.webhookAllowPrivate }

    const checkUrl = (url: string | undefined, principal: Auth.Principal) => {
      const refusal = url === undefined ? undefined : Address.refuseUrl(url, principal.environment, policy)
      return refusal === undefined ? Effect.void : Effect.fail(Errors.InvalidRequest.field("url", refusal))
    }

    const found = <A>(a: A | undefined) =>
      a === undefined ? Effect.fail(new Webhook.WebhookEndpointNotFound()) : Effect.succeed(a)

    return handlers
      .handle("create", ({ headers, payload }) =>
        withScope("webhooks:write", (principal) =>
          idempotent(
            WebhookEndpointsApi.endpoints.create,
            { principal, key: headers["idempotency-key"], payload },
            Effect.gen(function* () {
              yield* checkUrl(payload.url, principal)
              const secret = Signing.generateSecret()
              const created = yield* store.create(
                Auth.tenantOf(principal),
                {
                  id: yield* crypto.uuid,
                  url: payload.url,
                  enabledEvents: payload.enabled_events,
                  description: payload.description ?? null,
                  secret
                },
                yield* DateTime.now
              )
              return { ...Json.endpoint(created), secret }
            })
          )
        )
      )
      .handle("list", ({ urlParams }) =>
        withScope("webhooks:write", (principal) =>
          Effect.map(store.list(Auth.tenantOf(principal), page(urlParams)), (list) => list.map(Json.endpoint))
        )
      )
      .handle("get", ({ path }) =>
        withScope("webhooks:write", (principal) =>
          store.find(Auth.tenantOf(principal), path.id).pipe(Effect.flatMap(found), Effect.map(Json.endpoint))
        )
      )
      .handle("update", ({ headers, path, payload }) =>
        withScope("webhooks:write", (principal) =>
          idempotent(
            WebhookEndpointsApi.endpoints.update,
            { principal, key: headers["idempotency-key"], payload },
            Effect.gen(function* () {
              yield* checkUrl(payload.url, principal)
              const updated = yield* store.update(Auth.tenantOf(principal), path.id, {
                url: payload.url,
                enabledEvents: payload.enabled_events,
                description: payload.description,
                status: payload.status
              })
              return Json.endpoint(yield* found(updated))
            })
          )
        )
      )
      .handle("delete", ({ path }) =>
        withScope("webhooks:write", (principal) =>
          Effect.gen(function* () {
            const removed = yield* store.remove(Auth.tenantOf(principal), path.id, yield* DateTime.now)
            const endpoint = yield* found(removed)
            return { id: endpoint.id, deleted: true as const }
          })
        )
      )
      .handle("rotateSecret", ({ headers, path }) =>
        withScope("webhooks:write", (principal) =>
          Effect.flatMap(OptionalBody.read(RotateSecret), (body) =>
            idempotent(
              WebhookEndpointsApi.endpoints.rotateSecret,
              { principal, key: headers["idempotency-key"], payload: body },
              Effect.gen(function* () {
                const overlap =
                  body.expire_previous_after_seconds === undefined
                    ? Webhook.DefaultRotationOverlap
                    : Duration.seconds(body.expire_previous_after_seconds)
                const expires = DateTime.addDuration(yield* DateTime.now, overlap)
                const secret = Signing.generateSecret()
                yield* found(
                  (yield* store.rotate(Auth.tenantOf(principal), path.id, secret, expires)) || undefined
                )
                return { secret, previousSecretExpiresAt: Calendar.formatMaldives(expires) }
              })
            )
          )
        )
      )
      .handle("deliveries", ({ path, urlParams }) =>
        withScope("webhooks:write", (principal) =>
          Effect.gen(function* () {
            const endpoint = yield* found(yield* store.find(Auth.tenantOf(principal), path.id))
            const list = yield* store.deliveries(endpoint.id, {
              eventId: urlParams.event_id,
              status: urlParams.status,
              ...page(urlParams)
            })
            return list.map(Json.delivery)
          })
        )
      )
      .handle("resend", ({ headers, path, payload }) =>
        withScope("webhooks:write", (principal) =>
          idempotent(
            WebhookEndpointsApi.endpoints.resend,
            { principal, key: headers["idempotency-key"], payload },
            Effect.gen(function* () {
              const tenant = Auth.tenantOf(principal)
              const endpoint = yield* found(yield* store.find(tenant, path.id))
              if (!(yield* store.eventOf(tenant, payload.event_id))) return yield* new Webhook.EventNotFound()
              const attempt = yield* store.resend(
                endpoint,
                payload.event_id,
                yield* crypto.uuid,
                yield* DateTime.now
              )
              return Json.delivery(attempt)
            })
          )
        )
      )
  })
)

export const OpsWebhooksLive = HttpApiBuilder.group(Api, "opsWebhooks", (handlers) =>
  Effect.gen(function* () {
    const store = yield* WebhookStore
    return handlers
      .handle("endpoints", ({ path, urlParams }) =>
        Effect.map(store.list({ merchantId: path.id }, page(urlParams)), (list) =>
          list.map((e) => ({ ...Json.endpoint(e), environment: e.environment }))
        )
      )
      .handle("deliveries", ({ path, urlParams }) =>
        Effect.gen(function* () {
          const endpoint = yield* store.find({ merchantId: path.id }, path.endpoint)
          if (endpoint === undefined) return yield* new Webhook.WebhookEndpointNotFound()
          const list = yield* store.deliveries(endpoint.id, {
            eventId: urlParams.event_id,
            status: urlParams.status,
            ...page(urlParams)
          })
          return list.map(Json.delivery)
        })
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
