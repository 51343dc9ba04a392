/**
 * The dashboard's webhook endpoints: list and create (the secret shown once), edit, rotate, delete, and
 * each endpoint's delivery log with "Resend".
 */
import type * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Auth, Deliveries, Errors, Webhook } from "@laari/core"
import { type Context, Effect, Schema } from "effect"
import { Endpoints } from "../Webhooks/Endpoints.js"
import { heads, type Kit, Page } from "./DashboardKit.js"
import { d } from "./DashboardText.js"
import * as V from "./DashboardViews.js"
import { problemOf, redirect } from "./Routing.js"
import { form } from "./Request.js"

export const routes = (router: Context.Tag.Service<typeof HttpApiBuilder.Router>, kit: Kit) =>
  Effect.gen(function* () {
    const endpoints = yield* Endpoints
    const deliveries = yield* Deliveries.Deliveries
    const { root, frame, at, section, idParam } = kit
    const tenant = Auth.tenantOf

    const webhooksPage = (
      messages: { readonly notice?: string; readonly error?: string; readonly secret?: string },
      status = 200
    ) =>
      section(
        "webhooks",
        "webhookEndpoints",
        (v, p) =>
          Effect.map(endpoints.list(p, Page), (list) => (
            <>
              {messages.secret === undefined ? null : <V.SecretOnce lang={v.lang} secret={messages.secret} />}
              <V.Table
                label={d(v.lang, "webhookEndpoints")}
                head={heads(v.lang, ["url", "events", "status", "why"])}
                rows={V.endpointRows(v.lang, root, list)}
                empty={d(v.lang, "noEndpoints")}
              />
              <h2>{d(v.lang, "addEndpoint")}</h2>
              <V.EndpointForm
                frame={frame(v)}
                action={`${root}/webhooks`}
                submit={d(v.lang, "addEndpointButton")}
              />
            </>
          )),
        () => messages,
        status
      )

    const endpointPage = (
      id: string,
      messages: { readonly notice?: string; readonly error?: string; readonly secret?: string },
      status = 200
    ) =>
      section(
        "webhooks",
        "webhookEndpoint",
        (v, p) =>
          Effect.gen(function* () {
            const found = yield* Effect.either(endpoints.get(p, id))
            if (found._tag === "Left") return <p class="error">{problemOf(found.left).text}</p>
            const e = found.right
            const log = yield* deliveries.list(tenant(p), e.id, { limit: 50, offset: 0 })
            return (
              <>
                {messages.secret === undefined ? null : (
                  <V.SecretOnce lang={v.lang} secret={messages.secret} />
                )}
                <V.EndpointForm
                  frame={frame(v)}
                  action={`${root}/webhooks/${e.id}`}
                  endpoint={e}
                  submit={d(v.lang, "save")}
                />
                <div class="actions">
                  <form method="post" action={`${root}/webhooks/${e.id}/rotate`} class="inline">
                    <input type="hidden" name="_csrf" value={v.csrf} />
                    <button type="submit" class="secondary">
                      {d(v.lang, "rotate")}
                    </button>
                  </form>
                  <form method="post" action={`${root}/webhooks/${e.id}/delete`} class="inline">
                    <input type="hidden" name="_csrf" value={v.csrf} />
                    <button type="submit" class="secondary">
                      {d(v.lang, "remove")}
                    </button>
                  </form>
                </div>
                <h2>{d(v.lang, "deliveries")}</h2>
                <V.Table
                  label={d(v.lang, "deliveries")}
                  head={heads(v.lang, ["when", "event", "attempt", "status", "response", "took"])}
                  rows={V.deliveryRows(frame(v), e.id, log)}
                  empty={d(v.lang, "noDeliveries")}
                />
              </>
            )
          }),
        () => messages,
        status
      )

    /** The events and fields of an endpoint form. */
    const endpointFields = Effect.map(form, (field) => {
      const ticked = field.all("events")
      return { field, chosen: ticked.includes("*") || ticked.length === 0 ? ["*"] : ticked }
    })

    /** The ticked events, checked by the API's own rule. */
    const enabledEvents = (chosen: ReadonlyArray<string>) =>
      Schema.decodeUnknown(Webhook.EnabledEvents)(chosen).pipe(
        Effect.mapError(() =>
          Errors.InvalidRequest.field("enabled_events", "must be event types laari sends, or all")
        )
      )

    yield* at(router, "webhooks", webhooksPage({}))

    yield* at(router, "webhookCreate", (v, p, signed) =>
      Effect.gen(function* () {
        const { field, chosen } = yield* endpointFields
        const created = yield* Effect.either(
          Effect.flatMap(enabledEvents(chosen), (events) =>
            endpoints.create(p, {
              url: (field("url") ?? "").trim(),
              enabledEvents: events,
              description: (field("description") ?? "").trim() || null
            })
          )
        )
        if (created._tag === "Left")
          return yield* webhooksPage({ error: problemOf(created.left).text }, 422)(v, p, signed)
        return yield* endpointPage(created.right.endpoint.id, {
          notice: d(v.lang, "added"),
          secret: created.right.secret
        })(v, p, signed)
      })
    )

    yield* at(router, "webhook", (v, p, signed) =>
      Effect.gen(function* () {
        const id = yield* idParam
        const q = new URL((yield* HttpServerRequest.HttpServerRequest).url, "http://dashboard").searchParams
        const notice = q.get("resent") !== null ? d(v.lang, "resent") : undefined
        return yield* endpointPage(id, notice === undefined ? {} : { notice })(v, p, signed)
      })
    )

    yield* at(router, "webhookUpdate", (v, p, signed) =>
      Effect.gen(function* () {
        const id = yield* idParam
        const { field, chosen } = yield* endpointFields
        const status = field("status")
        const updated = yield* Effect.either(
          Effect.flatMap(enabledEvents(chosen), (events) =>
            endpoints.update(p, id, {
              url: (field("url") ?? "").trim(),
              enabledEvents: events,
              description: (field("description") ?? "").trim() || null,
              status: status === "ENABLED" || status === "DISABLED" ? status : undefined
            })
          )
        )
        if (updated._tag === "Left")
          return yield* endpointPage(id, { error: problemOf(updated.left).text }, 422)(v, p, signed)
        return yield* endpointPage(id, { notice: d(v.lang, "saved") })(v, p, signed)
      })
    )

    yield* at(router, "webhookRotate", (v, p, signed) =>
      Effect.gen(function* () {
        const id = yield* idParam
        const rotated = yield* Effect.either(endpoints.rotate(p, id))
        if (rotated._tag === "Left")
          return yield* endpointPage(id, { error: problemOf(rotated.left).text }, 404)(v, p, signed)
        return yield* endpointPage(id, {
          notice: d(v.lang, "rotated"),
          secret: rotated.right.secret
        })(v, p, signed)
      })
    )

    yield* at(router, "webhookDelete", (v, p, signed) =>
      Effect.gen(function* () {
        const removed = yield* Effect.either(endpoints.remove(p, yield* idParam))
        if (removed._tag === "Left")
          return yield* webhooksPage({ error: problemOf(removed.left).text }, 404)(v, p, signed)
        return yield* webhooksPage({ notice: d(v.lang, "deleted") })(v, p, signed)
      })
    )

    yield* at(router, "webhookResend", (v, p, signed) =>
      Effect.gen(function* () {
        const id = yield* idParam
        const resent = yield* Effect.either(deliveries.resend(tenant(p), id, (yield* form)("event_id") ?? ""))
        if (resent._tag === "Left")
          return yield* endpointPage(id, { error: problemOf(resent.left).text }, 404)(v, p, signed)
        return redirect(`${root}/webhooks/${id}?resent=1`)
      })
    )
  })
