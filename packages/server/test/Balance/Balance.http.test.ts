/**
 * GET /balance, GET /balance-transactions and GET /reports/settlement over real HTTP on PGlite: shapes,
 * scopes, tenancy, cursor paging, the report's day and totals against the ledger's own sums, and the
 * invariant (payments minus refunds equals the balance plus fees) after random charges.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { migrations } from "../../src/Sql/Migrations.js"
import * as F from "../support/Fixtures.js"
import * as TestServer from "../support/TestServer.js"

const isoOffset = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+05:00$/
const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** Migration 0015 (refunds) lets a transfer be of kind `refund`; until it is merged, no refund row exists. */
const refundsMigrated = Object.keys(migrations).some((name) => name.startsWith("0015_"))

let server: TestServer.LocalTestServer
beforeAll(async () => {
  server = await TestServer.start()
}, 120_000)
afterAll(async () => {
  await server?.close()
})

const get = (key: string | undefined, path: string) => server.request("GET", path, { key })

/** A test-mode merchant with an ACTIVE mandate (bound to its sandbox payer) to charge. */
const merchantWithMandate = async (body: Record<string, unknown> = {}) => {
  const m = await F.merchant(server, body)
  const mandate = await server.request("POST", "/mandates", { key: m.test, body: F.mandateBody() })
  expect(mandate.status).toBe(201)
  const charge = async (amount: number) => {
    const res = await server.request("POST", `/mandates/${mandate.body.id}/charges`, {
      key: m.test,
      body: { amount }
    })
    expect(res.status).toBe(201)
    return res.body as { id: string; amount: number; fee: number; netAmount: number }
  }
  return { ...m, charge }
}

const all = async (key: string, limit: number) => {
  const out: Array<any> = []
  let after: string | undefined
  for (;;) {
    const res = await get(
      key,
      `/balance-transactions?limit=${limit}${after ? `&starting_after=${encodeURIComponent(after)}` : ""}`
    )
    expect(res.status).toBe(200)
    out.push(...res.body.data)
    if (!res.body.hasMore) return out
    after = res.body.data.at(-1).id
  }
}

/** The ledger's own sum of the merchant account's entries, for transfers in `[from, to)`. */
const ledgerSum = (merchantId: string, from: string, to: string) =>
  server
    .sql(
      Effect.flatMap(
        SqlClient.SqlClient,
        (sql) => sql<{
          net: string | number | null
          n: string | number
        }>`SELECT sum(e.amount) AS net, count(*) AS n
        FROM ledger_entries e JOIN ledger_transfers t ON t.id = e.transfer_id
        WHERE e.account_id = ${`merchant:test:${merchantId}`} AND t.created_at >= ${new Date(from)} AND t.created_at < ${new Date(to)}`
      )
    )
    .then(([row]) => ({ net: Number(row?.net ?? 0), count: Number(row?.n ?? 0) }))

const parseCsv = (text: string) =>
  text
    .trimEnd()
    .split("\r\n")
    .map((line) => line.split(","))

/** The Maldives date of an instant. */
const maldivesDate = (iso: string) => new Date(Date.parse(iso) + 5 * 3_600_000).toISOString().slice(0, 10)

describe("keys and scopes", () => {
  it("401 without a key, 403 for a publishable key or a key without payments:write", async () => {
    const m = await F.merchant(server)
    const noPayments = await m.key("test", ["mandates:write", "qr:write"])
    for (const path of ["/balance", "/balance-transactions", "/reports/settlement?date=2026-03-31"]) {
      expect((await get(undefined, path)).status, path).toBe(401)
      expect((await get(m.publishable, path)).status, path).toBe(403)
      const denied = await get(noPayments, path)
      expect(denied.status, path).toBe(403)
      expect(denied.body.message).toContain("payments:write")
    }
  })
})

describe("GET /balance and GET /balance-transactions", () => {
  it("the balance is the sum of the movements, each a charge or QR payment with its fee", async () => {
    const m = await merchantWithMandate({ fee_bps: 150 })
    expect((await get(m.test, "/balance")).body).toMatchObject({
      available: 0,
      currency: "MVR",
      environment: "test"
    })
    // A second apart: movements of one instant are ordered by id instead.
    const tick = () => server.ops("POST", "/ops/clock/advance", { by_seconds: 1 })
    const c1 = await m.charge(12_550)
    await tick()
    const c2 = await m.charge(3_000)
    await tick()
    const code = await server.request("POST", "/qr-codes", {
      key: m.test,
      body: { outlet_id: m.outletId, type: "DYNAMIC", amount: 20_000 }
    })
    const qr = await server.request("POST", "/test-helpers/qr-codes/pay", {
      key: m.test,
      body: { payload: code.body.payload }
    })
    expect(qr.status).toBe(201)

    const balance = await get(m.test, "/balance")
    expect(balance.status).toBe(200)
    expect(Object.keys(balance.body).sort()).toEqual(["asOf", "available", "currency", "environment"])
    expect(balance.body.asOf).toMatch(isoOffset)
    expect(balance.body.available).toBe(c1.netAmount + c2.netAmount + qr.body.netAmount)

    const list = await get(m.test, "/balance-transactions")
    expect(list.status).toBe(200)
    expect(list.body.hasMore).toBe(false)
    const rows = list.body.data
    expect(rows.map((r: any) => [r.type, r.sourceId, r.gross, r.fee, r.net])).toEqual([
      ["qr_payment", qr.body.id, 20_000, qr.body.fee, qr.body.netAmount],
      ["charge", c2.id, 3_000, c2.fee, c2.netAmount],
      ["charge", c1.id, 12_550, c1.fee, c1.netAmount]
    ])
    for (const r of rows) {
      expect(Object.keys(r).sort()).toEqual([
        "createdAt",
        "currency",
        "fee",
        "gross",
        "id",
        "net",
        "sourceId",
        "type"
      ])
      expect(r.createdAt).toMatch(isoOffset)
      expect(r.sourceId).toMatch(uuid)
    }
    // Paged one at a time: the same rows, each once.
    expect(await all(m.test, 1)).toEqual(rows)
    // A cursor's UUID in upper case is the same cursor, as ids are everywhere else.
    const upper = await get(m.test, `/balance-transactions?starting_after=${rows[0].id.toUpperCase()}`)
    expect(upper.status).toBe(200)
    expect(upper.body).toEqual((await get(m.test, `/balance-transactions?starting_after=${rows[0].id}`)).body)

    // Live and another merchant see nothing of it; its ids are no cursor for them.
    const other = await F.merchant(server)
    for (const key of [m.live, other.test]) {
      expect((await get(key, "/balance")).body.available).toBe(0)
      expect((await get(key, "/balance-transactions")).body).toEqual({ data: [], hasMore: false })
      const foreign = await get(key, `/balance-transactions?starting_after=${encodeURIComponent(rows[0].id)}`)
      expect(foreign.status).toBe(404)
      expect(foreign.body.code).toBe("BALANCE_TRANSACTION_NOT_FOUND")
    }
    for (const bad of ["limit=0", "limit=101", "limit=x"])
      expect((await get(m.test, `/balance-transactions?${bad}`)).status, bad).toBe(422)
  })
})

describe("GET /reports/settlement", () => {
  it("one Maldives day as a CSV attachment whose totals are the ledger's", async () => {
    const m = await merchantWithMandate()
    const now = (await server.ops("GET", "/ops/clock")).body.now as string
    await m.charge(10_000)
    await m.charge(2_345)
    const date = maldivesDate(now)
    const res = await get(m.test, `/reports/settlement?date=${date}`)
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toMatch(/^text\/csv/)
    expect(res.headers.get("content-disposition")).toBe(`attachment; filename="settlement-test-${date}.csv"`)
    const [header, ...lines] = parseCsv(res.text)
    expect(header).toEqual(["id", "type", "source_id", "created_at", "gross", "fee", "net"])
    const total = lines.at(-1)!
    const body = lines.slice(0, -1)
    expect(body.length).toBe(2)
    expect(total.slice(0, 4)).toEqual(["total", "", "", date])
    for (const col of [4, 5, 6]) expect(Number(total[col])).toBe(body.reduce((s, l) => s + Number(l[col]), 0))
    // The ledger's sum over the same window: 19:00 UTC the day before to 19:00 UTC.
    const from = new Date(Date.parse(`${date}T00:00:00+05:00`)).toISOString()
    const to = new Date(Date.parse(`${date}T00:00:00+05:00`) + 86_400_000).toISOString()
    expect(from.slice(11, 16)).toBe("19:00")
    expect(await ledgerSum(m.id, from, to)).toEqual({ net: Number(total[6]), count: body.length })

    // The next day's charge lands in the next day's report, and the first report stays as it was.
    await server.ops("POST", "/ops/clock/advance", { by_seconds: 86_400 })
    await m.charge(7_000)
    const next = maldivesDate(new Date(Date.parse(now) + 86_400_000).toISOString())
    const nextLines = parseCsv((await get(m.test, `/reports/settlement?date=${next}`)).text)
    expect(nextLines.length).toBe(3)
    expect(nextLines.at(-1)![4]).toBe("7000")
    expect((await get(m.test, `/reports/settlement?date=${date}`)).text).toBe(res.text)
    // Another merchant's report of the day is empty but for its totals.
    const other = await F.merchant(server)
    expect(parseCsv((await get(other.test, `/reports/settlement?date=${date}`)).text)).toEqual([
      ["id", "type", "source_id", "created_at", "gross", "fee", "net"],
      ["total", "", "", date, "0", "0", "0"]
    ])
  })

  it("a date that is not a day is 400 INVALID_DATE; no date is 422", async () => {
    const m = await F.merchant(server)
    for (const bad of ["2026-02-30", "2026-13-01", "31-03-2026", "2026-03-31T00:00:00Z", "today", "%00"]) {
      const res = await get(m.test, `/reports/settlement?date=${encodeURIComponent(bad)}`)
      expect(res.status, bad).toBe(400)
      expect(res.body.code, bad).toBe("INVALID_DATE")
    }
    const missing = await get(m.test, "/reports/settlement")
    expect(missing.status).toBe(422)
    // A real date, yet no day of any ledger: years 2000 to 9999.
    for (const far of ["0000-01-01", "1999-12-31"]) {
      const res = await get(m.test, `/reports/settlement?date=${far}`)
      expect(res.status, far).toBe(400)
      expect(res.body, far).toEqual({
        message: "date must be a day from 2000-01-01 to 9999-12-31",
        code: "INVALID_DATE"
      })
    }
    expect((await get(m.test, "/reports/settlement?date=2000-01-01")).status).toBe(200)
    expect((await get(m.test, "/reports/settlement?date=9999-12-31")).status).toBe(200)
  })
})

describe("the invariant on PGlite", () => {
  it("payments minus refunds equals the balance plus fees, after random charges", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 100, max: 50_000 }), { maxLength: 8 }),
        fc.integer({ min: 0, max: 500 }),
        async (amounts, feeBps) => {
          const m = await merchantWithMandate({ fee_bps: feeBps })
          for (const a of amounts) await m.charge(a)
          const balance = (await get(m.test, "/balance")).body.available
          const rows = await all(m.test, 3)
          const fees = rows.reduce((s, r) => s + r.fee, 0)
          const paid = amounts.reduce((s, a) => s + a, 0)
          const refunded = rows.filter((r) => r.type === "refund").reduce((s, r) => s - r.gross, 0)
          expect(refunded).toBe(0)
          expect(paid - refunded).toBe(balance + fees)
          expect(rows.length).toBe(amounts.length)
        }
      ),
      { numRuns: 8 }
    )
  })

  it.skipIf(!refundsMigrated)(
    "a refund transfer (kind refund, merchant to customer, no fee) is a refund row (needs migration 0015)",
    async () => {
      const m = await merchantWithMandate()
      const c = await m.charge(10_000)
      // A real refund (POST /refunds): stamped by the service's clock like the charge, so it is the newest row.
      const refund = await server.request("POST", "/refunds", {
        key: m.test,
        body: { charge_id: c.id, amount: 4_000 }
      })
      expect(refund.status, refund.text).toBe(201)
      const refundId = refund.body.id as string
      const rows = (await get(m.test, "/balance-transactions")).body.data
      expect(rows[0]).toMatchObject({
        type: "refund",
        sourceId: refundId,
        gross: -4_000,
        fee: 0,
        net: -4_000
      })
      expect((await get(m.test, "/balance")).body.available).toBe(c.netAmount - 4_000)
      const fees = rows.reduce((s: number, r: any) => s + r.fee, 0)
      expect(10_000 - 4_000).toBe((await get(m.test, "/balance")).body.available + fees)
    }
  )
})
