/**
 * What every hosted page reads from a request: the language, the CSRF token of its forms, and the
 * fields of a posted form.
 *
 * CSRF: a random `laari_csrf` cookie (HttpOnly, SameSite=Lax, Secure behind https) and, in each form,
 * its HMAC under the pages' key, a server secret (`Platform/ServerSecrets`: shared by every process). A
 * post whose token is not the HMAC of its cookie is refused; another site can neither read the cookie
 * nor compute the token.
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as UrlParams from "@effect/platform/UrlParams"
import { Context, Effect, Layer, Option } from "effect"
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto"
import { ServerConfigTag } from "../Platform/Config.js"
import { ServerSecrets } from "../Platform/ServerSecrets.js"
import * as RateLimit from "../Http/RateLimit.js"
import * as RateLimits from "../Platform/RateLimits.js"
import { type Lang, parseLang } from "./I18n.js"

export const CsrfCookie = "laari_csrf"
export const LangCookie = "laari_lang"
const KeyName = "pages_csrf"

export interface PagesConfig {
  /** The pages' HMAC key. */
  readonly key: Buffer
  /** The customer endpoints' limit per client address, applied to every form post. */
  readonly limit: RateLimits.Limiter
  /** Cookies get `Secure` when the pages are served over https. */
  readonly secure: boolean
}

export class Pages extends Context.Tag("laari/server/Pages")<Pages, PagesConfig>() {}

/** Reads the pages' key, making it first if this database has none. */
export const layer = Layer.effect(
  Pages,
  Effect.gen(function* () {
    const config = yield* ServerConfigTag
    const key = yield* (yield* ServerSecrets).ensure(KeyName)
    return {
      key: Buffer.from(key),
      secure: config.checkoutUrl.startsWith("https:"),
      limit: (yield* RateLimits.RateLimits).perAddress
    }
  }).pipe(Effect.orDie)
)

const tokenOf = (key: Buffer, cookie: string): string =>
  createHmac("sha256", key).update(cookie).digest("hex")

export interface Visit {
  readonly lang: Lang
  /** The CSRF token for this visitor's forms. */
  readonly csrf: string
  /** Sets the cookies this visit needs (a new CSRF cookie, a chosen language). */
  readonly finish: (response: HttpServerResponse.HttpServerResponse) => HttpServerResponse.HttpServerResponse
}

/** The pages' cookies: HttpOnly, same-site lax, secure behind https, for the whole site. */
export const cookieOptions = (secure: boolean, maxAgeSeconds: number) =>
  ({ httpOnly: true, sameSite: "lax", secure, path: "/", maxAge: `${maxAgeSeconds} seconds` }) as const

export const visit: Effect.Effect<Visit, never, Pages | HttpServerRequest.HttpServerRequest> = Effect.gen(
  function* () {
    const pages = yield* Pages
    const request = yield* HttpServerRequest.HttpServerRequest
    const query = new URL(request.url, "http://pages").searchParams
    const chosen = parseLang(query.get("lang"))
    const lang = chosen ?? parseLang(request.cookies[LangCookie]) ?? "en"
    const existing = request.cookies[CsrfCookie]
    const cookie = existing !== undefined && /^[0-9a-f]{64}$/.test(existing) ? existing : undefined
    const value = cookie ?? randomBytes(32).toString("hex")
    return {
      lang,
      csrf: tokenOf(pages.key, value),
      finish: (response) => {
        let r = response
        if (cookie === undefined)
          r = HttpServerResponse.unsafeSetCookie(r, CsrfCookie, value, cookieOptions(pages.secure, 86_400))
        if (chosen !== undefined)
          r = HttpServerResponse.unsafeSetCookie(
            r,
            LangCookie,
            chosen,
            cookieOptions(pages.secure, 31_536_000)
          )
        return r
      }
    }
  }
)

/** A posted form: a field's first value, and `all` its values (checkboxes). */
export interface Form {
  (name: string): string | undefined
  readonly all: (name: string) => ReadonlyArray<string>
}

/** The posted form's fields; an unreadable body is an empty form. */
export const form: Effect.Effect<Form, never, HttpServerRequest.HttpServerRequest> = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const params = yield* request.urlParamsBody.pipe(Effect.orElseSucceed(() => UrlParams.empty))
  return Object.assign((name: string) => Option.getOrUndefined(UrlParams.getFirst(params, name)), {
    all: (name: string) => UrlParams.getAll(params, name)
  })
})

/** Whether the posted `_csrf` is the HMAC of this visitor's cookie. */
export const csrfValid: Effect.Effect<boolean, never, Pages | HttpServerRequest.HttpServerRequest> =
  Effect.gen(function* () {
    const pages = yield* Pages
    const request = yield* HttpServerRequest.HttpServerRequest
    const field = (yield* form)("_csrf") ?? ""
    const cookie = request.cookies[CsrfCookie]
    if (cookie === undefined || !/^[0-9a-f]{64}$/.test(field)) return false
    return timingSafeEqual(Buffer.from(tokenOf(pages.key, cookie), "hex"), Buffer.from(field, "hex"))
  })

/**
 * Whether this client address is over the limit of the customer endpoints (sign-in and code requests
 * included); the answer carries the limit's headers either way.
 */
export const throttled: Effect.Effect<boolean, never, Pages | HttpServerRequest.HttpServerRequest> =
  Effect.gen(function* () {
    const pages = yield* Pages
    const request = yield* HttpServerRequest.HttpServerRequest
    const key = RateLimit.addressKey(Option.getOrElse(request.remoteAddress, () => "unknown"))
    return yield* pages.limit(key).pipe(
      Effect.as(false),
      Effect.catchAll(() => Effect.succeed(true))
    )
  })
