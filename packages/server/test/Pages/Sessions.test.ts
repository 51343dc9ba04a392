/**
 * Dashboard and wallet sessions over real HTTP: sign-out needs the page's CSRF token
 * and ends the session in the database (a saved cookie no longer works), and a dashboard session ends
 * after 30 minutes idle and 12 hours after sign-in (wall time, sealed in the cookie).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Session from "../../src/Pages/DashboardSession.js"
import type { PagesConfig } from "../../src/Pages/Request.js"
import * as ServerSecrets from "../../src/Sql/ServerSecrets.js"
import * as Fixtures from "../support/Fixtures.js"
import { serverBackends } from "../support/PostgresServer.js"
import * as TestServer from "../support/TestServer.js"

for (const backend of serverBackends)
  describe.skipIf(backend.skip)(`dashboard sessions on ${backend.name}`, { timeout: 120_000 }, () => {
    let server: TestServer.LocalTestServer
    let key: string
    let pages: PagesConfig

    beforeAll(async () => {
      server = await backend.start()
      key = (await Fixtures.merchant(server)).test
      const secret = await server.sql(
        Effect.flatMap(SqlClient.SqlClient, (sql) => ServerSecrets.ensure(sql, "pages_csrf"))
      )
      pages = { key: Buffer.from(secret), secure: false, limit: () => Effect.void }
    }, 120_000)
    afterAll(() => server?.close())

    const cookieOf = (res: Response, name: string) =>
      res.headers
        .getSetCookie()
        .map((c) => c.split(";")[0]!)
        .find((c) => c.startsWith(`${name}=`))
        ?.slice(name.length + 1)

    /** A visitor's CSRF cookie and the token of its forms. */
    const visit = async () => {
      const res = await fetch(`${server.baseUrl}/dashboard`)
      const csrf = cookieOf(res, "laari_csrf")!
      const token = /name="_csrf" value="([0-9a-f]{64})"/.exec(await res.text())![1]!
      return { csrf, token }
    }

    const post = (path: string, cookies: Record<string, string>, form: Record<string, string>) =>
      fetch(`${server.baseUrl}${path}`, {
        method: "POST",
        redirect: "manual",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          cookie: Object.entries(cookies)
            .map(([k, v]) => `${k}=${v}`)
            .join("; ")
        },
        body: new URLSearchParams(form).toString()
      })

    const mandatesWith = (session: string) =>
      fetch(`${server.baseUrl}/dashboard/mandates`, {
        headers: { cookie: `laari_dashboard=${session}` }
      }).then(async (r) => ({ status: r.status, signedIn: !(await r.text()).includes('name="key"') }))

    const signIn = async () => {
      const { csrf, token } = await visit()
      const res = await post("/dashboard/sign-in", { laari_csrf: csrf }, { key, _csrf: token })
      expect(res.status).toBe(303)
      return { csrf, token, session: cookieOf(res, Session.Cookie)! }
    }

    it("refuses a sign-out without the page's CSRF token", async () => {
      const { csrf, token, session } = await signIn()
      for (const form of [{}, { _csrf: "0".repeat(64) }] as ReadonlyArray<Record<string, string>>) {
        const res = await post("/dashboard/sign-out", { laari_csrf: csrf, laari_dashboard: session }, form)
        expect(res.status).toBe(403)
        expect(cookieOf(res, Session.Cookie)).toBeUndefined()
      }
      expect((await mandatesWith(session)).signedIn).toBe(true)
      const out = await post(
        "/dashboard/sign-out",
        { laari_csrf: csrf, laari_dashboard: session },
        { _csrf: token }
      )
      expect(out.status).toBe(303)
      expect(cookieOf(out, Session.Cookie)).toBe("")
      // A saved copy of the cookie no longer works, nor does one sealed again by a later page.
      expect((await mandatesWith(session)).signedIn).toBe(false)
    })

    it("a wallet sign-out ends the session: a saved copy of the cookie no longer signs in", async () => {
      const customer = await Fixtures.customer(server, { balance: 1_000 })
      const { csrf, token } = await visit()
      const cookies = { laari_csrf: csrf }
      const asked = await post("/wallet/code", cookies, { phone: customer.phone, _csrf: token })
      const challenge = /name="challenge_id" value="([0-9a-f-]{36})"/.exec(await asked.text())![1]!
      const notes = await server.ops("GET", `/ops/customers/${customer.id}/notifications`)
      const otp = notes.body.find((n: any) => n.kind === "one_time_code").data.code as string
      const signed = await post("/wallet/sign-in", cookies, {
        phone: customer.phone,
        challenge_id: challenge,
        otp,
        action: "sign-in",
        _csrf: token
      })
      expect(signed.status).toBe(303)
      const wallet = cookieOf(signed, "laari_wallet")!
      const home = (session: string) =>
        fetch(`${server.baseUrl}/wallet`, { headers: { cookie: `laari_wallet=${session}` } }).then(
          async (r) => (await r.text()).includes('id="mandates"')
        )
      expect(await home(wallet)).toBe(true)
      const refused = await post("/wallet/sign-out", { ...cookies, laari_wallet: wallet }, {})
      expect(refused.status).toBe(403)
      expect(await home(wallet)).toBe(true)
      const out = await post("/wallet/sign-out", { ...cookies, laari_wallet: wallet }, { _csrf: token })
      expect(out.status).toBe(200)
      expect(cookieOf(out, "laari_wallet")).toBe("")
      expect(await home(wallet)).toBe(false)
    })

    it("ends a session idle for 30 minutes, or 12 hours after sign-in", async () => {
      const now = Session.wallSeconds()
      const sealed = (signedIn: number, seen: number) =>
        Session.seal(pages, { id: "ab".repeat(16), key, signedIn, seen })
      expect((await mandatesWith(sealed(now - 60, now - 60))).signedIn).toBe(true)
      expect((await mandatesWith(sealed(now - 3_600, now - Session.IdleSeconds - 1))).signedIn).toBe(false)
      expect((await mandatesWith(sealed(now - Session.AbsoluteSeconds - 1, now - 10))).signedIn).toBe(false)
      // Each page seals the session again, seen now.
      const res = await fetch(`${server.baseUrl}/dashboard/mandates`, {
        headers: { cookie: `laari_dashboard=${sealed(now - 100, now - 1_000)}` }
      })
      const renewed = Session.open(pages, cookieOf(res, Session.Cookie))!
      expect(renewed.signedIn).toBe(now - 100)
      expect(renewed.seen).toBeGreaterThanOrEqual(now)
    })
  })
