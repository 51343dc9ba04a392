/**
 * The merchant dashboard at `{base_url}/dashboard`: sign in by pasting a secret key (kept only in an
 * encrypted HttpOnly cookie and authenticated on every request, with its scopes), then mandates with
 * their charges, QR codes with their images, checkout sessions, subscriptions with invoices, events,
 * and webhook endpoints: create (the secret shown once), edit, rotate, delete, and each endpoint's
 * delivery log with "Resend". Forms post back with the CSRF token and work without JavaScript.
 */
import { HttpApiBuilder, HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Auth, Errors, Mandates, QrCodes, Store, Subscriptions, Webhook } from "@laari/core"
import { Effect, Schema } from "effect"
import { ServerConfigTag } from "../Config.js"
import { principalOf } from "../Http/Security.js"
import { Directory } from "../Sql/Directory.js"
import { makeEvents, parsed } from "../Sql/Events.js"
import { Endpoints } from "../Webhooks/Endpoints.js"
import * as Session from "./DashboardSession.js"
import * as V from "./DashboardViews.js"
import { respond } from "./Html.js"
import * as Paths from "./Paths.js"
import { csrfValid, form, Pages, throttled, visit } from "./Request.js"

const route = (path: string) => path as HttpRouter.PathInput
const redirect = (location: string) => HttpServerResponse.empty({ status: 303, headers: { location } })
const Page = { limit: 50, offset: 0 } as const
const Busy = "Too many requests from this address. Wait a moment and try again."

/** The scope each section needs. */
const scopes: { readonly [S in V.Section]: Auth.Scope } = {
  mandates: "mandates:write",
  "qr-codes": "qr:write",
  "checkout-sessions": "checkout:write",
  subscriptions: "subscriptions:write",
  events: "webhooks:write",
  webhooks: "webhooks:write"
}

/** What a merchant can be told about a refusal. */
const messageOf = (e: unknown): string => {
  if (e instanceof Errors.InvalidRequest) return e.errors.map((f) => `${f.field} ${f.message}`).join("; ")
  if (e instanceof Errors.ServiceUnavailable) return "The service is busy. Try again shortly."
  if (typeof e === "object" && e !== null && "message" in e && typeof e.message === "string") return e.message
  return "That did not work."
}

export const layer = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function* () {
    const config = yield* ServerConfigTag
    const pages = yield* Pages
    const directory = yield* Directory
    const mandates = yield* Mandates.Mandates
    const charges = yield* Store.ChargesStore
    const qrCodes = yield* QrCodes.QrCodes
    const sessions = yield* Store.CheckoutSessionsStore
    const subscriptions = yield* Subscriptions.Subscriptions
    const events = yield* makeEvents
    const endpoints = yield* Endpoints
    const root = `${Paths.prefixOf(config.baseUrl)}/dashboard`
    const assets = Paths.prefixOf(config.checkoutUrl)
    const provide = Effect.provideService(Pages, pages)

    type Visit = Effect.Effect.Success<typeof visit>
    const frame = (v: Visit): V.Frame => ({ root, assets, csrf: v.csrf })

    /** The signed-in merchant's principal; a revoked key or a cookie from elsewhere is nobody. */
    const signedIn = Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const key = Session.open(pages, request.cookies[Session.Cookie])
      if (key === undefined) return undefined
      const principal = yield* principalOf(directory, key)
      return principal?.kind === "secret" ? principal : undefined
    })

    const signInPage = (v: Visit, error?: string, status = 200) =>
      respond(<V.SignIn frame={frame(v)} error={error} />, status)

    /** A dashboard page: signed out, the sign-in page; a post needs the CSRF token. */
    const handle = <E, R>(
      post: boolean,
      build: (
        v: Visit,
        principal: Auth.Principal
      ) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
    ) =>
      provide(
        Effect.gen(function* () {
          const v = yield* visit
          if (post && (yield* throttled)) return v.finish(signInPage(v, Busy, 429))
          if (post && !(yield* csrfValid))
            return v.finish(signInPage(v, "This form has expired. Reload the page and try again.", 403))
          const principal = yield* signedIn
          if (principal === undefined) return v.finish(signInPage(v, undefined, post ? 401 : 200))
          return v.finish(yield* build(v, principal))
        })
      )

    /** A section's page, or what it lacks when the key's scopes do not cover it. */
    const section =
      <E, R>(
        name: V.Section,
        title: string,
        body: (v: Visit, principal: Auth.Principal) => Effect.Effect<preact.ComponentChildren, E, R>,
        messages: (v: Visit) => { readonly notice?: string; readonly error?: string } = () => ({}),
        status = 200
      ) =>
      (v: Visit, principal: Auth.Principal) =>
        Auth.check(principal, scopes[name]) !== undefined
          ? Effect.succeed(
              respond(
                <V.Shell
                  frame={frame(v)}
                  principal={principal}
                  section={name}
                  title={title}
                  error={`This key lacks the ${scopes[name]} scope.`}
                >
                  {null}
                </V.Shell>,
                403
              )
            )
          : Effect.map(body(v, principal), (children) =>
              respond(
                <V.Shell frame={frame(v)} principal={principal} section={name} title={title} {...messages(v)}>
                  {children}
                </V.Shell>,
                status
              )
            )

    const idParam = Effect.map(HttpRouter.params, (p) => p.id ?? "")
    const tenant = Auth.tenantOf

    yield* router.get(
      route(root),
      handle(false, () => Effect.succeed(redirect(`${root}/mandates`)))
    )

    yield* router.post(
      route(`${root}/sign-in`),
      provide(
        Effect.gen(function* () {
          const v = yield* visit
          if (yield* throttled) return v.finish(signInPage(v, Busy, 429))
          if (!(yield* csrfValid))
            return v.finish(signInPage(v, "This form has expired. Reload the page and try again.", 403))
          const key = ((yield* form)("key") ?? "").trim()
          const principal = yield* principalOf(directory, key)
          if (principal === undefined || principal.kind !== "secret")
            return v.finish(signInPage(v, "That is not a valid secret key.", 401))
          return v.finish(Session.start(pages, redirect(`${root}/mandates`), key))
        })
      )
    )

    yield* router.post(
      route(`${root}/sign-out`),
      provide(Effect.map(visit, (v) => v.finish(Session.end(pages, redirect(root)))))
    )

    yield* router.get(
      route(`${root}/mandates`),
      handle(
        false,
        section("mandates", "Mandates", (_, p) =>
          Effect.map(mandates.list(tenant(p), Page), (list) => (
            <V.Table
              label="Mandates"
              head={["Reference", "Title", "Status", "Per charge", "Per month", "Created"]}
              rows={V.mandateRows(root, list)}
              empty="No mandates yet."
            />
          ))
        )
      )
    )

    yield* router.get(
      route(`${root}/mandates/:id`),
      handle(
        false,
        section("mandates", "Mandate", (_, p) =>
          Effect.gen(function* () {
            const found = yield* Effect.either(mandates.get(tenant(p), yield* idParam))
            if (found._tag === "Left") return <p class="error">{messageOf(found.left)}</p>
            const m = found.right
            return (
              <>
                <V.Table
                  label="Mandate"
                  head={["Reference", "Title", "Status", "Per charge", "Per month", "Created"]}
                  rows={V.mandateRows(root, [m])}
                  empty=""
                />
                <h2>Charges</h2>
                <V.Table
                  label="Charges"
                  head={["When", "Amount", "Fee", "Reference", "Period"]}
                  rows={V.chargeRows(yield* charges.listByMandate(m.id))}
                  empty="No charges yet."
                />
              </>
            )
          })
        )
      )
    )

    yield* router.get(
      route(`${root}/qr-codes`),
      handle(
        false,
        section("qr-codes", "QR codes", (_, p) =>
          Effect.map(qrCodes.list(tenant(p), Page), (list) => (
            <V.Table
              label="QR codes"
              head={["Image", "Title", "Type", "Status", "Amount", "qrid"]}
              rows={V.qrRows(list, Paths.prefixOf(config.baseUrl))}
              empty="No QR codes yet."
            />
          ))
        )
      )
    )

    yield* router.get(
      route(`${root}/checkout-sessions`),
      handle(
        false,
        section("checkout-sessions", "Checkout sessions", (_, p) =>
          Effect.map(sessions.list(tenant(p), Page), (list) => (
            <V.Table
              label="Checkout sessions"
              head={["Reference", "Mode", "Status", "Amount", "Created"]}
              rows={V.sessionRows(list)}
              empty="No checkout sessions yet."
            />
          ))
        )
      )
    )

    yield* router.get(
      route(`${root}/subscriptions`),
      handle(
        false,
        section("subscriptions", "Subscriptions", (_, p) =>
          Effect.map(subscriptions.list(tenant(p), Page), (list) => (
            <V.Table
              label="Subscriptions"
              head={["Reference", "Plan", "Status", "Amount", "Next payment"]}
              rows={V.subscriptionRows(root, list)}
              empty="No subscriptions yet."
            />
          ))
        )
      )
    )

    yield* router.get(
      route(`${root}/subscriptions/:id`),
      handle(
        false,
        section("subscriptions", "Subscription", (_, p) =>
          Effect.gen(function* () {
            const id = yield* idParam
            const found = yield* Effect.either(subscriptions.get(tenant(p), id))
            if (found._tag === "Left") return <p class="error">{messageOf(found.left)}</p>
            return (
              <>
                <V.Table
                  label="Subscription"
                  head={["Reference", "Plan", "Status", "Amount", "Next payment"]}
                  rows={V.subscriptionRows(root, [found.right])}
                  empty=""
                />
                <h2>Invoices</h2>
                <V.Table
                  label="Invoices"
                  head={["Period", "Status", "Amount", "Attempts", "Next retry", "Paid"]}
                  rows={V.invoiceRows(yield* subscriptions.listInvoices(tenant(p), found.right.id, Page))}
                  empty="No invoices yet."
                />
              </>
            )
          })
        )
      )
    )

    yield* router.get(
      route(`${root}/events`),
      handle(
        false,
        section("events", "Events", (_, p) =>
          Effect.map(
            events.list({ merchantId: p.merchantId, environment: p.environment, limit: Page.limit }),
            (list) => (
              <V.Table
                label="Events"
                head={["When", "Type", "Id"]}
                rows={V.eventRows(list.map((e) => parsed(e).envelope))}
                empty="No events yet."
              />
            )
          )
        )
      )
    )

    // ---- Webhook endpoints ----------------------------------------------------------------------------

    const webhooksPage = (
      messages: { readonly notice?: string; readonly error?: string; readonly secret?: string },
      status = 200
    ) =>
      section(
        "webhooks",
        "Webhook endpoints",
        (v, p) =>
          Effect.map(endpoints.list(p, Page), (list) => (
            <>
              {messages.secret === undefined ? null : <V.SecretOnce secret={messages.secret} />}
              <V.Table
                label="Webhook endpoints"
                head={["URL", "Events", "Status", "Why"]}
                rows={V.endpointRows(root, list)}
                empty="No endpoints yet."
              />
              <h2>Add an endpoint</h2>
              <V.EndpointForm frame={frame(v)} action={`${root}/webhooks`} submit="Add endpoint" />
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
        "Webhook endpoint",
        (v, p) =>
          Effect.gen(function* () {
            const found = yield* Effect.either(endpoints.get(p, id))
            if (found._tag === "Left") return <p class="error">{messageOf(found.left)}</p>
            const e = found.right
            const log = yield* endpoints.deliveries(p, e.id, { limit: 50, offset: 0 })
            return (
              <>
                {messages.secret === undefined ? null : <V.SecretOnce secret={messages.secret} />}
                <V.EndpointForm
                  frame={frame(v)}
                  action={`${root}/webhooks/${e.id}`}
                  endpoint={e}
                  submit="Save"
                />
                <div class="actions">
                  <form method="post" action={`${root}/webhooks/${e.id}/rotate`} class="inline">
                    <input type="hidden" name="_csrf" value={v.csrf} />
                    <button type="submit" class="secondary">
                      Rotate secret
                    </button>
                  </form>
                  <form method="post" action={`${root}/webhooks/${e.id}/delete`} class="inline">
                    <input type="hidden" name="_csrf" value={v.csrf} />
                    <button type="submit" class="secondary">
                      Delete endpoint
                    </button>
                  </form>
                </div>
                <h2>Deliveries</h2>
                <V.Table
                  label="Deliveries"
                  head={["When", "Event", "Attempt", "Status", "Response", "Took", ""]}
                  rows={V.deliveryRows(frame(v), e.id, log)}
                  empty="Nothing delivered yet."
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
          Errors.InvalidRequest.field("enabled_events", "must be event types of spec 6, or all")
        )
      )

    yield* router.get(route(`${root}/webhooks`), handle(false, webhooksPage({})))

    yield* router.post(
      route(`${root}/webhooks`),
      handle(true, (v, p) =>
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
            return yield* webhooksPage({ error: messageOf(created.left) }, 422)(v, p)
          return yield* endpointPage(created.right.endpoint.id, {
            notice: "Endpoint added.",
            secret: created.right.secret
          })(v, p)
        })
      )
    )

    yield* router.get(
      route(`${root}/webhooks/:id`),
      handle(false, (v, p) =>
        Effect.gen(function* () {
          const id = yield* idParam
          const q = new URL((yield* HttpServerRequest.HttpServerRequest).url, "http://dashboard").searchParams
          const notice = q.get("resent") !== null ? "Queued: it is sent again now." : undefined
          return yield* endpointPage(id, notice === undefined ? {} : { notice })(v, p)
        })
      )
    )

    yield* router.post(
      route(`${root}/webhooks/:id`),
      handle(true, (v, p) =>
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
            return yield* endpointPage(id, { error: messageOf(updated.left) }, 422)(v, p)
          return yield* endpointPage(id, { notice: "Saved." })(v, p)
        })
      )
    )

    yield* router.post(
      route(`${root}/webhooks/:id/rotate`),
      handle(true, (v, p) =>
        Effect.gen(function* () {
          const id = yield* idParam
          const rotated = yield* Effect.either(endpoints.rotate(p, id))
          if (rotated._tag === "Left")
            return yield* endpointPage(id, { error: messageOf(rotated.left) }, 404)(v, p)
          return yield* endpointPage(id, {
            notice: "New secret made; the previous one keeps signing for 24 hours.",
            secret: rotated.right.secret
          })(v, p)
        })
      )
    )

    yield* router.post(
      route(`${root}/webhooks/:id/delete`),
      handle(true, (v, p) =>
        Effect.gen(function* () {
          const removed = yield* Effect.either(endpoints.remove(p, yield* idParam))
          if (removed._tag === "Left")
            return yield* webhooksPage({ error: messageOf(removed.left) }, 404)(v, p)
          return yield* webhooksPage({ notice: "Endpoint deleted." })(v, p)
        })
      )
    )

    yield* router.post(
      route(`${root}/webhooks/:id/resend`),
      handle(true, (v, p) =>
        Effect.gen(function* () {
          const id = yield* idParam
          const resent = yield* Effect.either(endpoints.resend(p, id, (yield* form)("event_id") ?? ""))
          if (resent._tag === "Left")
            return yield* endpointPage(id, { error: messageOf(resent.left) }, 404)(v, p)
          return redirect(`${root}/webhooks/${id}?resent=1`)
        })
      )
    )
  })
)
