/**
 * Logs an operator can use: `Request-Id` on every response of the real server, the same id on every log
 * line written while serving the request, and `LAARI_LOG_FORMAT=json` lines that parse one by one.
 */
import { HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { ApiKeys, Work } from "@laari/core"
import { Seed } from "@laari/testkit"
import { Cause, Effect, Exit, HashMap, Layer, Logger, Option, Redacted, Scope } from "effect"
import * as Config from "../../src/Platform/Config.js"
import * as RateLimit from "../../src/Http/RateLimit.js"
import * as RequestId from "../../src/Http/RequestId.js"
import * as Security from "../../src/Http/Security.js"
import * as Lines from "../../src/Platform/Lines.js"
import * as Logs from "../../src/Platform/Logs.js"
import * as F from "../support/Fixtures.js"
import * as ServerCluster from "../support/ServerCluster.js"
import * as ServerProcess from "../support/ServerProcess.js"
import * as TestDatabase from "../support/TestDatabase.js"
import * as TestServer from "../support/TestServer.js"

const serverConfig: Config.ServerConfig = {
  port: 0,
  databaseUrl: undefined,
  dataDir: undefined,
  baseUrl: "http://laari.test",
  checkoutUrl: "http://pay.laari.test",
  opsToken: TestServer.OpsToken,
  clock: "manual",
  maxBodyBytes: Config.defaults.maxBodyBytes,
  rateLimit: 0,
  webhookAllowPrivate: false
}

describe("Request-Id", () => {
  let server: TestServer.TestServer
  beforeAll(async () => {
    server = await TestServer.start()
  }, 60_000)
  afterAll(() => server.close())

  it("is on every response: success, refusal, unknown route, page, operator", async () => {
    const answers = await Promise.all([
      server.request("GET", "/healthz"),
      server.request("GET", "/mandates"),
      server.request("GET", "/no/such/route"),
      server.request("POST", "/mandates", { key: "sk_test_nope", rawBody: "{" }),
      server.request("GET", "/openapi.json"),
      server.ops("POST", "/ops/clock/advance", { by_seconds: 0 })
    ])
    const ids = answers.map((a) => a.headers.get(RequestId.Header))
    expect(answers.map((a) => a.status)).toEqual([200, 401, 404, 401, 200, 200])
    for (const id of ids) expect(id).toMatch(/^req_[0-9a-f]{32}$/)
    expect(new Set(ids).size).toBe(ids.length)
  })

  it("keeps a well-formed id the client sent, and replaces any other", async () => {
    const kept = await server.request("GET", "/healthz", { headers: { "request-id": "proxy-4f2a:91" } })
    expect(kept.headers.get(RequestId.Header)).toBe("proxy-4f2a:91")
    for (const sent of ["short", "has space in it", "x".repeat(129), "new\u2028line-abcdefgh"]) {
      const replaced = await server.request("GET", "/healthz", { headers: { "request-id": encodeURI(sent) } })
      expect(replaced.headers.get(RequestId.Header)).toMatch(/^req_[0-9a-f]{32}$/)
    }
  })
})

describe("logs", () => {
  it.effect("every line written while serving a request carries its id, even when the app fails", () =>
    Effect.gen(function* () {
      const lines: Array<{ readonly message: unknown; readonly id: string | undefined }> = []
      const capture = Logger.replace(
        Logger.defaultLogger,
        Logger.make(({ annotations, message }) =>
          lines.push({ message, id: Option.getOrUndefined(HashMap.get(annotations, "request_id")) as string })
        )
      )
      const served = RequestId.middleware(Effect.as(Effect.log("served"), HttpServerResponse.text("ok")))
      const failed = RequestId.middleware(Effect.zipRight(Effect.logWarning("failing"), Effect.fail("boom")))
      const handle = (app: typeof served | typeof failed) =>
        HttpApp.toWebHandler(Effect.provide(app, capture))(new Request("http://laari.test/x"))
      const ok = yield* Effect.promise(() => handle(served))
      const bad = yield* Effect.promise(() => handle(failed))
      expect(ok.status).toBe(200)
      expect(bad.status).toBe(500)
      expect(lines.map((l) => l.message)).toEqual([["served"], ["failing"]])
      expect(lines.map((l) => l.id)).toEqual([ok.headers.get("request-id"), bad.headers.get("request-id")])
    })
  )

  it.live("after authentication, the rest of the request logs as the key's merchant", () =>
    Effect.gen(function* () {
      const merchant = yield* Effect.flatMap(Seed.Seed, (seed) => seed.merchant({ name: "Logged" }))
      const { key } = yield* (yield* ApiKeys.ApiKeys).issue({
        merchantId: merchant.id,
        environment: "test",
        kind: "secret"
      })
      // The handler's type names the router's request services (`HttpRouter.Provided`); it uses none.
      const authenticate = (yield* Security.Authentication).bearer as (
        token: Redacted.Redacted<string>
      ) => Effect.Effect<unknown, unknown, HttpServerRequest.HttpServerRequest>
      // The middleware reads the request's header itself.
      const bearer = (token: Redacted.Redacted<string>) =>
        Effect.provideService(
          authenticate(token),
          HttpServerRequest.HttpServerRequest,
          HttpServerRequest.fromWeb(
            new Request("http://laari/balance", {
              headers: { authorization: `Bearer ${Redacted.value(token)}` }
            })
          )
        )
      const lines: Array<HashMap.HashMap<string, unknown>> = []
      const capture = Logger.replace(
        Logger.defaultLogger,
        Logger.make(({ annotations }) => lines.push(annotations))
      )
      const handler = Effect.log("in the handler")
      yield* bearer(Redacted.make(key)).pipe(
        Effect.zipRight(handler),
        Effect.annotateLogs("request_id", "req_x"),
        Effect.provide(capture)
      )
      // A refused key logs as nobody.
      yield* bearer(Redacted.make("sk_test_unknown")).pipe(
        Effect.ignore,
        Effect.zipRight(handler),
        Effect.provide(capture)
      )
      expect(lines.map((a) => Object.fromEntries(HashMap.toEntries(a)))).toEqual([
        { request_id: "req_x", merchant_id: merchant.id, environment: "test" },
        {}
      ])
    }).pipe(
      Effect.provide(
        Security.authenticationLive(() => undefined).pipe(
          Layer.provideMerge(TestDatabase.pglite()),
          Layer.provide(RateLimit.memoryLayer),
          Layer.provide(Config.layer({ ...serverConfig, rateLimit: 0 }))
        )
      )
    )
  )

  it.effect("LAARI_LOG_FORMAT=json writes one JSON object a line, with the annotations and the cause", () =>
    Effect.gen(function* () {
      const chunks: Array<string> = []
      const lines = Lines.make((chunk) => chunks.push(chunk))
      yield* Effect.logWarning("claiming failed", { attempt: 2 }).pipe(
        Effect.annotateLogs({ request_id: "req_1", merchant_id: "m_1" }),
        Effect.provide(Logs.layer("json", lines))
      )
      yield* Effect.logError("unhandled defect", Cause.die(new Error("line one\nline two"))).pipe(
        Effect.provide(Logs.layer("json", lines))
      )
      lines.flush()
      const written = chunks.join("\n").split("\n")
      expect(written).toHaveLength(2)
      const [first, second] = written.map((line) => JSON.parse(line))
      expect(first).toMatchObject({
        level: "warn",
        message: 'claiming failed {"attempt":2}',
        request_id: "req_1",
        merchant_id: "m_1"
      })
      expect(new Date(first.time).toISOString()).toBe(first.time)
      expect(second.level).toBe("error")
      expect(second.message).toBe("unhandled defect")
      expect(second.cause).toContain("line one\nline two")
    })
  )

  it.effect("LAARI_LOG_FORMAT=text writes Effect's own lines", () =>
    Effect.gen(function* () {
      const chunks: Array<string> = []
      const lines = Lines.make((chunk) => chunks.push(chunk))
      const ours = yield* Effect.logInfo("served", { n: 1 }).pipe(
        Effect.annotateLogs({ request_id: "req_2" }),
        Effect.provide(Logs.layer("text", lines)),
        Effect.zipRight(
          Effect.sync(() => {
            lines.flush()
            return chunks.join("\n")
          })
        )
      )
      const effects: Array<string> = []
      yield* Effect.logInfo("served", { n: 1 }).pipe(
        Effect.annotateLogs({ request_id: "req_2" }),
        Effect.provide(
          Logger.replace(
            Logger.defaultLogger,
            Logger.map(Logger.stringLogger, (line) => effects.push(line))
          )
        )
      )
      // The same line but for its time and fiber.
      const bare = (line: string) => line.replace(/^timestamp=\S+ /, "").replace(/ fiber=#\d+ /, " ")
      expect(bare(ours)).toBe(bare(effects[0]!))
      expect(ours).toMatch(/^timestamp=\S+ level=INFO fiber=#\d+ message=served .* request_id=req_2$/s)
    })
  )

  it.effect("stamps each line with the wall time, in either format, whatever the service's clock reads", () =>
    Effect.gen(function* () {
      // A manual clock a month ahead of the machine's, as `LAARI_CLOCK=manual` after an advance.
      const manual = Work.makeManualClock(Date.now() + 31 * 86_400_000)
      const chunks: Array<string> = []
      const lines = Lines.make((chunk) => chunks.push(chunk))
      const before = Date.now()
      for (const format of ["json", "text"] as const)
        yield* Effect.logInfo("stamped").pipe(
          Effect.provide(Logs.layer(format, lines)),
          Effect.withClock(manual.clock)
        )
      lines.flush()
      const after = Date.now()
      const [json, text] = chunks.join("\n").split("\n")
      const stamps = [Date.parse(JSON.parse(json!).time), Date.parse(/^timestamp=(\S+) /.exec(text!)![1]!)]
      for (const stamp of stamps) {
        expect(stamp).toBeGreaterThanOrEqual(before)
        expect(stamp).toBeLessThanOrEqual(after)
      }
    })
  )

  it.effect("writes each line once: in place of the pretty logger runMain adds, not beside it", () =>
    Effect.gen(function* () {
      const chunks: Array<string> = []
      const lines = Lines.make((chunk) => chunks.push(chunk))
      const printed: Array<unknown> = []
      const log = globalThis.console.log
      globalThis.console.log = (...args: Array<unknown>) => printed.push(args)
      try {
        for (const format of ["text", "json"] as const)
          yield* Effect.logInfo("once").pipe(
            Effect.provide(Logs.layer(format, lines)),
            Effect.provide(Logger.pretty)
          )
      } finally {
        globalThis.console.log = log
      }
      lines.flush()
      expect(printed).toEqual([])
      expect(chunks.join("\n").split("\n")).toHaveLength(2)
    })
  )

  it("writes the lines of one turn of the event loop as one chunk, in order, and nothing twice", async () => {
    const chunks: Array<string> = []
    const lines = Lines.make((chunk) => chunks.push(chunk))
    lines.write("a")
    lines.write("b")
    expect(chunks).toEqual([])
    await new Promise((resolve) => setImmediate(resolve))
    lines.write("c")
    await new Promise((resolve) => setImmediate(resolve))
    lines.flush()
    expect(chunks).toEqual(["a\nb", "c"])
  })
})

/**
 * The access log of the real service, two processes on PostgreSQL, in JSON: one line
 * per request with its route template, status, duration, `request_id` (the response's `Request-Id`) and
 * `merchant_id` once authenticated; nothing secret; and every line on stdout JSON, the supervisor's too.
 */
describe.skipIf(TestDatabase.postgresUrl === undefined)("the access log (PostgreSQL, two processes)", () => {
  const scope = Effect.runSync(Scope.make())
  let server: ServerProcess.ServerProcess
  beforeAll(async () => {
    server = await ServerCluster.start({
      url: TestDatabase.postgresUrl!,
      scope,
      processes: 2,
      env: { LAARI_LOG_FORMAT: "json" }
    })
  }, 150_000)
  afterAll(async () => {
    await server?.stop()
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }, 40_000)

  const lines = () =>
    server
      .stdout()
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => {
        try {
          return JSON.parse(line) as Record<string, unknown>
        } catch {
          throw new Error(`not JSON on stdout: ${line}`)
        }
      })

  it("one JSON line per request with its Request-Id, template, status, duration and merchant", async () => {
    const api = TestServer.client(server.baseUrl)
    const merchant = await F.merchant(api as TestServer.TestServer)
    const token = "tok_secret_in_query_0123456789"
    const answers = []
    // New connections: the requests reach both processes.
    for (let i = 0; i < 3; i++) {
      const created = await api.request("POST", "/mandates", {
        key: merchant.test,
        headers: { connection: "close" },
        body: F.mandateBody()
      })
      expect(created.status, created.text).toBe(201)
      const id = (created.body as { id: string }).id
      answers.push({ res: created, route: "/mandates", method: "POST", merchant: merchant.id })
      const read = await api.request("GET", `/mandates/${id}?token=${token}`, {
        key: merchant.test,
        headers: { connection: "close" }
      })
      answers.push({ res: read, route: "/mandates/{id}", method: "GET", merchant: merchant.id })
    }
    const refused = await api.request("GET", "/mandates", {
      key: "sk_test_nope",
      headers: { connection: "close" }
    })
    answers.push({ res: refused, route: "/mandates", method: "GET", merchant: undefined })
    const missing = await api.request("GET", `/no/such/${token}`, { headers: { connection: "close" } })
    answers.push({ res: missing, route: "unmatched", method: "GET", merchant: undefined })

    // Written as the response goes out: allow a moment for the pipe.
    const deadline = Date.now() + 10_000
    const find = (id: string) => lines().filter((l) => l.request_id === id && l.route !== undefined)
    while (answers.some((a) => find(a.res.headers.get("request-id")!).length === 0) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50))
    for (const a of answers) {
      const id = a.res.headers.get("request-id")!
      const found = find(id)
      expect(found, id).toHaveLength(1)
      const line = found[0]!
      expect(line).toMatchObject({ level: "info", method: a.method, route: a.route, status: a.res.status })
      expect(typeof line.duration_ms).toBe("number")
      expect(line.duration_ms as number).toBeGreaterThanOrEqual(0)
      expect(line.merchant_id).toBe(a.merchant)
    }
    const stdout = server.stdout()
    expect(stdout).toContain("all 2 processes listening")
    expect(stdout).not.toContain(token)
    expect(stdout).not.toContain(merchant.test)
    expect(stdout).not.toContain(TestServer.OpsToken)
    // Every line parses (lines() throws otherwise), the supervisor's included.
    expect(lines().some((l) => String(l.message).includes("all 2 processes listening"))).toBe(true)
  })
})
