/**
 * The customer's pages at `LAARI_CHECKOUT_URL`: mandate approval (`/mandate/<id>`) and checkout
 * (`/checkout/<id>`), on the same core services as the approval API. Every form posts back here with
 * its CSRF token and is answered by a redirect (post, redirect, get) or by the page again with the
 * problem; a finished flow ends on a result page that sends the customer to the merchant's
 * `return_url` with the outcome in its query.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Checkout, type CheckoutSession, Ids, type Mandate, Mandates, Reads } from "@laari/core"
import { DateTime, Effect } from "effect"
import { ServerConfigTag } from "../Platform/Config.js"
import * as Fonts from "./Fonts.js"
import { Given, respond } from "./Html.js"
import * as Paths from "./Paths.js"
import { problemOf, redirect, route } from "./Routing.js"
import { type Key, type Lang, statusInText, t, tn } from "./I18n.js"
import { csrfValid, form, Pages, throttled, visit } from "./Request.js"
import { css, dashboardCss, listCss } from "./Style.js"
import * as Views from "./Views.js"

/** `url` with `params` added to its query; `undefined` when it is not a URL. */
const withQuery = (url: string, params: Record<string, string>): string | undefined => {
  try {
    const u = new URL(url)
    for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v)
    return u.toString()
  } catch {
    return undefined
  }
}

const challengeOf = (request: HttpServerRequest.HttpServerRequest): string | undefined => {
  const value = new URL(request.url, "http://pages").searchParams.get("challenge")
  return value !== null && Ids.isUuid(value) ? value : undefined
}

export const layer = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function* () {
    const config = yield* ServerConfigTag
    const pages = yield* Pages
    const mandates = yield* Mandates.Mandates
    const checkout = yield* Checkout.Checkout
    const reads = yield* Reads.Reads
    const prefix = Paths.prefixOf(config.checkoutUrl)
    const provide = Effect.provideService(Pages, pages)

    const merchantName = (id: Ids.MerchantId) => Effect.map(reads.merchant(id), (m) => m?.name ?? "")

    const idParam = Effect.map(HttpRouter.params, (p) => p.id ?? "")

    const frameFor = (lang: Lang, path: string, csrf: string): Views.Frame => ({
      lang,
      path,
      assets: prefix,
      csrf
    })

    type Visit = Effect.Effect.Success<typeof visit>
    type Response = HttpServerResponse.HttpServerResponse

    /** A page that says one thing: its heading and text, answered with `status`. */
    const outcome = (lang: Lang, path: string, heading: Key, text: Key, status: number) =>
      respond(
        <Views.Outcome
          frame={{ lang, path, assets: prefix }}
          heading={t(lang, heading)}
          text={t(lang, text)}
        />,
        status
      )

    /** A page with the visitor's cookies; the page is built from the visit. */
    const page = <E, R>(build: (v: Visit) => Effect.Effect<Response, E, R>) =>
      provide(Effect.flatMap(visit, (v) => Effect.map(build(v), v.finish)))

    /** Refuses a post without this visitor's CSRF token. */
    const guarded = <E, R>(path: string, lang: Lang, post: Effect.Effect<Response, E, R>) =>
      Effect.flatMap(provide(Effect.zip(throttled, csrfValid)), ([busy, ok]) =>
        busy
          ? Effect.succeed(outcome(lang, path, "sessionClosed", "busy", 429))
          : ok
            ? post
            : Effect.succeed(outcome(lang, path, "sessionClosed", "csrf", 403))
      )

    /** `GET pathOf(id) + suffix`: the page `build` makes, given the challenge a code request sent. */
    const show = <E, R extends HttpServerRequest.HttpServerRequest>(
      pathOf: (id: string) => string,
      suffix: string,
      build: (id: string, v: Visit, challengeId: string | undefined) => Effect.Effect<Response, E, R>
    ) =>
      router.get(
        route(`${pathOf(":id")}${suffix}`),
        Effect.gen(function* () {
          const id = yield* idParam
          const request = yield* HttpServerRequest.HttpServerRequest
          return yield* page((v) => build(id, v, challengeOf(request)))
        })
      )

    /** `POST pathOf(id) + suffix`: a form of the page at `pathOf(id)`, refused without its CSRF token. */
    const posted = <E, R extends HttpServerRequest.HttpServerRequest>(
      pathOf: (id: string) => string,
      suffix: string,
      handle: (id: string, v: Visit) => Effect.Effect<Response, E, R>
    ) =>
      router.post(
        route(`${pathOf(":id")}${suffix}`),
        Effect.gen(function* () {
          const id = yield* idParam
          return yield* page((v) => guarded(pathOf(id), v.lang, handle(id, v)))
        })
      )

    /**
     * `<path>/code`: sends a one-time code to the phone's wallet, then shows the code form (a redirect with
     * the challenge); a refusal is shown on the page.
     */
    const codeRoute = <E, E2, R2 extends HttpServerRequest.HttpServerRequest>(
      pathOf: (id: string) => string,
      request: (id: string, phone: string) => Effect.Effect<{ readonly id: string }, E>,
      render: (
        id: string,
        v: Visit,
        challengeId: undefined,
        problem: { readonly status: number; readonly text: string },
        phone: string
      ) => Effect.Effect<Response, E2, R2>
    ) =>
      posted(pathOf, "/code", (id, v) =>
        Effect.gen(function* () {
          const phone = ((yield* form)("phone") ?? "").trim()
          const issued = yield* Effect.either(request(id, phone))
          if (issued._tag === "Right") return redirect(`${pathOf(id)}?challenge=${issued.right.id}`)
          // The phone field shows what was typed, to correct rather than type again.
          return yield* render(id, v, undefined, problemOf(issued.left, v.lang), phone)
        })
      )

    // ---- Mandate approval -----------------------------------------------------------------------------

    const mandatePath = (id: string) => `${prefix}/mandate/${id}`

    /** The mandate if it can still be approved, else the page that says why not. */
    const openMandate = (id: string, lang: Lang) =>
      Effect.gen(function* () {
        const path = mandatePath(id)
        const frame = { lang, path, assets: prefix }
        const found = yield* Effect.either(mandates.forApproval(id))
        if (found._tag === "Left")
          return {
            _tag: "Closed",
            response: outcome(lang, path, "linkUnknown", "linkUnknownText", 404)
          } as const
        const m = found.right
        const now = yield* DateTime.now
        // Never approved and past its window, whether or not the expiry sweep has run yet.
        const lapsed =
          (m.status === "INITIATED" && DateTime.greaterThanOrEqualTo(now, m.setupExpiresAt)) ||
          (m.status === "EXPIRED" && m.approvedAt === null)
        if (lapsed)
          return {
            _tag: "Closed",
            response: outcome(lang, path, "mandateLapsed", "mandateLapsedText", 410)
          } as const
        if (m.status !== "INITIATED")
          return {
            _tag: "Closed",
            response: respond(
              <Views.Outcome
                frame={frame}
                heading={t(lang, "mandateClosed")}
                text={t(lang, "mandateClosedText", { status: statusInText(lang, m.status) })}
              />,
              409
            )
          } as const
        return { _tag: "Open", mandate: m, name: yield* merchantName(m.merchantId) } as const
      })

    const mandatePage = (
      id: string,
      v: Visit,
      challengeId: string | undefined,
      problem?: { readonly status: number; readonly text: string },
      phone?: string
    ) =>
      Effect.map(openMandate(id, v.lang), (open) =>
        open._tag === "Closed"
          ? open.response
          : respond(
              <Views.MandateApproval
                frame={frameFor(v.lang, mandatePath(id), v.csrf)}
                mandate={open.mandate}
                merchantName={open.name}
                challengeId={challengeId}
                phone={phone}
                error={problem?.text}
              />,
              problem?.status ?? 200
            )
      )

    const mandateDone = (m: Mandate.Mandate, lang: Lang) =>
      Effect.map(merchantName(m.merchantId), (name) => {
        const approved = m.status === "ACTIVE"
        const url =
          m.returnUrl === null ? undefined : withQuery(m.returnUrl, { mandate_id: m.id, status: m.status })
        return respond(
          <Views.Outcome
            frame={{ lang, path: `${mandatePath(m.id)}/done`, assets: prefix }}
            heading={t(lang, approved ? "approved" : m.status === "DECLINED" ? "declined" : "mandateClosed")}
            text={
              approved
                ? tn(lang, "approvedText", { merchant: <Given text={name} /> })
                : m.status === "DECLINED"
                  ? tn(lang, "declinedText", { merchant: <Given text={name} /> })
                  : t(lang, "mandateClosedText", { status: statusInText(lang, m.status) })
            }
            continueTo={url === undefined ? undefined : { url, merchantName: name }}
          />
        )
      })

    yield* show(mandatePath, "", mandatePage)

    yield* codeRoute(mandatePath, mandates.requestApproval, mandatePage)

    yield* posted(mandatePath, "/answer", (id, v) =>
      Effect.gen(function* () {
        const field = yield* form
        const challenge = field("challenge_id") ?? ""
        const otp = (field("otp") ?? "").trim()
        if (!Ids.isUuid(challenge)) return yield* mandatePage(id, v, undefined)
        const answer = field("action") === "decline" ? mandates.decline : mandates.approve
        const answered = yield* Effect.either(answer(id, Ids.ChallengeId.make(challenge), otp))
        if (answered._tag === "Right") return redirect(`${mandatePath(id)}/done`)
        return yield* mandatePage(id, v, challenge, problemOf(answered.left, v.lang))
      })
    )

    yield* show(mandatePath, "/done", (id, v) =>
      Effect.flatMap(Effect.either(mandates.forApproval(id)), (found) =>
        found._tag === "Left"
          ? Effect.succeed(outcome(v.lang, mandatePath(id), "linkUnknown", "linkUnknownText", 404))
          : mandateDone(found.right, v.lang)
      )
    )

    // ---- Checkout ---------------------------------------------------------------------------------------

    const checkoutPath = (id: string) => `${prefix}/checkout/${id}`

    const sessionClosed = (s: CheckoutSession.CheckoutSession, lang: Lang) =>
      Effect.map(merchantName(s.merchantId), (name) => {
        const frame = { lang, path: checkoutPath(s.id), assets: prefix }
        if (s.status === "COMPLETE") {
          const url =
            s.returnUrl === null ? undefined : withQuery(s.returnUrl, { session_id: s.id, status: s.status })
          return respond(
            <Views.Outcome
              frame={frame}
              heading={t(lang, "paid")}
              text={
                s.price === null
                  ? tn(lang, "paidText", { merchant: <Given text={name} /> })
                  : tn(lang, "subscribedText", {
                      merchant: <Given text={name} />,
                      plan: <Given text={s.price.name} />
                    })
              }
              testMode={s.environment === "test"}
              continueTo={url === undefined ? undefined : { url, merchantName: name }}
            />
          )
        }
        return respond(
          <Views.Outcome
            frame={frame}
            heading={t(lang, "sessionClosed")}
            text={t(lang, s.status === "CANCELLED" ? "sessionCancelledText" : "sessionExpiredText")}
            testMode={s.environment === "test"}
          />,
          410
        )
      })

    const checkoutPage = (
      id: string,
      v: Visit,
      challengeId: string | undefined,
      problem?: { readonly status: number; readonly text: string },
      phone?: string
    ) =>
      Effect.gen(function* () {
        const found = yield* Effect.either(checkout.forPayment(id))
        if (found._tag === "Left")
          return outcome(v.lang, checkoutPath(id), "linkUnknown", "linkUnknownText", 404)
        const s = found.right
        const now = yield* DateTime.now
        if (s.status !== "OPEN" || DateTime.greaterThanOrEqualTo(now, s.expiresAt))
          return yield* sessionClosed(s.status === "OPEN" ? { ...s, status: "EXPIRED" } : s, v.lang)
        return respond(
          <Views.Checkout
            frame={frameFor(v.lang, checkoutPath(id), v.csrf)}
            session={s}
            merchantName={yield* merchantName(s.merchantId)}
            challengeId={challengeId}
            phone={phone}
            error={problem?.text}
          />,
          problem?.status ?? 200
        )
      })

    yield* show(checkoutPath, "", checkoutPage)

    yield* codeRoute(checkoutPath, checkout.requestPayment, checkoutPage)

    yield* posted(checkoutPath, "/pay", (id, v) =>
      Effect.gen(function* () {
        const found = yield* Effect.either(checkout.forPayment(id))
        if (found._tag === "Left") return yield* checkoutPage(id, v, undefined)
        const s = found.right
        const field = yield* form
        const challenge = field("challenge_id") ?? ""
        // Test mode: the merchant's sandbox payer pays, no code.
        const paid =
          s.environment === "test"
            ? yield* Effect.either(
                Effect.flatMap(reads.merchant(s.merchantId), (m) =>
                  m === undefined
                    ? Effect.fail(new Checkout.CheckoutSessionNotFound())
                    : checkout.settle(s.id, m.sandboxPayer)
                )
              )
            : Ids.isUuid(challenge)
              ? yield* Effect.either(
                  checkout.pay(id, Ids.ChallengeId.make(challenge), (field("otp") ?? "").trim())
                )
              : undefined
        if (paid === undefined) return yield* checkoutPage(id, v, undefined)
        if (paid._tag === "Right") return redirect(`${checkoutPath(id)}/done`)
        return yield* checkoutPage(
          id,
          v,
          s.environment === "test" ? undefined : challenge,
          problemOf(paid.left, v.lang)
        )
      })
    )

    yield* show(checkoutPath, "/done", (id, v) =>
      Effect.flatMap(Effect.either(checkout.forPayment(id)), (found) =>
        found._tag === "Left" ? checkoutPage(id, v, undefined) : sessionClosed(found.right, v.lang)
      )
    )

    for (const [file, bytes] of Object.entries(Fonts.files))
      yield* router.get(
        route(`${prefix}/assets/${file}`),
        Effect.succeed(
          HttpServerResponse.uint8Array(bytes, {
            contentType: "font/woff2",
            headers: {
              "cache-control": "public, max-age=31536000, immutable",
              "x-content-type-options": "nosniff"
            }
          })
        )
      )

    yield* router.get(
      route(`${prefix}/assets/pages.css`),
      Effect.succeed(
        HttpServerResponse.text(`${Fonts.faces(prefix)}${css}${listCss}${dashboardCss}`, {
          contentType: "text/css; charset=utf-8",
          headers: { "cache-control": "public, max-age=3600", "x-content-type-options": "nosniff" }
        })
      )
    )
  })
)
