/**
 * The permission matrix over real HTTP: every page and action of the signed-in dashboard
 * (`DashboardAccess.Routes`) against a person of every role. Where the role lacks the route's permission
 * the answer is the `403` page naming it, before anything is read or changed; where it holds it, the
 * route runs (whatever it then answers, never that `403`). Ids in paths are unknown ones, so an allowed
 * action finds nothing to change.
 */
import { Role } from "@laari/core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Access from "../../src/Pages/DashboardAccess.js"
import * as People from "../support/DashboardPeople.js"
import * as Fixtures from "../support/Fixtures.js"
import { serverBackends } from "../support/PostgresServer.js"
import type * as TestServer from "../support/TestServer.js"

const unknown = "00000000-0000-4000-8000-000000000000"

/** The route's path with its parameters filled by unknown ids. */
const concrete = (path: string) => `/dashboard${path.replace(/:[a-z]+/g, unknown)}`

// One backend is enough for the matrix (the rule is the pages', not the store's); PGlite starts quickest.
const backend = serverBackends[0]!

describe(`the dashboard's permission matrix on ${backend.name}`, { timeout: 300_000 }, () => {
  let server: TestServer.LocalTestServer
  const people = new Map<Role.MerchantRole, People.SignedInPerson>()

  beforeAll(async () => {
    server = await backend.start()
    const m = await Fixtures.merchant(server)
    for (const role of Role.merchantRoles) people.set(role, await People.signIn(server, m.id, role))
  }, 300_000)
  afterAll(() => server?.close())

  for (const role of Role.merchantRoles)
    it(`${role}: allowed exactly where its permissions say`, async () => {
      const person = people.get(role)!
      const allowed: Array<string> = []
      const refused: Array<string> = []
      for (const name of Access.routeNames) {
        const { method, path, permission } = Access.Routes[name]
        // A switch or a session's end would replace or end this person's session: checked last, below.
        if (name === "switchTo" || name === "sessionEnd") continue
        const url = concrete(path)
        const res =
          method === "GET"
            ? await People.get(server, url, person.cookies)
            : await People.post(server, url, person.cookies, { _csrf: person.csrf })
        const text = await res.text()
        const named = text.includes(`lacks the ${permission} permission`)
        if (Role.can(role, permission)) {
          expect(res.status === 403 && named, `${role} ${method} ${path}`).toBe(false)
          expect(res.status, `${role} ${method} ${path}: ${text.slice(0, 300)}`).toBeLessThan(500)
          allowed.push(name)
        } else {
          expect(res.status, `${role} ${method} ${path}`).toBe(403)
          expect(named, `${role} ${method} ${path} names ${permission}`).toBe(true)
          refused.push(name)
        }
      }
      // Both directions were exercised for every role but the owner, who holds everything.
      expect(allowed.length).toBeGreaterThan(0)
      if (role !== "owner") expect(refused.length).toBeGreaterThan(0)
    })

  it("refuses a post without the CSRF token and a page without a session, for every route", async () => {
    const person = people.get("owner")!
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
      const text = await anonymous.text()
      expect(text, `${method} ${path} signed out`).toContain('name="password"')
      expect(text).not.toContain("Sign out")
    }
  })

  it("switches merchant only among the person's own teams, with a new session id", async () => {
    const owner = people.get("owner")!
    const other = await Fixtures.merchant(server)
    const before = owner.cookies.laari_dashboard
    // Another merchant's id: no switch, and the session stays as it was.
    const refused = await People.post(server, "/dashboard/switch", owner.cookies, {
      _csrf: owner.csrf,
      to: `${other.id}:test`
    })
    expect(People.cookieOf(refused, "laari_dashboard")).toBeUndefined()
    expect((await People.get(server, "/dashboard/team", owner.cookies)).status).toBe(200)
    // Its own merchant's live environment: a new token, the old one ended.
    const [merchantId] = [...(await memberships(owner))]
    const switched = await People.post(server, "/dashboard/switch", owner.cookies, {
      _csrf: owner.csrf,
      to: `${merchantId}:live`
    })
    const token = People.cookieOf(switched, "laari_dashboard")!
    expect(token).toBeDefined()
    expect(token).not.toBe(before)
    const live = await (
      await People.get(server, "/dashboard/mandates", { ...owner.cookies, laari_dashboard: token })
    ).text()
    expect(live).toContain("LIVE")
    const old = await (await People.get(server, "/dashboard/mandates", owner.cookies)).text()
    expect(old).toContain('name="password"')
  })

  /** The merchant ids on the person's switcher. */
  const memberships = async (person: People.SignedInPerson) => {
    const page = await (await People.get(server, "/dashboard/account", person.cookies)).text()
    return new Set([...page.matchAll(/<option value="([0-9a-f-]{36}):test"/g)].map((m) => m[1]!))
  }
})
