/**
 * People signed in to the dashboard over real HTTP, as a browser does: an account made through the
 * operator API (`POST /ops/users`, a one-time password), its first sign-in, the new password, and for
 * owners and admins the authenticator's enrolment with a code computed here from the secret the page
 * shows (RFC 6238, `otpauth`). What comes out are the cookies a browser context or `fetch` carries.
 */
import { randomBytes } from "node:crypto"
import * as OTPAuth from "otpauth"
import { expect } from "vitest"
import type * as TestServer from "./TestServer.js"

export type Cookies = {
  readonly laari_csrf: string
  readonly laari_dashboard: string
}

export interface SignedInPerson {
  readonly userId: string
  readonly email: string
  readonly password: string
  /** The authenticator's secret, when one was enrolled. */
  readonly totpSecret: string | undefined
  readonly cookies: Cookies
  /** The CSRF token of the person's forms (the HMAC of `cookies.laari_csrf`). */
  readonly csrf: string
}

export const cookieOf = (res: Response, name: string) =>
  res.headers
    .getSetCookie()
    .map((c) => c.split(";")[0]!)
    .find((c) => c.startsWith(`${name}=`))
    ?.slice(name.length + 1)

const header = (cookies: Readonly<Record<string, string>>) =>
  Object.entries(cookies)
    .map(([k, v]) => `${k}=${v}`)
    .join("; ")

/** A GET of a dashboard path with `cookies`, not following redirects. */
export const get = (server: TestServer.TestServer, path: string, cookies: Readonly<Record<string, string>>) =>
  fetch(`${server.baseUrl}${path}`, { redirect: "manual", headers: { cookie: header(cookies) } })

/** A form post to a dashboard path with `cookies`, not following redirects. */
export const post = (
  server: TestServer.TestServer,
  path: string,
  cookies: Readonly<Record<string, string>>,
  form: Record<string, string>
) =>
  fetch(`${server.baseUrl}${path}`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: header(cookies) },
    body: new URLSearchParams(form).toString()
  })

/** A visitor's CSRF cookie and its forms' token. */
export const visit = async (server: TestServer.TestServer) => {
  const res = await fetch(`${server.baseUrl}/dashboard`)
  const csrf = cookieOf(res, "laari_csrf")!
  const token = /name="_csrf" value="([0-9a-f]{64})"/.exec(await res.text())![1]!
  return { csrf, token }
}

/** The six-digit code of `secret` for the 30-second step `steps` from now. */
export const totp = (secret: string, steps = 0) =>
  new OTPAuth.TOTP({
    secret: OTPAuth.Secret.fromBase32(secret),
    algorithm: "SHA1",
    digits: 6,
    period: 30
  }).generate({
    timestamp: Date.now() + steps * 30_000
  })

/** Makes `email` a member of the merchant's team with `role` through the operator API: its one-time password. */
export const create = async (
  server: TestServer.TestServer,
  merchantId: string,
  role: string,
  email = `${role}-${randomBytes(4).toString("hex")}@example.mv`
) => {
  const res = await server.ops("POST", "/ops/users", { merchant_id: merchantId, email, role })
  expect(res.status, res.text).toBe(201)
  return { email, userId: res.body.user.id as string, password: res.body.password as string }
}

/**
 * A new member with `role`, signed in over HTTP: the one-time password, a new one, and an authenticator
 * when the role needs one (or `enrol` asks).
 */
export const signIn = async (
  server: TestServer.TestServer,
  merchantId: string,
  role: string,
  options: { readonly enrol?: boolean; readonly environment?: "test" | "live" } = {}
): Promise<SignedInPerson> => {
  const made = await create(server, merchantId, role)
  const { csrf, token } = await visit(server)
  let res = await post(
    server,
    "/dashboard/sign-in",
    { laari_csrf: csrf },
    { email: made.email, password: made.password, _csrf: token }
  )
  expect(res.status, await res.clone().text()).toBe(303)
  let session = cookieOf(res, "laari_dashboard")!
  expect(res.headers.get("location")).toMatch(/\/dashboard\/password$/)
  const password = `correct horse ${randomBytes(6).toString("hex")} battery`
  res = await post(
    server,
    "/dashboard/password",
    { laari_csrf: csrf, laari_dashboard: session },
    {
      current: made.password,
      next: password,
      repeat: password,
      _csrf: token
    }
  )
  expect(res.status, await res.clone().text()).toBe(303)
  session = cookieOf(res, "laari_dashboard")!
  let totpSecret: string | undefined
  const needs = role === "owner" || role === "admin" || options.enrol === true
  if (needs) {
    if (!res.headers.get("location")!.endsWith("/two-factor/enrol")) {
      expect(options.enrol).toBe(true)
    }
    const page = await (
      await get(server, "/dashboard/two-factor/enrol", { laari_csrf: csrf, laari_dashboard: session })
    ).text()
    totpSecret = /id="totp-secret">([A-Z2-7]+)</.exec(page)![1]!
    res = await post(
      server,
      "/dashboard/two-factor/enrol",
      { laari_csrf: csrf, laari_dashboard: session },
      {
        code: totp(totpSecret),
        _csrf: token
      }
    )
    expect(res.status, await res.clone().text()).toBe(200)
    session = cookieOf(res, "laari_dashboard")!
  } else {
    expect(res.headers.get("location")).toMatch(/\/dashboard\/mandates$/)
  }
  if (options.environment === "live") {
    res = await post(
      server,
      "/dashboard/switch",
      { laari_csrf: csrf, laari_dashboard: session },
      {
        to: `${merchantId}:live`,
        _csrf: token
      }
    )
    expect(res.status).toBe(303)
    session = cookieOf(res, "laari_dashboard")!
  }
  return {
    userId: made.userId,
    email: made.email,
    password,
    totpSecret,
    cookies: { laari_csrf: csrf, laari_dashboard: session },
    csrf: token
  }
}

/** The person's cookies in a browser context at `baseUrl`. */
export const browserCookies = (baseUrl: string, person: SignedInPerson) =>
  Object.entries(person.cookies).map(([name, value]) => ({ name, value, url: baseUrl }))
