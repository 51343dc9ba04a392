/**
 * The wallet app's session: the signed-in customer in an HttpOnly cookie,
 * `<customer>.<expiry>.<session id>.<hmac>`, signed with the pages' key, valid for 30 minutes. Signing out
 * clears the cookie and ends the session for good (`EndedSessions`), so a saved copy no longer works.
 * Wall time, not the manual clock (as the dashboard's): a sandbox clock left behind must not keep a
 * session alive for ever, nor one moved on end it.
 */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type { Ids } from "@laari/core"
import { createHmac, timingSafeEqual } from "node:crypto"
import * as EndedSessions from "../Platform/EndedSessions.js"
import { cookieOptions, type PagesConfig } from "./Request.js"

export const Cookie = "laari_wallet"
const LifetimeSeconds = 30 * 60

export interface Session {
  readonly customerId: Ids.CustomerId
  /** Random, kept while the session lasts: signing out records it as ended. */
  readonly id: string
  /** When the cookie stops working. */
  readonly expiresAt: Date
}

const sign = (key: Buffer, payload: string) =>
  createHmac("sha256", key).update(`wallet.${payload}`).digest("hex")

const options = (pages: PagesConfig, seconds: number) => cookieOptions(pages.secure, seconds)

export const start = (
  pages: PagesConfig,
  response: HttpServerResponse.HttpServerResponse,
  customerId: Ids.CustomerId,
  nowMillis: number
) => {
  const payload = `${customerId}.${Math.floor(nowMillis / 1000) + LifetimeSeconds}.${EndedSessions.newId()}`
  return HttpServerResponse.unsafeSetCookie(
    response,
    Cookie,
    `${payload}.${sign(pages.key, payload)}`,
    options(pages, LifetimeSeconds)
  )
}

export const end = (pages: PagesConfig, response: HttpServerResponse.HttpServerResponse) =>
  HttpServerResponse.unsafeSetCookie(response, Cookie, "", options(pages, 0))

/** The session, if the cookie is genuine and current (signed out or not: see `EndedSessions`). */
export const open = (
  pages: PagesConfig,
  cookie: string | undefined,
  nowMillis: number
): Session | undefined => {
  const m = /^([0-9a-f-]{36})\.(\d{1,12})\.([0-9a-f]{32})\.([0-9a-f]{64})$/.exec(cookie ?? "")
  if (m === null) return undefined
  const expected = Buffer.from(sign(pages.key, `${m[1]}.${m[2]}.${m[3]}`), "hex")
  if (!timingSafeEqual(expected, Buffer.from(m[4]!, "hex"))) return undefined
  if (Number(m[2]) * 1000 <= nowMillis) return undefined
  return { customerId: m[1] as Ids.CustomerId, id: m[3]!, expiresAt: new Date(Number(m[2]) * 1000) }
}
