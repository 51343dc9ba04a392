/**
 * Logs an operator can use: `Request-Id` on every response of the real server, the same id on every log
 * line written while serving the request, and `LAARI_LOG_FORMAT=json` lines that parse one by one.
 */
import { HttpApp, HttpServerResponse } from "@effect/platform"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Seed } from "@laari/testkit"
import { Cause, Effect, HashMap, Layer, Logger, Option, Redacted } from "effect"
import * as Config from "../src/Config.js"
import * as RequestId from "../src/Http/RequestId.js"
import * as Security from "../src/Http/Security.js"
import * as Onboarding from "../src/Onboarding.js"
import * as Logs from "../src/Logs.js"
import * as TestDatabase from "./support/TestDatabase.js"
import * as TestServer from "./support/TestServer.js"

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
      const { key } = yield* Onboarding.issueKey({
        merchantId: merchant.id,
        environment: "test",
        kind: "secret"
      })
      // The handler's type names the router's request services (`HttpRouter.Provided`); it uses none.
      const bearer = (yield* Security.Authentication).bearer as (
        token: Redacted.Redacted<string>
      ) => Effect.Effect<unknown, unknown>
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
        Security.AuthenticationLive.pipe(
          Layer.provideMerge(TestDatabase.pglite()),
          Layer.provide(Config.layer({ ...serverConfig, rateLimit: 0 }))
        )
      )
    )
  )

  it.effect("LAARI_LOG_FORMAT=json writes one JSON object a line, with the annotations and the cause", () =>
    Effect.gen(function* () {
      const written: Array<string> = []
      const log = globalThis.console.log
      globalThis.console.log = (line: string) => written.push(line)
      try {
        yield* Effect.logWarning("claiming failed", { attempt: 2 }).pipe(
          Effect.annotateLogs({ request_id: "req_1", merchant_id: "m_1" }),
          Effect.provide(Logs.layer("json"))
        )
        yield* Effect.logError("unhandled defect", Cause.die(new Error("line one\nline two"))).pipe(
          Effect.provide(Logs.layer("json"))
        )
      } finally {
        globalThis.console.log = log
      }
      expect(written).toHaveLength(2)
      for (const line of written) expect(line).not.toContain("\n")
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
})

// The text format stays Effect's own.
it("LAARI_LOG_FORMAT=text changes nothing", () => {
  expect(Logs.layer("text")).toBe(Layer.empty)
})
