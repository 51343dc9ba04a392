/**
 * The fault suite's tools, held against a real reference wallet core (a child process on a PostgreSQL
 * database of its own): each fault of `FaultProxy` does what it says, seen from both sides, the client's
 * (`fetch`, as laari's connector calls) and the core's own tables (what it committed); rules pick requests
 * by method, path and rate; `refuse` and `restore` take the core away and bring it back on the same port;
 * and `WalletCoreProcess` restarts on the same port and database, keeping what it committed also through a
 * SIGKILL. Needs `DATABASE_URL`.
 */
import { Effect, Exit, Scope } from "effect"
import { randomUUID } from "node:crypto"
import * as Http from "node:http"
import * as Net from "node:net"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import * as FaultProxy from "./support/FaultProxy.js"
import { postgresUrl } from "./support/TestDatabase.js"
import * as WalletCoreProcess from "./support/WalletCoreProcess.js"

const suite = postgresUrl === undefined ? describe.skip : describe
if (postgresUrl === undefined)
  console.warn(
    "FaultProxy.pg.test.ts SKIPPED: set DATABASE_URL to test the fault proxy and the wallet core process"
  )

const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect)

/**
 * Whether a new connection to `port` is refused. A `fetch` may instead fail on a kept-alive connection
 * it opened before, which the far side closed or reset: that says nothing about new ones.
 */
const refused = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = Net.connect(port, "127.0.0.1")
    socket.once("connect", () => {
      socket.destroy()
      resolve(false)
    })
    socket.once("error", (e: NodeJS.ErrnoException) => resolve(e.code === "ECONNREFUSED"))
  })

/** What a call came to: the answer, or how it failed (`timeout`, or the socket error's code). */
type Outcome =
  | { readonly status: number; readonly body: Record<string, unknown>; readonly headers: Headers }
  | { readonly failed: string }

const failure = (e: unknown): string => {
  const error = e as { name?: string; message?: string; cause?: { code?: string; message?: string } }
  if (error.name === "TimeoutError") return "timeout"
  return error.cause?.code ?? error.cause?.message ?? error.message ?? String(e)
}

const outcome = async (answer: Promise<Response>): Promise<Outcome> => {
  try {
    const res = await answer
    const text = await res.text()
    let body: Record<string, unknown> = {}
    try {
      body = JSON.parse(text)
    } catch {
      body = { text }
    }
    return { status: res.status, body, headers: res.headers }
  } catch (e) {
    return { failed: failure(e) }
  }
}

suite("the fault proxy and the wallet core process, against a real core", () => {
  let scope: Scope.CloseableScope
  let core: WalletCoreProcess.WalletCoreProcess
  let proxy: FaultProxy.FaultProxy

  const headers = (extra: Record<string, string> = {}) => ({
    authorization: `Bearer ${core.token}`,
    "request-id": randomUUID(),
    ...extra
  })
  const payment = (amount = 100) => ({
    id: randomUUID(),
    environment: "live",
    from: "payer",
    to: "merchant",
    amount,
    fee: { to: "fee", amount: 2 },
    memo: "fault proxy test",
    kind: "payment"
  })
  const post = (base: string, body: unknown, timeoutMs = 10_000) =>
    outcome(
      fetch(`${base}/transfers`, {
        method: "POST",
        headers: headers({ "content-type": "application/json" }),
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs)
      })
    )
  const get = (base: string, path: string, timeoutMs = 10_000) =>
    outcome(fetch(`${base}${path}`, { headers: headers(), signal: AbortSignal.timeout(timeoutMs) }))
  const cancel = (base: string, id: string) =>
    outcome(
      fetch(`${base}/transfers/${id}/cancel`, {
        method: "POST",
        headers: headers(),
        signal: AbortSignal.timeout(10_000)
      })
    )
  const status = (o: Outcome) => ("status" in o ? o.status : o.failed)
  const stored = async (id: string) => (await run(core.transfer(id)))?.status

  beforeAll(async () => {
    scope = Effect.runSync(Scope.make())
    core = await run(Scope.extend(WalletCoreProcess.make(), scope))
    proxy = await run(Scope.extend(FaultProxy.make(core.url), scope))
    await run(
      Effect.forEach(
        [
          { id: "payer", balance: 1_000_000 },
          { id: "merchant", balance: 0 },
          { id: "fee", balance: 0 }
        ],
        core.seedWallet
      )
    )
  })
  afterAll(async () => {
    if (scope !== undefined) await run(Scope.close(scope, Exit.void))
  })
  beforeEach(() => run(Effect.zipRight(proxy.setFault(undefined), proxy.clearStats)))

  it("without a rule, forwards the request and gives the core's answer as it gave it", async () => {
    const body = payment()
    const requestId = randomUUID()
    const answer = await outcome(
      fetch(`${proxy.url}/transfers`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${core.token}`,
          "request-id": requestId,
          "content-type": "application/json"
        },
        body: JSON.stringify(body)
      })
    )
    expect(status(answer)).toBe(201)
    if (!("status" in answer)) return
    expect(answer.body).toMatchObject({ id: body.id, status: "posted" })
    expect(answer.headers.get("request-id")).toBe(requestId)
    expect(await stored(body.id)).toBe("posted")
    // The token is the client's, not the proxy's: a wrong one is the core's 401.
    const wrong = await outcome(
      fetch(`${proxy.url}/transfers/${body.id}`, { headers: { authorization: "Bearer wrong" } })
    )
    expect(status(wrong)).toBe(401)
    const stats = await run(proxy.stats)
    expect(stats).toMatchObject({ seen: 2, forwarded: 2 })
    expect(Object.values(stats.applied).every((n) => n === 0)).toBe(true)
    expect(await run(proxy.log)).toEqual([
      { method: "POST", path: "/transfers", requestId, fault: undefined, upstream: 201 },
      { method: "GET", path: `/transfers/${body.id}`, requestId: undefined, fault: undefined, upstream: 401 }
    ])
  })

  it("forwards headers, query and body bytes verbatim, and the answer's headers and bytes back", async () => {
    // A target that keeps what it got, to compare byte for byte.
    const got: Array<{ method?: string; url?: string; headers: Http.IncomingHttpHeaders; body: Buffer }> = []
    const echo = Http.createServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (c: Buffer) => chunks.push(c))
      req.on("end", () => {
        got.push({ method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks) })
        res.writeHead(418, { "request-id": String(req.headers["request-id"]), "x-odd": "  spaced  value" })
        res.end(Buffer.from([0, 1, 2, 255, 10]))
      })
    })
    await new Promise<void>((resolve) => echo.listen(0, "127.0.0.1", () => resolve()))
    const inner = Effect.runSync(Scope.make())
    try {
      const echoProxy = await run(
        Scope.extend(FaultProxy.make(`http://127.0.0.1:${(echo.address() as Net.AddressInfo).port}`), inner)
      )
      const body = '{ "amount" :  10000 ,\n "memo": "caf\u00e9 \u2615" }\n'
      const res = await fetch(`${echoProxy.url}/transfers/x%2Fy/cancel?posted_on=2026-12-02&cursor=a%20b`, {
        method: "POST",
        headers: {
          authorization: "Bearer some-token",
          "request-id": "rid-1",
          "content-type": "application/json; charset=utf-8"
        },
        body
      })
      expect(res.status).toBe(418)
      expect(res.headers.get("request-id")).toBe("rid-1")
      expect(res.headers.get("x-odd")).toBe("spaced  value")
      expect([...Buffer.from(await res.arrayBuffer())]).toEqual([0, 1, 2, 255, 10])
      expect(got).toHaveLength(1)
      expect(got[0]!.method).toBe("POST")
      expect(got[0]!.url).toBe("/transfers/x%2Fy/cancel?posted_on=2026-12-02&cursor=a%20b")
      expect(got[0]!.headers).toMatchObject({
        authorization: "Bearer some-token",
        "request-id": "rid-1",
        "content-type": "application/json; charset=utf-8",
        "content-length": String(Buffer.byteLength(body))
      })
      expect(got[0]!.body.equals(Buffer.from(body, "utf8"))).toBe(true)
    } finally {
      await run(Scope.close(inner, Exit.void))
      echo.closeAllConnections()
      await new Promise<void>((resolve) => echo.close(() => resolve()))
    }
  })

  it("drop-after-commit: the client's connection dies, and the core has posted the transfer", async () => {
    await run(proxy.setFault({ fault: "drop-after-commit", method: "POST", path: "/transfers" }))
    const body = payment()
    const answer = await post(proxy.url, body)
    expect("failed" in answer, JSON.stringify(answer)).toBe(true)
    expect(await stored(body.id)).toBe("posted")
    expect(await run(proxy.log)).toMatchObject([{ fault: "drop-after-commit", upstream: 201 }])
    expect((await run(proxy.stats)).applied["drop-after-commit"]).toBe(1)
    // Repeated without the fault, the core answers its first answer: the repeat moves nothing.
    await run(proxy.setFault(undefined))
    const repeat = await post(proxy.url, body)
    expect(status(repeat)).toBe(200)
    const entries = await run(core.entries(body.id))
    expect(entries.filter((e) => e.side === "debit")).toEqual([
      { transferId: body.id, walletId: "payer", side: "debit", amount: 100 }
    ])
  })

  it("delay: the answer comes only after ms, past a client's timeout, and the core committed meanwhile", async () => {
    await run(proxy.setFault({ fault: "delay", ms: 1_500, method: "POST", path: "/transfers" }))
    const late = payment()
    const started = Date.now()
    const timedOut = await post(proxy.url, late, 400)
    expect(timedOut).toEqual({ failed: "timeout" })
    expect(Date.now() - started).toBeLessThan(1_500)
    expect(await stored(late.id)).toBe("posted")
    const waited = payment()
    const t0 = Date.now()
    const answer = await post(proxy.url, waited)
    expect(status(answer)).toBe(201)
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1_450)
    expect((await run(proxy.stats)).applied.delay).toBe(2)
  })

  it("error-500-before: a 500, and the core never saw the request", async () => {
    await run(proxy.setFault({ fault: "error-500-before", method: "POST", path: "/transfers" }))
    const body = payment()
    expect(status(await post(proxy.url, body))).toBe(500)
    expect(await stored(body.id)).toBeUndefined()
    expect(await run(proxy.stats)).toMatchObject({ seen: 1, forwarded: 0 })
    expect(await run(proxy.log)).toMatchObject([{ fault: "error-500-before", upstream: undefined }])
    await run(proxy.setFault(undefined))
    expect(status(await post(proxy.url, body))).toBe(201)
  })

  it("error-500-after: a 500, though the core posted the transfer", async () => {
    await run(proxy.setFault({ fault: "error-500-after", method: "POST", path: "/transfers" }))
    const body = payment()
    expect(status(await post(proxy.url, body))).toBe(500)
    expect(await stored(body.id)).toBe("posted")
    expect(await run(proxy.log)).toMatchObject([{ fault: "error-500-after", upstream: 201 }])
    await run(proxy.setFault(undefined))
    expect(status(await post(proxy.url, body))).toBe(200)
  })

  it("reset: the client's connection is reset, and the core never saw the request", async () => {
    await run(proxy.setFault({ fault: "reset", method: "POST", path: "/transfers" }))
    const body = payment()
    const answer = await post(proxy.url, body)
    expect("failed" in answer && answer.failed !== "timeout", JSON.stringify(answer)).toBe(true)
    expect(await stored(body.id)).toBeUndefined()
    expect(await run(proxy.stats)).toMatchObject({ seen: 1, forwarded: 0, applied: { reset: 1 } })
  })

  it("blackhole: no answer and nothing forwarded until the rule goes; refuse closes what it holds", async () => {
    await run(proxy.setFault({ fault: "blackhole" }))
    const body = payment()
    expect(await post(proxy.url, body, 500)).toEqual({ failed: "timeout" })
    expect(await stored(body.id)).toBeUndefined()
    // A request held when the core's host goes down fails then, rather than hanging.
    const held = post(proxy.url, payment(), 10_000)
    await new Promise((resolve) => setTimeout(resolve, 200))
    await run(proxy.refuse)
    const failed = await held
    expect("failed" in failed && failed.failed !== "timeout", JSON.stringify(failed)).toBe(true)
    await run(proxy.restore)
    await run(proxy.setFault(undefined))
    expect(status(await post(proxy.url, body))).toBe(201)
    expect(await run(proxy.stats)).toMatchObject({ seen: 3, forwarded: 1, applied: { blackhole: 2 } })
  })

  it("a rule picks by method and path pattern: only the cancels", async () => {
    await run(proxy.setFault({ fault: "error-500-before", method: "post", path: "/transfers/*/cancel" }))
    const body = payment()
    expect(status(await post(proxy.url, body))).toBe(201)
    expect(status(await get(proxy.url, `/transfers/${body.id}`))).toBe(200)
    expect(status(await cancel(proxy.url, body.id))).toBe(500)
    expect(status(await get(proxy.url, `/transfers/${body.id}/cancel/more`))).toBe(404)
    expect((await run(proxy.log)).map((e) => e.fault)).toEqual([
      undefined,
      undefined,
      "error-500-before",
      undefined
    ])
    await run(proxy.setFault(undefined))
    expect(await cancel(proxy.url, body.id)).toMatchObject({ status: 200, body: { status: "posted" } })
  })

  it("rates: the next N, then none; a seeded fraction draws the same requests again; 0 and 1", async () => {
    const pattern = async (rule: FaultProxy.Rule | ReadonlyArray<FaultProxy.Rule>, n: number) => {
      await run(proxy.setFault(rule))
      const seen: Array<number | string> = []
      for (let i = 0; i < n; i++) seen.push(status(await get(proxy.url, "/healthz")))
      return seen
    }
    const rule = { fault: "error-500-before", method: "GET", path: "/healthz" } as const
    expect(await pattern({ ...rule, rate: FaultProxy.next(3) }, 5)).toEqual([500, 500, 500, 200, 200])
    const a = await pattern({ ...rule, rate: FaultProxy.fraction(0.5, 7) }, 40)
    const again = await pattern({ ...rule, rate: FaultProxy.fraction(0.5, 7) }, 40)
    const other = await pattern({ ...rule, rate: FaultProxy.fraction(0.5, 8) }, 40)
    expect(again).toEqual(a)
    expect(other).not.toEqual(a)
    const faulted = a.filter((s) => s === 500).length
    expect(faulted).toBeGreaterThan(8)
    expect(faulted).toBeLessThan(32)
    expect(await pattern({ ...rule, rate: FaultProxy.fraction(0, 1) }, 5)).toEqual([200, 200, 200, 200, 200])
    expect(await pattern({ ...rule, rate: FaultProxy.fraction(1, 1) }, 3)).toEqual([500, 500, 500])
    // A list: the first rule that takes the request applies.
    expect(
      await pattern(
        [
          { ...rule, fault: "error-500-after", rate: FaultProxy.next(1) },
          { fault: "error-500-before", path: "/nothing-here" },
          { ...rule, rate: FaultProxy.next(1) }
        ],
        3
      )
    ).toEqual([500, 500, 200])
    expect((await run(proxy.log)).slice(-3).map((e) => [e.fault, e.upstream])).toEqual([
      ["error-500-after", 200],
      ["error-500-before", undefined],
      [undefined, 200]
    ])
  })

  it("refuse: connections refused, as a core that is down; restore: the same port answers again", async () => {
    await run(proxy.refuse)
    expect(await refused(proxy.port)).toBe(true)
    expect(await get(proxy.url, "/healthz")).toHaveProperty("failed")
    await run(proxy.restore)
    expect(await refused(proxy.port)).toBe(false)
    expect(status(await get(proxy.url, "/healthz"))).toBe(200)
    const body = payment()
    expect(status(await post(proxy.url, body))).toBe(201)
  })

  it("restart: the core again on the same port and database, with what it had", async () => {
    const body = payment()
    expect(status(await post(core.url, body))).toBe(201)
    const { url, port } = core
    await run(core.restart)
    expect(core.running()).toBe(true)
    expect([core.url, core.port]).toEqual([url, port])
    expect(await get(core.url, `/transfers/${body.id}`)).toMatchObject({
      status: 200,
      body: { id: body.id, status: "posted" }
    })
    // The proxy's target is the same port: it forwards to the new process.
    expect(status(await get(proxy.url, `/transfers/${body.id}`))).toBe(200)
  })

  it("SIGKILL and restart: the core is gone, then back with every transfer it committed", async () => {
    const posted = [payment(300), payment(400)]
    for (const body of posted) expect(status(await post(core.url, body))).toBe(201)
    await run(core.kill)
    expect(core.running()).toBe(false)
    expect(await refused(core.port)).toBe(true)
    // Through the proxy, a core that is down is a failed connection, logged as such.
    const through = await post(proxy.url, payment())
    expect("failed" in through, JSON.stringify(through)).toBe(true)
    expect((await run(proxy.log)).at(-1)).toMatchObject({ fault: undefined, upstream: "error" })
    await run(core.restart)
    for (const body of posted)
      expect(await get(core.url, `/transfers/${body.id}`)).toMatchObject({
        status: 200,
        body: { id: body.id, status: "posted" }
      })
    // Money conserved in its book across the kill: balances sum to the opening balances.
    const wallets = await run(core.wallets)
    const sum = (f: (w: WalletCoreProcess.WalletRow) => number) => wallets.reduce((n, w) => n + f(w), 0)
    expect(sum((w) => w.balance)).toBe(sum((w) => w.openingBalance))
    const postedRows = (await run(core.transfers)).filter((t) => t.status === "posted")
    const payer = wallets.find((w) => w.id === "payer")!
    expect(payer.balance).toBe(payer.openingBalance - postedRows.reduce((n, t) => n + t.amount!, 0))
  })
})
