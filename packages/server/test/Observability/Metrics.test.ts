/**
 * `GET /metrics` of the real server, on PGlite and on PostgreSQL: only with the operator token, not in the
 * merchants' document, and counting what really happened: charges and refusals, webhook deliveries,
 * renewals on the manual clock, requests by route template, the work each background job has due, the
 * database pool and the process.
 *
 * Core's counters are Effect metrics, one registry per process: each test compares a scrape before and
 * after what it does, and the two servers of this file run one after the other.
 */
import { spawnSync } from "node:child_process"
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as F from "../support/Fixtures.js"
import * as R from "../support/Receiver.js"
import { startOnPostgres } from "../support/PostgresServer.js"
import * as ServerCluster from "../support/ServerCluster.js"
import * as ServerProcess from "../support/ServerProcess.js"
import * as TestDatabase from "../support/TestDatabase.js"
import { postgresUrl } from "../support/TestDatabase.js"
import * as TestServer from "../support/TestServer.js"

/** Prometheus's own linter (Debian's `prometheus` package; `.ci/run` installs it). */
const promtool = spawnSync("promtool", ["--version"]).status === 0
if (!promtool && process.env.CI === "true")
  throw new Error("promtool is missing: CI checks /metrics with it (apt-get install prometheus)")

interface Sample {
  readonly name: string
  readonly labels: Readonly<Record<string, string>>
  readonly value: number
}

/** The samples of the text exposition format (comments skipped; label values unescaped). */
const parse = (text: string): ReadonlyArray<Sample> =>
  text
    .split("\n")
    .filter((line) => line.trim() !== "" && !line.startsWith("#"))
    .map((line) => {
      const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
      if (match === null) throw new Error(`not a sample line: ${line}`)
      const labels: Record<string, string> = {}
      for (const [, key, value] of (match[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
        labels[key!] = value!.replace(/\\(.)/g, (_, c) => (c === "n" ? "\n" : c))
      return { name: match[1]!, labels, value: Number(match[3]) }
    })

const series = (samples: ReadonlyArray<Sample>, name: string) => samples.filter((s) => s.name === name)

/** A counter's value by its one label's value. */
const byLabel = (samples: ReadonlyArray<Sample>, name: string, label: string) =>
  Object.fromEntries(series(samples, name).map((s) => [s.labels[label], s.value]))

/** What each series of a counter gained from `before` to `after`; only those that changed. */
const gained = (
  before: ReadonlyArray<Sample>,
  after: ReadonlyArray<Sample>,
  name: string,
  label = "outcome"
) => {
  const was = byLabel(before, name, label)
  return Object.fromEntries(
    Object.entries(byLabel(after, name, label))
      .map(([key, value]) => [key, value - (was[key] ?? 0)] as const)
      .filter(([, delta]) => delta !== 0)
  )
}

const suite = (name: string, start: () => Promise<TestServer.LocalTestServer>, backend: "pglite" | "pg") =>
  describe(name, () => {
    let server: TestServer.LocalTestServer
    let receiver: R.Receiver
    let m: F.Merchant
    beforeAll(async () => {
      server = await start()
      receiver = await R.start()
      m = await F.merchant(server)
    }, 120_000)
    afterAll(async () => {
      await server?.close()
      await receiver?.close()
    })

    const scrape = async () => {
      const res = await server.request("GET", "/metrics", { key: TestServer.OpsToken })
      expect(res.status, res.text).toBe(200)
      return parse(res.text)
    }
    const mandate = async (body: Record<string, unknown> = {}) => {
      const res = await server.request("POST", "/mandates", { key: m.test, body: F.mandateBody(body) })
      expect(res.status, res.text).toBe(201)
      return res.body as { id: string; reference: string }
    }
    const charge = (id: string, amount: number) =>
      server.request("POST", `/mandates/${id}/charges`, { key: m.test, body: { amount } })

    it("answers only the operator token, 401 as /ops does otherwise", async () => {
      const ops = await server.request("GET", "/ops/clock")
      expect(ops.status).toBe(401)
      for (const key of [undefined, "wrong", `${TestServer.OpsToken}x`, m.test]) {
        const res = await server.request("GET", "/metrics", { key })
        expect(res.status).toBe(401)
        expect(res.headers.get("content-type")).toBe(ops.headers.get("content-type"))
        expect(res.body).toEqual(ops.body)
      }
      const ok = await server.request("GET", "/metrics", { key: TestServer.OpsToken })
      expect(ok.status).toBe(200)
      expect(ok.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8")
      expect(ok.headers.get("request-id")).toMatch(/^req_/)
    })

    it("passes promtool check metrics with no finding", async (context) => {
      if (!promtool) {
        console.warn("promtool is not installed: /metrics is not linted here (CI installs it)")
        return context.skip()
      }
      // Every series present: a request timed, a charge counted.
      await server.request("GET", "/healthz")
      const res = await server.request("GET", "/metrics", { key: TestServer.OpsToken })
      expect(res.status).toBe(200)
      const lint = spawnSync("promtool", ["check", "metrics"], { input: res.text, encoding: "utf8" })
      expect(`${lint.stdout}${lint.stderr}`).toBe("")
      expect(lint.status).toBe(0)
    })

    it("counts a charge refused because the mandate is not found", async () => {
      const before = await scrape()
      const refused = await charge(crypto.randomUUID(), 1_000)
      expect(refused.status, refused.text).toBe(404)
      expect(refused.body.code).toBe("MANDATE_NOT_FOUND")
      expect(gained(before, await scrape(), "laari_mandate_charges_total")).toEqual({ MANDATE_NOT_FOUND: 1 })
    })

    it("is in neither OpenAPI document", async () => {
      for (const path of ["/openapi.json", "/ops/openapi.json"]) {
        const doc = await server.request("GET", path)
        expect(doc.status).toBe(200)
        expect(Object.keys(doc.body.paths).length).toBeGreaterThan(5)
        expect(Object.keys(doc.body.paths)).not.toContain("/metrics")
        expect(doc.text).not.toContain('"/metrics"')
      }
    })

    it("counts a succeeded and a refused charge, and times requests by route template", async () => {
      const a = await mandate({ per_charge_cap: 50_000 })
      const before = await scrape()
      expect((await charge(a.id, 1_000)).status).toBe(201)
      const refused = await charge(a.reference, 60_000)
      expect(refused.body.code).toBe("PER_CHARGE_CAP_EXCEEDED")
      expect((await server.request("GET", `/no/such/${a.id}`)).status).toBe(404)
      expect((await server.request("GET", `/mandates/${a.id}`, { key: m.test })).status).toBe(200)
      const after = await scrape()

      expect(gained(before, after, "laari_mandate_charges_total")).toEqual({
        succeeded: 1,
        PER_CHARGE_CAP_EXCEEDED: 1
      })
      // Every outcome is there from the start, and nothing else.
      expect(Object.keys(byLabel(after, "laari_mandate_charges_total", "outcome")).sort()).toEqual(
        [
          "succeeded",
          "MANDATE_NOT_FOUND",
          "MANDATE_INACTIVE",
          "MANDATE_EXPIRED",
          "PER_CHARGE_CAP_EXCEEDED",
          "PERIOD_CAP_EXCEEDED",
          "MANDATE_CHARGE_AMOUNT_INVALID",
          "WALLET_LIMIT_EXCEEDED",
          "MANDATE_CHARGE_FAILED",
          "INSUFFICIENT_FUNDS",
          "SERVICE_UNAVAILABLE"
        ].sort()
      )

      const counts = series(after, "laari_http_request_duration_seconds_count")
      const count = (labels: Record<string, string>) =>
        counts
          .filter((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v))
          .reduce((n, s) => n + s.value, 0)
      const gainedCount = (labels: Record<string, string>) => {
        const was = series(before, "laari_http_request_duration_seconds_count")
          .filter((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v))
          .reduce((n, s) => n + s.value, 0)
        return count(labels) - was
      }
      expect(gainedCount({ method: "POST", route: "/mandates/{id}/charges", status: "201" })).toBe(1)
      expect(refused.status).toBeGreaterThanOrEqual(400)
      expect(
        gainedCount({ method: "POST", route: "/mandates/{id}/charges", status: String(refused.status) })
      ).toBe(1)
      expect(gainedCount({ method: "GET", route: "/mandates/{id}", status: "200" })).toBe(1)
      expect(gainedCount({ method: "GET", route: "unmatched", status: "404" })).toBe(1)
      // The operator's routes and the scrape itself are timed too.
      expect(count({ method: "POST", route: "/ops/merchants", status: "201" })).toBeGreaterThanOrEqual(1)
      expect(count({ method: "GET", route: "/metrics", status: "200" })).toBeGreaterThanOrEqual(1)
      expect(count({ method: "GET", route: "/metrics", status: "401" })).toBeGreaterThanOrEqual(4)

      const histogram = after.filter((s) => s.name.startsWith("laari_http_request_duration_seconds"))
      expect(histogram.some((s) => s.name.endsWith("_bucket") && s.labels.le === "+Inf")).toBe(true)
      for (const s of histogram) {
        expect(s.labels.route === "unmatched" || s.labels.route!.startsWith("/"), s.labels.route).toBe(true)
        // Templates only: no id, no reference, no raw parameter.
        expect(s.labels.route).not.toContain(a.id)
        expect(s.labels.route).not.toContain(a.reference)
        expect(s.labels.route).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-/)
        expect(s.labels.route).not.toContain(":")
        expect(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "OTHER"]).toContain(
          s.labels.method
        )
      }
    })

    it("counts webhook deliveries: delivered, failed and retried, given up", async () => {
      const path = `/${F.unique("hook")}`
      const created = await server.request("POST", "/webhook-endpoints", {
        key: m.test,
        body: { url: receiver.url(path), enabled_events: ["mandate.charge.succeeded"] }
      })
      expect(created.status, created.text).toBe(201)
      const at = () => receiver.received.filter((r) => r.path === path)
      const a = await mandate()
      const before = await scrape()

      receiver.answer = () => ({ status: 200 })
      expect((await charge(a.id, 100)).status).toBe(201)
      await R.eventually(() => at().length === 1, 10_000, "the first delivery")
      receiver.answer = () => ({ status: 500 })
      expect((await charge(a.id, 100)).status).toBe(201)
      await R.eventually(() => at().length === 2, 10_000, "the failing delivery")
      const eventId = String(at()[1]!.headers["webhook-id"])
      const resent = await server.request("POST", `/webhook-endpoints/${created.body.id}/resend`, {
        key: m.test,
        body: { event_id: eventId }
      })
      expect(resent.status, resent.text).toBe(202)
      await R.eventually(() => at().length === 3, 10_000, "the resend")

      const expected = { delivered: 1, failed: 1, gave_up: 1 }
      // The attempt is recorded just after the receiver answered.
      await R.eventually(
        async () =>
          JSON.stringify(gained(before, await scrape(), "laari_webhook_deliveries_total")) ===
          JSON.stringify(expected),
        10_000,
        "the deliveries' counts"
      )
      // The retry waits 5 s on the manual clock: it comes when the clock moves (the renewals below).
      receiver.answer = () => ({ status: 200 })
    })

    it("counts renewals on the manual clock: paid, then failed for an empty wallet", async () => {
      const session = await server.request("POST", "/checkout/sessions", {
        key: m.test,
        body: {
          mode: "SUBSCRIPTION",
          reference: F.unique("sub"),
          title: "Gym membership",
          price_data: { name: "Gold", amount: 25_000, interval: "MONTH" }
        }
      })
      expect(session.status, session.text).toBe(200)
      const paid = await server.request("POST", `/test-helpers/checkout/sessions/${session.body.id}/pay`, {
        key: m.test
      })
      expect(paid.status, paid.text).toBe(200)
      const id: string = paid.body.subscription.id
      const advanceToNextBilling = async () => {
        const read = await server.request("GET", `/subscriptions/${id}`, { key: m.test })
        // A second past it: the API shows whole seconds, the anchor has milliseconds.
        const to = new Date(Date.parse(read.body.nextBillingAt) + 1_000)
          .toISOString()
          .replace(/\.\d+Z$/, "+00:00")
        const res = await server.ops("POST", "/ops/clock/advance", { to })
        expect(res.status, res.text).toBe(200)
      }

      const before = await scrape()
      await advanceToNextBilling()
      const afterPaid = await scrape()
      expect(gained(before, afterPaid, "laari_renewals_total")).toEqual({ paid: 1 })

      const payer = await server.request("POST", "/test-helpers/payer", { key: m.test, body: { balance: 0 } })
      expect(payer.status, payer.text).toBe(200)
      await advanceToNextBilling()
      const afterFailed = await scrape()
      expect(gained(afterPaid, afterFailed, "laari_renewals_total")).toEqual({ failed: 1 })
      expect(Object.keys(byLabel(afterFailed, "laari_renewals_total", "outcome")).sort()).toEqual([
        "ended",
        "failed",
        "paid",
        "voided"
      ])
      await server.ops("POST", `/ops/subscriptions/${id}/cancel`)
    })

    it("reports the work each background job has due, counted at scrape time on the server's clock", async () => {
      const jobs = (samples: ReadonlyArray<Sample>) => byLabel(samples, "laari_background_jobs_due", "job")
      const quiet = jobs(await scrape())
      expect(Object.keys(quiet).sort()).toEqual(
        [
          "checkout-expiry",
          "code-redaction",
          "mandate-expiry",
          "renewals",
          "wallet-resolver",
          "webhook-deliveries"
        ].sort()
      )
      // The manual clock runs what is due when it moves; nothing waits now.
      expect(Object.values(quiet).every((n) => n === 0)).toBe(true)

      const session = await server.request("POST", "/checkout/sessions", {
        key: m.test,
        body: {
          mode: "SUBSCRIPTION",
          reference: F.unique("sub"),
          title: "Expiring",
          price_data: { name: "Gold", amount: 1_000, interval: "MONTH" }
        }
      })
      expect(session.status, session.text).toBe(200)
      // Made due behind the clock's back: only the count can tell.
      await server.sql(
        Effect.flatMap(
          SqlClient.SqlClient,
          (sql) => sql`UPDATE checkout_sessions SET expires_at = ${new Date(0)} WHERE id = ${session.body.id}`
        )
      )
      expect(jobs(await scrape())["checkout-expiry"]).toBe(1)
      expect((await server.ops("POST", "/ops/clock/advance", { by_seconds: 0 })).status).toBe(200)
      expect(jobs(await scrape())["checkout-expiry"]).toBe(0)
    })

    it("reports the database pool and the process's default metrics", async () => {
      const samples = await scrape()
      const pool = byLabel(samples, "laari_db_pool_connections", "state")
      if (backend === "pglite") expect(pool).toEqual({ total: 1 })
      else {
        expect(Object.keys(pool).sort()).toEqual(["idle", "total", "waiting"])
        expect(pool.total).toBeGreaterThanOrEqual(1)
        expect(pool.idle).toBeLessThanOrEqual(pool.total!)
        expect(pool.waiting).toBeGreaterThanOrEqual(0)
      }
      for (const name of [
        "process_cpu_user_seconds_total",
        "process_resident_memory_bytes",
        "nodejs_heap_size_used_bytes",
        "nodejs_eventloop_lag_seconds"
      ])
        expect(series(samples, name).length, name).toBeGreaterThan(0)
    })
  })

suite("GET /metrics on PGlite", () => TestServer.start(), "pglite")

if (postgresUrl === undefined) {
  describe.skip("GET /metrics on PostgreSQL: DATABASE_URL is not set", () => {
    it("needs DATABASE_URL", () => {})
  })
} else {
  suite("GET /metrics on PostgreSQL", async () => (await startOnPostgres()).server, "pg")
}

describe.skipIf(postgresUrl === undefined)("GET /metrics of two processes (PostgreSQL)", () => {
  const scope = Effect.runSync(Scope.make())
  let server: ServerProcess.ServerProcess
  beforeAll(async () => {
    server = await ServerCluster.start({
      url: TestDatabase.postgresUrl!,
      scope,
      processes: 2,
      env: { LAARI_ACCESS_LOG: "false" }
    })
  }, 150_000)
  afterAll(async () => {
    await server?.stop()
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }, 40_000)

  // A new connection each: the supervisor hands connections to the processes in turn.
  const get = (path: string, key?: string) =>
    fetch(`${server.baseUrl}${path}`, {
      headers: { connection: "close", ...(key === undefined ? {} : { authorization: `Bearer ${key}` }) },
      signal: AbortSignal.timeout(10_000)
    })
  const scrape = async () => {
    const res = await get("/metrics", TestServer.OpsToken)
    expect(res.status).toBe(200)
    return parse(await res.text())
  }

  it("one scrape counts the requests of both processes, and includes both", async () => {
    expect(server.stdout()).toContain("all 2 processes listening")
    // No one else asks /readyz here (the start waits on /healthz): every one counted is one of these.
    const n = 16
    const versions = new Set<string>()
    for (let i = 0; i < n; i++) {
      const res = await get("/readyz")
      expect(res.status).toBe(200)
      await res.text()
    }
    for (let i = 0; i < 4; i++) {
      const samples = await scrape()
      const readyz = series(samples, "laari_http_request_duration_seconds_count").filter(
        (s) => s.labels.route === "/readyz"
      )
      expect(readyz.reduce((sum, s) => sum + s.value, 0)).toBe(n)
      // Histograms summed bucket-wise: the +Inf bucket is the count.
      const inf = series(samples, "laari_http_request_duration_seconds_bucket").filter(
        (s) => s.labels.route === "/readyz" && s.labels.le === "+Inf"
      )
      expect(inf.reduce((sum, s) => sum + s.value, 0)).toBe(n)
      expect(series(samples, "laari_metrics_scrape_errors_total")[0]?.value).toBe(0)
      // The due work is the database's: counted once, not once per process.
      expect(series(samples, "laari_background_jobs_due").length).toBe(6)
      for (const s of series(samples, "nodejs_version_info")) versions.add(JSON.stringify(s.labels))
    }
    expect(versions.size).toBe(1)
  })

  it("a process that does not answer in time is left out and counted, the scrape still answers", async () => {
    const workers = spawnSync("ps", ["-o", "pid=", "--ppid", String(server.pid)], { encoding: "utf8" })
      .stdout.trim()
      .split(/\s+/)
      .map(Number)
    expect(workers).toHaveLength(2)
    process.kill(workers[1]!, "SIGSTOP")
    try {
      // A connection handed to the stopped process waits: try again until the other one answers.
      let samples: ReadonlyArray<Sample> | undefined
      for (let attempt = 0; attempt < 10 && samples === undefined; attempt++)
        samples = await fetch(`${server.baseUrl}/metrics`, {
          headers: { connection: "close", authorization: `Bearer ${TestServer.OpsToken}` },
          signal: AbortSignal.timeout(5_000)
        }).then(
          async (res) => (res.status === 200 ? parse(await res.text()) : undefined),
          () => undefined
        )
      expect(samples, "no scrape answered").toBeDefined()
      expect(series(samples!, "laari_metrics_scrape_errors_total")[0]?.value).toBeGreaterThanOrEqual(1)
    } finally {
      process.kill(workers[1]!, "SIGCONT")
    }
  })
})
