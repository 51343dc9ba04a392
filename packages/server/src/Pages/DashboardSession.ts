/**
 * The dashboard's session: the merchant's secret key, held only in an HttpOnly cookie, encrypted
 * (AES-256-GCM under a key derived from the pages' key) so the cookie is useless outside this service.
 * The key is authenticated again on every request, so a revoked key ends its sessions at once.
 */
import { HttpServerResponse } from "@effect/platform"
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto"
import type { PagesConfig } from "./Request.js"

export const Cookie = "laari_dashboard"
const LifetimeSeconds = 8 * 60 * 60

const keyOf = (pages: PagesConfig) =>
  createHash("sha256").update(pages.key).update("dashboard-session").digest()

export const seal = (pages: PagesConfig, secretKey: string): string => {
  const iv = randomBytes(12)
  const cipher = createCipheriv("aes-256-gcm", keyOf(pages), iv)
  const body = Buffer.concat([cipher.update(secretKey, "utf8"), cipher.final()])
  return [iv, cipher.getAuthTag(), body].map((b) => b.toString("base64url")).join(".")
}

export const open = (pages: PagesConfig, cookie: string | undefined): string | undefined => {
  const parts = (cookie ?? "").split(".")
  if (parts.length !== 3) return undefined
  try {
    const [iv, tag, body] = parts.map((p) => Buffer.from(p, "base64url")) as [Buffer, Buffer, Buffer]
    const decipher = createDecipheriv("aes-256-gcm", keyOf(pages), iv)
    decipher.setAuthTag(tag)
    return Buffer.concat([decipher.update(body), decipher.final()]).toString("utf8")
  } catch {
    return undefined
  }
}

const options = (pages: PagesConfig, seconds: number) =>
  ({
    httpOnly: true,
    sameSite: "lax",
    secure: pages.secure,
    path: "/",
    maxAge: `${seconds} seconds`
  }) as const

export const start = (
  pages: PagesConfig,
  response: HttpServerResponse.HttpServerResponse,
  secretKey: string
) =>
  HttpServerResponse.unsafeSetCookie(
    response,
    Cookie,
    seal(pages, secretKey),
    options(pages, LifetimeSeconds)
  )

export const end = (pages: PagesConfig, response: HttpServerResponse.HttpServerResponse) =>
  HttpServerResponse.unsafeSetCookie(response, Cookie, "", options(pages, 0))
