/**
 * What an advance of the manual clock runs, in a real server process (`LAARI_CLOCK=manual`): each
 * webhook attempt is sent once and logged, due work runs at its own due time in time order (a failing
 * endpoint's retries before the three days that disable it), and a `kill -9` during an advance never
 * leaves the clock behind work it committed.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import * as F from "../support/Fixtures.js"
import * as R from "../support/Receiver.js"
import * as ServerProcess from "../support/ServerProcess.js"
import * as TestServer from "../support/TestServer.js"

const dirs: Array<string> = []
const running: Array<ServerProcess.ServerProcess> = []
let receiver: R.Receiver
beforeAll(async () => {
  receiver = await R.start()
})
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()))
})
afterAll(async () => {
  await receiver?.close()
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

const env = (dir: string) => ({
  LAARI_DATA_DIR: dir,
  LAARI_CLOCK: "manual",
  LAARI_OPS_TOKEN: TestServer.OpsToken,
  LAARI_RATE_LIMIT: "0",
  LAARI_WEBHOOK_ALLOW_PRIVATE: "true"
})

const start = async (dir?: string) => {
  const at = dir ?? mkdtempSync(Path.join(tmpdir(), "laari-clockwork-"))
  if (dir === undefined) dirs.push(at)
  const process = await ServerProcess.start({ env: env(at) })
  running.push(process)
  return { process, api: TestServer.client(process.baseUrl) as TestServer.TestServer, dir: at }
}

const advance = async (api: TestServer.TestServer, seconds: number) => {
  const res = await api.ops("POST", "/ops/clock/advance", { by_seconds: seconds })
  expect(res.status, res.text).toBe(200)
}

const clock = async (api: TestServer.TestServer) =>
  Date.parse((await api.ops("GET", "/ops/clock")).body.now as string)

const endpoint = async (api: TestServer.TestServer, key: string) => {
  const path = `/${F.unique("hook")}`
  const res = await api.request("POST", "/webhook-endpoints", {
    key,
    body: { url: receiver.url(path), enabled_events: ["*"] }
  })
  expect(res.status, res.text).toBe(201)
  return { id: res.body.id as string, path }
}

interface Entry {
  readonly eventId: string
  readonly attempt: number
  readonly status: string
  readonly scheduledAt: string
  readonly attemptedAt: string | null
  readonly resend: boolean
}

/** An endpoint's whole delivery log. */
const log = async (api: TestServer.TestServer, key: string, id: string) => {
  const all: Array<Entry> = []
  for (let offset = 0; ; offset += 100) {
    const res = await api.request("GET", `/webhook-endpoints/${id}/deliveries?limit=100&offset=${offset}`, {
      key
    })
    expect(res.status, res.text).toBe(200)
    all.push(...(res.body as Array<Entry>))
    if (res.body.length < 100) return all
  }
}

const at = (path: string) => receiver.received.filter((r) => r.path === path)

describe("an advance of the manual clock", { timeout: 240_000 }, () => {
  it("sends each webhook attempt once, and every request that reached the endpoint is in the log", async () => {
    const { api } = await start()
    const m = await F.merchant(api)
    const hook = await endpoint(api, m.test)
    // Answers take a moment, as a real endpoint's do: an attempt is in flight while the advance goes on.
    const previous = receiver.answer
    receiver.answer = (r) => (r.path === hook.path ? { status: 200, delayMs: 30 } : previous(r))
    try {
      await F.paidSubscriptions(api, m.test, 8)
      for (let month = 0; month < 3; month++) await advance(api, 32 * 86_400)
      const entries = await R.eventually(
        async () => {
          const e = await log(api, m.test, hook.id)
          return e.length > 0 && e.every((x) => x.status === "SUCCEEDED") && e
        },
        30_000,
        "every attempt logged as delivered"
      )
      // Renewals raised events in the advances: what was sent during them is what is held here.
      expect(entries.length).toBeGreaterThan(8 * 4)
      await new Promise((r) => setTimeout(r, 500))
      const sent = new Map<string, number>()
      for (const r of at(hook.path)) {
        const id = String(r.headers["webhook-id"])
        sent.set(id, (sent.get(id) ?? 0) + 1)
      }
      const logged = new Map<string, number>()
      for (const e of entries) logged.set(e.eventId, (logged.get(e.eventId) ?? 0) + 1)
      const twice = [...sent].filter(([id, n]) => n !== (logged.get(id) ?? 0))
      expect(twice, "events whose requests differ from their logged attempts").toEqual([])
      expect(at(hook.path)).toHaveLength(entries.length)
    } finally {
      receiver.answer = previous
    }
  })

  it("attempts a failing endpoint's retries each at its due time, in order, before disabling it", async () => {
    const { api } = await start()
    const m = await F.merchant(api)
    const hook = await endpoint(api, m.test)
    const previous = receiver.answer
    receiver.answer = (r) => (r.path === hook.path ? { status: 503 } : previous(r))
    try {
      const mandates: Array<string> = []
      for (let i = 0; i < 6; i++) {
        const res = await api.request("POST", "/mandates", { key: m.test, body: F.mandateBody() })
        expect(res.status, res.text).toBe(201)
        mandates.push(res.body.id)
      }
      for (const id of mandates) {
        const res = await api.request("POST", `/mandates/${id}/charges`, {
          key: m.test,
          body: { amount: 1_000 }
        })
        expect(res.status, res.text).toBe(201)
      }
      // Every first attempt made (and failed) with the clock standing still.
      const events = (await F.events(api, m.id)).length
      await R.eventually(
        async () => (await log(api, m.test, hook.id)).filter((e) => e.status === "FAILED").length >= events,
        30_000,
        "the first attempts"
      )
      // Charges go on arriving while the clock moves: their first attempts keep the worker busy.
      let advancing = true
      const charging = (async () => {
        for (let i = 0; advancing && i < 40; i++)
          await api.request("POST", `/mandates/${mandates[i % mandates.length]}/charges`, {
            key: m.test,
            body: { amount: 100 }
          })
      })()
      await advance(api, 4 * 86_400)
      advancing = false
      await charging
      const read = await api.request("GET", `/webhook-endpoints/${hook.id}`, { key: m.test })
      expect(read.body.status).toBe("DISABLED")
      const entries = await log(api, m.test, hook.id)
      const tried = entries.filter((e) => e.attemptedAt !== null && e.attempt > 1)
      const disabledAt = Math.max(
        ...entries.map((e) => (e.attemptedAt === null ? 0 : Date.parse(e.attemptedAt)))
      )
      // Each retry at its own due moment, not when the clock happened to pass it.
      expect(tried.length).toBeGreaterThan(events * 5)
      for (const e of tried) expect(e.attemptedAt, `attempt ${e.attempt} of ${e.eventId}`).toBe(e.scheduledAt)
      // Nothing due before the endpoint was disabled was left unattempted.
      for (const e of entries.filter((x) => x.status === "PENDING"))
        expect(Date.parse(e.scheduledAt)).toBeGreaterThanOrEqual(disabledAt)
      // The disabling came after about three days of failures, not before the retries ran.
      const firsts = entries.filter((e) => e.attempt === 1).map((e) => Date.parse(e.attemptedAt!))
      expect(disabledAt - Math.min(...firsts)).toBeGreaterThanOrEqual(3 * 86_400_000)
    } finally {
      receiver.answer = previous
    }
  })

  it("after a kill -9 during it, the clock reads no earlier than any event it committed", async () => {
    const first = await start()
    const m = await F.merchant(first.api)
    const hook = await endpoint(first.api, m.test)
    const previous = receiver.answer
    // Slow answers make the advance take long enough to be cut short.
    receiver.answer = (r) => (r.path === hook.path ? { status: 200, delayMs: 150 } : previous(r))
    try {
      await F.paidSubscriptions(first.api, m.test, 6)
      const startedAt = await clock(first.api)
      const advancing = first.api
        .ops("POST", "/ops/clock/advance", { by_seconds: 3 * 365 * 86_400 })
        .catch(() => undefined)
      await R.eventually(
        async () =>
          (await F.events(first.api, m.id)).some((e) => e.created * 1000 > startedAt + 65 * 86_400_000),
        60_000,
        "renewals two months on"
      )
      first.process.kill()
      await first.process.exited
      await advancing
      running.splice(running.indexOf(first.process), 1)

      const second = await start(first.dir)
      const now = await clock(second.api)
      const created = (await F.events(second.api, m.id)).map((e) => e.created * 1000)
      expect(Math.max(...created)).toBeGreaterThan(startedAt + 65 * 86_400_000)
      expect(now).toBeGreaterThanOrEqual(Math.max(...created))
    } finally {
      receiver.answer = previous
    }
  })
})
