/**
 * Webhook delivery fairness: what one merchant's endpoints may hold of the delivery
 * workers, over two workers on one database (two servers on PostgreSQL; on PGlite, which one process
 * owns, a second worker in the server's process), and the cap on endpoints per merchant and environment.
 * Receivers that never answer count the requests they hold open: the attempts in flight, as seen from
 * outside. An attempt is bounded by `Webhook.AttemptTimeout` (10 s), so a hanging attempt ends at the
 * latest 10 s after it started.
 */
import { Webhook } from "@laari/core"
import { Effect, Exit, Layer, Scope } from "effect"
import http from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Delivery from "../../src/Webhooks/Delivery.js"
import * as F from "../support/Fixtures.js"
import * as R from "../support/Receiver.js"
import * as TestDatabase from "../support/TestDatabase.js"
import * as TestServer from "../support/TestServer.js"

const caps = Delivery.defaultLimits

/** A receiver holding every request open (unless `answer` gives a status), counting them per path. */
const holding = async () => {
  const open = new Map<string, number>()
  const most = new Map<string, number>()
  /** When each request that was held ended (the sender gave up), in order. */
  const ended: Array<number> = []
  let total = 0
  let mostTotal = 0
  const state = {
    answer: (_path: string): number | undefined => undefined,
    open: (path: string) => open.get(path) ?? 0,
    most: (path: string) => most.get(path) ?? 0,
    total: () => total,
    mostTotal: () => mostTotal,
    ended,
    url: (path: string) => `http://127.0.0.1:${(server.address() as { port: number }).port}${path}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
  const server = http.createServer((req, res) => {
    const path = req.url ?? ""
    req.resume()
    const status = state.answer(path)
    if (status !== undefined) {
      res.writeHead(status).end()
      return
    }
    open.set(path, state.open(path) + 1)
    most.set(path, Math.max(state.most(path), state.open(path)))
    total++
    mostTotal = Math.max(mostTotal, total)
    res.on("close", () => {
      open.set(path, state.open(path) - 1)
      total--
      ended.push(Date.now())
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return state
}

type Holding = Awaited<ReturnType<typeof holding>>

/** One more delivery worker on the server's database, in its process, with the default limits. */
const secondWorker = async (server: TestServer.LocalTestServer) => {
  const scope = Effect.runSync(Scope.make())
  const build = Layer.buildWithScope(Delivery.worker.pipe(Layer.provide(Delivery.layer())), scope)
  // The server's runtime holds every service the worker needs (the store, the clock, the config).
  await server.sql(build as unknown as Effect.Effect<unknown>)
  return () => Effect.runPromise(Scope.close(scope, Exit.void))
}

const backends: ReadonlyArray<readonly [string, string | undefined]> = [
  ["PGlite, a second worker in the server's process", undefined],
  ["PostgreSQL, two servers", TestDatabase.postgresUrl]
]

describe.each(backends)("webhook fairness on %s", (name, postgresUrl) => {
  const skip = name.startsWith("PostgreSQL") && postgresUrl === undefined
  const scope = Effect.runSync(Scope.make())
  const closing: Array<() => Promise<unknown>> = []
  let api: TestServer.LocalTestServer

  beforeAll(async () => {
    if (skip) return
    if (postgresUrl === undefined) {
      api = await TestServer.start()
      closing.push(await secondWorker(api), () => api.close())
    } else {
      const databaseUrl = await Effect.runPromise(
        Scope.extend(TestDatabase.createDatabase(postgresUrl), scope)
      )
      api = await TestServer.start({ databaseUrl })
      const other = await TestServer.start({ databaseUrl })
      closing.push(
        () => other.close(),
        () => api.close()
      )
    }
  }, 180_000)
  afterAll(async () => {
    for (const close of closing) await close()
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }, 60_000)

  const register = async (key: string, url: string) => {
    const res = await api.request("POST", "/webhook-endpoints", {
      key,
      body: { url, enabled_events: ["*"] }
    })
    expect(res.status, res.text).toBe(201)
    return res.body.id as string
  }
  const mandates = async (key: string, n: number) => {
    for (let i = 0; i < n; i++) {
      const res = await api.request("POST", "/mandates", { key, body: F.mandateBody() })
      expect(res.status, res.text).toBe(201)
    }
  }
  /** Gives both workers time to claim all they would (each polls every second). */
  const settle = () => new Promise((r) => setTimeout(r, 2_500))
  const closeAfter = async (receiver: Holding, test: () => Promise<void>) => {
    try {
      await test()
    } finally {
      await receiver.close()
    }
  }

  it.skipIf(skip)(
    "one endpoint never has more than its cap in flight, whichever worker leased them",
    async () => {
      const receiver = await holding()
      await closeAfter(receiver, async () => {
        const m = await F.merchant(api)
        await register(m.test, receiver.url("/one"))
        await mandates(m.test, 3 * caps.perEndpoint)
        await R.eventually(() => receiver.open("/one") >= caps.perEndpoint, 20_000, "the cap reached")
        await settle()
        expect(receiver.most("/one")).toBe(caps.perEndpoint)
      })
    },
    60_000
  )

  it.skipIf(skip)(
    "an endpoint whose attempts fail has one attempt in flight",
    async () => {
      const receiver = await holding()
      await closeAfter(receiver, async () => {
        const m = await F.merchant(api)
        const id = await register(m.test, receiver.url("/failing"))
        receiver.answer = () => 500
        await mandates(m.test, 1)
        await R.eventually(
          async () => {
            const log = await api.request("GET", `/webhook-endpoints/${id}/deliveries`, { key: m.test })
            return (log.body as Array<any>).some((d) => d.status === "FAILED")
          },
          20_000,
          "the first attempt failed"
        )
        // From now on it hangs: a slow endpoint, already known to fail.
        receiver.answer = () => undefined
        await mandates(m.test, 2 * caps.perEndpoint)
        await R.eventually(() => receiver.open("/failing") >= 1, 20_000, "an attempt in flight")
        await settle()
        expect(receiver.most("/failing")).toBe(caps.perFailingEndpoint)
      })
    },
    60_000
  )

  it.skipIf(skip)(
    "12 hanging endpoints of one merchant hold at most its cap; another merchant's deliveries go out meanwhile",
    async () => {
      const hanging = await holding()
      const answering = await R.start()
      await closeAfter(hanging, async () => {
        const a = await F.merchant(api)
        const b = await F.merchant(api)
        const paths = Array.from({ length: 12 }, (_, i) => `/a${i}`)
        for (const path of paths) await register(a.test, hanging.url(path))
        await register(b.test, answering.url("/b"))
        // 132 attempts, more than the two workers' 128 slots.
        await mandates(a.test, 11)
        await R.eventually(() => hanging.total() >= paths.length, 20_000, "merchant A's attempts hanging")
        await mandates(b.test, 1)
        await R.eventually(() => answering.received.some((r) => r.path === "/b"), 20_000, "B delivered")
        const deliveredB = Date.now()
        // B's delivery did not wait for a slot of A's to be given up (10 s after it started).
        expect(hanging.ended.filter((t) => t <= deliveredB)).toEqual([])
        await settle()
        expect(hanging.mostTotal()).toBe(caps.perMerchant)
        for (const path of paths) expect(hanging.most(path), path).toBeLessThanOrEqual(caps.perEndpoint)
      })
      await answering.close()
    },
    60_000
  )

  it.skipIf(skip)(
    `a merchant has at most ${Webhook.MaxEndpoints} endpoints in each environment`,
    async () => {
      const m = await F.merchant(api)
      const url = "http://127.0.0.1:9/hook"
      const ids: Array<string> = []
      for (let i = 0; i < Webhook.MaxEndpoints; i++) ids.push(await register(m.test, url))
      const refused = await api.request("POST", "/webhook-endpoints", {
        key: m.test,
        body: { url, enabled_events: ["*"] }
      })
      expect(refused.status, refused.text).toBe(409)
      expect(refused.body).toEqual({
        code: "WEBHOOK_ENDPOINT_LIMIT_REACHED",
        message:
          "A merchant can have at most 16 webhook endpoints in each environment; delete one before registering another"
      })
      const listed = await api.request("GET", "/webhook-endpoints?limit=100", { key: m.test })
      expect(listed.body).toHaveLength(Webhook.MaxEndpoints)
      // The other environment has its own 16; a deleted endpoint frees its place.
      await register(m.live, url)
      const deleted = await api.request("DELETE", `/webhook-endpoints/${ids[0]}`, { key: m.test })
      expect(deleted.status, deleted.text).toBe(200)
      await register(m.test, url)
    },
    60_000
  )
})
