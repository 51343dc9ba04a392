/**
 * The dashboard's cookie (the operator console's has its own name): the token of a person's session (`People`), HttpOnly, and nothing else. The
 * token is random and stored only as its keyed hash; the session's stage, merchant, idle and absolute
 * limits live in the database, so signing out, a password change or a revoked session ends it in every
 * process at once, and a copy of the cookie taken before is worth nothing.
 */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Person } from "@laari/core"
import { cookieOptions, type PagesConfig } from "./Request.js"

export const Cookie = "laari_dashboard"

/** A token as `Credentials.newToken` makes them (base64url); anything else is no session. */
export const tokenOf = (cookie: string | undefined): string | undefined =>
  cookie !== undefined && /^[A-Za-z0-9_-]{32,128}$/.test(cookie) ? cookie : undefined

/** Sets the session's cookie: at sign-in and whenever the session's token is replaced. */
export const start = (
  pages: PagesConfig,
  response: HttpServerResponse.HttpServerResponse,
  token: string,
  cookie: string = Cookie
) =>
  HttpServerResponse.unsafeSetCookie(
    response,
    cookie,
    token,
    cookieOptions(pages.secure, Person.AbsoluteSeconds)
  )

export const end = (
  pages: PagesConfig,
  response: HttpServerResponse.HttpServerResponse,
  cookie: string = Cookie
) => HttpServerResponse.unsafeSetCookie(response, cookie, "", cookieOptions(pages.secure, 0))
