/**
 * The merchant dashboard at `{base_url}/dashboard`: sign in by pasting a secret key (kept only in an
 * encrypted HttpOnly cookie and authenticated on every request, with its scopes), then mandates with
 * their charges, QR codes with their images, checkout sessions, subscriptions with invoices, events,
 * and webhook endpoints: create (the secret shown once), edit, rotate, delete, and each endpoint's
 * delivery log with "Resend"; refunds of charges and invoices (`DashboardRefunds`). Forms post back
 * with the CSRF token and work without JavaScript.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import {
  Auth,
  Balance,
  Balances,
  Calendar,
  Errors,
  Mandates,
  QrCodes,
  Store,
  Subscriptions,
  Webhook
} from "@laari/core"
import * as EndedSessions from "./EndedSessions.js"
import { Effect, Either, Schema } from "effect"
import { ServerConfigTag } from "../Config.js"
import { principalOf } from "../Http/Security.js"
import { OAuthClients } from "../Sql/OAuthClients.js"
import { Directory } from "../Sql/Directory.js"
import { makeEvents, parsed } from "../Sql/Events.js"
import { Endpoints } from "../Webhooks/Endpoints.js"
import { d, type Word } from "./DashboardText.js"
import * as Session from "./DashboardSession.js"
import * as V from "./DashboardViews.js"
import { BalanceView } from "./DashboardBalance.js"
import * as RefundList from "./DashboardRefundList.js"
import * as Refunds from "./DashboardRefunds.js"
import { respond } from "./Html.js"
import * as Paths from "./Paths.js"
import { problemOf, redirect, route } from "./Routing.js"
import { csrfValid, form, Pages, throttled, visit } from "./Request.js"

const Page = { limit: 50, offset: 0 } as const

/** A table's column headings. */
const heads = (lang: Parameters<typeof d>[0], words: ReadonlyArray<Word>) => words.map((w) => d(lang, w))

/** The scope each section needs. */
const scopes: { readonly [S in V.Section]: Auth.Scope } = {
  mandates: "mandates:write",
  "qr-codes": "qr:write",
  "checkout-sessions": "checkout:write",
  subscriptions: "subscriptions:write",
  balance: "payments:write",
  refunds: "payments:write",
  events: "webhooks:write",
  webhooks: "webhooks:write"
}

export const layer = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function* () {
    const config = yield* ServerConfigTag
    const ended = yield* EndedSessions.make
    const pages = yield* Pages
    const directory = yield* Directory
    const credentials = { directory, oauth: yield* OAuthClients }
    const mandates = yield* Mandates.Mandates
    const charges = yield* Store.ChargesStore
    const qrCodes = yield* QrCodes.QrCodes
    const qrPayments = yield* Store.QrPaymentsStore
    const sessions = yield* Store.CheckoutSessionsStore
    const subscriptions = yield* Subscriptions.Subscriptions
    const events = yield* makeEvents
    const endpoints = yield* Endpoints
    const merchants = yield* Store.Merchants
    const balances = yield* Balances.Balances
    const root = `${Paths.prefixOf(config.baseUrl)}/dashboard`
    const assets = Paths.prefixOf(config.checkoutUrl)
    const provide = Effect.provideService(Pages, pages)

    type Visit = Effect.Effect.Success<typeof visit>
    const frame = (v: Visit): V.Frame => ({ lang: v.lang, root, assets, csrf: v.csrf })

    /** The signed-in merchant's principal; a revoked key, an expired session or a cookie from elsewhere is nobody. */
    const signedIn = Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const session = Session.open(pages, request.cookies[Session.Cookie])
      if (session === undefined) return undefined
      if (yield* ended.isEnded(session.id)) return undefined
      const principal = yield* principalOf(credentials, session.key)
      return principal?.kind === "secret" ? { principal, session } : undefined
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
          if (post && (yield* throttled)) return v.finish(signInPage(v, d(v.lang, "busy"), 429))
          if (post && !(yield* csrfValid)) return v.finish(signInPage(v, d(v.lang, "expired"), 403))
          const signed = yield* signedIn
          if (signed === undefined) return v.finish(signInPage(v, undefined, post ? 401 : 200))
          // Sealed again, seen now: the idle time counts from this request.
          const { key, signedIn: since, id } = signed.session
          return v.finish(Session.start(pages, yield* build(v, signed.principal), key, since, id))
        })
      )

    /** A page of the dashboard in its section's frame, with the signed-in merchant's name. */
    const shell: Refunds.Shell = (v, principal, { title, status, ...page }) =>
      Effect.map(merchants.get(principal.merchantId), (merchant) =>
        respond(
          <V.Shell
            frame={frame(v)}
            principal={principal}
            merchant={merchant?.name ?? ""}
            {...page}
            title={d(v.lang, title)}
          />,
          status ?? 200
        )
      )

    /** A section's page, or what it lacks when the key's scopes do not cover it. */
    const section =
      <E, R>(
        name: V.Section,
        title: Word,
        body: (v: Visit, principal: Auth.Principal) => Effect.Effect<preact.ComponentChildren, E, R>,
        messages: (v: Visit) => { readonly notice?: string; readonly error?: string } = () => ({}),
        status = 200
      ) =>
      (v: Visit, principal: Auth.Principal) =>
        Effect.gen(function* () {
          // What the key's scopes do not cover is refused on the section's own page, without its body.
          if (Auth.check(principal, scopes[name]) !== undefined) {
            const error = d(v.lang, "lacksScope", { scope: scopes[name] })
            return yield* shell(v, principal, { section: name, title, children: null, error, status: 403 })
          }
          const children = yield* body(v, principal)
          // After a refund, the payment's page (`?refunded=`) tells of it.
          const notice = Refunds.notice(v.lang, (yield* HttpServerRequest.HttpServerRequest).url)
          const page = { section: name, title, children, notice, ...messages(v), status }
          return yield* shell(v, principal, page)
        })

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
          if (yield* throttled) return v.finish(signInPage(v, d(v.lang, "busy"), 429))
          if (!(yield* csrfValid)) return v.finish(signInPage(v, d(v.lang, "expired"), 403))
          const key = ((yield* form)("key") ?? "").trim()
          const principal = yield* principalOf(credentials, key)
          if (principal === undefined || principal.kind !== "secret")
            return v.finish(signInPage(v, d(v.lang, "invalidKey"), 401))
          return v.finish(Session.start(pages, redirect(`${root}/mandates`), key))
        })
      )
    )

    yield* router.post(
      route(`${root}/sign-out`),
      provide(
        Effect.gen(function* () {
          const v = yield* visit
          if (yield* throttled) return v.finish(signInPage(v, d(v.lang, "busy"), 429))
          // Another site must not sign the merchant out.
          if (!(yield* csrfValid)) return v.finish(signInPage(v, d(v.lang, "expired"), 403))
          // Ended here for every process, so a saved copy of the cookie no longer works.
          const request = yield* HttpServerRequest.HttpServerRequest
          const session = Session.open(pages, request.cookies[Session.Cookie])
          if (session !== undefined) {
            yield* ended.end(session.id, new Date((session.signedIn + Session.AbsoluteSeconds) * 1000))
          }
          return v.finish(Session.end(pages, redirect(root)))
        })
      )
    )

    yield* router.get(
      route(`${root}/mandates`),
      handle(
        false,
        section("mandates", "mandates", (v, p) =>
          Effect.map(mandates.list(tenant(p), Page), (list) => (
            <V.Table
              label={d(v.lang, "mandates")}
              head={heads(v.lang, ["reference", "titleColumn", "status", "perCharge", "perMonth", "created"])}
              rows={V.mandateRows(v.lang, root, list)}
              empty={d(v.lang, "noMandates")}
            />
          ))
        )
      )
    )

    yield* router.get(
      route(`${root}/mandates/:id`),
      handle(
        false,
        section("mandates", "mandate", (v, p) =>
          Effect.gen(function* () {
            const found = yield* Effect.either(mandates.get(tenant(p), yield* idParam))
            if (found._tag === "Left") return <p class="error">{problemOf(found.left).text}</p>
            const m = found.right
            return (
              <>
                <V.Table
                  label={d(v.lang, "mandate")}
                  head={heads(v.lang, [
                    "reference",
                    "titleColumn",
                    "status",
                    "perCharge",
                    "perMonth",
                    "created"
                  ])}
                  rows={V.mandateRows(v.lang, root, [m])}
                  empty=""
                />
                <h2>{d(v.lang, "charges")}</h2>
                <V.Table
                  label={d(v.lang, "charges")}
                  head={heads(v.lang, V.chargeColumns)}
                  rows={V.chargeRows(
                    v.lang,
                    `${root}/mandates/${m.id}/charges`,
                    yield* charges.listByMandate(m.id)
                  )}
                  empty={d(v.lang, "noCharges")}
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
        section("qr-codes", "qrCodes", (v, p) =>
          Effect.map(qrCodes.list(tenant(p), Page), (list) => (
            <V.Table
              label={d(v.lang, "qrCodes")}
              head={heads(v.lang, ["image", "titleColumn", "type", "status", "amount", "id"])}
              rows={V.qrRows(v.lang, root, list, Paths.prefixOf(config.baseUrl))}
              empty={d(v.lang, "noQrCodes")}
            />
          ))
        )
      )
    )

    yield* router.get(
      route(`${root}/qr-codes/:id`),
      handle(
        false,
        section("qr-codes", "qrCode", (v, p) =>
          Effect.gen(function* () {
            const found = yield* Effect.either(qrCodes.get(tenant(p), yield* idParam))
            if (found._tag === "Left") return <p class="error">{problemOf(found.left).text}</p>
            const code = found.right
            return (
              <>
                <V.Table
                  label={d(v.lang, "qrCode")}
                  head={heads(v.lang, ["image", "titleColumn", "type", "status", "amount", "id"])}
                  rows={V.qrRows(v.lang, root, [code], Paths.prefixOf(config.baseUrl))}
                  empty=""
                />
                <h2>{d(v.lang, "payments")}</h2>
                <V.Table
                  label={d(v.lang, "payments")}
                  head={heads(v.lang, V.qrPaymentColumns)}
                  rows={V.qrPaymentRows(
                    v.lang,
                    `${root}/qr-codes/${code.id}/payments`,
                    (yield* qrPayments.listByCode(code.id)).slice(0, Page.limit)
                  )}
                  empty={d(v.lang, "noPayments")}
                />
              </>
            )
          })
        )
      )
    )

    /** The balance section, with `error` (a refused report day) when there is one. */
    const balancePage = (error?: string, status = 200) =>
      section(
        "balance",
        "balance",
        (v, p) =>
          Effect.gen(function* () {
            const now = yield* balances.get(tenant(p))
            const latest = yield* balances.list(tenant(p), { limit: 50 })
            const today = Calendar.formatMaldives(now.asOf).slice(0, 10)
            return (
              <BalanceView frame={frame(v)} available={now.available} today={today} latest={latest.data} />
            )
          }),
        () => (error === undefined ? {} : { error }),
        status
      )

    yield* router.get(route(`${root}/balance`), handle(false, balancePage()))

    yield* router.get(
      route(`${root}/balance/settlement`),
      handle(false, (v, p) =>
        Effect.gen(function* () {
          if (Auth.check(p, scopes.balance) !== undefined) return yield* balancePage()(v, p)
          const q = new URL((yield* HttpServerRequest.HttpServerRequest).url, "http://dashboard").searchParams
          const report = yield* balances.settlement(tenant(p), q.get("date") ?? "").pipe(
            Effect.map(Either.right),
            Effect.catchTag("InvalidReportDate", (e) => Effect.succeed(Either.left(e.message)))
          )
          if (Either.isLeft(report)) return yield* balancePage(report.left, 400)(v, p)
          return HttpServerResponse.text(Balance.csv(report.right), {
            contentType: "text/csv; charset=utf-8",
            headers: {
              "content-disposition": `attachment; filename="settlement-${p.environment}-${report.right.day.date}.csv"`,
              "cache-control": "no-store"
            }
          })
        })
      )
    )

    yield* router.get(
      route(`${root}/checkout-sessions`),
      handle(
        false,
        section("checkout-sessions", "checkoutSessions", (v, p) =>
          Effect.map(sessions.list(tenant(p), Page), (list) => (
            <V.Table
              label={d(v.lang, "checkoutSessions")}
              head={heads(v.lang, ["reference", "mode", "status", "amount", "created"])}
              rows={V.sessionRows(v.lang, list)}
              empty={d(v.lang, "noSessions")}
            />
          ))
        )
      )
    )

    yield* router.get(
      route(`${root}/subscriptions`),
      handle(
        false,
        section("subscriptions", "subscriptions", (v, p) =>
          Effect.map(subscriptions.list(tenant(p), Page), (list) => (
            <V.Table
              label={d(v.lang, "subscriptions")}
              head={heads(v.lang, ["reference", "plan", "status", "amount", "nextPayment"])}
              rows={V.subscriptionRows(v.lang, root, list)}
              empty={d(v.lang, "noSubscriptions")}
            />
          ))
        )
      )
    )

    yield* router.get(
      route(`${root}/subscriptions/:id`),
      handle(
        false,
        section("subscriptions", "subscription", (v, p) =>
          Effect.gen(function* () {
            const id = yield* idParam
            const found = yield* Effect.either(subscriptions.get(tenant(p), id))
            if (found._tag === "Left") return <p class="error">{problemOf(found.left).text}</p>
            return (
              <>
                <V.Table
                  label={d(v.lang, "subscription")}
                  head={heads(v.lang, ["reference", "plan", "status", "amount", "nextPayment"])}
                  rows={V.subscriptionRows(v.lang, root, [found.right])}
                  empty=""
                />
                <h2>{d(v.lang, "invoices")}</h2>
                <V.Table
                  label={d(v.lang, "invoices")}
                  head={heads(v.lang, V.invoiceColumns)}
                  rows={V.invoiceRows(
                    v.lang,
                    `${root}/subscriptions/${found.right.id}/invoices`,
                    yield* subscriptions.listInvoices(tenant(p), found.right.id, Page)
                  )}
                  empty={d(v.lang, "noInvoices")}
                />
              </>
            )
          })
        )
      )
    )

    const refundPages = yield* Refunds.make(root, frame, shell)
    for (const kind of Refunds.Kinds) {
      yield* router.get(route(Refunds.path(root, kind)), handle(false, refundPages.confirm(kind)))
      yield* router.post(route(Refunds.path(root, kind)), handle(true, refundPages.submit(kind)))
    }

    const refundList = yield* RefundList.make(root)
    yield* router.get(
      route(`${root}/refunds`),
      handle(
        false,
        section("refunds", "refunds", (v, p) => refundList.body(frame(v), p))
      )
    )

    // A refund's payment: its page, or the section's refusal (a scope the key lacks, another's refund).
    yield* router.get(
      route(`${root}/refunds/:id/payment`),
      handle(false, (v, p) =>
        Effect.gen(function* () {
          const found =
            Auth.check(p, scopes.refunds) === undefined ? yield* refundList.paymentPage(p) : undefined
          if (found !== undefined) return found
          return yield* section(
            "refunds",
            "refunds",
            () => Effect.succeed(null),
            () => ({ error: d(v.lang, "paymentNotFound") }),
            404
          )(v, p)
        })
      )
    )

    yield* router.get(
      route(`${root}/events`),
      handle(
        false,
        section("events", "events", (v, p) =>
          Effect.map(
            events.list({ merchantId: p.merchantId, environment: p.environment, limit: Page.limit }),
            (list) => (
              <V.Table
                label={d(v.lang, "events")}
                head={heads(v.lang, ["when", "type", "id"])}
                rows={V.eventRows(list.map((e) => parsed(e).envelope))}
                empty={d(v.lang, "noEvents")}
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
            const log = yield* endpoints.deliveries(tenant(p), e.id, { limit: 50, offset: 0 })
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
            return yield* webhooksPage({ error: problemOf(created.left).text }, 422)(v, p)
          return yield* endpointPage(created.right.endpoint.id, {
            notice: d(v.lang, "added"),
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
          const notice = q.get("resent") !== null ? d(v.lang, "resent") : undefined
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
            return yield* endpointPage(id, { error: problemOf(updated.left).text }, 422)(v, p)
          return yield* endpointPage(id, { notice: d(v.lang, "saved") })(v, p)
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
            return yield* endpointPage(id, { error: problemOf(rotated.left).text }, 404)(v, p)
          return yield* endpointPage(id, {
            notice: d(v.lang, "rotated"),
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
            return yield* webhooksPage({ error: problemOf(removed.left).text }, 404)(v, p)
          return yield* webhooksPage({ notice: d(v.lang, "deleted") })(v, p)
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
            return yield* endpointPage(id, { error: problemOf(resent.left).text }, 404)(v, p)
          return redirect(`${root}/webhooks/${id}?resent=1`)
        })
      )
    )
  })
)
