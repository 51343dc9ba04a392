/**
 * What the benchmarks share: the whole service in this process on an ephemeral port (embedded PGlite,
 * or PostgreSQL with DATABASE_URL) and a JSON client for it.
 */
import { HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import * as Edge from "@laari/server/Http/Edge"
import * as Server from "@laari/server/Server"
import { Layer, ManagedRuntime } from "effect"

export const opsToken = "ops_bench"
export const databaseUrl = process.env.DATABASE_URL || undefined
export const backend = databaseUrl === undefined ? "pglite" : "postgresql"

export const start = async () => {
  const runtime = ManagedRuntime.make(
    Server.appLayer({
      port: 0,
      databaseUrl,
      dataDir: undefined,
      baseUrl: "http://bench",
      checkoutUrl: "http://bench",
      opsToken,
      clock: "system",
      maxBodyBytes: 1024 * 1024,
      rateLimit: 0,
      // The benchmark's receivers are local.
      webhookAllowPrivate: true
    }).pipe(
      Layer.provideMerge(
        NodeHttpServer.layer(() => Edge.createServer({ maxBodyBytes: 1024 * 1024 }), { port: 0 })
      )
    )
  )
  const server = await runtime.runPromise(HttpServer.HttpServer)
  if (server.address._tag !== "TcpAddress") throw new Error("expected a TCP address")
  const base = `http://127.0.0.1:${server.address.port}`
  const call = async (method: string, path: string, key: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body)
    })
    return { status: res.status, body: (await res.json()) as any }
  }
  return { call, stop: () => runtime.dispose() }
}
