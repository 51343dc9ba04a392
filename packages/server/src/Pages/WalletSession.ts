/**
 * The wallet app's session: the signed-in customer in an HttpOnly cookie, `<customer>.<expiry>.<hmac>`,
 * signed with the pages' key, valid for 30 minutes. Signing out clears it.
 */
import { HttpServerResponse } from "@effect/platform"
import type { Ids } from "@laari/core"
import { createHmac, timingSafeEqual } from "node:crypto"
import type { PagesConfig } from "./Request.js"

export const Cookie = "laari_wallet"
const LifetimeSeconds = 30 * 60

const sign = (key: Buffer, payload: string) =>
  createHmac("sha256", key).update(`wallet.${payload}`).digest("hex")

export const start = (
  pages: PagesConfig,
  response: HttpServerResponse.HttpServerResponse,
  customerId: Ids.CustomerId,
  nowMillis: number
) => {
  const payload = `${customerId}.${Math.floor(nowMillis / 1000) + LifetimeSeconds}`
  return HttpServerResponse.unsafeSetCookie(response, Cookie, `${payload}.${sign(pages.key, payload)}`, {
    httpOnly: true,
    sameSite: "lax",
    secure: pages.secure,
    path: "/",
    maxAge: `${LifetimeSeconds} seconds`
  })
}

export const end = (pages: PagesConfig, response: HttpServerResponse.HttpServerResponse) =>
  HttpServerResponse.unsafeSetCookie(response, Cookie, "", {
    httpOnly: true,
    sameSite: "lax",
    secure: pages.secure,
    path: "/",
    maxAge: "0 seconds"
  })

/** The signed-in customer, if the cookie is genuine and current. */
export const customerOf = (pages: PagesConfig, cookie: string | undefined, nowMillis: number) => {
  const m = /^([0-9a-f-]{36})\.(\d{1,12})\.([0-9a-f]{64})$/.exec(cookie ?? "")
  if (m === null) return undefined
  const expected = Buffer.from(sign(pages.key, `${m[1]}.${m[2]}`), "hex")
  if (!timingSafeEqual(expected, Buffer.from(m[3]!, "hex"))) return undefined
  if (Number(m[2]) * 1000 <= nowMillis) return undefined
  return m[1] as Ids.CustomerId
}
