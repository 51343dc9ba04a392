/**
 * The mandate API over real HTTP (read shapes, states, endpoints, scopes, errors and limits), run against
 * each database the server supports.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as F from "./Fixtures.js"
import type { TestServer } from "./TestServer.js"

const isoOffset = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+05:00$/
const readFields = [
  "id",
  "reference",
  "status",
  "title",
  "description",
  "currency",
  "perChargeCap",
  "periodCap",
  "period",
  "periodKey",
  "periodCharged",
  "setupExpiresAt",
  "expiresAt",
  "approvedAt",
  "revokedAt",
  "createdAt"
]

export const suite = (name: string, start: () => Promise<TestServer>) =>
  describe(name, () => {
    let server: TestServer
    beforeAll(async () => {
      server = await start()
    }, 120_000)
    afterAll(async () => {
      await server?.close()
    })

    const create = (
      key: string,
      body: Record<string, unknown> = F.mandateBody(),
      headers?: Record<string, string>
    ) => server.request("POST", "/mandates", { key, body, ...(headers ? { headers } : {}) })
    const charge = (
      key: string,
      id: string,
      body: Record<string, unknown>,
      headers?: Record<string, string>
    ) =>
      server.request("POST", `/mandates/${encodeURIComponent(id)}/charges`, {
        key,
        body,
        ...(headers ? { headers } : {})
      })
    const payer = (key: string) => server.request("GET", "/test-helpers/payer", { key })
    const setPayer = (key: string, body: Record<string, unknown>) =>
      server.request("POST", "/test-helpers/payer", { key, body })
    const clock = async () => (await server.ops("GET", "/ops/clock")).body.now as string
    const advance = (seconds: number) => server.ops("POST", "/ops/clock/advance", { by_seconds: seconds })

    describe("authentication and scopes", () => {
      it("answers 401 without a key or with an unknown one, on every mandate endpoint", async () => {
        for (const [method, path] of [
          ["POST", "/mandates"],
          ["GET", "/mandates"],
          ["GET", "/mandates/x"],
          ["POST", "/mandates/x/charges"],
          ["POST", "/mandates/x/revoke"],
          ["GET", "/test-helpers/payer"]
        ] as const) {
          const none = await server.request(method, path, { body: method === "POST" ? {} : undefined })
          expect(none.status, `${method} ${path}`).toBe(401)
          expect(none.body).toEqual({
            message: "No API key: send your secret key in the header `Authorization: Bearer sk_test_...`",
            code: "UNAUTHORIZED"
          })
          const wrong = await server.request(method, path, {
            key: "sk_test_doesnotexist0000",
            body: method === "POST" ? {} : undefined
          })
          expect(wrong.status).toBe(401)
        }
      })

      it("enforces each scope and refuses publishable keys with 403", async () => {
        const m = await F.merchant(server)
        const mandatesOnly = await m.key("test", ["mandates:write"])
        const paymentsOnly = await m.key("test", ["payments:write"])
        const created = await create(mandatesOnly)
        expect(created.status).toBe(201)
        const denied = await charge(mandatesOnly, created.body.id, { amount: 1000 })
        expect(denied.status).toBe(403)
        expect(denied.body.message).toContain("payments:write")
        expect((await create(paymentsOnly)).status).toBe(403)
        expect(
          (await server.request("GET", `/mandates/${created.body.id}`, { key: paymentsOnly })).status
        ).toBe(403)
        expect((await server.request("GET", "/mandates", { key: paymentsOnly })).status).toBe(403)
        expect(
          (await server.request("POST", `/mandates/${created.body.id}/revoke`, { key: paymentsOnly })).status
        ).toBe(403)
        expect((await charge(paymentsOnly, created.body.id, { amount: 1000 })).status).toBe(201)
        expect((await create(m.publishable)).status).toBe(403)
      })

      it("scopes every mandate to its merchant and environment: others are 404", async () => {
        const a = await F.merchant(server)
        const b = await F.merchant(server)
        const created = await create(a.test)
        for (const key of [b.test, a.live]) {
          const got = await server.request("GET", `/mandates/${created.body.id}`, { key })
          expect(got.status).toBe(404)
          expect(got.body.message).toBe("Mandate not found")
          const charged = await charge(key, created.body.id, { amount: 500 })
          expect(charged.status).toBe(404)
          expect(charged.body).toMatchObject({ message: "Mandate not found", code: "MANDATE_NOT_FOUND" })
          expect((await server.request("POST", `/mandates/${created.body.id}/revoke`, { key })).status).toBe(
            404
          )
          expect((await server.request("GET", "/mandates", { key })).body).toEqual([])
        }
      })
    })

    describe("POST /mandates", () => {
      it("creates a sandbox mandate ACTIVE at once, bound to the sandbox payer, with mandate.activated", async () => {
        const m = await F.merchant(server)
        const body = F.mandateBody({ description: "Every Friday", period_cap: 100_000, period: "MONTH" })
        const res = await create(m.test, body)
        expect(res.status).toBe(201)
        expect(Object.keys(res.body).sort()).toEqual(["id", "reference", "status", "url"])
        expect(res.body).toMatchObject({ reference: body.reference, status: "ACTIVE" })
        expect(res.body.url).toBe(`http://pay.laari.test/mandate/${res.body.id}`)
        const read = await server.request("GET", `/mandates/${res.body.id}`, { key: m.test })
        expect(read.status).toBe(200)
        expect(Object.keys(read.body).sort()).toEqual([...readFields].sort())
        expect(read.body).toMatchObject({
          title: "Weekly groceries",
          description: "Every Friday",
          currency: "MVR",
          perChargeCap: 50_000,
          periodCap: 100_000,
          period: "MONTH",
          periodKey: null,
          periodCharged: 0,
          revokedAt: null
        })
        for (const f of ["setupExpiresAt", "expiresAt", "approvedAt", "createdAt"])
          expect(read.body[f]).toMatch(isoOffset)
        const created = Date.parse(read.body.createdAt)
        expect(Date.parse(read.body.setupExpiresAt) - created).toBe(24 * 3600_000)
        expect(Date.parse(read.body.expiresAt) - created).toBe(365 * 24 * 3600_000)
        const activated = await F.events(server, m.id, "mandate.activated")
        expect(activated).toHaveLength(1)
        expect(activated[0]).toMatchObject({
          type: "mandate.activated",
          api_version: "2026-07-01",
          livemode: false
        })
        expect(activated[0]!.data.object).toMatchObject({
          id: res.body.id,
          status: "ACTIVE",
          per_charge_cap: 50_000
        })
      })

      it("fetches by reference too, and a mandate without period_cap has no period", async () => {
        const m = await F.merchant(server)
        const res = await create(m.test, F.mandateBody({ reference: "ORDER 7/2026" }))
        const read = await server.request("GET", `/mandates/${encodeURIComponent("ORDER 7/2026")}`, {
          key: m.test
        })
        expect(read.status).toBe(200)
        expect(read.body).toMatchObject({ id: res.body.id, periodCap: null, period: null })
      })

      it("refuses every invalid field with 422 naming it, and writes nothing", async () => {
        const m = await F.merchant(server)
        const now = Date.parse(await clock())
        const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "+00:00")
        const cases: Array<[Record<string, unknown>, string]> = [
          [{ reference: undefined }, "reference"],
          [{ reference: "" }, "reference"],
          [{ reference: "r".repeat(256) }, "reference"],
          [{ reference: "a\u0000b" }, "reference"],
          [{ title: "NUL\u0000" }, "title"],
          [{ title: undefined }, "title"],
          [{ title: "t".repeat(256) }, "title"],
          [{ description: "d".repeat(256) }, "description"],
          [{ per_charge_cap: undefined }, "per_charge_cap"],
          [{ per_charge_cap: 99 }, "per_charge_cap"],
          [{ per_charge_cap: 500_001 }, "per_charge_cap"],
          [{ per_charge_cap: 150.5 }, "per_charge_cap"],
          [{ per_charge_cap: "1000" }, "per_charge_cap"],
          [{ period_cap: 40_000, period: "MONTH" }, "period_cap"],
          [{ period_cap: 100_000 }, "period"],
          [{ period_cap: 100_000, period: "WEEK" }, "period"],
          [{ expires_at: iso(now - 1000) }, "expires_at"],
          [{ expires_at: iso(now + 366 * 24 * 3600_000) }, "expires_at"],
          [{ expires_at: new Date(now + 3600_000).toISOString() }, "expires_at"],
          [{ expires_at: "2030-02-30T10:00:00+05:00" }, "expires_at"],
          [{ return_url: "ftp://example.com" }, "return_url"],
          [{ return_url: "not a url" }, "return_url"]
        ]
        for (const [overrides, field] of cases) {
          const res = await create(m.test, F.mandateBody(overrides))
          expect(res.status, JSON.stringify(overrides)).toBe(422)
          expect(typeof res.body.message).toBe("string")
          expect(
            res.body.errors.map((e: { field: string }) => e.field),
            JSON.stringify(overrides)
          ).toContain(field)
        }
        expect((await server.request("GET", "/mandates", { key: m.test })).body).toEqual([])
        const ok = await create(
          m.test,
          F.mandateBody({
            expires_at: iso(now + 30 * 24 * 3600_000),
            return_url: "https://shop.mv/done",
            period_cap: 50_000,
            period: "MONTH"
          })
        )
        expect(ok.status).toBe(201)
      })

      it("answers a NUL character anywhere in a request with 422, never a 500", async () => {
        const m = await F.merchant(server)
        expect((await server.request("GET", "/mandates/a%00b", { key: m.test })).status).toBe(422)
        expect((await server.request("GET", "/mandates?reference=a%00b", { key: m.test })).status).toBe(422)
        expect((await charge(m.test, "x", { amount: 1000, description: "d\u0000" })).status).toBe(422)
      })

      it("answers 400 for a body that is not JSON", async () => {
        const m = await F.merchant(server)
        const res = await server.request("POST", "/mandates", { key: m.test, rawBody: "{not json" })
        expect(res.status).toBe(400)
        expect(typeof res.body.message).toBe("string")
      })

      it("keeps references unique per merchant", async () => {
        const a = await F.merchant(server)
        const b = await F.merchant(server)
        const body = F.mandateBody()
        expect((await create(a.test, body)).status).toBe(201)
        const again = await create(a.test, body)
        expect(again.status).toBe(409)
        expect(typeof again.body.message).toBe("string")
        expect((await create(b.test, body)).status).toBe(201)
      })

      it("gates live mandates until enabled, then waits for the customer's approval", async () => {
        const m = await F.merchant(server)
        const gated = await create(m.live)
        expect(gated.status).toBe(403)
        expect(typeof gated.body.message).toBe("string")
        expect(
          (await server.ops("POST", `/ops/merchants/${m.id}/features`, { mandates_live: true })).status
        ).toBe(200)
        const res = await create(m.live)
        expect(res.status).toBe(201)
        expect(res.body.status).toBe("INITIATED")
        const read = await server.request("GET", `/mandates/${res.body.id}`, { key: m.live })
        expect(read.body).toMatchObject({ status: "INITIATED", approvedAt: null })
        const refused = await charge(m.live, res.body.id, { amount: 500 })
        expect(refused.status).toBe(409)
        expect(refused.body).toMatchObject({ message: "Mandate is not active", code: "MANDATE_INACTIVE" })
      })
    })

    describe("customer approval of a live mandate", () => {
      const liveMandate = async (customerBalance = 100_000) => {
        const m = await F.merchant(server)
        await server.ops("POST", `/ops/merchants/${m.id}/features`, { mandates_live: true })
        const customer = await F.customer(server, { balance: customerBalance })
        const created = await create(m.live, F.mandateBody({ period_cap: 60_000, period: "MONTH" }))
        return { m, customer, id: created.body.id as string }
      }
      const challenge = async (id: string, customer: { id: string; phone: string }) => {
        const res = await server.request("POST", `/approvals/mandates/${id}/challenge`, {
          body: { phone: customer.phone }
        })
        expect(res.status).toBe(200)
        const notes = await server.ops("GET", `/ops/customers/${customer.id}/notifications`)
        const sent = notes.body.find(
          (n: any) => n.kind === "one_time_code" && n.data.challenge_id === res.body.challenge_id
        )
        return {
          challengeId: res.body.challenge_id as string,
          expiresAt: res.body.expires_at as string,
          code: sent?.data.code as string
        }
      }

      it("approves with the one-time code, binds the customer's wallet, and charges it", async () => {
        const { m, customer, id } = await liveMandate()
        const page = await server.request("GET", `/approvals/mandates/${id}`)
        expect(page.status).toBe(200)
        expect(page.body).toMatchObject({ id, status: "INITIATED", perChargeCap: 50_000, periodCap: 60_000 })
        const c = await challenge(id, customer)
        expect(c.code).toMatch(/^\d{6}$/)
        expect(Date.parse(c.expiresAt) - Date.parse(await clock())).toBe(5 * 60_000)
        const wrong = await server.request("POST", `/approvals/mandates/${id}/approve`, {
          body: { challenge_id: c.challengeId, otp: c.code === "000000" ? "111111" : "000000" }
        })
        expect(wrong.status).toBe(422)
        const ok = await server.request("POST", `/approvals/mandates/${id}/approve`, {
          body: { challenge_id: c.challengeId, otp: c.code }
        })
        expect(ok.status).toBe(200)
        expect(ok.body).toMatchObject({ id, status: "ACTIVE" })
        expect(ok.body.approvedAt).toMatch(isoOffset)
        const reused = await server.request("POST", `/approvals/mandates/${id}/approve`, {
          body: { challenge_id: c.challengeId, otp: c.code }
        })
        expect(reused.status).toBe(409)
        expect((await F.events(server, m.id, "mandate.activated")).map((e) => e.data.object.id)).toEqual([id])
        const charged = await charge(m.live, id, { amount: 10_000 })
        expect(charged.status).toBe(201)
        const after = await server.ops("GET", `/ops/customers/${customer.id}/notifications`)
        expect(after.body[0]).toMatchObject({ kind: "mandate.charge" })
        expect(after.body[0].data.amount).toBe(10_000)
      })

      it("declines with the code: DECLINED, mandate.declined, and never chargeable", async () => {
        const { m, customer, id } = await liveMandate()
        const c = await challenge(id, customer)
        const res = await server.request("POST", `/approvals/mandates/${id}/decline`, {
          body: { challenge_id: c.challengeId, otp: c.code }
        })
        expect(res.status).toBe(200)
        expect(res.body.status).toBe("DECLINED")
        expect(await F.events(server, m.id, "mandate.declined")).toHaveLength(1)
        expect((await charge(m.live, id, { amount: 500 })).body.code).toBe("MANDATE_INACTIVE")
        expect((await server.request("POST", `/mandates/${id}/revoke`, { key: m.live })).status).toBe(409)
      })

      it("locks a challenge after five wrong codes and expires it after five minutes", async () => {
        const { customer, id } = await liveMandate()
        const c = await challenge(id, customer)
        const wrongCode = c.code === "000000" ? "111111" : "000000"
        const statuses: Array<number> = []
        for (let i = 0; i < 6; i++)
          statuses.push(
            (
              await server.request("POST", `/approvals/mandates/${id}/approve`, {
                body: { challenge_id: c.challengeId, otp: wrongCode }
              })
            ).status
          )
        expect(statuses).toEqual([422, 422, 422, 422, 429, 429])
        const locked = await server.request("POST", `/approvals/mandates/${id}/approve`, {
          body: { challenge_id: c.challengeId, otp: c.code }
        })
        expect(locked.status).toBe(429)
        const fresh = await challenge(id, customer)
        await advance(5 * 60)
        const late = await server.request("POST", `/approvals/mandates/${id}/approve`, {
          body: { challenge_id: fresh.challengeId, otp: fresh.code }
        })
        expect(late.status).toBe(422)
        expect(late.body.message).toContain("expired")
      })

      it("refuses an unknown phone with 404 and a lapsed link with 409, then expires the mandate", async () => {
        const { m, customer, id } = await liveMandate()
        expect(
          (
            await server.request("POST", `/approvals/mandates/${id}/challenge`, {
              body: { phone: "+960 0000000" }
            })
          ).status
        ).toBe(404)
        const c = await challenge(id, customer)
        await advance(24 * 3600)
        const res = await server.request("POST", `/approvals/mandates/${id}/approve`, {
          body: { challenge_id: c.challengeId, otp: c.code }
        })
        expect(res.status).toBe(409)
        const read = await server.request("GET", `/mandates/${id}`, { key: m.live })
        expect(read.body.status).toBe("EXPIRED")
      })
    })

    describe("GET /mandates", () => {
      it("lists newest first with status, reference, limit and offset", async () => {
        const m = await F.merchant(server)
        const ids: Array<string> = []
        for (let i = 0; i < 5; i++) {
          ids.push((await create(m.test, F.mandateBody({ reference: `list-${i}` }))).body.id)
          await advance(1)
        }
        await server.request("POST", `/mandates/${ids[1]}/revoke`, { key: m.test })
        const all = await server.request("GET", "/mandates", { key: m.test })
        expect(all.status).toBe(200)
        expect(all.body.map((x: any) => x.id)).toEqual([...ids].reverse())
        expect(Object.keys(all.body[0]).sort()).toEqual([...readFields].sort())
        const revoked = await server.request("GET", "/mandates?status=REVOKED", { key: m.test })
        expect(revoked.body.map((x: any) => x.id)).toEqual([ids[1]])
        const byRef = await server.request("GET", "/mandates?reference=list-3", { key: m.test })
        expect(byRef.body.map((x: any) => x.id)).toEqual([ids[3]])
        const paged = await server.request("GET", "/mandates?limit=2&offset=1", { key: m.test })
        expect(paged.body.map((x: any) => x.id)).toEqual([ids[3], ids[2]])
        for (const q of ["limit=0", "limit=101", "offset=-1", "limit=abc", "status=PAUSED"])
          expect((await server.request("GET", `/mandates?${q}`, { key: m.test })).status, q).toBe(422)
      })

      it("defaults to 25", async () => {
        const m = await F.merchant(server)
        for (let i = 0; i < 27; i++) await create(m.test)
        expect((await server.request("GET", "/mandates", { key: m.test })).body).toHaveLength(25)
        expect((await server.request("GET", "/mandates?limit=100", { key: m.test })).body).toHaveLength(27)
      })
    })

    describe("POST /mandates/{id}/charges", () => {
      it("charges: 201, money in the merchant wallet, fee, counters, event and notification", async () => {
        const m = await F.merchant(server)
        const id = (await create(m.test, F.mandateBody({ period_cap: 100_000, period: "MONTH" }))).body.id
        const before = (await payer(m.test)).body
        expect(before.balance).toBe(10_000_000)
        const res = await charge(m.test, id, { amount: 12_550, description: "Order 42", reference: "ORD-42" })
        expect(res.status).toBe(201)
        expect(Object.keys(res.body).sort()).toEqual(
          [
            "amount",
            "amountRefunded",
            "createdAt",
            "currency",
            "description",
            "fee",
            "id",
            "mandateId",
            "netAmount",
            "periodCharged",
            "periodKey",
            "reference",
            "status"
          ].sort()
        )
        expect(res.body).toMatchObject({
          mandateId: id,
          amount: 12_550,
          currency: "MVR",
          status: "SUCCEEDED",
          description: "Order 42",
          reference: "ORD-42",
          fee: 126,
          netAmount: 12_424,
          amountRefunded: 0,
          periodCharged: 12_550
        })
        expect(res.body.periodKey).toMatch(/^\d{4}-\d{2}$/)
        expect(res.body.createdAt).toMatch(isoOffset)
        expect((await payer(m.test)).body.balance).toBe(10_000_000 - 12_550)
        const second = await charge(m.test, id, { amount: 150 })
        expect(second.body).toMatchObject({
          fee: 2,
          netAmount: 148,
          periodCharged: 12_700,
          reference: expect.any(String)
        })
        const read = await server.request("GET", `/mandates/${id}`, { key: m.test })
        expect(read.body).toMatchObject({ periodKey: res.body.periodKey, periodCharged: 12_700 })
        const succeeded = await F.events(server, m.id, "mandate.charge.succeeded")
        expect(succeeded).toHaveLength(2)
        expect(succeeded[1]!.data.object).toMatchObject({
          id: res.body.id,
          amount: 12_550,
          fee: 126,
          net_amount: 12_424,
          reference: "ORD-42"
        })
        const payerId = (await payer(m.test)).body.customerId
        const notes = await server.ops("GET", `/ops/customers/${payerId}/notifications`)
        expect(notes.body.filter((n: any) => n.kind === "mandate.charge")).toHaveLength(2)
      })

      it("answers a malformed charge with a 422 naming the field, and records no event", async () => {
        const m = await F.merchant(server)
        const id = (await create(m.test)).body.id
        const failedBefore = (await F.events(server, m.id, "mandate.charge.failed")).length
        for (const [body, field] of [
          [{ amount: 150.5 }, "amount"],
          [{ amount: "1000" }, "amount"],
          [{}, "amount"],
          [{ amount: 1000, currency: "MVR" }, "currency"],
          [{ amount: 1000, description: "\ud800 lone" }, "description"]
        ] as const) {
          const res = await charge(m.test, id, body)
          expect(res.status, JSON.stringify(body)).toBe(422)
          // A request refused before it is a charge: not one of the charge refusal codes.
          expect(res.body.code, JSON.stringify(body)).toBe("VALIDATION_FAILED")
          expect(
            res.body.errors.map((e: { field: string }) => e.field),
            JSON.stringify(body)
          ).toContain(field)
        }
        expect(await F.events(server, m.id, "mandate.charge.failed")).toHaveLength(failedBefore)
        expect((await payer(m.test)).body.balance).toBe(10_000_000)
      })

      it("defaults the charge reference to the mandate's and charges by reference", async () => {
        const m = await F.merchant(server)
        const body = F.mandateBody()
        await create(m.test, body)
        const res = await charge(m.test, body.reference, { amount: 1000 })
        expect(res.status).toBe(201)
        expect(res.body.reference).toBe(body.reference)
      })

      it("keeps a mandate without a period at periodKey null and periodCharged 0", async () => {
        const m = await F.merchant(server)
        const id = (await create(m.test)).body.id
        const res = await charge(m.test, id, { amount: 40_000 })
        expect(res.body.periodCharged).toBe(0)
        expect(res.body.periodKey).toMatch(/^\d{4}-\d{2}$/)
        await charge(m.test, id, { amount: 40_000 })
        const read = await server.request("GET", `/mandates/${id}`, { key: m.test })
        expect(read.body).toMatchObject({ periodKey: null, periodCharged: 0 })
      })

      it("answers every charge refusal with its status, message and code, moves nothing, records the event", async () => {
        const m = await F.merchant(server)
        const id = (
          await create(m.test, F.mandateBody({ per_charge_cap: 10_000, period_cap: 15_000, period: "MONTH" }))
        ).body.id
        const balance = async () => (await payer(m.test)).body.balance as number
        const start = await balance()
        const expectRefusal = async (
          body: Record<string, unknown>,
          status: number,
          code: string,
          message: string,
          target = id
        ) => {
          const res = await charge(m.test, target, body)
          expect(res.status, code).toBe(status)
          expect(res.body, code).toEqual({ message, code })
        }
        await expectRefusal(
          { amount: 1000 },
          404,
          "MANDATE_NOT_FOUND",
          "Mandate not found",
          "no-such-mandate"
        )
        await expectRefusal(
          { amount: 10_001 },
          422,
          "PER_CHARGE_CAP_EXCEEDED",
          "Amount exceeds the per charge cap"
        )
        await expectRefusal({ amount: 99 }, 422, "MANDATE_CHARGE_AMOUNT_INVALID", "Amount is not chargeable")
        expect((await charge(m.test, id, { amount: 10_000 })).status).toBe(201)
        await expectRefusal({ amount: 5_001 }, 422, "PERIOD_CAP_EXCEEDED", "Amount exceeds the period cap")
        const afterCharge = await balance()
        expect(afterCharge).toBe(start - 10_000)
        await setPayer(m.test, { wallet_limit: 1000 })
        await expectRefusal(
          { amount: 1001 },
          422,
          "WALLET_LIMIT_EXCEEDED",
          "The charge was blocked by a wallet limit"
        )
        await setPayer(m.test, { wallet_limit: null, frozen: true })
        await expectRefusal({ amount: 1000 }, 422, "MANDATE_CHARGE_FAILED", "The charge could not be taken")
        await setPayer(m.test, { frozen: false, blocked_by_rules: true })
        await expectRefusal({ amount: 1000 }, 422, "MANDATE_CHARGE_FAILED", "The charge could not be taken")
        await setPayer(m.test, { blocked_by_rules: false, balance: 500 })
        await expectRefusal({ amount: 1000 }, 402, "INSUFFICIENT_FUNDS", "Insufficient funds")
        expect(await balance()).toBe(500)
        await setPayer(m.test, { balance: 1_000_000 })
        await server.ops("POST", `/ops/mandates/${id}/suspend`)
        await expectRefusal({ amount: 1000 }, 409, "MANDATE_INACTIVE", "Mandate is not active")
        const other = (await create(m.test)).body.id
        await server.request("POST", `/mandates/${other}/revoke`, { key: m.test })
        await expectRefusal({ amount: 1000 }, 409, "MANDATE_INACTIVE", "Mandate is not active", other)
        const failed = await F.events(server, m.id, "mandate.charge.failed")
        expect(failed.map((e) => e.data.object.code).reverse()).toEqual([
          "PER_CHARGE_CAP_EXCEEDED",
          "MANDATE_CHARGE_AMOUNT_INVALID",
          "PERIOD_CAP_EXCEEDED",
          "WALLET_LIMIT_EXCEEDED",
          "MANDATE_CHARGE_FAILED",
          "MANDATE_CHARGE_FAILED",
          "INSUFFICIENT_FUNDS",
          "MANDATE_INACTIVE",
          "MANDATE_INACTIVE"
        ])
        expect((await server.request("GET", `/mandates/${id}`, { key: m.test })).body.periodCharged).toBe(
          10_000
        )
      })

      it("refuses with MANDATE_EXPIRED once expiresAt has passed", async () => {
        const m = await F.merchant(server)
        const now = Date.parse(await clock())
        const expiresAt = new Date(now + 2 * 3600_000).toISOString().replace(/\.\d{3}Z$/, "+00:00")
        const id = (await create(m.test, F.mandateBody({ expires_at: expiresAt }))).body.id
        expect((await charge(m.test, id, { amount: 1000 })).status).toBe(201)
        await advance(2 * 3600)
        const res = await charge(m.test, id, { amount: 1000 })
        expect(res.status).toBe(409)
        expect(res.body).toEqual({ message: "Mandate has expired", code: "MANDATE_EXPIRED" })
        expect((await server.request("GET", `/mandates/${id}`, { key: m.test })).body.status).toBe("EXPIRED")
      })

      it("rolls the period at the payer's month boundary in the payer's zone", async () => {
        const m = await F.merchant(server)
        const id = (
          await create(m.test, F.mandateBody({ per_charge_cap: 10_000, period_cap: 10_000, period: "MONTH" }))
        ).body.id
        await setPayer(m.test, { time_zone: "Pacific/Kiritimati" })
        const first = await charge(m.test, id, { amount: 10_000 })
        expect(first.status).toBe(201)
        expect((await charge(m.test, id, { amount: 100 })).body.code).toBe("PERIOD_CAP_EXCEEDED")
        // Jump to the first day of the next month in Kiritimati (UTC+14).
        const [y, mo] = first.body.periodKey.split("-").map(Number)
        const nextMonth = new Date(Date.UTC(y, mo, 1, 0, 0, 0) - 14 * 3600_000)
        const now = Date.parse(await clock())
        await advance(Math.ceil((nextMonth.getTime() - now) / 1000) + 1)
        const rolled = await charge(m.test, id, { amount: 10_000 })
        expect(rolled.status).toBe(201)
        expect(rolled.body.periodKey).toBe(
          `${mo === 12 ? y + 1 : y}-${String((mo % 12) + 1).padStart(2, "0")}`
        )
        expect(rolled.body.periodCharged).toBe(10_000)
      })
    })

    describe("POST /mandates/{id}/revoke", () => {
      it("revokes once with 200 and a message, then 409 Mandate cannot be revoked", async () => {
        const m = await F.merchant(server)
        const body = F.mandateBody()
        const id = (await create(m.test, body)).body.id
        const res = await server.request("POST", `/mandates/${encodeURIComponent(body.reference)}/revoke`, {
          key: m.test
        })
        expect(res.status).toBe(200)
        expect(typeof res.body.message).toBe("string")
        expect(res.body.status).toBe("REVOKED")
        const again = await server.request("POST", `/mandates/${id}/revoke`, { key: m.test })
        expect(again.status).toBe(409)
        expect(again.body).toEqual({ message: "Mandate cannot be revoked", code: "MANDATE_NOT_REVOCABLE" })
        const read = await server.request("GET", `/mandates/${id}`, { key: m.test })
        expect(read.body.status).toBe("REVOKED")
        expect(read.body.revokedAt).toMatch(isoOffset)
        const revoked = await F.events(server, m.id, "mandate.revoked")
        expect(revoked).toHaveLength(1)
        expect(revoked[0]!.data.object.revoked_by).toBe("MERCHANT")
      })

      it("lets the sandbox customer revoke through the test helper; live keys get 404 there", async () => {
        const m = await F.merchant(server)
        const id = (await create(m.test)).body.id
        expect(
          (await server.request("POST", `/test-helpers/mandates/${id}/revoke-as-customer`, { key: m.live }))
            .status
        ).toBe(404)
        const res = await server.request("POST", `/test-helpers/mandates/${id}/revoke-as-customer`, {
          key: m.test
        })
        expect(res.status).toBe(200)
        expect(res.body.status).toBe("REVOKED")
        expect((await F.events(server, m.id, "mandate.revoked"))[0]!.data.object.revoked_by).toBe("CUSTOMER")
        expect((await server.request("GET", "/test-helpers/payer", { key: m.live })).status).toBe(404)
      })
    })

    describe("Idempotency-Key", () => {
      it("replays a create byte for byte with Idempotent-Replay, and refuses the key with another body", async () => {
        const m = await F.merchant(server)
        const body = F.mandateBody()
        const first = await create(m.test, body, { "idempotency-key": "create-1" })
        expect(first.status).toBe(201)
        expect(first.headers.get("idempotent-replay")).toBeNull()
        const replay = await create(m.test, body, { "idempotency-key": "create-1" })
        expect(replay.status).toBe(201)
        expect(replay.text).toBe(first.text)
        expect(replay.headers.get("idempotent-replay")).toBe("true")
        expect((await server.request("GET", "/mandates", { key: m.test })).body).toHaveLength(1)
        const mismatch = await create(m.test, F.mandateBody(), { "idempotency-key": "create-1" })
        expect(mismatch.status).toBe(422)
        const other = await F.merchant(server)
        expect(
          (await create(other.test, body, { "idempotency-key": "create-1" })).headers.get("idempotent-replay")
        ).toBeNull()
      })

      it("replays refusals too, and a new key is a new attempt", async () => {
        const m = await F.merchant(server)
        const id = (await create(m.test)).body.id
        await setPayer(m.test, { balance: 0 })
        const refused = await charge(m.test, id, { amount: 1000 }, { "idempotency-key": "charge-a" })
        expect(refused.status).toBe(402)
        await setPayer(m.test, { balance: 5000 })
        const replayed = await charge(m.test, id, { amount: 1000 }, { "idempotency-key": "charge-a" })
        expect(replayed.status).toBe(402)
        expect(replayed.headers.get("idempotent-replay")).toBe("true")
        const fresh = await charge(m.test, id, { amount: 1000 }, { "idempotency-key": "charge-b" })
        expect(fresh.status).toBe(201)
        expect((await payer(m.test)).body.balance).toBe(4000)
      })

      it("makes exactly one charge from 50 concurrent requests with one key", async () => {
        const m = await F.merchant(server)
        const id = (await create(m.test)).body.id
        const results = await Promise.all(
          Array.from({ length: 50 }, () =>
            charge(m.test, id, { amount: 1000 }, { "idempotency-key": "same-key" })
          )
        )
        const statuses = results.map((r) => r.status)
        expect(statuses.every((s) => s === 201 || s === 409)).toBe(true)
        const created = results.filter((r) => r.status === 201)
        expect(new Set(created.map((r) => r.body.id)).size).toBe(1)
        expect((await payer(m.test)).body.balance).toBe(10_000_000 - 1000)
        expect(await F.events(server, m.id, "mandate.charge.succeeded")).toHaveLength(1)
        const after = await charge(m.test, id, { amount: 1000 }, { "idempotency-key": "same-key" })
        expect(after.status).toBe(201)
        expect(after.headers.get("idempotent-replay")).toBe("true")
        expect(after.body.id).toBe(created[0]!.body.id)
      })

      it("replays a revoke", async () => {
        const m = await F.merchant(server)
        const id = (await create(m.test)).body.id
        const first = await server.request("POST", `/mandates/${id}/revoke`, {
          key: m.test,
          headers: { "idempotency-key": "rv" }
        })
        const again = await server.request("POST", `/mandates/${id}/revoke`, {
          key: m.test,
          headers: { "idempotency-key": "rv" }
        })
        expect(first.status).toBe(200)
        expect(again.status).toBe(200)
        expect(again.headers.get("idempotent-replay")).toBe("true")
      })
    })

    describe("caps under concurrency", () => {
      it("never exceeds the period cap with 200 parallel charges", async () => {
        const m = await F.merchant(server)
        const id = (
          await create(m.test, F.mandateBody({ per_charge_cap: 1000, period_cap: 50_000, period: "MONTH" }))
        ).body.id
        const results = await Promise.all(
          Array.from({ length: 200 }, () => charge(m.test, id, { amount: 1000 }))
        )
        // On a busy machine a charge may wait on the mandate's row lock past its bound and answer 503
        // (moving nothing): allowed, and topped up one at a time afterwards. Anything else is a defect.
        const refusals = results.filter((r) => r.status !== 201)
        expect(
          refusals.filter(
            (r) =>
              r.body.code !== "PERIOD_CAP_EXCEEDED" &&
              !(r.status === 503 && r.body.code === "SERVICE_UNAVAILABLE")
          ),
          JSON.stringify(refusals.map((r) => [r.status, r.body.code]))
        ).toEqual([])
        let ok = results.filter((r) => r.status === 201).length
        expect(ok).toBeLessThanOrEqual(50)
        for (const _ of refusals.filter((r) => r.status === 503)) {
          const again = await charge(m.test, id, { amount: 1000 })
          if (again.status === 201) ok++
          else expect(again.body.code).toBe("PERIOD_CAP_EXCEEDED")
        }
        expect(ok).toBe(50)
        expect((await server.request("GET", `/mandates/${id}`, { key: m.test })).body.periodCharged).toBe(
          50_000
        )
        expect((await payer(m.test)).body.balance).toBe(10_000_000 - 50_000)
      }, 120_000)
    })

    describe("operations and the service", () => {
      it("guards /ops with the operator token", async () => {
        expect((await server.request("GET", "/ops/clock")).status).toBe(401)
        expect((await server.request("GET", "/ops/clock", { key: "ops_wrong" })).status).toBe(401)
        const m = await F.merchant(server)
        expect((await server.request("GET", "/ops/clock", { key: m.test })).status).toBe(401)
        const c = await server.ops("GET", "/ops/clock")
        expect(c.body.mode).toBe("manual")
        expect(c.body.now).toMatch(isoOffset)
      })

      it("creates merchants with integer outlets and keys of each kind", async () => {
        const res = await server.ops("POST", "/ops/merchants", {
          name: "Sea View",
          city: "Hulhumale",
          fee_bps: 150,
          outlets: [{ name: "A" }, { name: "B" }]
        })
        expect(res.status).toBe(201)
        expect(res.body.outlets.map((o: any) => Number.isInteger(o.id))).toEqual([true, true])
        const outlet = await server.ops("POST", `/ops/merchants/${res.body.id}/outlets`, { name: "C" })
        expect(outlet.status).toBe(201)
        expect(Number.isInteger(outlet.body.id)).toBe(true)
        const key = await server.ops("POST", `/ops/merchants/${res.body.id}/keys`, { environment: "live" })
        expect(key.body.key).toMatch(/^sk_live_/)
        expect(key.body.scopes.sort()).toEqual([
          "audit:read",
          "checkout:write",
          "mandates:write",
          "payments:write",
          "qr:write",
          "subscriptions:write",
          "webhooks:write"
        ])
        const pk = await server.ops("POST", `/ops/merchants/${res.body.id}/keys`, {
          environment: "test",
          kind: "publishable"
        })
        expect(pk.body.key).toMatch(/^pk_test_/)
        expect(
          (
            await server.ops("POST", "/ops/merchants/00000000-0000-4000-8000-000000000000/keys", {
              environment: "test"
            })
          ).status
        ).toBe(404)
        const fee = await F.merchant(server, { fee_bps: 150 })
        const id = (await create(fee.test)).body.id
        expect((await charge(fee.test, id, { amount: 10_000 })).body.fee).toBe(150)
      })

      it("serves health, readiness, the OpenAPI description and JSON 404s", async () => {
        expect((await server.request("GET", "/healthz")).status).toBe(200)
        expect((await server.request("GET", "/readyz")).status).toBe(200)
        const openapi = await server.request("GET", "/openapi.json")
        expect(openapi.status).toBe(200)
        expect(openapi.body.info.version).toBe("2026-07-01")
        expect(Object.keys(openapi.body.paths)).toEqual(
          expect.arrayContaining([
            "/mandates",
            "/mandates/{id}",
            "/mandates/{id}/charges",
            "/mandates/{id}/revoke"
          ])
        )
        const missing = await server.request("GET", "/nowhere")
        expect(missing.status).toBe(404)
        expect(missing.body).toEqual({ message: "Not found", code: "NOT_FOUND" })
      })
    })
  })
