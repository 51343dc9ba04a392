/**
 * Errors a newcomer can act on and the root of the site, over real HTTP: decode errors in words naming
 * wire fields, one Maldivian phone number however it is typed (the API, the operator's customers, stored
 * numbers, the pages' forms), the page at `/` and its icon, and refusals that say how to get past them.
 */
import { Phone } from "@laari/core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Migrations from "../../src/Sql/Migrations.js"
import * as F from "../support/Fixtures.js"
import * as TestServer from "../support/TestServer.js"
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

let server: TestServer.LocalTestServer

beforeAll(async () => {
  server = await TestServer.start()
}, 120_000)

afterAll(() => server?.close())

/** A seven-digit number no other test of this file uses. */
let next = Math.floor(Math.random() * 800_000)
const freshNumber = () => `7${String(next++ % 1_000_000).padStart(6, "0")}`

describe("422s in words, naming the fields as sent", () => {
  it("a camelCase field names the field meant; an unknown one lists the fields", async () => {
    const m = await F.merchant(server)
    const res = await server.request("POST", "/mandates", {
      key: m.test,
      body: F.mandateBody({ periodCap: 1 })
    })
    expect(res.status).toBe(422)
    expect(res.body.errors).toEqual([
      { field: "periodCap", message: "is not a field; did you mean `period_cap`?" }
    ])
    expect(res.body.message).toBe("periodCap: is not a field; did you mean `period_cap`?")
    const nested = await server.request("POST", "/checkout/sessions", {
      key: m.test,
      body: {
        mode: "SUBSCRIPTION",
        title: "t",
        reference: F.unique("s"),
        price_data: { name: "G", amount: 500, interval: "MONTH", intervalCount: 2 }
      }
    })
    expect(nested.body.errors).toEqual([
      { field: "price_data.intervalCount", message: "is not a field; did you mean `interval_count`?" }
    ])
  })

  it("fractional seconds, an enum, a nested amount: one message each, no union noise", async () => {
    const m = await F.merchant(server)
    const fraction = await server.request("POST", "/mandates", {
      key: m.test,
      body: F.mandateBody({ expires_at: "2026-12-01T00:00:00.5+05:00" })
    })
    expect(fraction.body.errors).toEqual([
      {
        field: "expires_at",
        message: "must be an ISO 8601 date-time with a numeric UTC offset and no fractional seconds"
      }
    ])
    const events = await server.request("POST", "/webhook-endpoints", {
      key: m.test,
      body: { url: "https://example.com/hook", enabled_events: ["invoice.payed"] }
    })
    expect(events.status).toBe(422)
    expect(events.body.errors).toHaveLength(1)
    expect(events.body.errors[0].field).toBe("enabled_events.0")
    expect(events.body.errors[0].message).toMatch(
      /^must be one of mandate\.activated, .*invoice\.paid, .*\*$/
    )
    const price = await server.request("POST", "/checkout/sessions", {
      key: m.test,
      body: {
        mode: "SUBSCRIPTION",
        title: "t",
        reference: F.unique("s"),
        price_data: { name: "G", amount: 5, interval: "YEAR" }
      }
    })
    expect(price.body.errors).toEqual([
      { field: "price_data.amount", message: "must be a whole number of laari from 100 to 500000" },
      { field: "price_data.interval", message: "must be WEEK or MONTH" }
    ])
    const text = JSON.stringify([fraction.body, events.body, price.body])
    expect(text).not.toMatch(/Expected (null|undefined)|priceData/)
  })

  it("the domain's own rules name wire fields, in the field and in the words", async () => {
    const m = await F.merchant(server)
    const res = await server.request("POST", "/checkout/sessions", {
      key: m.test,
      body: {
        mode: "SUBSCRIPTION",
        title: "t",
        reference: F.unique("s"),
        amount: 20_000,
        price_data: { name: "G", amount: 25_000, interval: "MONTH" }
      }
    })
    expect(res.body.errors).toEqual([
      { field: "amount", message: "must equal price_data.amount in SUBSCRIPTION mode" }
    ])
  })
})

describe("one Maldivian phone number however it is typed", () => {
  it("the operator's customers are kept in E.164; another spelling of a kept number is taken; others refused", async () => {
    const number = freshNumber()
    const created = await server.ops("POST", "/ops/customers", {
      environment: "live",
      phone: `00960 ${number.slice(0, 3)} ${number.slice(3)}`
    })
    expect(created.status).toBe(201)
    expect(created.body.phone).toBe(`+960${number}`)
    expect((await server.ops("POST", "/ops/customers", { environment: "live", phone: number })).status).toBe(
      409
    )
    for (const phone of ["+44 7771234", "777123", "not a phone"]) {
      const refused = await server.ops("POST", "/ops/customers", { environment: "live", phone })
      expect(refused.status, phone).toBe(422)
      expect(refused.body.errors, phone).toEqual([{ field: "phone", message: Phone.Message }])
    }
  })

  it("an approval finds the wallet by any spelling of its number", async () => {
    const m = await F.merchant(server)
    await server.ops("POST", `/ops/merchants/${m.id}/features`, { mandates_live: true })
    const number = freshNumber()
    expect(
      (await server.ops("POST", "/ops/customers", { environment: "live", phone: `+960 ${number}` })).status
    ).toBe(201)
    const mandate = await server.request("POST", "/mandates", { key: m.live, body: F.mandateBody() })
    expect(mandate.status).toBe(201)
    for (const phone of [
      number,
      `960${number}`,
      `+960 ${number.slice(0, 3)} ${number.slice(3)}`,
      `00960 ${number}`
    ]) {
      const res = await server.request("POST", `/approvals/mandates/${mandate.body.id}/challenge`, {
        body: { phone }
      })
      expect(res.status, phone).toBeLessThan(300)
    }
  })

  it("numbers kept before, as typed, are rewritten to E.164; of two spellings of one, the older wins", async () => {
    const [a, b] = [freshNumber(), freshNumber()]
    const ids = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()]
    const phones = await server.sql(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const insert = (id: string, phone: string, at: string) =>
          sql`INSERT INTO customers ${sql.insert({ id, environment: "test", phone, created_at: new Date(at) })}`
        yield* insert(ids[0]!, `+960 ${a}`, "2026-01-01T00:00:00Z")
        yield* insert(ids[1]!, `+960 ${b.slice(0, 3)}-${b.slice(3)}`, "2026-01-01T00:00:00Z")
        yield* insert(ids[2]!, `960${b}`, "2026-01-02T00:00:00Z")
        yield* insert(ids[3]!, "+960 sandbox-x", "2026-01-01T00:00:00Z")
        yield* Migrations.migrations["0012_phone_e164"]!
        const rows = yield* sql<{
          id: string
          phone: string
        }>`SELECT id, phone FROM customers WHERE id IN ${sql.in(ids)}`
        return Object.fromEntries(rows.map((r) => [r.id, r.phone]))
      })
    )
    expect(phones).toEqual({
      [ids[0]!]: `+960${a}`,
      [ids[1]!]: `+960${b}`,
      [ids[2]!]: `960${b}`,
      [ids[3]!]: "+960 sandbox-x"
    })
  })

  it("a page keeps the phone typed after a refusal", async () => {
    const m = await F.merchant(server)
    await server.ops("POST", `/ops/merchants/${m.id}/features`, { mandates_live: true })
    const mandate = await server.request("POST", "/mandates", { key: m.live, body: F.mandateBody() })
    const page = await fetch(`${server.baseUrl}/mandate/${mandate.body.id}`)
    const cookie = (page.headers.get("set-cookie") ?? "").split(";")[0]!
    const csrf = /name="_csrf" value="([0-9a-f]+)"/.exec(await page.text())![1]!
    const typed = "+960 100 0000"
    const refused = await fetch(`${server.baseUrl}/mandate/${mandate.body.id}/code`, {
      method: "POST",
      headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ _csrf: csrf, phone: typed }).toString(),
      redirect: "manual"
    })
    expect(refused.status).toBe(422)
    const html = await refused.text()
    expect(html).toContain('role="alert"')
    expect(html).toMatch(/<input id="phone"[^>]*value="\+960 100 0000"/)
  })
})

describe("the site's root", () => {
  it("GET / is a small page pointing at the docs, the dashboard and the wallet, with the pages' headers", async () => {
    const res = await fetch(`${server.baseUrl}/`)
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toMatch(/^text\/html/)
    expect(res.headers.get("content-security-policy")).toContain("default-src 'none'")
    const html = await res.text()
    for (const href of ["/docs", "/dashboard", "/wallet"]) expect(html).toContain(`href="${href}"`)
  })

  it("/favicon.ico is an icon, cached for long", async () => {
    const res = await fetch(`${server.baseUrl}/favicon.ico`)
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toBe("image/svg+xml")
    expect(res.headers.get("cache-control")).toContain("max-age=31536000")
    expect(await res.text()).toMatch(/^<svg /)
  })
})

describe("refusals that say how to get past them", () => {
  it("a live mandate before the feature says how an operator enables it", async () => {
    const m = await F.merchant(server)
    const res = await server.request("POST", "/mandates", { key: m.live, body: F.mandateBody() })
    expect(res.status).toBe(403)
    expect(res.body.message).toBe(
      `Mandates are not enabled for this merchant. An operator enables them with POST /ops/merchants/${m.id}/features {"mandates_live": true}, or pnpm laari merchants features --merchant ${m.id} --mandates-live true`
    )
  })

  it("a test checkout the sandbox payer cannot cover says how to fund the sandbox wallet", async () => {
    const m = await F.merchant(server)
    expect(
      (await server.request("POST", "/test-helpers/payer", { key: m.test, body: { balance: 0 } })).status
    ).toBe(200)
    const session = await server.request("POST", "/checkout/sessions", {
      key: m.test,
      body: { title: "Order", reference: F.unique("o"), amount: 150_000 }
    })
    expect(session.status).toBe(200)
    const paid = await server.request("POST", `/test-helpers/checkout/sessions/${session.body.id}/pay`, {
      key: m.test
    })
    expect(paid.status).toBe(402)
    expect(paid.body).toEqual({
      code: "INSUFFICIENT_BALANCE",
      message:
        'Insufficient funds: the sandbox payer\'s balance does not cover MVR 1,500.00. Fund it with POST /test-helpers/payer {"balance": <laari>} (any sk_test_ secret key), then pay again.'
    })
  })
})
