/**
 * Staff signed in to the operator console over real HTTP, as a browser does: an account made through
 * the operator API (`POST /ops/users` with an operator role, a one-time password), its first sign-in,
 * the new password, and the authenticator's enrolment (always required there) with a code computed
 * from the secret the page shows. What comes out are the cookies a browser context or `fetch` carries.
 */
import { randomBytes } from "node:crypto"
import { expect } from "vitest"
import { cookieOf, get, post, totp } from "./DashboardPeople.js"
import type * as TestServer from "./TestServer.js"

export type Cookies = {
  readonly laari_csrf: string
  readonly laari_console: string
}

export interface SignedInStaff {
  readonly userId: string
  readonly email: string
  readonly password: string
  readonly totpSecret: string
  readonly cookies: Cookies
  readonly csrf: string
}

/** A visitor of the console: the CSRF cookie and its forms' token. */
export const visit = async (server: TestServer.TestServer) => {
  const res = await fetch(`${server.baseUrl}/ops/console`)
  const csrf = cookieOf(res, "laari_csrf")!
  const token = /name="_csrf" value="([0-9a-f]{64})"/.exec(await res.text())![1]!
  return { csrf, token }
}

/** Makes `email` a member of staff with `role` through the operator API: its one-time password. */
export const create = async (
  server: TestServer.TestServer,
  role: string,
  email = `${role}-${randomBytes(4).toString("hex")}@laari.example`
) => {
  const res = await server.ops("POST", "/ops/users", { email, operator_role: role })
  expect(res.status, JSON.stringify(res.body)).toBe(201)
  return { email, userId: res.body.user.id as string, password: res.body.password as string }
}

/** A new member of staff with `role`, signed in over HTTP through every step to `full`. */
export const signIn = async (server: TestServer.TestServer, role: string): Promise<SignedInStaff> => {
  const made = await create(server, role)
  const { csrf, token } = await visit(server)
  let res = await post(
    server,
    "/ops/console/sign-in",
    { laari_csrf: csrf },
    { email: made.email, password: made.password, _csrf: token }
  )
  expect(res.status, await res.clone().text()).toBe(303)
  expect(res.headers.get("location")).toMatch(/\/ops\/console\/password$/)
  let session = cookieOf(res, "laari_console")!
  const password = `correct horse ${randomBytes(6).toString("hex")} battery`
  res = await post(
    server,
    "/ops/console/password",
    { laari_csrf: csrf, laari_console: session },
    { current: made.password, next: password, repeat: password, _csrf: token }
  )
  expect(res.status, await res.clone().text()).toBe(303)
  // Staff always set up a second factor.
  expect(res.headers.get("location")).toMatch(/\/ops\/console\/two-factor\/enrol$/)
  session = cookieOf(res, "laari_console")!
  const page = await (
    await get(server, "/ops/console/two-factor/enrol", { laari_csrf: csrf, laari_console: session })
  ).text()
  const totpSecret = /id="totp-secret">([A-Z2-7]+)</.exec(page)![1]!
  res = await post(
    server,
    "/ops/console/two-factor/enrol",
    { laari_csrf: csrf, laari_console: session },
    { code: totp(totpSecret), _csrf: token }
  )
  expect(res.status, await res.clone().text()).toBe(200)
  expect(await res.text()).toContain('href="/ops/console/merchants"')
  session = cookieOf(res, "laari_console")!
  return {
    userId: made.userId,
    email: made.email,
    password,
    totpSecret,
    cookies: { laari_csrf: csrf, laari_console: session },
    csrf: token
  }
}
