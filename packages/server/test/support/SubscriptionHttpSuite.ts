/**
 * The subscription and checkout API over real HTTP (read shapes, states, billing periods, endpoints,
 * scopes, events, errors and limits), run against each database the server supports.
 *
 * The server runs on a manual clock shared by every test of the file, and the clock only moves forward.
 * Tests that need exact instants first move it to a fixed date, each a later one than the test before
 * (the renewal tests use one year each, from 2027 on); the other tests only move it by a day or less.
 * Every subscription a test makes is cancelled after it, so no renewal of one test runs in another.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import * as F from "./Fixtures.js"
import type { TestServer } from "./TestServer.js"

const isoOffset = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+05:00$/
const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

const subscriptionFields = [
  "id",
  "reference",
  "status",
  "planName",
  "amount",
  "currency",
  "interval",
  "intervalCount",
  "checkoutSessionId",
  "billingCycleAnchor",
  "currentPeriodStart",
  "currentPeriodEnd",
  "nextBillingAt",
  "cancelAtPeriodEnd",
  "cancelledAt",
  "cancellationInitiator",
  "metadata",
  "createdAt"
].sort()

const invoiceFields = [
  "id",
  "subscriptionId",
  "periodKey",
  "periodStart",
  "periodEnd",
  "amount",
  "amountRefunded",
  "currency",
  "status",
  "attemptCount",
  "nextRetryAt",
  "failureReason",
  "paymentIntentId",
  "paidAt",
  "createdAt"
].sort()

const cancelFields = [
  "id",
  "reference",
  "status",
  "cancelAtPeriodEnd",
  "cancelledAt",
  "cancellationInitiator",
  "currentPeriodEnd"
].sort()

const sessionReadFields = [
  "id",
  "reference",
  "url",
  "mode",
  "status",
  "title",
  "description",
  "amount",
  "currency",
  "priceData",
  "returnUrl",
  "subscriptionId",
  "expiresAt",
  "completedAt",
  "createdAt"
].sort()

const SandboxBalance = 10_000_000
const HOUR = 3_600_000
const DAY = 24 * HOUR

const pad = (n: number) => String(n).padStart(2, "0")

/** An instant as the API shows it: Maldives time, whole seconds, `+05:00`. */
const maldives = (ms: number) =>
  new Date(Math.floor(ms / 1000) * 1000 + 5 * HOUR).toISOString().replace(/\.\d{3}Z$/, "+05:00")

/** `iso` (in `+05:00`) moved by `hours`. */
const plusHours = (iso: string, hours: number) => maldives(Date.parse(iso) + hours * HOUR)

/**
 * The start of period `n` of a monthly plan anchored at `anchor` (an ISO string in `+05:00`): `n` months on,
 * the anchor's day clamped to the month's length, the anchor's time of day.
 */
const monthsAfter = (anchor: string, n: number) => {
  const [date, time] = anchor.split("T") as [string, string]
  const [y, m, d] = date.split("-").map(Number) as [number, number, number]
  const total = y * 12 + (m - 1) + n
  const year = Math.floor(total / 12)
  const month = (total % 12) + 1
  const days = new Date(Date.UTC(year, month, 0)).getUTCDate()
  return `${year}-${pad(month)}-${pad(Math.min(d, days))}T${time}`
}

/** Unix seconds of an ISO instant, as webhook objects carry them. */
const unix = (iso: string) => Math.floor(Date.parse(iso) / 1000)

export const suite = (name: string, start: () => Promise<TestServer>) =>
  describe(name, () => {
    let server: TestServer
    beforeAll(async () => {
      server = await start()
    }, 120_000)
    afterAll(async () => {
      await server?.close()
    })

    /** Subscriptions made by the current test; cancelled after it so they never renew in a later test. */
    const made = new Set<string>()
    afterEach(async () => {
      for (const id of made) await server.ops("POST", `/ops/subscriptions/${id}/cancel`)
      made.clear()
    }, 60_000)

    const json = (headers?: Record<string, string>) => (headers ? { headers } : {})

    const subscriptionBody = (
      overrides: Record<string, unknown> = {},
      price: Record<string, unknown> = {}
    ): Record<string, unknown> => ({
      mode: "SUBSCRIPTION",
      reference: F.unique("sub"),
      title: "Gym membership",
      price_data: { name: "Gold", amount: 25_000, interval: "MONTH", ...price },
      ...overrides
    })
    const createSession = (key: string | undefined, body: unknown, headers?: Record<string, string>) =>
      server.request("POST", "/checkout/sessions", { key, body, ...json(headers) })
    const getSession = (key: string, id: string) => server.request("GET", `/checkout/sessions/${id}`, { key })
    const pay = (key: string, sessionId: string) =>
      server.request("POST", `/test-helpers/checkout/sessions/${sessionId}/pay`, { key })
    const getSubscription = (key: string, id: string) =>
      server.request("GET", `/subscriptions/${encodeURIComponent(id)}`, { key })
    const list = (key: string, query = "") => server.request("GET", `/subscriptions${query}`, { key })
    const invoices = async (key: string, id: string, query = "") => {
      const res = await server.request("GET", `/subscriptions/${encodeURIComponent(id)}/invoices${query}`, {
        key
      })
      expect(res.status, res.text).toBe(200)
      return res.body as Array<any>
    }
    const cancel = (
      key: string,
      id: string,
      options: { body?: unknown; rawBody?: string; headers?: Record<string, string> } = {}
    ) => server.request("POST", `/subscriptions/${encodeURIComponent(id)}/cancel`, { key, ...options })
    const payer = async (key: string) => {
      const res = await server.request("GET", "/test-helpers/payer", { key })
      expect(res.status).toBe(200)
      return res.body as { customerId: string; balance: number }
    }
    const setPayer = async (key: string, body: Record<string, unknown>) => {
      const res = await server.request("POST", "/test-helpers/payer", { key, body })
      expect(res.status, res.text).toBe(200)
    }
    const notifications = async (customerId: string, kind?: string) => {
      const res = await server.ops("GET", `/ops/customers/${customerId}/notifications`)
      expect(res.status).toBe(200)
      const all = res.body as Array<any>
      return kind === undefined ? all : all.filter((n) => n.kind === kind)
    }
    const now = async () => (await server.ops("GET", "/ops/clock")).body.now as string
    /** Moves the clock to `iso`; the dates of the renewal tests must grow from test to test. */
    const advanceTo = async (iso: string) => {
      const res = await server.ops("POST", "/ops/clock/advance", { to: iso })
      expect(res.status, `advance to ${iso}: ${res.text}`).toBe(200)
      expect(res.body.now).toBe(iso)
    }
    const advanceBy = async (seconds: number) => {
      const res = await server.ops("POST", "/ops/clock/advance", { by_seconds: seconds })
      expect(res.status, res.text).toBe(200)
    }

    /** A paid subscription session: the session's create response and the settled subscription. */
    const subscribe = async (
      key: string,
      overrides: Record<string, unknown> = {},
      price: Record<string, unknown> = {}
    ) => {
      const created = await createSession(key, subscriptionBody(overrides, price))
      expect(created.status, created.text).toBe(200)
      const paid = await pay(key, created.body.id)
      expect(paid.status, paid.text).toBe(200)
      made.add(paid.body.subscription.id)
      return { session: created.body, subscription: paid.body.subscription }
    }

    describe("authentication and scopes (5)", () => {
      it("answers 401 without a key or with an unknown one, on every checkout and subscription endpoint", async () => {
        for (const [method, path] of [
          ["POST", "/checkout/sessions"],
          ["GET", "/checkout/sessions/00000000-0000-4000-8000-000000000000"],
          ["POST", "/checkout/sessions/00000000-0000-4000-8000-000000000000/cancel"],
          ["GET", "/subscriptions"],
          ["GET", "/subscriptions/x"],
          ["GET", "/subscriptions/x/invoices"],
          ["POST", "/subscriptions/x/cancel"],
          ["POST", "/test-helpers/checkout/sessions/x/pay"],
          ["POST", "/test-helpers/subscriptions/x/cancel-as-customer"]
        ] as const) {
          const body = path === "/checkout/sessions" ? subscriptionBody() : undefined
          const none = await server.request(method, path, { body })
          expect(none.status, `${method} ${path}`).toBe(401)
          expect(none.body).toEqual({
            message: "No API key: send your secret key in the header `Authorization: Bearer sk_test_...`",
            code: "UNAUTHORIZED"
          })
          const unknown = await server.request(method, path, { key: "sk_test_doesnotexist0000", body })
          expect(unknown.status, `${method} ${path}`).toBe(401)
        }
      })

      it("needs checkout:write to create, read and cancel sessions (a publishable key only creates), subscriptions:write for subscriptions", async () => {
        const m = await F.merchant(server)
        const subscriptionsOnly = await m.key("test", ["subscriptions:write"])
        const checkoutOnly = await m.key("test", ["checkout:write"])

        const denied = await createSession(subscriptionsOnly, subscriptionBody())
        expect(denied.status).toBe(403)
        expect(denied.body.message).toContain("checkout:write")
        const session = await createSession(checkoutOnly, subscriptionBody())
        expect(session.status).toBe(200)
        expect((await getSession(subscriptionsOnly, session.body.id)).status).toBe(403)
        expect(
          (
            await server.request("POST", `/checkout/sessions/${session.body.id}/cancel`, {
              key: subscriptionsOnly
            })
          ).status
        ).toBe(403)
        const byPublishable = await createSession(m.publishable, subscriptionBody())
        expect(byPublishable.status, byPublishable.text).toBe(200)
        expect((await getSession(m.publishable, byPublishable.body.id)).status).toBe(403)
        expect(
          (
            await server.request("POST", `/checkout/sessions/${byPublishable.body.id}/cancel`, {
              key: m.publishable
            })
          ).status
        ).toBe(403)
        expect((await getSession(m.test, byPublishable.body.id)).body.status).toBe("OPEN")

        const paid = await pay(m.test, session.body.id)
        expect(paid.status).toBe(200)
        const id = paid.body.subscription.id
        made.add(id)
        for (const [method, path] of [
          ["GET", "/subscriptions"],
          ["GET", `/subscriptions/${id}`],
          ["GET", `/subscriptions/${id}/invoices`],
          ["POST", `/subscriptions/${id}/cancel`]
        ] as const) {
          const res = await server.request(method, path, { key: checkoutOnly })
          expect(res.status, `${method} ${path}`).toBe(403)
          expect(res.body.message).toContain("subscriptions:write")
          expect(
            (await server.request(method, path, { key: m.publishable })).status,
            `${method} ${path}`
          ).toBe(403)
        }
        // Nothing was cancelled by the refused calls; the subscriptions key reads it.
        const read = await getSubscription(subscriptionsOnly, id)
        expect(read.status).toBe(200)
        expect(read.body.status).toBe("ACTIVE")
      })
    })

    describe("POST /checkout/sessions in SUBSCRIPTION mode (4.3, 8)", () => {
      it("answers 200 with exactly id, reference and the hosted url, and the session reads back OPEN for 24 hours", async () => {
        const m = await F.merchant(server)
        const body = subscriptionBody(
          { description: "Unlimited classes", return_url: "https://gym.mv/done" },
          { name: "Gold", amount: 25_000, interval: "MONTH" }
        )
        const created = await createSession(m.test, body)
        expect(created.status).toBe(200)
        expect(Object.keys(created.body).sort()).toEqual(["id", "reference", "url"])
        expect(created.body.id).toMatch(uuid)
        expect(created.body.reference).toBe(body.reference)
        expect(created.body.url).toBe(`http://pay.laari.test/checkout/${created.body.id}`)

        const read = await getSession(m.test, created.body.id)
        expect(read.status).toBe(200)
        expect(Object.keys(read.body).sort()).toEqual(sessionReadFields)
        expect(read.body).toMatchObject({
          id: created.body.id,
          reference: body.reference,
          url: created.body.url,
          mode: "SUBSCRIPTION",
          status: "OPEN",
          title: "Gym membership",
          description: "Unlimited classes",
          amount: 25_000,
          currency: "MVR",
          priceData: { name: "Gold", amount: 25_000, interval: "MONTH", intervalCount: 1 },
          returnUrl: "https://gym.mv/done",
          subscriptionId: null,
          completedAt: null
        })
        expect(read.body.createdAt).toBe(await now())
        expect(read.body.expiresAt).toBe(plusHours(read.body.createdAt, 24))
        const other = await F.merchant(server)
        expect((await getSession(other.test, created.body.id)).status).toBe(404)
        expect((await getSession(m.live, created.body.id)).status).toBe(404)
        expect((await getSession(m.test, "00000000-0000-4000-8000-000000000000")).status).toBe(404)
      })

      it("refuses every rule of the 4.3 table with 422 naming the field, and writes nothing", async () => {
        const m = await F.merchant(server)
        const reference = F.unique("rules")
        const cases: Array<[Record<string, unknown>, Record<string, unknown>, string]> = [
          [{ mode: "RECURRING" }, {}, "mode"],
          [{ mode: "subscription" }, {}, "mode"],
          [{ price_data: undefined }, {}, "price_data"],
          [{ price_data: "Gold" }, {}, "price_data"],
          [{}, { name: undefined }, "price_data.name"],
          [{}, { name: "" }, "price_data.name"],
          [{}, { name: "n".repeat(121) }, "price_data.name"],
          [{}, { amount: undefined }, "price_data.amount"],
          [{}, { amount: 99 }, "price_data.amount"],
          [{}, { amount: 500_001 }, "price_data.amount"],
          [{}, { amount: 150.5 }, "price_data.amount"],
          [{}, { amount: "1000" }, "price_data.amount"],
          [{}, { interval: undefined }, "price_data.interval"],
          [{}, { interval: "DAY" }, "price_data.interval"],
          [{}, { interval: "YEAR" }, "price_data.interval"],
          [{}, { interval: "month" }, "price_data.interval"],
          [{}, { interval: "MONTH", interval_count: 13 }, "price_data.interval_count"],
          [{}, { interval: "MONTH", interval_count: 0 }, "price_data.interval_count"],
          [{}, { interval: "WEEK", interval_count: 0 }, "price_data.interval_count"],
          [{}, { interval: "WEEK", interval_count: 53 }, "price_data.interval_count"],
          [{}, { interval: "WEEK", interval_count: -1 }, "price_data.interval_count"],
          [{}, { interval: "MONTH", interval_count: 1.5 }, "price_data.interval_count"],
          [{ title: undefined }, {}, "title"],
          [{ title: "" }, {}, "title"],
          [{ title: "t".repeat(256) }, {}, "title"],
          [{ reference: undefined }, {}, "reference"],
          [{ reference: "" }, {}, "reference"],
          [{ reference: "r".repeat(256) }, {}, "reference"],
          [{ description: "d".repeat(256) }, {}, "description"],
          [{ return_url: "ftp://gym.mv/done" }, {}, "return_url"],
          [{ return_url: "not a url" }, {}, "return_url"],
          [{ amount: 24_999 }, {}, "amount"]
        ]
        for (const [overrides, price, field] of cases) {
          const body = subscriptionBody({ reference, ...overrides }, price)
          const res = await createSession(m.test, body)
          const label = JSON.stringify(body)
          expect(res.status, label).toBe(422)
          expect(typeof res.body.message, label).toBe("string")
          expect(
            res.body.errors.map((e: { field: string }) => e.field),
            label
          ).toContain(field)
        }
        // None of them was written: the reference is still free.
        const ok = await createSession(m.test, subscriptionBody({ reference }))
        expect(ok.status, ok.text).toBe(200)
      })

      it("accepts the edges of every rule: WEEK x1..52, MONTH x1..12, interval_count defaulting to 1, amount equal to the price", async () => {
        const m = await F.merchant(server)
        const accepted: Array<[Record<string, unknown>, Record<string, unknown>, Record<string, unknown>]> = [
          [{}, { interval: "WEEK", interval_count: 1 }, { interval: "WEEK", intervalCount: 1 }],
          [{}, { interval: "WEEK", interval_count: 52 }, { interval: "WEEK", intervalCount: 52 }],
          [{}, { interval: "WEEK" }, { interval: "WEEK", intervalCount: 1 }],
          [{}, { interval: "MONTH", interval_count: 1 }, { interval: "MONTH", intervalCount: 1 }],
          [{}, { interval: "MONTH", interval_count: 12 }, { interval: "MONTH", intervalCount: 12 }],
          [{}, { interval: "MONTH" }, { interval: "MONTH", intervalCount: 1 }],
          [{}, { amount: 100 }, { amount: 100 }],
          [{}, { amount: 500_000 }, { amount: 500_000 }],
          [{}, { name: "n".repeat(120) }, { name: "n".repeat(120) }],
          [{ amount: 25_000 }, {}, { amount: 25_000 }],
          [{ title: "t".repeat(255), description: "d".repeat(255) }, {}, {}],
          [{ reference: F.unique("r").padEnd(255, "r") }, {}, {}],
          [{ return_url: "http://gym.mv/back?x=1" }, {}, {}],
          [{ return_url: "https://gym.mv/back" }, {}, {}]
        ]
        for (const [overrides, price, expected] of accepted) {
          const body = subscriptionBody(overrides, price)
          const res = await createSession(m.test, body)
          expect(res.status, `${JSON.stringify(body)}: ${res.text}`).toBe(200)
          const read = await getSession(m.test, res.body.id)
          expect(read.body.priceData, JSON.stringify(body)).toMatchObject(expected)
          expect(read.body.amount).toBe(read.body.priceData.amount)
        }
      })

      it("ignores amount when it equals price_data.amount: the session is priced by price_data", async () => {
        const m = await F.merchant(server)
        const created = await createSession(m.test, subscriptionBody({ amount: 7_500 }, { amount: 7_500 }))
        expect(created.status).toBe(200)
        const paid = await pay(m.test, created.body.id)
        expect(paid.status, paid.text).toBe(200)
        made.add(paid.body.subscription.id)
        expect(paid.body.subscription.amount).toBe(7_500)
        expect((await payer(m.test)).balance).toBe(SandboxBalance - 7_500)
      })

      it("gates live keys with 403 and the spec's body until subscriptions_live is set; test keys are not gated", async () => {
        const m = await F.merchant(server)
        const gated = await createSession(m.live, subscriptionBody())
        expect(gated.status).toBe(403)
        expect(gated.body).toEqual({
          message: "Subscriptions are not enabled for this merchant",
          code: "SUBSCRIPTIONS_NOT_ENABLED"
        })
        expect((await createSession(m.test, subscriptionBody())).status).toBe(200)
        const enabled = await server.ops("POST", `/ops/merchants/${m.id}/features`, {
          subscriptions_live: true
        })
        expect(enabled.status).toBe(200)
        expect(enabled.body.features.subscriptionsLive).toBe(true)
        const open = await createSession(m.live, subscriptionBody())
        expect(open.status, open.text).toBe(200)
        expect(Object.keys(open.body).sort()).toEqual(["id", "reference", "url"])
        // The sandbox payer is for test keys only.
        expect((await pay(m.live, open.body.id)).status).toBe(404)
        expect((await getSession(m.live, open.body.id)).body.status).toBe("OPEN")
        const off = await server.ops("POST", `/ops/merchants/${m.id}/features`, { subscriptions_live: false })
        expect(off.body.features.subscriptionsLive).toBe(false)
        expect((await createSession(m.live, subscriptionBody())).status).toBe(403)
      })

      it("keeps the reference unique per merchant with 409, across both modes", async () => {
        const a = await F.merchant(server)
        const b = await F.merchant(server)
        const body = subscriptionBody()
        expect((await createSession(a.test, body)).status).toBe(200)
        const again = await createSession(a.test, body)
        expect(again.status).toBe(409)
        expect(typeof again.body.message).toBe("string")
        const asPayment = await createSession(a.test, {
          reference: body.reference,
          title: "One-off",
          amount: 1000
        })
        expect(asPayment.status).toBe(409)
        expect((await createSession(b.test, body)).status).toBe(200)
      })

      it("answers 400 for a body that is not JSON", async () => {
        const m = await F.merchant(server)
        const res = await server.request("POST", "/checkout/sessions", { key: m.test, rawBody: "{not json" })
        expect(res.status).toBe(400)
        expect(typeof res.body.message).toBe("string")
      })

      it("replays a create with Idempotency-Key byte for byte, and refuses the key with another body", async () => {
        const m = await F.merchant(server)
        const body = subscriptionBody()
        const first = await createSession(m.test, body, { "idempotency-key": "session-1" })
        expect(first.status).toBe(200)
        expect(first.headers.get("idempotent-replay")).toBeNull()
        const replay = await createSession(m.test, body, { "idempotency-key": "session-1" })
        expect(replay.status).toBe(200)
        expect(replay.text).toBe(first.text)
        expect(replay.headers.get("idempotent-replay")).toBe("true")
        expect(
          (await createSession(m.test, subscriptionBody(), { "idempotency-key": "session-1" })).status
        ).toBe(422)
        // The replay created nothing: the reference is taken by the first session only.
        expect((await createSession(m.test, body)).status).toBe(409)
      })
    })

    describe("PAYMENT mode and the session operations", () => {
      it("creates a one-off session from amount, title and reference; paying it moves money and makes no subscription", async () => {
        const m = await F.merchant(server)
        const reference = F.unique("order")
        const created = await createSession(m.test, { reference, title: "Order 7", amount: 12_550 })
        expect(created.status, created.text).toBe(200)
        expect(Object.keys(created.body).sort()).toEqual(["id", "reference", "url"])
        expect(created.body.url).toBe(`http://pay.laari.test/checkout/${created.body.id}`)
        const read = await getSession(m.test, created.body.id)
        expect(read.body).toMatchObject({ mode: "PAYMENT", status: "OPEN", amount: 12_550, priceData: null })
        const explicit = await createSession(m.test, {
          mode: "PAYMENT",
          reference: F.unique("o"),
          title: "T",
          amount: 100
        })
        expect(explicit.status).toBe(200)

        const paid = await pay(m.test, created.body.id)
        expect(paid.status, paid.text).toBe(200)
        expect(paid.body.subscription).toBeNull()
        expect(paid.body.session).toMatchObject({
          id: created.body.id,
          status: "COMPLETE",
          subscriptionId: null
        })
        expect((await payer(m.test)).balance).toBe(SandboxBalance - 12_550)
        expect((await list(m.test)).body).toEqual([])
        expect((await getSession(m.test, created.body.id)).body.status).toBe("COMPLETE")
        const completed = await F.events(server, m.id, "checkout.session.completed")
        expect(completed).toHaveLength(1)
        expect(completed[0]!.data.object).toMatchObject({
          id: created.body.id,
          mode: "PAYMENT",
          subscription: null
        })
        expect(await F.events(server, m.id, "subscription.activated")).toEqual([])
        expect(await F.events(server, m.id, "invoice.paid")).toEqual([])
        const again = await pay(m.test, created.body.id)
        expect(again.status).toBe(409)
        expect((await payer(m.test)).balance).toBe(SandboxBalance - 12_550)
      })

      it("refuses an invalid one-off session with 422 naming the field", async () => {
        const m = await F.merchant(server)
        const base = { reference: F.unique("o"), title: "Order", amount: 1000 }
        const cases: Array<[Record<string, unknown>, string]> = [
          [{ amount: undefined }, "amount"],
          [{ amount: 99 }, "amount"],
          [{ amount: 500_001 }, "amount"],
          [{ amount: 10.5 }, "amount"],
          [{ title: undefined }, "title"],
          [{ reference: undefined }, "reference"],
          [{ price_data: { name: "x", amount: 1000, interval: "MONTH" } }, "price_data"]
        ]
        for (const [overrides, field] of cases) {
          const res = await createSession(m.test, { ...base, ...overrides })
          expect(res.status, JSON.stringify(overrides)).toBe(422)
          expect(
            res.body.errors.map((e: { field: string }) => e.field),
            JSON.stringify(overrides)
          ).toContain(field)
        }
        // One-off sessions are not gated on live keys.
        expect((await createSession(m.live, base)).status).toBe(200)
      })

      it("cancels an open session (CANCELLED), then paying it is 409 and a second cancel is 409", async () => {
        const m = await F.merchant(server)
        const created = await createSession(m.test, subscriptionBody())
        const other = await F.merchant(server)
        expect(
          (await server.request("POST", `/checkout/sessions/${created.body.id}/cancel`, { key: other.test }))
            .status
        ).toBe(404)
        const res = await server.request("POST", `/checkout/sessions/${created.body.id}/cancel`, {
          key: m.test,
          headers: { "idempotency-key": "session-cancel" }
        })
        expect(res.status, res.text).toBe(200)
        expect(res.body).toMatchObject({ id: created.body.id, status: "CANCELLED" })
        const replay = await server.request("POST", `/checkout/sessions/${created.body.id}/cancel`, {
          key: m.test,
          headers: { "idempotency-key": "session-cancel" }
        })
        expect(replay.status).toBe(200)
        expect(replay.text).toBe(res.text)
        expect(replay.headers.get("idempotent-replay")).toBe("true")
        expect((await getSession(m.test, created.body.id)).body.status).toBe("CANCELLED")
        const paid = await pay(m.test, created.body.id)
        expect(paid.status).toBe(409)
        expect(typeof paid.body.message).toBe("string")
        expect((await payer(m.test)).balance).toBe(SandboxBalance)
        expect((await list(m.test, `?reference=${created.body.reference}`)).body).toEqual([])
        expect(
          (await server.request("POST", `/checkout/sessions/${created.body.id}/cancel`, { key: m.test }))
            .status
        ).toBe(409)
        expect(await F.events(server, m.id, "checkout.session.completed")).toEqual([])
      })

      it("reads and cancels a session by its reference too; another merchant's reference is 404", async () => {
        const m = await F.merchant(server)
        const created = await createSession(m.test, subscriptionBody())
        const reference = encodeURIComponent(created.body.reference)
        const read = await getSession(m.test, reference)
        expect(read.status, read.text).toBe(200)
        expect(read.body).toMatchObject({ id: created.body.id, reference: created.body.reference })
        const other = await F.merchant(server)
        expect((await getSession(other.test, reference)).status).toBe(404)
        expect(
          (await server.request("POST", `/checkout/sessions/${reference}/cancel`, { key: other.test })).status
        ).toBe(404)
        const cancelled = await server.request("POST", `/checkout/sessions/${reference}/cancel`, {
          key: m.test
        })
        expect(cancelled.status, cancelled.text).toBe(200)
        expect(cancelled.body).toMatchObject({ id: created.body.id, status: "CANCELLED" })
      })

      it("cannot cancel a paid session", async () => {
        const m = await F.merchant(server)
        const { session, subscription } = await subscribe(m.test)
        const res = await server.request("POST", `/checkout/sessions/${session.id}/cancel`, { key: m.test })
        expect(res.status).toBe(409)
        expect((await getSession(m.test, session.id)).body).toMatchObject({
          status: "COMPLETE",
          subscriptionId: subscription.id
        })
      })
    })

    describe("paying a SUBSCRIPTION session (3.2, 2.4, 2.5, 6)", () => {
      it("creates an ACTIVE subscription with every field of 2.4, invoice 0 PAID with every field of 2.5, and the three events", async () => {
        const m = await F.merchant(server)
        const body = subscriptionBody(
          { title: "Coffee club" },
          { name: "Daily cup", amount: 25_000, interval: "MONTH" }
        )
        const created = await createSession(m.test, body)
        const settledAt = await now()
        const paid = await pay(m.test, created.body.id)
        expect(paid.status, paid.text).toBe(200)
        const id = paid.body.subscription.id as string
        made.add(id)
        expect(id).toMatch(uuid)
        expect(paid.body.session).toMatchObject({
          id: created.body.id,
          status: "COMPLETE",
          subscriptionId: id
        })
        expect(paid.body.session.completedAt).toBe(settledAt)

        const end = monthsAfter(settledAt, 1)
        const read = await getSubscription(m.test, id)
        expect(read.status).toBe(200)
        expect(Object.keys(read.body).sort()).toEqual(subscriptionFields)
        expect(read.body).toEqual({
          id,
          reference: body.reference,
          status: "ACTIVE",
          planName: "Daily cup",
          amount: 25_000,
          currency: "MVR",
          interval: "MONTH",
          intervalCount: 1,
          checkoutSessionId: created.body.id,
          billingCycleAnchor: settledAt,
          currentPeriodStart: settledAt,
          currentPeriodEnd: end,
          nextBillingAt: end,
          cancelAtPeriodEnd: false,
          cancelledAt: null,
          cancellationInitiator: null,
          metadata: null,
          createdAt: settledAt
        })
        expect(read.body).toHaveProperty("metadata", null)
        expect(paid.body.subscription).toEqual(read.body)

        const list0 = await invoices(m.test, id)
        expect(list0).toHaveLength(1)
        const invoice = list0[0]
        expect(Object.keys(invoice).sort()).toEqual(invoiceFields)
        expect(invoice).toEqual({
          id: expect.stringMatching(uuid),
          subscriptionId: id,
          periodKey: settledAt.slice(0, 10),
          periodStart: settledAt,
          periodEnd: end,
          amount: 25_000,
          amountRefunded: 0,
          currency: "MVR",
          status: "PAID",
          attemptCount: 1,
          nextRetryAt: null,
          failureReason: null,
          paymentIntentId: expect.any(String),
          paidAt: settledAt,
          createdAt: settledAt
        })
        for (const f of ["billingCycleAnchor", "currentPeriodStart", "currentPeriodEnd", "createdAt"])
          expect(read.body[f]).toMatch(isoOffset)

        expect((await payer(m.test)).balance).toBe(SandboxBalance - 25_000)

        const activated = await F.events(server, m.id, "subscription.activated")
        expect(activated).toHaveLength(1)
        expect(activated[0]).toMatchObject({ api_version: "2026-07-01", livemode: false })
        expect(activated[0]!.data.object).toMatchObject({ id, status: "ACTIVE", reference: body.reference })
        const invoicePaid = await F.events(server, m.id, "invoice.paid")
        expect(invoicePaid).toHaveLength(1)
        expect(invoicePaid[0]!.data.object).toMatchObject({
          id: invoice.id,
          subscription_id: id,
          subscription_reference: body.reference,
          status: "PAID",
          amount: 25_000
        })
        const completed = await F.events(server, m.id, "checkout.session.completed")
        expect(completed).toHaveLength(1)
        expect(completed[0]!.data.object).toMatchObject({
          id: created.body.id,
          mode: "SUBSCRIPTION",
          subscription: { id }
        })
        const session = await getSession(m.test, created.body.id)
        expect(session.body).toMatchObject({ status: "COMPLETE", subscriptionId: id, completedAt: settledAt })
      })

      it("refuses to settle a session twice with 409: one subscription, the money moved once", async () => {
        const m = await F.merchant(server)
        const { session, subscription } = await subscribe(m.test, {}, { amount: 3_000 })
        const again = await pay(m.test, session.id)
        expect(again.status).toBe(409)
        expect(typeof again.body.message).toBe("string")
        expect((await payer(m.test)).balance).toBe(SandboxBalance - 3_000)
        expect((await list(m.test)).body.map((s: any) => s.id)).toEqual([subscription.id])
        expect(await invoices(m.test, subscription.id)).toHaveLength(1)
      })

      it("makes exactly one subscription from 20 concurrent settlements of one session, moving the money once", async () => {
        const m = await F.merchant(server)
        const created = await createSession(m.test, subscriptionBody({}, { amount: 4_000 }))
        const results = await Promise.all(Array.from({ length: 20 }, () => pay(m.test, created.body.id)))
        const ok = results.filter((r) => r.status === 200)
        for (const r of ok) made.add(r.body.subscription.id)
        expect(ok).toHaveLength(1)
        expect(results.filter((r) => r.status !== 200).map((r) => r.status)).toEqual(Array(19).fill(409))
        const subs = (await list(m.test, `?reference=${created.body.reference}`)).body
        expect(subs).toHaveLength(1)
        expect(subs[0].id).toBe(ok[0]!.body.subscription.id)
        expect((await payer(m.test)).balance).toBe(SandboxBalance - 4_000)
        expect(await F.events(server, m.id, "subscription.activated")).toHaveLength(1)
        expect(await F.events(server, m.id, "invoice.paid")).toHaveLength(1)
        expect(await F.events(server, m.id, "checkout.session.completed")).toHaveLength(1)
        expect(await invoices(m.test, subs[0].id)).toHaveLength(1)
      }, 60_000)

      it("answers 404 when paying another merchant's session or an unknown one", async () => {
        const m = await F.merchant(server)
        const other = await F.merchant(server)
        const created = await createSession(m.test, subscriptionBody())
        expect((await pay(other.test, created.body.id)).status).toBe(404)
        expect((await pay(m.test, "00000000-0000-4000-8000-000000000000")).status).toBe(404)
        expect((await payer(other.test)).balance).toBe(SandboxBalance)
        expect((await getSession(m.test, created.body.id)).body.status).toBe("OPEN")
      })

      it("declines the first payment when the payer cannot cover it (402): nothing moves, the session stays open and can be paid later", async () => {
        const m = await F.merchant(server)
        const created = await createSession(m.test, subscriptionBody({}, { amount: 5_000 }))
        await setPayer(m.test, { balance: 4_999 })
        const declined = await pay(m.test, created.body.id)
        expect(declined.status).toBe(402)
        expect((await payer(m.test)).balance).toBe(4_999)
        expect((await getSession(m.test, created.body.id)).body.status).toBe("OPEN")
        expect((await list(m.test)).body).toEqual([])
        expect(await F.events(server, m.id, "subscription.activated")).toEqual([])
        await setPayer(m.test, { balance: 5_000 })
        const paid = await pay(m.test, created.body.id)
        expect(paid.status, paid.text).toBe(200)
        made.add(paid.body.subscription.id)
        expect((await payer(m.test)).balance).toBe(0)
      })

      it("expires an unpaid session 24 hours after creation: EXPIRED, not payable, and no subscription exists", async () => {
        const m = await F.merchant(server)
        const created = await createSession(m.test, subscriptionBody())
        await advanceBy(86_399)
        expect((await getSession(m.test, created.body.id)).body.status).toBe("OPEN")
        await advanceBy(1)
        expect((await getSession(m.test, created.body.id)).body.status).toBe("EXPIRED")
        const paid = await pay(m.test, created.body.id)
        expect(paid.status).toBe(409)
        expect(typeof paid.body.message).toBe("string")
        expect((await payer(m.test)).balance).toBe(SandboxBalance)
        const byReference = await list(m.test, `?reference=${encodeURIComponent(created.body.reference)}`)
        expect(byReference.status).toBe(200)
        expect(byReference.body).toEqual([])
        expect((await getSubscription(m.test, created.body.reference)).status).toBe(404)
        expect(await F.events(server, m.id, "checkout.session.completed")).toEqual([])
        expect(
          (await server.request("POST", `/checkout/sessions/${created.body.id}/cancel`, { key: m.test }))
            .status
        ).toBe(409)
      })

      it("lets a live customer pay a live subscription session on the hosted page; it is invisible to the test environment", async () => {
        const m = await F.merchant(server)
        await server.ops("POST", `/ops/merchants/${m.id}/features`, { subscriptions_live: true })
        const customer = await F.customer(server, { environment: "live", balance: 100_000 })
        const created = await createSession(
          m.live,
          subscriptionBody({}, { amount: 30_000, interval: "WEEK" })
        )
        expect(created.status).toBe(200)
        const page = await server.request("GET", `/approvals/checkout/${created.body.id}`)
        expect(page.status).toBe(200)
        expect(page.body).toMatchObject({
          mode: "SUBSCRIPTION",
          amount: 30_000,
          planName: "Gold",
          interval: "WEEK"
        })
        const challenge = await server.request("POST", `/approvals/checkout/${created.body.id}/challenge`, {
          body: { phone: customer.phone }
        })
        expect(challenge.status, challenge.text).toBe(200)
        const code = (await notifications(customer.id, "one_time_code")).find(
          (n) => n.data.challenge_id === challenge.body.challenge_id
        )?.data.code
        const paid = await server.request("POST", `/approvals/checkout/${created.body.id}/pay`, {
          body: { challenge_id: challenge.body.challenge_id, otp: code }
        })
        expect(paid.status, paid.text).toBe(200)
        const id = paid.body.subscriptionId as string
        expect(id).toMatch(uuid)
        made.add(id)
        const read = await getSubscription(m.live, id)
        expect(read.status).toBe(200)
        expect(read.body).toMatchObject({
          status: "ACTIVE",
          amount: 30_000,
          interval: "WEEK",
          intervalCount: 1
        })
        expect(read.body.currentPeriodEnd).toBe(plusHours(read.body.currentPeriodStart, 7 * 24))
        const live = await server.ops("GET", `/ops/customers/${customer.id}/notifications`)
        expect(live.body.filter((n: any) => n.kind === "payment")).toHaveLength(1)
        // The other environment answers as if it did not exist.
        const hidden = await getSubscription(m.test, id)
        expect(hidden.status).toBe(404)
        expect(hidden.body).toEqual({ message: "Subscription not found", code: "SUBSCRIPTION_NOT_FOUND" })
        expect((await list(m.test)).body).toEqual([])
        expect((await list(m.live)).body.map((s: any) => s.id)).toEqual([id])
        expect((await F.events(server, m.id, "subscription.activated"))[0]!.livemode).toBe(true)
        expect(
          (
            await server.request("POST", `/test-helpers/subscriptions/${id}/cancel-as-customer`, {
              key: m.live
            })
          ).status
        ).toBe(404)
      })
    })

    describe("GET /subscriptions (4.3, 7.4)", () => {
      it("reads by UUID and by the session's reference; 404 Subscription not found for unknown, another merchant's and the other environment's", async () => {
        const m = await F.merchant(server)
        const reference = `ORDER 7/${F.unique("r")}`
        const { subscription } = await subscribe(m.test, { reference })
        const byId = await getSubscription(m.test, subscription.id)
        expect(byId.status).toBe(200)
        const byReference = await getSubscription(m.test, reference)
        expect(byReference.status).toBe(200)
        expect(byReference.body).toEqual(byId.body)
        expect((await invoices(m.test, reference)).map((i) => i.subscriptionId)).toEqual([subscription.id])

        const other = await F.merchant(server)
        const notFound = { message: "Subscription not found", code: "SUBSCRIPTION_NOT_FOUND" }
        for (const [key, target] of [
          [m.test, "00000000-0000-4000-8000-000000000000"],
          [m.test, "no-such-reference"],
          [other.test, subscription.id],
          [other.test, reference],
          [m.live, subscription.id],
          [m.live, reference]
        ] as const) {
          const got = await getSubscription(key, target)
          expect(got.status, target).toBe(404)
          expect(got.body, target).toEqual(notFound)
          const inv = await server.request("GET", `/subscriptions/${encodeURIComponent(target)}/invoices`, {
            key
          })
          expect(inv.status, target).toBe(404)
          expect(inv.body).toEqual(notFound)
          const cancelled = await cancel(key, target)
          expect(cancelled.status, target).toBe(404)
          expect(cancelled.body).toEqual(notFound)
        }
        for (const key of [other.test, m.live]) expect((await list(key)).body).toEqual([])
        expect(
          (
            await server.request(
              "POST",
              `/test-helpers/subscriptions/${subscription.id}/cancel-as-customer`,
              { key: other.test }
            )
          ).status
        ).toBe(404)
        expect((await getSubscription(m.test, subscription.id)).body.status).toBe("ACTIVE")
      })

      it("lists newest first, filters by status and reference, pages with limit and offset", async () => {
        const m = await F.merchant(server)
        const a = (await subscribe(m.test)).subscription
        await advanceBy(1)
        const b = (await subscribe(m.test)).subscription
        await advanceBy(1)
        const c = (await subscribe(m.test)).subscription
        expect((await cancel(m.test, b.id)).status).toBe(200)
        const ids = async (q: string) => {
          const res = await list(m.test, q)
          expect(res.status, q).toBe(200)
          return res.body.map((s: any) => s.id)
        }
        const all = await list(m.test)
        expect(all.body.map((s: any) => s.id)).toEqual([c.id, b.id, a.id])
        for (const s of all.body) expect(Object.keys(s).sort()).toEqual(subscriptionFields)
        expect(await ids("?status=ACTIVE")).toEqual([c.id, a.id])
        expect(await ids("?status=CANCELLED")).toEqual([b.id])
        expect(await ids("?status=PAST_DUE")).toEqual([])
        expect(await ids(`?reference=${encodeURIComponent(a.reference)}`)).toEqual([a.id])
        expect(await ids("?reference=nothing-here")).toEqual([])
        expect(await ids("?limit=1")).toEqual([c.id])
        expect(await ids("?limit=1&offset=1")).toEqual([b.id])
        expect(await ids("?offset=2")).toEqual([a.id])
        expect(await ids("?offset=3")).toEqual([])
        expect(await ids("?status=ACTIVE&limit=1&offset=1")).toEqual([a.id])
        for (const q of [
          "?limit=0",
          "?limit=101",
          "?limit=x",
          "?offset=-1",
          "?status=OTHER",
          "?status=active"
        ]) {
          const res = await list(m.test, q)
          expect(res.status, q).toBe(422)
          expect(typeof res.body.message).toBe("string")
        }
        for (const q of ["?limit=0", "?limit=101", "?offset=-1"])
          expect(
            (await server.request("GET", `/subscriptions/${a.id}/invoices${q}`, { key: m.test })).status,
            q
          ).toBe(422)
      })

      it("returns 25 by default and at most 100", async () => {
        const m = await F.merchant(server)
        for (let i = 0; i < 26; i++) await subscribe(m.test, {}, { amount: 100 })
        expect((await list(m.test)).body).toHaveLength(25)
        expect((await list(m.test, "?limit=100")).body).toHaveLength(26)
        expect((await list(m.test, "?offset=25")).body).toHaveLength(1)
      }, 120_000)
    })

    describe("POST /subscriptions/{id}/cancel (4.3, 3.2, 7.4)", () => {
      it("cancels now with no body: exactly the seven keys, CANCELLED by MERCHANT, subscription.canceled, the customer told; then 409", async () => {
        const m = await F.merchant(server)
        const { subscription } = await subscribe(m.test)
        const at = await now()
        const res = await server.request("POST", `/subscriptions/${subscription.id}/cancel`, { key: m.test })
        expect(res.status, res.text).toBe(200)
        expect(Object.keys(res.body).sort()).toEqual(cancelFields)
        expect(res.body).toEqual({
          id: subscription.id,
          reference: subscription.reference,
          status: "CANCELLED",
          cancelAtPeriodEnd: false,
          cancelledAt: at,
          cancellationInitiator: "MERCHANT",
          currentPeriodEnd: subscription.currentPeriodEnd
        })
        const read = (await getSubscription(m.test, subscription.id)).body
        expect(read).toMatchObject({
          status: "CANCELLED",
          cancelledAt: at,
          cancellationInitiator: "MERCHANT",
          nextBillingAt: null,
          billingCycleAnchor: subscription.billingCycleAnchor
        })
        const canceled = await F.events(server, m.id, "subscription.canceled")
        expect(canceled).toHaveLength(1)
        expect(canceled[0]!.data.object).toMatchObject({
          id: subscription.id,
          status: "CANCELLED",
          cancellation_initiator: "MERCHANT"
        })
        // The paid period is never refunded.
        expect((await invoices(m.test, subscription.id)).map((i) => i.status)).toEqual(["PAID"])
        expect((await payer(m.test)).balance).toBe(SandboxBalance - 25_000)
        const { customerId } = await payer(m.test)
        const told = await notifications(customerId, "subscription.cancelled")
        expect(told).toHaveLength(1)
        expect(told[0].data).toMatchObject({
          subscription_id: subscription.id,
          cancellation_initiator: "MERCHANT"
        })

        const again = await cancel(m.test, subscription.id)
        expect(again.status).toBe(409)
        expect(again.body).toEqual({
          message: "Subscription cannot be cancelled",
          code: "SUBSCRIPTION_NOT_CANCELLABLE"
        })
        const atEnd = await cancel(m.test, subscription.id, { body: { at_period_end: true } })
        expect(atEnd.status).toBe(409)
        expect(atEnd.body).toEqual({
          message: "Subscription cannot be cancelled",
          code: "SUBSCRIPTION_NOT_CANCELLABLE"
        })
        expect(await F.events(server, m.id, "subscription.canceled")).toHaveLength(1)
      })

      it("cancels by reference, with an explicit at_period_end false and with an empty object", async () => {
        const m = await F.merchant(server)
        const a = (await subscribe(m.test)).subscription
        const b = (await subscribe(m.test)).subscription
        const byReference = await cancel(m.test, a.reference, { body: { at_period_end: false } })
        expect(byReference.status).toBe(200)
        expect(byReference.body).toMatchObject({
          id: a.id,
          status: "CANCELLED",
          cancellationInitiator: "MERCHANT"
        })
        const empty = await cancel(m.test, b.id, { body: {} })
        expect(empty.status).toBe(200)
        expect(empty.body.status).toBe("CANCELLED")
      })

      it("sets at_period_end: stays ACTIVE with cancelAtPeriodEnd true and nothing emitted; setting it again is harmless", async () => {
        const m = await F.merchant(server)
        const { subscription } = await subscribe(m.test)
        const res = await cancel(m.test, subscription.id, { body: { at_period_end: true } })
        expect(res.status, res.text).toBe(200)
        expect(Object.keys(res.body).sort()).toEqual(cancelFields)
        expect(res.body).toEqual({
          id: subscription.id,
          reference: subscription.reference,
          status: "ACTIVE",
          cancelAtPeriodEnd: true,
          cancelledAt: null,
          cancellationInitiator: null,
          currentPeriodEnd: subscription.currentPeriodEnd
        })
        expect((await getSubscription(m.test, subscription.id)).body).toMatchObject({
          status: "ACTIVE",
          cancelAtPeriodEnd: true,
          nextBillingAt: subscription.currentPeriodEnd
        })
        expect(await F.events(server, m.id, "subscription.canceled")).toEqual([])
        const twice = await cancel(m.test, subscription.id, { body: { at_period_end: true } })
        expect(twice.status).toBe(200)
        expect(twice.body.cancelAtPeriodEnd).toBe(true)
        // An immediate cancel still ends it now.
        const now_ = await now()
        const immediate = await cancel(m.test, subscription.id)
        expect(immediate.status).toBe(200)
        expect(immediate.body).toMatchObject({
          status: "CANCELLED",
          cancelledAt: now_,
          cancellationInitiator: "MERCHANT"
        })
        expect(await F.events(server, m.id, "subscription.canceled")).toHaveLength(1)
      })

      it("answers 400 for a body that is not JSON and 422 for a wrong at_period_end, cancelling nothing", async () => {
        const m = await F.merchant(server)
        const { subscription } = await subscribe(m.test)
        const notJson = await cancel(m.test, subscription.id, { rawBody: "{not json" })
        expect(notJson.status).toBe(400)
        expect(typeof notJson.body.message).toBe("string")
        for (const body of [{ at_period_end: "yes" }, { at_period_end: 1 }, { at_period_end: null }]) {
          const res = await cancel(m.test, subscription.id, { body })
          expect(res.status, JSON.stringify(body)).toBe(422)
          expect(res.body.errors.map((e: { field: string }) => e.field)).toContain("at_period_end")
        }
        expect((await getSubscription(m.test, subscription.id)).body).toMatchObject({
          status: "ACTIVE",
          cancelAtPeriodEnd: false
        })
        expect(await F.events(server, m.id, "subscription.canceled")).toEqual([])
      })

      it("replays a cancel with Idempotency-Key, and refuses the key with another body", async () => {
        const m = await F.merchant(server)
        const { subscription } = await subscribe(m.test)
        const headers = { "idempotency-key": "cancel-1" }
        const first = await cancel(m.test, subscription.id, { headers })
        expect(first.status).toBe(200)
        expect(first.headers.get("idempotent-replay")).toBeNull()
        const replay = await cancel(m.test, subscription.id, { headers })
        expect(replay.status).toBe(200)
        expect(replay.text).toBe(first.text)
        expect(replay.headers.get("idempotent-replay")).toBe("true")
        expect(await F.events(server, m.id, "subscription.canceled")).toHaveLength(1)
        const mismatch = await cancel(m.test, subscription.id, { headers, body: { at_period_end: true } })
        expect(mismatch.status).toBe(422)
        expect(
          (await cancel(m.test, subscription.id, { headers: { "idempotency-key": "cancel-2" } })).status
        ).toBe(409)
      })

      it("cancels exactly once under 20 concurrent cancels: one 200, the rest 409, one event", async () => {
        const m = await F.merchant(server)
        const { subscription } = await subscribe(m.test)
        const results = await Promise.all(Array.from({ length: 20 }, () => cancel(m.test, subscription.id)))
        expect(results.filter((r) => r.status === 200)).toHaveLength(1)
        expect(results.filter((r) => r.status === 409)).toHaveLength(19)
        expect(await F.events(server, m.id, "subscription.canceled")).toHaveLength(1)
        const { customerId } = await payer(m.test)
        expect(await notifications(customerId, "subscription.cancelled")).toHaveLength(1)
      }, 60_000)

      it("lets operations cancel (initiator OPS) and the customer cancel in the wallet app (initiator PAYER)", async () => {
        const m = await F.merchant(server)
        const { customerId } = await payer(m.test)
        const a = (await subscribe(m.test)).subscription
        const b = (await subscribe(m.test)).subscription

        const byOps = await server.ops("POST", `/ops/subscriptions/${a.id}/cancel`)
        expect(byOps.status, byOps.text).toBe(200)
        expect(byOps.body).toMatchObject({
          id: a.id,
          status: "CANCELLED",
          cancellationInitiator: "OPS",
          nextBillingAt: null
        })
        expect((await server.ops("POST", `/ops/subscriptions/${a.id}/cancel`)).status).toBe(409)
        expect(
          (await server.ops("POST", "/ops/subscriptions/00000000-0000-4000-8000-000000000000/cancel")).status
        ).toBe(404)

        expect(
          (
            await server.request("POST", `/test-helpers/subscriptions/${b.id}/cancel-as-customer`, {
              key: m.live
            })
          ).status
        ).toBe(404)
        const byPayer = await server.request(
          "POST",
          `/test-helpers/subscriptions/${b.id}/cancel-as-customer`,
          {
            key: m.test
          }
        )
        expect(byPayer.status, byPayer.text).toBe(200)
        expect(byPayer.body).toMatchObject({ id: b.id, status: "CANCELLED", cancellationInitiator: "PAYER" })
        expect(
          (
            await server.request("POST", `/test-helpers/subscriptions/${b.id}/cancel-as-customer`, {
              key: m.test
            })
          ).status
        ).toBe(409)
        expect((await cancel(m.test, b.id)).status).toBe(409)

        const canceled = (await F.events(server, m.id, "subscription.canceled")).reverse()
        expect(canceled.map((e) => [e.data.object.id, e.data.object.cancellation_initiator])).toEqual([
          [a.id, "OPS"],
          [b.id, "PAYER"]
        ])
        const told = await notifications(customerId, "subscription.cancelled")
        expect(told.map((n) => n.data.cancellation_initiator).sort()).toEqual(["OPS", "PAYER"])
        expect(
          (await list(m.test, "?status=CANCELLED")).body.map((s: any) => s.cancellationInitiator)
        ).toEqual(["PAYER", "OPS"])
      })
    })

    describe("the renewal engine on the manual clock (3.2, 3.3, 3.5, 6)", () => {
      it("bills a 31 January anchor on 28 Feb, 31 Mar, 30 Apr and 31 May at 10:00 Maldives time, one PAID invoice per cycle", async () => {
        await advanceTo("2027-01-31T10:00:00+05:00")
        const m = await F.merchant(server)
        const { customerId } = await payer(m.test)
        const amount = 10_000
        const { subscription } = await subscribe(m.test, {}, { amount, interval: "MONTH", interval_count: 1 })
        expect(subscription).toMatchObject({
          billingCycleAnchor: "2027-01-31T10:00:00+05:00",
          currentPeriodStart: "2027-01-31T10:00:00+05:00",
          currentPeriodEnd: "2027-02-28T10:00:00+05:00",
          nextBillingAt: "2027-02-28T10:00:00+05:00"
        })

        // A second before the renewal nothing has happened; at 10:00 the cycle opens and is paid.
        await advanceTo("2027-02-28T09:59:59+05:00")
        expect(await invoices(m.test, subscription.id)).toHaveLength(1)
        await advanceTo("2027-02-28T10:00:00+05:00")
        const second = await invoices(m.test, subscription.id)
        expect(second).toHaveLength(2)
        expect(second[0]).toMatchObject({
          periodKey: "2027-02-28",
          periodStart: "2027-02-28T10:00:00+05:00",
          periodEnd: "2027-03-31T10:00:00+05:00",
          status: "PAID",
          attemptCount: 1,
          paidAt: "2027-02-28T10:00:00+05:00",
          createdAt: "2027-02-28T10:00:00+05:00"
        })

        await advanceTo("2027-05-31T10:00:00+05:00")
        const all = await invoices(m.test, subscription.id)
        const starts = [
          "2027-05-31T10:00:00+05:00",
          "2027-04-30T10:00:00+05:00",
          "2027-03-31T10:00:00+05:00",
          "2027-02-28T10:00:00+05:00",
          "2027-01-31T10:00:00+05:00"
        ]
        expect(all.map((i) => i.periodStart)).toEqual(starts)
        expect(all.map((i) => i.periodKey)).toEqual([
          "2027-05-31",
          "2027-04-30",
          "2027-03-31",
          "2027-02-28",
          "2027-01-31"
        ])
        expect(all.map((i) => i.periodEnd)).toEqual(["2027-06-30T10:00:00+05:00", ...starts.slice(0, 4)])
        for (const i of all) {
          expect(Object.keys(i).sort()).toEqual(invoiceFields)
          expect(i).toMatchObject({
            subscriptionId: subscription.id,
            status: "PAID",
            amount,
            currency: "MVR",
            attemptCount: 1,
            nextRetryAt: null,
            failureReason: null,
            paidAt: i.periodStart
          })
          expect(typeof i.paymentIntentId).toBe("string")
        }
        expect(new Set(all.map((i) => i.paymentIntentId)).size).toBe(5)
        expect(new Set(all.map((i) => i.id)).size).toBe(5)
        expect((await getSubscription(m.test, subscription.id)).body).toMatchObject({
          status: "ACTIVE",
          billingCycleAnchor: "2027-01-31T10:00:00+05:00",
          currentPeriodStart: "2027-05-31T10:00:00+05:00",
          currentPeriodEnd: "2027-06-30T10:00:00+05:00",
          nextBillingAt: "2027-06-30T10:00:00+05:00"
        })
        expect((await payer(m.test)).balance).toBe(SandboxBalance - 5 * amount)
        const paid = (await F.events(server, m.id, "invoice.paid")).reverse()
        expect(paid.map((e) => e.data.object.period_key)).toEqual([
          "2027-01-31",
          "2027-02-28",
          "2027-03-31",
          "2027-04-30",
          "2027-05-31"
        ])
        for (const e of paid)
          expect(e.data.object).toMatchObject({
            subscription_id: subscription.id,
            subscription_reference: subscription.reference
          })
        expect(await F.events(server, m.id, "invoice.payment_failed")).toEqual([])
        expect(await F.events(server, m.id, "subscription.past_due")).toEqual([])
        // The balance always covered the renewals: no warning was sent.
        expect(await notifications(customerId, "balance_warning")).toEqual([])

        // Invoices page newest first.
        expect((await invoices(m.test, subscription.id, "?limit=2")).map((i) => i.periodKey)).toEqual([
          "2027-05-31",
          "2027-04-30"
        ])
        expect(
          (await invoices(m.test, subscription.id, "?limit=2&offset=3")).map((i) => i.periodKey)
        ).toEqual(["2027-02-28", "2027-01-31"])
      }, 120_000)

      it("bills a 31 January anchor on 29 February in a leap year, and 31 March after it", async () => {
        await advanceTo("2028-01-31T10:00:00+05:00")
        const m = await F.merchant(server)
        const { subscription } = await subscribe(m.test, {}, { amount: 2_000 })
        expect(subscription.currentPeriodEnd).toBe("2028-02-29T10:00:00+05:00")
        await advanceTo("2028-03-31T10:00:00+05:00")
        const all = await invoices(m.test, subscription.id)
        expect(all.map((i) => i.periodKey)).toEqual(["2028-03-31", "2028-02-29", "2028-01-31"])
        expect(all.map((i) => i.periodStart)).toEqual([
          "2028-03-31T10:00:00+05:00",
          "2028-02-29T10:00:00+05:00",
          "2028-01-31T10:00:00+05:00"
        ])
        expect(all.every((i) => i.status === "PAID")).toBe(true)
        expect((await payer(m.test)).balance).toBe(SandboxBalance - 3 * 2_000)
      }, 120_000)

      it("renews a WEEK x2 plan every 14 days, and a MONTH x3 plan every three months in Maldives time, not UTC", async () => {
        await advanceTo("2029-01-01T08:15:00+05:00")
        const m = await F.merchant(server)
        const weekly = (await subscribe(m.test, {}, { amount: 1_500, interval: "WEEK", interval_count: 2 }))
          .subscription
        expect(weekly).toMatchObject({
          interval: "WEEK",
          intervalCount: 2,
          currentPeriodEnd: "2029-01-15T08:15:00+05:00"
        })
        await advanceTo("2029-01-15T08:14:59+05:00")
        expect(await invoices(m.test, weekly.id)).toHaveLength(1)
        await advanceTo("2029-01-29T08:15:00+05:00")
        const all = await invoices(m.test, weekly.id)
        expect(all.map((i) => i.periodStart)).toEqual([
          "2029-01-29T08:15:00+05:00",
          "2029-01-15T08:15:00+05:00",
          "2029-01-01T08:15:00+05:00"
        ])
        expect(all.map((i) => i.periodKey)).toEqual(["2029-01-29", "2029-01-15", "2029-01-01"])
        expect(all[0].periodEnd).toBe("2029-02-12T08:15:00+05:00")
        expect(all.every((i) => i.status === "PAID")).toBe(true)
        expect((await getSubscription(m.test, weekly.id)).body.nextBillingAt).toBe(
          "2029-02-12T08:15:00+05:00"
        )
        expect((await cancel(m.test, weekly.id)).status).toBe(200)

        await advanceTo("2029-11-30T02:30:00+05:00")
        const quarterly = (
          await subscribe(m.test, {}, { amount: 9_000, interval: "MONTH", interval_count: 3 })
        ).subscription
        expect(quarterly.currentPeriodEnd).toBe("2030-02-28T02:30:00+05:00")
        await advanceTo("2030-05-30T02:30:00+05:00")
        expect((await invoices(m.test, quarterly.id)).map((i) => i.periodKey)).toEqual([
          "2030-05-30",
          "2030-02-28",
          "2029-11-30"
        ])
        expect((await payer(m.test)).balance).toBe(SandboxBalance - 3 * 1_500 - 3 * 9_000)
      }, 120_000)

      it("ends an at_period_end subscription at currentPeriodEnd with no further charge", async () => {
        await advanceTo("2030-09-10T09:00:00+05:00")
        const m = await F.merchant(server)
        const { customerId } = await payer(m.test)
        const { subscription } = await subscribe(m.test, {}, { amount: 8_000 })
        expect((await cancel(m.test, subscription.id, { body: { at_period_end: true } })).status).toBe(200)
        // An empty wallet: a renewal would miss, but none is due, so nothing warns, charges or fails.
        await setPayer(m.test, { balance: 0 })
        const balance = (await payer(m.test)).balance
        await advanceTo("2030-10-10T08:59:59+05:00")
        expect((await getSubscription(m.test, subscription.id)).body).toMatchObject({
          status: "ACTIVE",
          cancelAtPeriodEnd: true
        })
        await advanceTo("2030-10-10T09:00:00+05:00")
        expect((await getSubscription(m.test, subscription.id)).body).toMatchObject({
          status: "CANCELLED",
          cancelledAt: "2030-10-10T09:00:00+05:00",
          cancellationInitiator: "MERCHANT",
          currentPeriodEnd: "2030-10-10T09:00:00+05:00",
          nextBillingAt: null
        })
        await advanceTo("2030-12-31T09:00:00+05:00")
        expect((await invoices(m.test, subscription.id)).map((i) => i.periodKey)).toEqual(["2030-09-10"])
        expect((await payer(m.test)).balance).toBe(balance)
        const canceled = await F.events(server, m.id, "subscription.canceled")
        expect(canceled).toHaveLength(1)
        expect(canceled[0]!.data.object).toMatchObject({
          id: subscription.id,
          cancellation_initiator: "MERCHANT"
        })
        expect(await F.events(server, m.id, "invoice.paid")).toHaveLength(1)
        expect(await notifications(customerId, "subscription.cancelled")).toHaveLength(1)
        expect(await notifications(customerId, "balance_warning")).toEqual([])
        expect(await notifications(customerId, "payment_failed")).toEqual([])
        expect(await F.events(server, m.id, "invoice.payment_failed")).toEqual([])
      }, 120_000)

      it("pages a subscription's invoices newest first: 25 by default, at most 100", async () => {
        await advanceTo("2031-01-01T07:00:00+05:00")
        const m = await F.merchant(server)
        const { subscription } = await subscribe(m.test, {}, { amount: 100, interval: "WEEK" })
        await advanceTo("2031-07-02T07:00:00+05:00")
        const all = await invoices(m.test, subscription.id, "?limit=100")
        expect(all).toHaveLength(27)
        expect(all[0].periodKey).toBe("2031-07-02")
        expect(all[26].periodKey).toBe("2031-01-01")
        const starts = all.map((i) => Date.parse(i.periodStart))
        for (let k = 1; k < starts.length; k++) expect(starts[k - 1]! - starts[k]!).toBe(7 * DAY)
        expect(new Set(all.map((i) => i.periodKey)).size).toBe(27)
        expect(all.every((i) => i.status === "PAID" && i.attemptCount === 1)).toBe(true)
        const firstPage = await invoices(m.test, subscription.id)
        expect(firstPage.map((i) => i.id)).toEqual(all.slice(0, 25).map((i) => i.id))
        expect((await invoices(m.test, subscription.id, "?offset=25")).map((i) => i.id)).toEqual(
          all.slice(25).map((i) => i.id)
        )
        expect((await payer(m.test)).balance).toBe(SandboxBalance - 27 * 100)
      }, 120_000)

      it("retries a missed renewal at t0, +12 h, +36 h and +84 h, then fails the invoice and cancels by DUNNING", async () => {
        await advanceTo("2032-03-10T12:00:00+05:00")
        const m = await F.merchant(server)
        const { customerId } = await payer(m.test)
        const amount = 20_000
        const { subscription } = await subscribe(m.test, {}, { amount })
        const id = subscription.id
        const t0 = "2032-04-10T12:00:00+05:00"
        expect(subscription.currentPeriodEnd).toBe(t0)
        await setPayer(m.test, { balance: 0 })

        // 24 hours before the renewal the customer is warned that the balance will not cover it.
        await advanceTo("2032-04-09T11:59:59+05:00")
        expect(await notifications(customerId, "balance_warning")).toEqual([])
        await advanceTo("2032-04-09T12:00:00+05:00")
        const warned = await notifications(customerId, "balance_warning")
        expect(warned).toHaveLength(1)
        expect(warned[0]).toMatchObject({ createdAt: "2032-04-09T12:00:00+05:00" })
        expect(warned[0].data).toMatchObject({ subscription_id: id, amount })

        const openInvoice = async () => {
          const list1 = await invoices(m.test, id)
          expect(list1).toHaveLength(2)
          return list1[0]
        }
        const sub = async () => (await getSubscription(m.test, id)).body

        // Attempt 1 at t0.
        await advanceTo(t0)
        expect(await openInvoice()).toMatchObject({
          periodKey: "2032-04-10",
          periodStart: t0,
          status: "PENDING",
          attemptCount: 1,
          nextRetryAt: plusHours(t0, 12),
          failureReason: "insufficient-balance",
          paymentIntentId: null,
          paidAt: null
        })
        expect(await sub()).toMatchObject({
          status: "PAST_DUE",
          currentPeriodStart: t0,
          cancelledAt: null,
          cancellationInitiator: null
        })
        expect(await F.events(server, m.id, "subscription.past_due")).toHaveLength(1)

        // Attempts 2 and 3, each exactly on time.
        const schedule: Array<[number, number, number | null]> = [
          [12, 2, 36],
          [36, 3, 84]
        ]
        for (const [at, attempt, next] of schedule) {
          await advanceTo(plusHours(t0, at))
          const inv = await openInvoice()
          expect(inv, `attempt ${attempt}`).toMatchObject({
            status: "PENDING",
            attemptCount: attempt,
            nextRetryAt: next === null ? null : plusHours(t0, next),
            failureReason: "insufficient-balance"
          })
          expect((await sub()).status).toBe("PAST_DUE")
        }
        // Nothing happens a second before the last retry.
        await advanceTo(maldives(Date.parse(plusHours(t0, 84)) - 1000))
        expect((await openInvoice()).attemptCount).toBe(3)

        // Attempt 4 at +84 h: the invoice fails and the subscription ends.
        await advanceTo(plusHours(t0, 84))
        expect(await openInvoice()).toMatchObject({
          status: "FAILED",
          attemptCount: 4,
          nextRetryAt: null,
          failureReason: "insufficient-balance",
          paymentIntentId: null,
          paidAt: null
        })
        expect(await sub()).toMatchObject({
          status: "CANCELLED",
          cancellationInitiator: "DUNNING",
          cancelledAt: plusHours(t0, 84),
          nextBillingAt: null
        })

        const failed = (await F.events(server, m.id, "invoice.payment_failed")).reverse()
        expect(failed.map((e) => e.data.object.attempt_count)).toEqual([1, 2, 3, 4])
        expect(failed.map((e) => e.data.object.next_retry_at)).toEqual([
          unix(plusHours(t0, 12)),
          unix(plusHours(t0, 36)),
          unix(plusHours(t0, 84)),
          null
        ])
        for (const e of failed)
          expect(e.data.object).toMatchObject({
            subscription_id: id,
            subscription_reference: subscription.reference,
            failure_reason: "insufficient-balance"
          })
        expect(await F.events(server, m.id, "subscription.past_due")).toHaveLength(1)
        const canceled = await F.events(server, m.id, "subscription.canceled")
        expect(canceled).toHaveLength(1)
        expect(canceled[0]!.data.object).toMatchObject({ id, cancellation_initiator: "DUNNING" })
        expect(await F.events(server, m.id, "invoice.paid")).toHaveLength(1)

        // Nothing more: no later period opens, no money moves, even with money back in the wallet.
        await setPayer(m.test, { balance: 1_000_000 })
        await advanceTo("2032-07-01T12:00:00+05:00")
        expect((await invoices(m.test, id)).map((i) => i.status)).toEqual(["FAILED", "PAID"])
        expect((await payer(m.test)).balance).toBe(1_000_000)
        expect(await notifications(customerId, "balance_warning")).toHaveLength(1)

        // The customer heard of the end, and of every missed attempt: each failure warns them.
        const ended = await notifications(customerId, "subscription.cancelled")
        expect(ended).toHaveLength(1)
        expect(ended[0].data).toMatchObject({ subscription_id: id, cancellation_initiator: "DUNNING" })
        const missed = await notifications(customerId, "payment_failed")
        expect(missed.map((n) => n.data.attempt_count).sort()).toEqual([1, 2, 3, 4])
      }, 120_000)

      it("keeps the anchor when a retry succeeds: the invoice is PAID, the subscription ACTIVE, the next period on its own date", async () => {
        await advanceTo("2033-07-31T10:00:00+05:00")
        const m = await F.merchant(server)
        const amount = 6_000
        const { subscription } = await subscribe(m.test, {}, { amount })
        const t1 = "2033-08-31T10:00:00+05:00"
        const t2 = "2033-09-30T10:00:00+05:00"
        await setPayer(m.test, { balance: 0 })
        await advanceTo(t1)
        expect((await getSubscription(m.test, subscription.id)).body.status).toBe("PAST_DUE")
        expect((await invoices(m.test, subscription.id))[0]).toMatchObject({
          status: "PENDING",
          attemptCount: 1
        })

        await setPayer(m.test, { balance: 100_000 })
        await advanceTo(plusHours(t1, 12))
        const [paid] = await invoices(m.test, subscription.id)
        expect(paid).toMatchObject({
          periodKey: "2033-08-31",
          periodStart: t1,
          periodEnd: t2,
          status: "PAID",
          attemptCount: 2,
          nextRetryAt: null,
          failureReason: null,
          paidAt: plusHours(t1, 12)
        })
        expect(typeof paid.paymentIntentId).toBe("string")
        expect((await getSubscription(m.test, subscription.id)).body).toMatchObject({
          status: "ACTIVE",
          billingCycleAnchor: "2033-07-31T10:00:00+05:00",
          currentPeriodStart: t1,
          currentPeriodEnd: t2,
          nextBillingAt: t2
        })
        expect((await payer(m.test)).balance).toBe(100_000 - amount)
        const paidEvents = (await F.events(server, m.id, "invoice.paid")).reverse()
        expect(paidEvents.map((e) => e.data.object.period_key)).toEqual(["2033-07-31", "2033-08-31"])
        expect(paidEvents[1]!.data.object).toMatchObject({
          subscription_id: subscription.id,
          subscription_reference: subscription.reference,
          attempt_count: 2
        })
        expect(await F.events(server, m.id, "invoice.payment_failed")).toHaveLength(1)
        expect(await F.events(server, m.id, "subscription.past_due")).toHaveLength(1)
        expect(await F.events(server, m.id, "subscription.canceled")).toEqual([])

        // The next cycle opens on the anchor-derived date, not a month after the late payment.
        await advanceTo(maldives(Date.parse(t2) - 1000))
        expect(await invoices(m.test, subscription.id)).toHaveLength(2)
        await advanceTo(t2)
        const all = await invoices(m.test, subscription.id)
        expect(all[0]).toMatchObject({
          periodKey: "2033-09-30",
          periodStart: t2,
          status: "PAID",
          attemptCount: 1,
          paidAt: t2
        })
        expect((await payer(m.test)).balance).toBe(100_000 - 2 * amount)
        expect((await getSubscription(m.test, subscription.id)).body.status).toBe("ACTIVE")

        // A later miss opens a new retry window: subscription.past_due fires once more.
        await setPayer(m.test, { balance: 0 })
        await advanceTo("2033-10-31T10:00:00+05:00")
        expect((await getSubscription(m.test, subscription.id)).body.status).toBe("PAST_DUE")
        expect(await F.events(server, m.id, "subscription.past_due")).toHaveLength(2)
        await advanceTo(plusHours("2033-10-31T10:00:00+05:00", 12))
        expect(await F.events(server, m.id, "subscription.past_due")).toHaveLength(2)
        expect(await F.events(server, m.id, "invoice.payment_failed")).toHaveLength(3)
      }, 120_000)

      it("records why a renewal missed: wallet limit, frozen wallet and rule block give the spec's failure reasons", async () => {
        await advanceTo("2034-02-01T10:00:00+05:00")
        const amount = 5_000
        const cases: Array<[Record<string, unknown>, string]> = [
          [{ wallet_limit: amount - 1 }, "blocked-by-rules"],
          [{ frozen: true }, "wallet-frozen"],
          [{ blocked_by_rules: true }, "blocked-by-rules"],
          [{ balance: amount - 1 }, "insufficient-balance"]
        ]
        const subs: Array<{ key: string; merchantId: string; id: string; reason: string; balance: number }> =
          []
        for (const [state, reason] of cases) {
          const m = await F.merchant(server)
          const { subscription } = await subscribe(m.test, {}, { amount })
          await setPayer(m.test, state)
          subs.push({
            key: m.test,
            merchantId: m.id,
            id: subscription.id,
            reason,
            balance: (await payer(m.test)).balance
          })
        }
        await advanceTo("2034-03-01T10:00:00+05:00")
        for (const s of subs) {
          const [open] = await invoices(s.key, s.id)
          expect(open, s.reason).toMatchObject({
            periodKey: "2034-03-01",
            status: "PENDING",
            attemptCount: 1,
            failureReason: s.reason,
            nextRetryAt: "2034-03-01T22:00:00+05:00"
          })
          expect(["insufficient-balance", "blocked-by-rules", "wallet-frozen", "executor-error"]).toContain(
            open.failureReason
          )
          expect((await getSubscription(s.key, s.id)).body.status).toBe("PAST_DUE")
          expect((await payer(s.key)).balance).toBe(s.balance)
          const failed = await F.events(server, s.merchantId, "invoice.payment_failed")
          expect(failed).toHaveLength(1)
          expect(failed[0]!.data.object.failure_reason).toBe(s.reason)
        }
      }, 120_000)

      it("voids the open invoice when a PAST_DUE subscription is cancelled, and never charges it", async () => {
        await advanceTo("2035-05-20T15:45:00+05:00")
        const m = await F.merchant(server)
        const byMerchant = (await subscribe(m.test, {}, { amount: 3_000 })).subscription
        const other = await F.merchant(server)
        const byPayer = (await subscribe(other.test, {}, { amount: 3_000 })).subscription
        await setPayer(m.test, { balance: 0 })
        await setPayer(other.test, { balance: 0 })
        await advanceTo("2035-06-20T15:45:00+05:00")
        expect((await getSubscription(m.test, byMerchant.id)).body.status).toBe("PAST_DUE")
        expect((await getSubscription(other.test, byPayer.id)).body.status).toBe("PAST_DUE")

        const cancelled = await cancel(m.test, byMerchant.id)
        expect(cancelled.status, cancelled.text).toBe(200)
        expect(cancelled.body).toMatchObject({ status: "CANCELLED", cancellationInitiator: "MERCHANT" })
        const asPayer = await server.request(
          "POST",
          `/test-helpers/subscriptions/${byPayer.id}/cancel-as-customer`,
          {
            key: other.test
          }
        )
        expect(asPayer.status, asPayer.text).toBe(200)
        expect(asPayer.body).toMatchObject({ status: "CANCELLED", cancellationInitiator: "PAYER" })
        for (const [key, id] of [
          [m.test, byMerchant.id],
          [other.test, byPayer.id]
        ] as const) {
          const [open] = await invoices(key, id)
          expect(open).toMatchObject({
            periodKey: "2035-06-20",
            status: "VOID",
            attemptCount: 1,
            paidAt: null
          })
        }
        await setPayer(m.test, { balance: 50_000 })
        await setPayer(other.test, { balance: 50_000 })
        await advanceTo("2035-09-01T00:00:00+05:00")
        expect((await invoices(m.test, byMerchant.id)).map((i) => i.status)).toEqual(["VOID", "PAID"])
        expect((await invoices(other.test, byPayer.id)).map((i) => i.status)).toEqual(["VOID", "PAID"])
        expect((await payer(m.test)).balance).toBe(50_000)
        expect((await payer(other.test)).balance).toBe(50_000)
        expect(await F.events(server, m.id, "invoice.payment_failed")).toHaveLength(1)
        expect(
          (await F.events(server, m.id, "subscription.canceled"))[0]!.data.object.cancellation_initiator
        ).toBe("MERCHANT")
        expect(
          (await F.events(server, other.id, "subscription.canceled"))[0]!.data.object.cancellation_initiator
        ).toBe("PAYER")
      }, 120_000)
    })
  })
