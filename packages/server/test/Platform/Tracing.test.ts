/**
 * Traces: with `OTEL_EXPORTER_OTLP_ENDPOINT` set, the service exports its spans (HTTP, SQL and the
 * services' methods, with the tenant) as OTLP/HTTP JSON; unset, the tracer is off and no span is made.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import { Telemetry, Work } from "@laari/core"
import { ConfigProvider, Effect, FiberRef, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Tracing from "../../src/Platform/Tracing.js"
import * as Receiver from "../support/Receiver.js"
import * as ServerProcess from "../support/ServerProcess.js"

interface Span {
  readonly name: string
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId?: string
  readonly startTimeUnixNano: string
  readonly endTimeUnixNano: string
  readonly attributes: ReadonlyArray<{
    readonly key: string
    readonly value: { readonly stringValue?: string }
  }>
}

/** A collector's `/v1/traces`: the spans of every export, and the headers each came with. */
const collector = async () => {
  const spans: Array<Span> = []
  const headers: Array<Record<string, unknown>> = []
  const server: Server = createServer((req, res) => {
    let body = ""
    req.on("data", (chunk) => (body += chunk))
    req.on("end", () => {
      headers.push(req.headers)
      if (req.url === "/v1/traces")
        for (const rs of JSON.parse(body).resourceSpans ?? [])
          for (const ss of rs.scopeSpans ?? []) spans.push(...(ss.spans ?? []))
      res.writeHead(200, { "content-type": "application/json" }).end("{}")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return { spans, headers, url, close: () => new Promise<void>((r) => server.close(() => r())) }
}

const attribute = (span: Span, key: string) => span.attributes.find((a) => a.key === key)?.value.stringValue

const withEnv = (env: Record<string, string>) =>
  Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))

describe("Tracing.layer", () => {
  it("without an endpoint the tracer is off: a service method makes no span", async () => {
    const enabled = await Effect.runPromise(
      FiberRef.get(FiberRef.currentTracerEnabled).pipe(
        Effect.provide(Tracing.layer),
        Effect.provide(withEnv({}))
      )
    )
    expect(enabled).toBe(false)
  })

  it("with an endpoint, a traced method's span is exported with the tenant and the configured headers", async () => {
    const c = await collector()
    try {
      const run = Effect.fn("Demo.run")(
        (_tenant: { merchantId: string; environment: string }) => Effect.succeed(1),
        Telemetry.withTenant
      )
      await Effect.runPromise(
        Effect.scoped(
          run({ merchantId: "m-1", environment: "test" }).pipe(
            Effect.provide(Tracing.layer),
            Effect.provide(
              withEnv({
                OTEL_EXPORTER_OTLP_ENDPOINT: `${c.url}/`,
                OTEL_EXPORTER_OTLP_HEADERS: "x-team=pay%20ments"
              })
            )
          )
        )
      )
      // The layer's release flushes what is batched.
      const span = await Receiver.eventually(
        () => c.spans.find((s) => s.name === "Demo.run"),
        5_000,
        "the span"
      )
      expect(attribute(span, "laari.merchant_id")).toBe("m-1")
      expect(attribute(span, "laari.environment")).toBe("test")
      expect(c.headers[0]?.["x-team"]).toBe("pay ments")
    } finally {
      await c.close()
    }
  })
  it("times spans by the wall clock, not the service's (a manual clock a month ahead)", async () => {
    const c = await collector()
    try {
      const manual = Work.makeManualClock(Date.now() + 31 * 86_400_000)
      const before = Date.now()
      await Effect.runPromise(
        Effect.scoped(
          Effect.sleep(20).pipe(
            Effect.withSpan("Demo.manual"),
            Effect.withClock(manual.clock),
            Effect.provide(Tracing.layer),
            Effect.provide(withEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: c.url }))
          )
        )
      )
      const after = Date.now()
      const span = await Receiver.eventually(
        () => c.spans.find((s) => s.name === "Demo.manual"),
        5_000,
        "the span"
      )
      const start = Number(BigInt(span.startTimeUnixNano) / 1_000_000n)
      const end = Number(BigInt(span.endTimeUnixNano) / 1_000_000n)
      expect(start).toBeGreaterThanOrEqual(before - 50)
      expect(end).toBeLessThanOrEqual(after + 50)
      expect(end - start).toBeGreaterThanOrEqual(15)
    } finally {
      await c.close()
    }
  })
})

describe("the service with OTEL_EXPORTER_OTLP_ENDPOINT", { timeout: 60_000 }, () => {
  let c: Awaited<ReturnType<typeof collector>>
  let server: ServerProcess.ServerProcess
  const dataDir = mkdtempSync(Path.join(tmpdir(), "laari-tracing-"))
  beforeAll(async () => {
    c = await collector()
    server = await ServerProcess.start({
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: c.url, LAARI_DATA_DIR: dataDir }
    })
  }, 90_000)
  afterAll(async () => {
    await server?.stop()
    await c?.close()
    rmSync(dataDir, { recursive: true, force: true })
  })

  it("a charge is one trace: the request's span, the service's span under it, and its SQL", async () => {
    // Healthy before the first start has seeded and printed its lines: the key is awaited.
    const printed = async () => {
      for (const deadline = Date.now() + 30_000; Date.now() < deadline; ) {
        const found = /sandbox secret key: +(sk_test_\w+)/.exec(server.stdout())
        if (found !== null) return found[1]!
        await new Promise((r) => setTimeout(r, 100))
      }
      throw new Error(`no sandbox secret key printed:\n${server.stdout()}`)
    }
    const key = await printed()
    const post = (path: string, body: unknown) =>
      fetch(`${server.baseUrl}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify(body)
      })
    expect(
      (await post("/mandates", { reference: "trace-1", title: "Traced", per_charge_cap: 5_000 })).status
    ).toBe(201)
    expect((await post("/mandates/trace-1/charges", { amount: 1_000 })).status).toBe(201)
    const charge = await Receiver.eventually(
      () => c.spans.find((s) => s.name === "Mandates.charge"),
      10_000,
      "the Mandates.charge span"
    )
    const trace = c.spans.filter((s) => s.traceId === charge.traceId)
    const request = trace.find((s) => s.name.startsWith("http.server"))
    expect(request).toBeDefined()
    // The service's span sits inside the request's.
    const ancestors = new Set<string>()
    for (
      let at: Span | undefined = charge;
      at?.parentSpanId;
      at = trace.find((s) => s.spanId === at!.parentSpanId)
    )
      ancestors.add(at.parentSpanId)
    expect(ancestors.has(request!.spanId)).toBe(true)
    expect(trace.some((s) => s.name.startsWith("sql."))).toBe(true)
    expect(attribute(charge, "laari.environment")).toBe("test")
  })
})
