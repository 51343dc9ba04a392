/**
 * The dashboard's session: the merchant's secret key, held only in an HttpOnly cookie, encrypted
 * (AES-256-GCM under a key derived from the pages' key) so the cookie is useless outside this service.
 * The key is authenticated again on every request, so a revoked key ends its sessions at once.
 *
 * A session ends after `IdleSeconds` without a request and `AbsoluteSeconds` after sign-in, whatever is
 * done with it: the cookie holds both times under its seal and is sealed again, with the new time seen,
 * on every page. Wall time, not the manual clock: an operator who advances the sandbox by a month must
 * not sign everyone out, and one who leaves it behind must not keep sessions alive for ever.
 */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto"
import * as EndedSessions from "../Platform/EndedSessions.js"
import { cookieOptions, type PagesConfig } from "./Request.js"

export const Cookie = "laari_dashboard"
/** Signed out after 30 minutes without a request. */
export const IdleSeconds = 30 * 60
/** Signed out 12 hours after signing in, however busy. */
export const AbsoluteSeconds = 12 * 60 * 60

export interface Session {
  /** Random, kept while the session lasts: signing out records it as ended (`ended_sessions`). */
  readonly id: string
  readonly key: string
  /** Epoch seconds of the sign-in. */
  readonly signedIn: number
  /** Epoch seconds of the last request. */
  readonly seen: number
}

const keyOf = (pages: PagesConfig) =>
  createHash("sha256").update(pages.key).update("dashboard-session").digest()

export const seal = (pages: PagesConfig, session: Session): string => {
  const iv = randomBytes(12)
  const cipher = createCipheriv("aes-256-gcm", keyOf(pages), iv)
  const text = `${session.id}.${session.signedIn}.${session.seen}.${session.key}`
  const body = Buffer.concat([cipher.update(text, "utf8"), cipher.final()])
  return [iv, cipher.getAuthTag(), body].map((b) => b.toString("base64url")).join(".")
}

/** The session in a genuine cookie that has not expired at `now` (epoch seconds, wall time). */
export const open = (
  pages: PagesConfig,
  cookie: string | undefined,
  now: number = wallSeconds()
): Session | undefined => {
  const parts = (cookie ?? "").split(".")
  if (parts.length !== 3) return undefined
  let text: string
  try {
    const [iv, tag, body] = parts.map((p) => Buffer.from(p, "base64url")) as [Buffer, Buffer, Buffer]
    const decipher = createDecipheriv("aes-256-gcm", keyOf(pages), iv)
    decipher.setAuthTag(tag)
    text = Buffer.concat([decipher.update(body), decipher.final()]).toString("utf8")
  } catch {
    return undefined
  }
  const m = /^([0-9a-f]{32})\.(\d{1,12})\.(\d{1,12})\.(.+)$/s.exec(text)
  if (m === null) return undefined
  const session = { id: m[1]!, signedIn: Number(m[2]), seen: Number(m[3]), key: m[4]! }
  if (now - session.seen >= IdleSeconds || now - session.signedIn >= AbsoluteSeconds) return undefined
  return session
}

export const wallSeconds = () => Math.floor(Date.now() / 1000)

const options = (pages: PagesConfig, seconds: number) => cookieOptions(pages.secure, seconds)

/** Sets the session's cookie, seen now: at sign-in, and again on every page while signed in. */
export const start = (
  pages: PagesConfig,
  response: HttpServerResponse.HttpServerResponse,
  secretKey: string,
  signedIn: number = wallSeconds(),
  id: string = EndedSessions.newId()
) => {
  const now = wallSeconds()
  return HttpServerResponse.unsafeSetCookie(
    response,
    Cookie,
    seal(pages, { id, key: secretKey, signedIn, seen: now }),
    options(pages, Math.max(0, Math.min(IdleSeconds, signedIn + AbsoluteSeconds - now)))
  )
}

export const end = (pages: PagesConfig, response: HttpServerResponse.HttpServerResponse) =>
  HttpServerResponse.unsafeSetCookie(response, Cookie, "", options(pages, 0))
