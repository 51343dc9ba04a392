/**
 * The merchant dashboard at `{base_url}/dashboard`: sign in by pasting a secret key (kept only in an
 * encrypted HttpOnly cookie and authenticated on every request, with its scopes), then mandates with
 * their charges, QR codes with their images, checkout sessions, subscriptions with invoices, events,
 * the balance and its settlement report, refunds (`DashboardRefunds`, `DashboardRefundList`) and webhook
 * endpoints (`DashboardWebhooks`), and a page for every other object an id names (`DashboardDetails`):
 * every id shown links to its object's page. What every page shares (session, CSRF, frame, scopes) is
 * `DashboardKit`. Forms post back with the CSRF token and work without JavaScript.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import {
  Auth,
  Balance,
  Balances,
  Calendar,
  EventLog,
  Mandates,
  QrCodes,
  QrImages,
  Reads,
  Subscriptions
} from "@laari/core"
import { Effect, Either } from "effect"
import { ServerConfigTag } from "../Platform/Config.js"
import { principalOf } from "../Http/Security.js"
import { d } from "./DashboardText.js"
import * as Session from "./DashboardSession.js"
import * as V from "./DashboardViews.js"
import { BalanceView } from "./DashboardBalance.js"
import * as Details from "./DashboardDetails.js"
import { endOf, FailedAttempts, Facts, RefusedCharges } from "./DashboardFacts.js"
import { IdLink } from "./DashboardLinks.js"
import { When } from "./Html.js"
import * as RefundList from "./DashboardRefundList.js"
import * as Kit from "./DashboardKit.js"
import { heads, Page, scopes } from "./DashboardKit.js"
import * as Refunds from "./DashboardRefunds.js"
import * as Webhooks from "./DashboardWebhooks.js"
import * as Paths from "./Paths.js"
import { problemOf, redirect, route } from "./Routing.js"
import { csrfValid, form, throttled, visit } from "./Request.js"

export const layer = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function* () {
    const kit = yield* Kit.make
    const { root, pages, ended, credentials, provide, frame, signInPage, handle, shell, section, idParam } =
      kit
    const config = yield* ServerConfigTag
    const mandates = yield* Mandates.Mandates
    const qrCodes = yield* QrCodes.QrCodes
    const subscriptions = yield* Subscriptions.Subscriptions
    const reads = yield* Reads.Reads
    const balances = yield* Balances.Balances
    const images = yield* QrImages.QrImages
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
                <Facts label={d(v.lang, "details")} rows={[[d(v.lang, "id"), <code>{m.id}</code>]]} />
                <h2>{d(v.lang, "charges")}</h2>
                <V.Table
                  label={d(v.lang, "charges")}
                  head={heads(v.lang, V.chargeColumns)}
                  rows={V.chargeRows(
                    v.lang,
                    root,
                    `${root}/mandates/${m.id}/charges`,
                    yield* reads.chargesOfMandate(m.id)
                  )}
                  empty={d(v.lang, "noCharges")}
                />
                <h2>{d(v.lang, "refusedCharges")}</h2>
                <p class="note">{d(v.lang, "refusedChargesNote")}</p>
                <RefusedCharges
                  lang={v.lang}
                  list={yield* reads.chargeFailures(tenant(p), m.id, Page.limit)}
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
            // A dynamic code's image is not stored (it is paid once): drawn here from its content.
            const image =
              code.type === "STATIC"
                ? `${Paths.prefixOf(config.baseUrl)}/qr/${code.id}.png`
                : `data:image/png;base64,${Buffer.from(yield* images.renderPng(code.payload)).toString("base64")}`
            return (
              <>
                <V.Table
                  label={d(v.lang, "qrCode")}
                  head={heads(v.lang, ["titleColumn", "type", "status", "amount"])}
                  rows={V.qrRows(v.lang, root, [code], "").map((cells) => cells.slice(1, 5))}
                  empty=""
                />
                <figure class="qr">
                  <img class="qr" src={image} alt={`QR code ${code.qrid}`} width={224} height={224} />
                  <figcaption class="note">{d(v.lang, "scanToPay")}</figcaption>
                </figure>
                <Facts
                  label={d(v.lang, "details")}
                  rows={[
                    [d(v.lang, "id"), <code>{code.id}</code>],
                    ["QRID", <code>{code.qrid}</code>],
                    [d(v.lang, "content"), <code class="payload">{code.payload}</code>],
                    [d(v.lang, "expires"), code.expiresAt === null ? null : <When at={code.expiresAt} />]
                  ]}
                />
                <h2>{d(v.lang, "payments")}</h2>
                <V.Table
                  label={d(v.lang, "payments")}
                  head={heads(v.lang, V.qrPaymentColumns)}
                  rows={V.qrPaymentRows(
                    v.lang,
                    root,
                    `${root}/qr-codes/${code.id}/payments`,
                    yield* reads.paymentsOfQrCode(code.id, Page.limit)
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
          Effect.map(reads.checkoutSessions(tenant(p), Page), (list) => (
            <V.Table
              label={d(v.lang, "checkoutSessions")}
              head={heads(v.lang, ["reference", "mode", "status", "amount", "created"])}
              rows={V.sessionRows(v.lang, root, list)}
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
            const s = found.right
            return (
              <>
                <V.Table
                  label={d(v.lang, "subscription")}
                  head={heads(v.lang, ["reference", "plan", "status", "amount", "nextPayment"])}
                  rows={V.subscriptionRows(v.lang, root, [s])}
                  empty=""
                />
                <Facts
                  label={d(v.lang, "details")}
                  rows={[
                    [d(v.lang, "id"), <code>{s.id}</code>],
                    [
                      d(v.lang, "checkoutSession"),
                      <IdLink root={root} kind="checkoutSession" id={s.checkoutSessionId} />
                    ],
                    [d(v.lang, "ended"), s.cancelledAt === null ? null : <When at={s.cancelledAt} />],
                    [d(v.lang, "endReason"), endOf(v.lang, s)]
                  ]}
                />
                <h2>{d(v.lang, "invoices")}</h2>
                <V.Table
                  label={d(v.lang, "invoices")}
                  head={heads(v.lang, V.invoiceColumns)}
                  rows={V.invoiceRows(
                    v.lang,
                    root,
                    `${root}/subscriptions/${s.id}/invoices`,
                    yield* subscriptions.listInvoices(tenant(p), s.id, Page)
                  )}
                  empty={d(v.lang, "noInvoices")}
                />
                <h2>{d(v.lang, "failedAttempts")}</h2>
                <FailedAttempts
                  lang={v.lang}
                  root={root}
                  list={yield* reads.invoiceFailures(tenant(p), s.id, Page.limit)}
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
            reads.events({ merchantId: p.merchantId, environment: p.environment, limit: Page.limit }),
            (list) => (
              <V.Table
                label={d(v.lang, "events")}
                head={heads(v.lang, ["when", "type", "id"])}
                rows={V.eventRows(
                  root,
                  list.map((e) => EventLog.parsed(e).envelope)
                )}
                empty={d(v.lang, "noEvents")}
              />
            )
          )
        )
      )
    )

    yield* Webhooks.routes(router, kit)
    yield* Details.routes(router, kit)
  })
)
