/**
 * The operator console over real HTTP: staff made through the operator API sign in with the one-time
 * password, a new one and an enrolled authenticator; the permission matrix of every console route
 * (`ConsoleAccess.Routes`) against the three operator roles, both directions; a merchant's person is
 * refused with the generic message; a change made there is the person's in the audit log; and the
 * operator API's token neither opens the console nor is needed by it.
 */
import { Role } from "@laari/core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Access from "../../src/Pages/ConsoleAccess.js"
import * as Staff from "../support/ConsolePeople.js"
import * as People from "../support/DashboardPeople.js"
import * as Fixtures from "../support/Fixtures.js"
import { serverBackends } from "../support/PostgresServer.js"
import type * as TestServer from "../support/TestServer.js"

const unknown = "00000000-0000-4000-8000-000000000000"

/** The route's path with its parameters filled by unknown ids. */
const concrete = (path: string) => `/ops/console${path.replace(/:[a-z]+/g, unknown)}`

// One backend is enough for the matrix (the rule is the pages', not the store's); PGlite starts quickest.
const backend = serverBackends[0]!

describe(`the operator console on ${backend.name}`, { timeout: 300_000 }, () => {
  let server: TestServer.LocalTestServer
  const staff = new Map<Role.OperatorRole, Staff.SignedInStaff>()

  beforeAll(async () => {
    server = await backend.start()
    for (const role of Role.operatorRoles) staff.set(role, await Staff.signIn(server, role))
  }, 300_000)
  afterAll(() => server?.close())

  for (const role of Role.operatorRoles)
    it(`${role}: allowed exactly where its permissions say`, async () => {
      const person = staff.get(role)!
      const allowed: Array<string> = []
      const refused: Array<string> = []
      for (const name of Access.routeNames) {
        const { method, path, permission } = Access.Routes[name]
        // A session's end could end this person's session: not part of the walk.
        if (name === "sessionEnd") continue
        const url = concrete(path)
        const res =
          method === "GET"
            ? await People.get(server, url, person.cookies)
            : await People.post(server, url, person.cookies, { _csrf: person.csrf })
        const text = await res.text()
        const named = text.includes(`does not have the permission ${permission}`)
        if (Role.operatorCan(role, permission)) {
          expect(res.status === 403 && named, `${role} ${method} ${path}`).toBe(false)
          expect(res.status, `${role} ${method} ${path}: ${text.slice(0, 300)}`).toBeLessThan(500)
          allowed.push(name)
        } else {
          expect(res.status, `${role} ${method} ${path}`).toBe(403)
          expect(named, `${role} ${method} ${path} names ${permission}`).toBe(true)
          refused.push(name)
        }
      }
      expect(allowed.length).toBeGreaterThan(0)
      if (role !== "ops_admin") expect(refused.length).toBeGreaterThan(0)
    })

  it("refuses a post without the CSRF token and a page without a session, for every route", async () => {
    const person = staff.get("ops_admin")!
    for (const name of Access.routeNames) {
      const { method, path } = Access.Routes[name]
      const url = concrete(path)
      if (method === "POST") {
        const forged = await People.post(server, url, person.cookies, { _csrf: "0".repeat(64) })
        expect(forged.status, `${path} without the token`).toBe(403)
      }
      const anonymous =
        method === "GET"
          ? await People.get(server, url, { laari_csrf: person.cookies.laari_csrf })
          : await People.post(server, url, { laari_csrf: person.cookies.laari_csrf }, { _csrf: person.csrf })
      expect(await anonymous.text(), `${method} ${path} signed out`).toContain('name="password"')
    }
  })

  it("refuses a merchant's person at sign-in with the generic message, and a dashboard session opens nothing", async () => {
    const m = await Fixtures.merchant(server)
    const member = await People.create(server, m.id, "owner")
    const { csrf, token } = await Staff.visit(server)
    const res = await People.post(
      server,
      "/ops/console/sign-in",
      { laari_csrf: csrf },
      { email: member.email, password: member.password, _csrf: token }
    )
    expect(res.status).toBe(401)
    expect(People.cookieOf(res, "laari_console")).toBeUndefined()
    expect(await res.text()).toContain("That email, password or code is not right.")
    // The same words as a wrong password of a member of staff.
    const made = await Staff.create(server, "ops_support")
    const wrong = await People.post(
      server,
      "/ops/console/sign-in",
      { laari_csrf: csrf },
      { email: made.email, password: `${made.password}x`, _csrf: token }
    )
    expect(wrong.status).toBe(401)
    expect(await wrong.text()).toContain("That email, password or code is not right.")

    const signed = await People.signIn(server, m.id, "viewer")
    const page = await People.get(server, "/ops/console/merchants", {
      laari_csrf: signed.cookies.laari_csrf,
      laari_console: signed.cookies.laari_dashboard
    })
    expect(await page.text()).toContain('name="password"')
  })

  it("needs no ops token, and the ops token opens no console page; the ops API still needs its token", async () => {
    const signedOut = await fetch(`${server.baseUrl}/ops/console/merchants`, {
      headers: { authorization: "Bearer nonsense" }
    })
    expect(signedOut.status).toBe(200)
    expect(await signedOut.text()).toContain('name="password"')
    expect(signedOut.headers.get("content-security-policy")).toContain("default-src 'none'")
    expect((await fetch(`${server.baseUrl}/ops/merchants`)).status).toBe(401)
  })

  it("creates a merchant with an outlet, as the person in the audit log", async () => {
    const person = staff.get("ops_support")!
    const name = `Console Cafe ${Date.now()}`
    const res = await People.post(server, "/ops/console/merchants", person.cookies, {
      _csrf: person.csrf,
      name,
      outlet: "Male branch"
    })
    expect(res.status, await res.clone().text()).toBe(303)
    const location = res.headers.get("location")!
    const id = /\/ops\/console\/merchants\/([0-9a-f-]{36})/.exec(location)![1]!
    const page = await (await People.get(server, location, person.cookies)).text()
    expect(page).toContain(name)
    expect(page).toContain("Male branch")
    const listed = await server.ops("GET", "/ops/merchants")
    expect(listed.body.map((m: { id: string }) => m.id)).toContain(id)
    const events = await server.ops("GET", `/ops/audit-events?action=merchant.create&limit=100`)
    expect(events.status, events.text).toBe(200)
    const made = events.body.data.find((e: { resource: { id: string } }) => e.resource.id === id)
    expect(made?.actor, events.text).toEqual({ kind: "user", id: person.userId })
    // The console's audit page shows every merchant's rows.
    const audit = await (await People.get(server, "/ops/console/audit", person.cookies)).text()
    expect(audit).toContain("merchant.create")
  })

  it("issues and revokes a key, and toggles a feature gate, as an ops_admin", async () => {
    const person = staff.get("ops_admin")!
    const m = await Fixtures.merchant(server)
    const issued = await People.post(server, `/ops/console/merchants/${m.id}/keys`, person.cookies, {
      _csrf: person.csrf,
      environment: "test",
      kind: "secret"
    })
    expect(issued.status).toBe(200)
    const key = /id="new-key">(sk_test_[A-Za-z0-9_]+)</.exec(await issued.text())![1]!
    const keys = await server.ops("GET", `/ops/merchants/${m.id}/keys`)
    const stored = keys.body.find((k: { prefix?: string; key_prefix?: string; id: string }) =>
      key.startsWith(((k.prefix ?? k.key_prefix) as string).replace(/…$/, ""))
    )
    expect(stored, keys.text).toBeDefined()
    const revoked = await People.post(
      server,
      `/ops/console/merchants/${m.id}/keys/${stored.id}/revoke`,
      person.cookies,
      { _csrf: person.csrf }
    )
    expect(revoked.status).toBe(303)
    const after = await server.ops("GET", `/ops/merchants/${m.id}/keys`)
    expect(after.body.find((k: { id: string }) => k.id === stored.id).revoked_at).not.toBeNull()
    const gated = await People.post(server, `/ops/console/merchants/${m.id}/features`, person.cookies, {
      _csrf: person.csrf,
      gates: "1",
      mandates_live: "on"
    })
    expect(gated.status).toBe(303)
    const merchants = await server.ops("GET", "/ops/merchants")
    const found = merchants.body.find((x: { id: string }) => x.id === m.id)
    expect(JSON.stringify(found), merchants.text).toMatch(/"mandatesLive":true/)
    expect(JSON.stringify(found)).toMatch(/"subscriptionsLive":false/)
  })

  it("creates a customer and finds them by phone", async () => {
    const person = staff.get("ops_admin")!
    const phone = `7${String(Date.now()).slice(-6)}`
    const made = await People.post(server, "/ops/console/customers", person.cookies, {
      _csrf: person.csrf,
      "new-phone": phone,
      "new-name": "Aishath",
      "new-balance": "5000",
      "new-environment": "test"
    })
    expect(made.status, await made.clone().text()).toBe(303)
    const page = await (await People.get(server, made.headers.get("location")!, person.cookies)).text()
    expect(page).toContain("Aishath")
    expect(page).toContain("50.00")
    const again = await People.post(server, "/ops/console/customers", person.cookies, {
      _csrf: person.csrf,
      "new-phone": phone,
      "new-environment": "test"
    })
    expect(again.status).toBe(409)
  })

  it("advances the manual clock", async () => {
    const person = staff.get("ops_admin")!
    const before = await server.ops("GET", "/ops/clock")
    const res = await People.post(server, "/ops/console/clock", person.cookies, {
      _csrf: person.csrf,
      seconds: "3600"
    })
    const text = await res.text()
    expect(res.status, text.slice(0, 300)).toBe(200)
    expect(text).toContain("Clock advanced")
    const after = await server.ops("GET", "/ops/clock")
    expect(after.body.now).not.toBe(before.body.now)
  })
})
