/**
 * Dashboard and wallet sessions over real HTTP: sign-out needs the page's CSRF token and ends the session
 * in the database (a saved cookie no longer works); a dashboard session ends after 30 minutes idle and
 * 12 hours after sign-in (wall time, kept with the session); a password change ends every other session;
 * a TOTP code signs in once; a wrong password and an unknown email get the same answer.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as People from "../support/DashboardPeople.js"
import * as Fixtures from "../support/Fixtures.js"
import { serverBackends } from "../support/PostgresServer.js"
import * as TestServer from "../support/TestServer.js"

for (const backend of serverBackends)
  describe.skipIf(backend.skip)(`dashboard sessions on ${backend.name}`, { timeout: 120_000 }, () => {
    let server: TestServer.LocalTestServer
    let merchantId: string

    beforeAll(async () => {
      server = await backend.start()
      merchantId = (await Fixtures.merchant(server)).id
    }, 120_000)
    afterAll(() => server?.close())

    const { cookieOf } = People

    /** A visitor's CSRF cookie and the token of its forms. */
    const visit = () => People.visit(server)

    const post = (path: string, cookies: Readonly<Record<string, string>>, form: Record<string, string>) =>
      People.post(server, path, cookies, form)

    /** Whether the session cookie `session` opens the dashboard. */
    const opens = async (session: string) => {
      const r = await People.get(server, "/dashboard/mandates", { laari_dashboard: session })
      return r.status === 200 && (await r.text()).includes("Sign out")
    }

    it("refuses a sign-out without the page's CSRF token; one with it ends the session everywhere", async () => {
      const person = await People.signIn(server, merchantId, "viewer")
      const session = person.cookies.laari_dashboard
      for (const form of [{}, { _csrf: "0".repeat(64) }] as ReadonlyArray<Record<string, string>>) {
        const res = await post("/dashboard/sign-out", person.cookies, form)
        expect(res.status).toBe(403)
        expect(cookieOf(res, "laari_dashboard")).toBeUndefined()
      }
      expect(await opens(session)).toBe(true)
      const out = await post("/dashboard/sign-out", person.cookies, { _csrf: person.csrf })
      expect(out.status).toBe(200)
      expect(cookieOf(out, "laari_dashboard")).toBe("")
      // A saved copy of the cookie no longer works.
      expect(await opens(session)).toBe(false)
    })

    it("answers a wrong password and an unknown email alike, and signs in with the right one", async () => {
      const person = await People.signIn(server, merchantId, "support")
      const { csrf, token } = await visit()
      const tries = await Promise.all(
        [
          { email: person.email, password: "not the password at all" },
          { email: "nobody-here@example.mv", password: "not the password at all" }
        ].map(async (form) => {
          const res = await post("/dashboard/sign-in", { laari_csrf: csrf }, { ...form, _csrf: token })
          const text = (await res.text()).replace(/value="[^"]*"/g, "")
          return { status: res.status, text, cookie: cookieOf(res, "laari_dashboard") }
        })
      )
      expect(tries[0]!.status).toBe(401)
      expect(tries[1]).toEqual(tries[0])
      expect(tries[0]!.cookie).toBeUndefined()
      expect(tries[0]!.text).toContain("That email, password or code is not right.")
      const right = await post(
        "/dashboard/sign-in",
        { laari_csrf: csrf },
        { email: person.email, password: person.password, _csrf: token }
      )
      expect(right.status).toBe(303)
      expect(right.headers.get("location")).toMatch(/\/dashboard\/mandates$/)
      expect(await opens(cookieOf(right, "laari_dashboard")!)).toBe(true)
    })

    it("a password change ends every other session of the account, and keeps this one", async () => {
      const person = await People.signIn(server, merchantId, "developer")
      const { csrf, token } = await visit()
      const second = await post(
        "/dashboard/sign-in",
        { laari_csrf: csrf },
        { email: person.email, password: person.password, _csrf: token }
      )
      const other = cookieOf(second, "laari_dashboard")!
      expect(await opens(other)).toBe(true)
      const next = `${person.password} and more`
      const changed = await post("/dashboard/password", person.cookies, {
        current: person.password,
        next,
        repeat: next,
        _csrf: person.csrf
      })
      expect(changed.status).toBe(303)
      const kept = cookieOf(changed, "laari_dashboard")!
      expect(kept).not.toBe(person.cookies.laari_dashboard)
      expect(await opens(kept)).toBe(true)
      expect(await opens(other)).toBe(false)
      expect(await opens(person.cookies.laari_dashboard)).toBe(false)
    })

    it("accepts a TOTP code once: the same code cannot sign in a second time", async () => {
      const person = await People.signIn(server, merchantId, "admin")
      const { csrf, token } = await visit()
      const passwordStep = async () => {
        const res = await post(
          "/dashboard/sign-in",
          { laari_csrf: csrf },
          { email: person.email, password: person.password, _csrf: token }
        )
        expect(res.headers.get("location")).toMatch(/\/dashboard\/two-factor$/)
        return cookieOf(res, "laari_dashboard")!
      }
      // The next step's code: the enrolment used this step's.
      const code = People.totp(person.totpSecret!, 1)
      const first = await passwordStep()
      expect(await opens(first)).toBe(false)
      const ok = await post(
        "/dashboard/two-factor",
        { laari_csrf: csrf, laari_dashboard: first },
        { code, _csrf: token }
      )
      expect(ok.status).toBe(303)
      expect(await opens(cookieOf(ok, "laari_dashboard")!)).toBe(true)
      // An authenticator enrolled is not replaced from a session alone.
      const full = cookieOf(ok, "laari_dashboard")!
      const enrol = await People.get(server, "/dashboard/two-factor/enrol", { laari_dashboard: full })
      expect(enrol.status).toBe(303)
      expect(enrol.headers.get("location")).toMatch(/\/dashboard\/mandates$/)
      const replaced = await post(
        "/dashboard/two-factor/enrol",
        { laari_csrf: csrf, laari_dashboard: full },
        {
          code: "123456",
          _csrf: token
        }
      )
      expect(replaced.status).toBe(303)
      const again = await passwordStep()
      const replay = await post(
        "/dashboard/two-factor",
        { laari_csrf: csrf, laari_dashboard: again },
        { code, _csrf: token }
      )
      expect(replay.status).toBe(401)
      expect(await opens(again)).toBe(false)
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
      const person = await People.signIn(server, merchantId, "viewer")
      const session = person.cookies.laari_dashboard
      const age = (column: "last_seen_at" | "signed_in_at", seconds: number) =>
        server.sql(
          Effect.flatMap(SqlClient.SqlClient, (sql) =>
            sql.unsafe(
              `UPDATE user_sessions SET ${column} = now() - make_interval(secs => ${seconds}) WHERE user_id = $1 AND ended_at IS NULL`,
              [person.userId]
            )
          )
        )
      await age("last_seen_at", 29 * 60)
      expect(await opens(session)).toBe(true)
      // That request moved the last-seen time to now.
      await age("last_seen_at", 30 * 60 + 1)
      expect(await opens(session)).toBe(false)
      const fresh = await People.signIn(server, merchantId, "viewer")
      await server.sql(
        Effect.flatMap(SqlClient.SqlClient, (sql) =>
          sql.unsafe(
            "UPDATE user_sessions SET signed_in_at = now() - interval '12 hours 1 second' WHERE user_id = $1 AND ended_at IS NULL",
            [fresh.userId]
          )
        )
      )
      expect(await opens(fresh.cookies.laari_dashboard)).toBe(false)
    })
  })
