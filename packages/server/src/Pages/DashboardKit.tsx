/**
 * What every dashboard page shares: the signed-in merchant (a secret key in an encrypted HttpOnly cookie,
 * authenticated on every request, ended sessions refused in every process), the CSRF check on posts,
 * the frame and shell of a page, and each section's scope. `Dashboard` and its section modules build
 * their routes on one `Kit`.
 */
import * as AuditActor from "../Http/AuditActor.js"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Auth, Reads } from "@laari/core"
import { Effect } from "effect"
import { BalanceApi } from "../Balance/Api.js"
import { CheckoutApi } from "../Checkout/Api.js"
import { ServerConfigTag } from "../Platform/Config.js"
import * as Access from "../Http/Access.js"
import { MandatesApi } from "../Mandates/Api.js"
import { QrCodesApi } from "../QrCodes/Api.js"
import { RefundsApi } from "../Refunds/Api.js"
import { SubscriptionsApi } from "../Subscriptions/Api.js"
import { EventsApi, WebhookEndpointsApi } from "../Webhooks/Api.js"
import * as Security from "../Http/Security.js"
import * as Session from "./DashboardSession.js"
import { d, type Word } from "./DashboardText.js"
import * as V from "./DashboardViews.js"
import { EndedSessions } from "../Platform/EndedSessions.js"
import * as Refunds from "./DashboardRefunds.js"
import { respond } from "./Html.js"
import * as Paths from "./Paths.js"
import { csrfValid, Pages, throttled, visit } from "./Request.js"

/** The first page of every list. */
export const Page = { limit: 50, offset: 0 } as const

/** A table's column headings. */
export const heads = (lang: Parameters<typeof d>[0], words: ReadonlyArray<Word>) =>
  words.map((w) => d(lang, w))

/** The scope each section needs: that of the API's read it shows (`Access`, declared on the endpoint). */
export const scopes: { readonly [S in V.Section]: Auth.Scope } = {
  mandates: Access.scopeOf(MandatesApi, "list"),
  "qr-codes": Access.scopeOf(QrCodesApi, "list"),
  "checkout-sessions": Access.scopeOf(CheckoutApi, "get"),
  subscriptions: Access.scopeOf(SubscriptionsApi, "list"),
  balance: Access.scopeOf(BalanceApi, "get"),
  refunds: Access.scopeOf(RefundsApi, "list"),
  events: Access.scopeOf(EventsApi, "list"),
  webhooks: Access.scopeOf(WebhookEndpointsApi, "list")
}

export type Visit = Effect.Effect.Success<typeof visit>

export const make = Effect.gen(function* () {
  const config = yield* ServerConfigTag
  const ended = yield* EndedSessions
  const pages = yield* Pages
  const credentials = yield* Security.credentials
  const reads = yield* Reads.Reads
  const root = `${Paths.prefixOf(config.baseUrl)}/dashboard`
  const assets = Paths.prefixOf(config.checkoutUrl)
  const provide = Effect.provideService(Pages, pages)

  const frame = (v: Visit): V.Frame => ({ lang: v.lang, root, assets, csrf: v.csrf })

  /** The signed-in merchant's principal; a revoked key, an expired session or a cookie from elsewhere is nobody. */
  const signedIn = Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const session = Session.open(pages, request.cookies[Session.Cookie])
    if (session === undefined) return undefined
    if (yield* ended.isEnded(session.id)) return undefined
    const principal = yield* Security.principalOf(credentials, session.key)
    return principal?.kind === "secret" ? { principal, session } : undefined
  })

  const signInPage = (v: Visit, error?: string, status = 200) =>
    respond(<V.SignIn frame={frame(v)} error={error} />, status)

  /** A dashboard page: signed out, the sign-in page; a post needs the CSRF token. */
  const handle = <E, R>(
    post: boolean,
    build: (v: Visit, principal: Auth.Principal) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
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
        // Its changes are the signed-in key's in the audit log.
        const page = yield* AuditActor.within(signed.principal, build(v, signed.principal))
        return v.finish(Session.start(pages, page, key, since, id))
      })
    )

  /** A page of the dashboard in its section's frame, with the signed-in merchant's name. */
  const shell: Refunds.Shell = (v, principal, { title, status, ...page }) =>
    Effect.map(reads.merchant(principal.merchantId), (merchant) =>
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

  return { root, pages, ended, credentials, provide, frame, signInPage, handle, shell, section, idParam }
})

export type Kit = Effect.Effect.Success<typeof make>
