/**
 * The customer's wallet app at `{checkout_url}/wallet` (live wallets): sign in with a one-time code,
 * see the balance, end mandates and subscriptions (each after a confirming step), read every payment,
 * invoices and notifications (the current code while it is live), pay a scanned QR payload through the
 * same rules as every QR payment.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Ids, Mandates, QrCodes, Reads, Subscriptions, WalletAccess } from "@laari/core"
import { DateTime, Effect } from "effect"
import type { ComponentChildren } from "preact"
import { ServerConfigTag } from "../Platform/Config.js"
import { Given, Ltr, respond } from "./Html.js"
import { type Lang, money, parseMvr, t, tn } from "./I18n.js"
import * as Paths from "./Paths.js"
import { problemOf, redirect, route } from "./Routing.js"
import { csrfValid, form, Pages, throttled, visit } from "./Request.js"
import * as Views from "./Views.js"
import { EndedSessions } from "../Platform/EndedSessions.js"
import * as Session from "./WalletSession.js"
import * as WalletViews from "./WalletViews.js"

/** The wallet app is the live wallet's: sandbox payers are driven by the test helpers. */
const Environment = "live" as const

export const layer = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function* () {
    const config = yield* ServerConfigTag
    const pages = yield* Pages
    const access = yield* WalletAccess.WalletAccess
    const mandates = yield* Mandates.Mandates
    const subscriptions = yield* Subscriptions.Subscriptions
    const qrCodes = yield* QrCodes.QrCodes
    const reads = yield* Reads.Reads
    const prefix = Paths.prefixOf(config.checkoutUrl)
    const path = `${prefix}/wallet`
    const provide = Effect.provideService(Pages, pages)

    const merchantName = (id: Ids.MerchantId) => Effect.map(reads.merchant(id), (m) => m?.name ?? "")

    const ended = yield* EndedSessions

    /** The cookie's session, unless it was signed out. */
    const session = Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const open = Session.open(pages, request.cookies[Session.Cookie], Date.now())
      return open === undefined || (yield* ended.isEnded(open.id)) ? undefined : open
    })

    const signedIn = Effect.map(session, (s) => s?.customerId)

    const frame = (v: { readonly lang: Lang; readonly csrf: string }): Views.Frame => ({
      lang: v.lang,
      path,
      assets: prefix,
      csrf: v.csrf
    })

    const home = (customerId: Ids.CustomerId) =>
      Effect.gen(function* () {
        const customer = yield* reads.customer(customerId)
        const allMandates = yield* mandates.listForCustomer(customerId)
        const live = allMandates.filter((m) => m.status === "ACTIVE" || m.status === "SUSPENDED")
        const subs = (yield* subscriptions.listForCustomer(customerId)).filter(
          (s) => s.status !== "CANCELLED"
        )
        const payments = yield* reads.walletPayments(customerId, 20)
        const allInvoices = (yield* Effect.forEach(subs, (s) =>
          Effect.map(reads.invoicesOfSubscription(s.id, { limit: 5, offset: 0 }), (list) =>
            list.map((invoice) => ({ invoice, plan: s.planName }))
          )
        )).flat()
        allInvoices.sort(
          (a, b) =>
            DateTime.toEpochMillis(b.invoice.periodStart) - DateTime.toEpochMillis(a.invoice.periodStart)
        )
        // Each merchant's name once, however many mandates, subscriptions and payments name it.
        const ids = new Set([...live, ...subs, ...payments.map((x) => x.payment)].map((x) => x.merchantId))
        const names = new Map(
          yield* Effect.forEach(ids, (id) => Effect.map(merchantName(id), (name) => [id, name] as const))
        )
        const nameOf = (id: Ids.MerchantId) => names.get(id) ?? ""
        return {
          phone: customer?.phone ?? "",
          mandates: live.map((m) => ({ mandate: m, merchant: nameOf(m.merchantId) })),
          subscriptions: subs.map((s) => ({ subscription: s, merchant: nameOf(s.merchantId) })),
          balance: yield* reads.walletBalance(customerId),
          payments: payments.map((item) => ({ item, merchant: nameOf(item.payment.merchantId) })),
          invoices: allInvoices.slice(0, 10),
          notifications: yield* reads.notifications(customerId)
        } satisfies WalletViews.Home
      })

    const homePage = (
      customerId: Ids.CustomerId,
      v: Effect.Effect.Success<typeof visit>,
      messages: { readonly error?: string; readonly notice?: ComponentChildren } = {},
      status = 200
    ) =>
      Effect.map(home(customerId), (h) =>
        respond(<WalletViews.Wallet frame={frame(v)} home={h} {...messages} />, status)
      )

    const signInPage = (
      v: Effect.Effect.Success<typeof visit>,
      p: {
        readonly phone?: string
        readonly challengeId?: string
        readonly error?: string
        readonly notice?: string
      } = {},
      status = 200
    ) => respond(<WalletViews.SignIn frame={frame(v)} {...p} />, status)

    /** A page of the visit; posts need the CSRF token, and a signed-in customer unless `open`. */
    const handle = <E, R>(
      post: boolean,
      build: (
        v: Effect.Effect.Success<typeof visit>,
        customer: Ids.CustomerId | undefined
      ) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
    ) =>
      provide(
        Effect.gen(function* () {
          const v = yield* visit
          if (post && (yield* throttled))
            return v.finish(
              respond(
                <Views.Outcome
                  frame={{ lang: v.lang, path, assets: prefix }}
                  heading={t(v.lang, "signInHeading")}
                  text={t(v.lang, "busy")}
                />,
                429
              )
            )
          if (post && !(yield* csrfValid))
            return v.finish(
              respond(
                <Views.Outcome
                  frame={{ lang: v.lang, path, assets: prefix }}
                  heading={t(v.lang, "signInHeading")}
                  text={t(v.lang, "csrf")}
                />,
                403
              )
            )
          return v.finish(yield* build(v, yield* signedIn))
        })
      )

    yield* router.get(
      route(path),
      handle(false, (v, customer) => {
        return customer === undefined
          ? Effect.succeed(signInPage(v))
          : Effect.flatMap(noticeOf(v), (notice) => homePage(customer, v, notice))
      })
    )

    /** What a redirect after an action asks the home page to say (`?done=` and `?paid=`). */
    const noticeOf = (v: Effect.Effect.Success<typeof visit>) =>
      Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
        const q = new URL(request.url, "http://pages").searchParams
        const done = q.get("done")
        if (done === "revoked") return { notice: t(v.lang, "revoked") }
        if (done === "cancelled") return { notice: t(v.lang, "cancelled") }
        const qrid = q.get("paid")
        const amount = Number(q.get("amount"))
        if (qrid !== null && /^[A-Za-z0-9]{1,64}$/.test(qrid) && Number.isSafeInteger(amount))
          return {
            notice: tn(v.lang, "qrPaid", { amount: <Ltr>{money(amount)}</Ltr>, qrid: <Ltr>{qrid}</Ltr> })
          }
        return {}
      })

    yield* router.post(
      route(`${path}/code`),
      handle(true, (v) =>
        Effect.gen(function* () {
          const phone = ((yield* form)("phone") ?? "").trim()
          const issued = yield* Effect.either(access.requestSignIn(Environment, phone))
          if (issued._tag === "Left") {
            const problem = problemOf(issued.left, v.lang)
            return signInPage(v, { phone, error: problem.text }, problem.status)
          }
          return signInPage(v, { phone, challengeId: issued.right.id })
        })
      )
    )

    yield* router.post(
      route(`${path}/sign-in`),
      handle(true, (v) =>
        Effect.gen(function* () {
          const field = yield* form
          const phone = (field("phone") ?? "").trim()
          const challenge = field("challenge_id") ?? ""
          if (!Ids.isUuid(challenge)) return signInPage(v, { phone })
          const signed = yield* Effect.either(
            access.signIn(Environment, phone, Ids.ChallengeId.make(challenge), (field("otp") ?? "").trim())
          )
          if (signed._tag === "Left") {
            const problem = problemOf(signed.left, v.lang)
            return signInPage(v, { phone, challengeId: challenge, error: problem.text }, problem.status)
          }
          return Session.start(pages, redirect(path), signed.right.id, Date.now())
        })
      )
    )

    yield* router.post(
      route(`${path}/sign-out`),
      handle(true, (v) =>
        Effect.gen(function* () {
          // Ended for every process, so a saved copy of the cookie no longer works.
          const current = yield* session
          if (current !== undefined) yield* ended.end(current.id, current.expiresAt)
          return Session.end(pages, signInPage(v, { notice: t(v.lang, "signedOut") }))
        })
      )
    )

    /** An action of a signed-in customer; signed out, the sign-in page. */
    const act = <E, R>(
      run: (
        customer: Ids.CustomerId,
        v: Effect.Effect.Success<typeof visit>
      ) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
    ) =>
      handle(true, (v, customer) =>
        customer === undefined ? Effect.succeed(signInPage(v, {}, 401)) : run(customer, v)
      )

    const idParam = Effect.map(HttpRouter.params, (p) => p.id ?? "")

    /** The confirming step of ending one of the customer's things; not theirs (or not live), the home page. */
    const confirmPage = <A,>(
      find: (customer: Ids.CustomerId, id: string) => Effect.Effect<A | undefined, unknown>,
      page: (
        found: A,
        v: Effect.Effect.Success<typeof visit>
      ) => Effect.Effect<HttpServerResponse.HttpServerResponse, unknown>
    ) =>
      handle(false, (v, customer) =>
        Effect.gen(function* () {
          if (customer === undefined) return signInPage(v, {}, 401)
          const found = yield* find(customer, yield* idParam)
          if (found === undefined) return yield* homePage(customer, v, { error: t(v.lang, "notYours") }, 404)
          return yield* page(found, v)
        })
      )

    yield* router.get(
      route(`${path}/mandates/:id/revoke`),
      confirmPage(
        (customer, id) =>
          Effect.map(mandates.listForCustomer(customer), (list) =>
            list.find((m) => m.id === id.toLowerCase() && (m.status === "ACTIVE" || m.status === "SUSPENDED"))
          ),
        (m, v) =>
          Effect.map(merchantName(m.merchantId), (merchant) =>
            respond(
              <WalletViews.Confirm
                frame={frame(v)}
                heading={t(v.lang, "revokeHeading")}
                text={tn(v.lang, "revokeText", {
                  merchant: <Given text={merchant} />,
                  title: <Given text={m.title} />
                })}
                action={`${path}/mandates/${m.id}/revoke`}
                confirm={t(v.lang, "revokeConfirm")}
              />
            )
          )
      )
    )

    yield* router.get(
      route(`${path}/subscriptions/:id/cancel`),
      confirmPage(
        (customer, id) =>
          Effect.map(subscriptions.listForCustomer(customer), (list) =>
            list.find((s) => s.id === id.toLowerCase() && s.status !== "CANCELLED")
          ),
        (s, v) =>
          Effect.map(merchantName(s.merchantId), (merchant) =>
            respond(
              <WalletViews.Confirm
                frame={frame(v)}
                heading={t(v.lang, "cancelHeading")}
                text={tn(v.lang, "cancelText", {
                  merchant: <Given text={merchant} />,
                  plan: <Given text={s.planName} />
                })}
                action={`${path}/subscriptions/${s.id}/cancel`}
                confirm={t(v.lang, "cancelConfirm")}
              />
            )
          )
      )
    )

    yield* router.post(
      route(`${path}/mandates/:id/revoke`),
      act((customer, v) =>
        Effect.gen(function* () {
          const revoked = yield* Effect.either(mandates.revokeAsCustomer(customer, yield* idParam))
          if (revoked._tag === "Right") return redirect(`${path}?done=revoked`)
          const problem = problemOf(revoked.left, v.lang)
          return yield* homePage(customer, v, { error: problem.text }, problem.status)
        })
      )
    )

    yield* router.post(
      route(`${path}/subscriptions/:id/cancel`),
      act((customer, v) =>
        Effect.gen(function* () {
          const cancelled = yield* Effect.either(subscriptions.cancelAsPayer(customer, yield* idParam))
          if (cancelled._tag === "Right") return redirect(`${path}?done=cancelled`)
          const problem = problemOf(cancelled.left, v.lang)
          return yield* homePage(customer, v, { error: problem.text }, problem.status)
        })
      )
    )

    yield* router.post(
      route(`${path}/qr/pay`),
      act((customer, v) =>
        Effect.gen(function* () {
          const field = yield* form
          const amount = parseMvr(field("amount") ?? "")
          if (amount === "invalid")
            return yield* homePage(customer, v, { error: t(v.lang, "badAmount") }, 422)
          const paid = yield* Effect.either(
            qrCodes.pay({
              environment: Environment,
              customerId: customer,
              payload: (field("payload") ?? "").trim(),
              amount
            })
          )
          if (paid._tag === "Right")
            return redirect(`${path}?paid=${encodeURIComponent(paid.right.qrid)}&amount=${paid.right.amount}`)
          const problem = problemOf(paid.left, v.lang)
          return yield* homePage(customer, v, { error: problem.text }, problem.status)
        })
      )
    )
  })
)
