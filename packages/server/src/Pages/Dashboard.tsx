/**
 * The merchant dashboard at `{base_url}/dashboard`: people sign in with email, password and a second
 * factor (`DashboardSignIn`; a secret key opens no dashboard), then mandates with their charges, QR codes
 * with their images, checkout sessions, subscriptions with invoices, events, the balance and its
 * settlement report, refunds (`DashboardRefunds`, `DashboardRefundList`), webhook endpoints
 * (`DashboardWebhooks`), the audit log with its CSV export (`DashboardAudit`), the team, the account and
 * the API keys (`DashboardTeam`), and a page for every other object an id names (`DashboardDetails`):
 * every id shown links to its object's page. What every page shares (session, permissions, CSRF, frame)
 * is `DashboardKit`; each route's permission is `DashboardAccess`'s. Forms post back with the CSRF token
 * and work without JavaScript.
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
  Mandate,
  Mandates,
  QrCodes,
  QrImages,
  Reads,
  Role,
  Subscriptions
} from "@laari/core"
import { Effect, Either } from "effect"
import { ServerConfigTag } from "../Platform/Config.js"
import { d } from "./DashboardText.js"
import * as V from "./DashboardViews.js"
import { BalanceView } from "./DashboardBalance.js"
import * as AuditLog from "./DashboardAudit.js"
import * as Details from "./DashboardDetails.js"
import { endOf, FailedAttempts, Facts, RefusedCharges } from "./DashboardFacts.js"
import { IdLink } from "./DashboardLinks.js"
import { When } from "./Html.js"
import * as RefundList from "./DashboardRefundList.js"
import * as Kit from "./DashboardKit.js"
import { heads, Page } from "./DashboardKit.js"
import * as Refunds from "./DashboardRefunds.js"
import * as Webhooks from "./DashboardWebhooks.js"
import * as P from "./DashboardPeopleViews.js"
import * as SignIn from "./DashboardSignIn.js"
import * as Team from "./DashboardTeam.js"
import * as Paths from "./Paths.js"
import { problemOf, redirect } from "./Routing.js"

export const layer = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function* () {
    const kit = yield* Kit.make
    const { root, frame, at, shell, section, idParam } = kit
    const config = yield* ServerConfigTag
    const mandates = yield* Mandates.Mandates
    const qrCodes = yield* QrCodes.QrCodes
    const subscriptions = yield* Subscriptions.Subscriptions
    const reads = yield* Reads.Reads
    const balances = yield* Balances.Balances
    const images = yield* QrImages.QrImages
    const tenant = Auth.tenantOf

    yield* at(router, "home", () => Effect.succeed(redirect(`${root}/mandates`)))

    yield* at(
      router,
      "mandates",
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

    /** A mandate's page, with what a post on it said; revocable from here by a role that may. */
    const mandatePage = (messages: { readonly notice?: string; readonly error?: string }, status = 200) =>
      section(
        "mandates",
        "mandate",
        (v, p, signed) =>
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
                {Role.can(signed.role, "mandates:revoke") && Mandate.isLive(m) ? (
                  <P.Button
                    frame={frame(v)}
                    action={`${root}/mandates/${m.id}/revoke`}
                    label={d(v.lang, "revokeMandate")}
                  />
                ) : null}
              </>
            )
          }),
        () => messages,
        status
      )

    yield* at(router, "mandate", mandatePage({}))

    yield* at(router, "mandateRevoke", (v, p, signed) =>
      Effect.gen(function* () {
        const done = yield* Effect.either(mandates.revoke(tenant(p), yield* idParam))
        if (done._tag === "Left")
          return yield* mandatePage({ error: problemOf(done.left).text }, problemOf(done.left).status)(
            v,
            p,
            signed
          )
        return yield* mandatePage({ notice: d(v.lang, "mandateRevoked") })(v, p, signed)
      })
    )

    yield* at(
      router,
      "qrCodes",
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

    yield* at(
      router,
      "qrCode",
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

    yield* at(router, "balance", balancePage())

    yield* at(router, "settlement", (v, p, signed) =>
      Effect.gen(function* () {
        const q = new URL((yield* HttpServerRequest.HttpServerRequest).url, "http://dashboard").searchParams
        const report = yield* balances.settlement(tenant(p), q.get("date") ?? "").pipe(
          Effect.map(Either.right),
          Effect.catchTag("InvalidReportDate", (e) => Effect.succeed(Either.left(e.message)))
        )
        if (Either.isLeft(report)) return yield* balancePage(report.left, 400)(v, p, signed)
        return HttpServerResponse.text(Balance.csv(report.right), {
          contentType: "text/csv; charset=utf-8",
          headers: {
            "content-disposition": `attachment; filename="settlement-${p.environment}-${report.right.day.date}.csv"`,
            "cache-control": "no-store"
          }
        })
      })
    )

    yield* at(
      router,
      "checkoutSessions",
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

    yield* at(
      router,
      "subscriptions",
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

    /** A subscription's page, with what a post on it said; cancellable from here by a role that may. */
    const subscriptionPage = (
      messages: { readonly notice?: string; readonly error?: string },
      status = 200
    ) =>
      section(
        "subscriptions",
        "subscription",
        (v, p, signed) =>
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
                {Role.can(signed.role, "subscriptions:cancel") && s.status !== "CANCELLED" ? (
                  <P.Button
                    frame={frame(v)}
                    action={`${root}/subscriptions/${s.id}/cancel`}
                    label={d(v.lang, "cancelSubscription")}
                  />
                ) : null}
              </>
            )
          }),
        () => messages,
        status
      )

    yield* at(router, "subscription", subscriptionPage({}))

    // Cancelled now, as the API's `POST /subscriptions/{id}/cancel` without `at_period_end`.
    yield* at(router, "subscriptionCancel", (v, p, signed) =>
      Effect.gen(function* () {
        const done = yield* Effect.either(subscriptions.cancel(tenant(p), yield* idParam, false))
        if (done._tag === "Left")
          return yield* subscriptionPage({ error: problemOf(done.left).text }, problemOf(done.left).status)(
            v,
            p,
            signed
          )
        return yield* subscriptionPage({ notice: d(v.lang, "subscriptionCancelled") })(v, p, signed)
      })
    )

    const refundPages = yield* Refunds.make(root, frame, shell)
    for (const kind of Refunds.Kinds) {
      yield* at(router, Refunds.routesOf(kind).get, refundPages.confirm(kind))
      yield* at(router, Refunds.routesOf(kind).post, refundPages.submit(kind))
    }

    const refundList = yield* RefundList.make(root)
    yield* at(
      router,
      "refunds",
      section("refunds", "refunds", (v, p) => refundList.body(frame(v), p))
    )

    // A refund's payment: its page, or the section's refusal (another merchant's refund).
    yield* at(router, "refundPayment", (v, p, signed) =>
      Effect.gen(function* () {
        const found = yield* refundList.paymentPage(p)
        if (found !== undefined) return found
        return yield* section(
          "refunds",
          "refunds",
          () => Effect.succeed(null),
          () => ({ error: d(v.lang, "paymentNotFound") }),
          404
        )(v, p, signed)
      })
    )

    yield* at(
      router,
      "events",
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

    yield* Webhooks.routes(router, kit)
    yield* AuditLog.routes(router, kit)
    yield* Details.routes(router, kit)
    yield* SignIn.routes(router, SignIn.dashboardDoor(kit))
    yield* Team.routes(router, kit)
  })
)
