/**
 * A real laari server for HTTP tests: the whole app on an ephemeral port, on embedded PGlite or on a
 * fresh PostgreSQL database, with a manual clock and a known operator token. Requests go over real HTTP.
 */
import { HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import type * as SqlClient from "@effect/sql/SqlClient"
import { type Effect, Layer, ManagedRuntime } from "effect"
import * as Config from "../../src/Platform/Config.js"
import type { ServerConfig } from "../../src/Platform/Config.js"
import * as Edge from "../../src/Http/Edge.js"
import * as Server from "../../src/Server.js"

export const OpsToken = "ops_test_token_0123456789"

export interface Response<T = any> {
  readonly status: number
  readonly headers: Headers
  readonly body: T
  readonly text: string
}

export interface RequestOptions {
  readonly key?: string | undefined
  readonly body?: unknown
  /** Sent as is instead of JSON-encoding `body`. */
  readonly rawBody?: string
  readonly headers?: Record<string, string>
}

export interface TestServer {
  readonly baseUrl: string
  readonly request: <T = any>(method: string, path: string, options?: RequestOptions) => Promise<Response<T>>
  readonly ops: <T = any>(method: string, path: string, body?: unknown) => Promise<Response<T>>
  readonly close: () => Promise<void>
}

/** A server in this process: its database can be reached directly, to stage what HTTP cannot. */
export interface LocalTestServer extends TestServer {
  readonly sql: <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) => Promise<A>
}

export const start = async (
  options: { readonly databaseUrl?: string | undefined; readonly config?: Partial<ServerConfig> } = {}
): Promise<LocalTestServer> => {
  const config: ServerConfig = {
    port: 0,
    databaseUrl: options.databaseUrl,
    dataDir: undefined,
    baseUrl: "http://laari.test",
    checkoutUrl: "http://pay.laari.test",
    opsToken: OpsToken,
    clock: "manual",
    maxBodyBytes: Config.defaults.maxBodyBytes,
    // Off unless a test is about it: the suites fire bursts that are not what rate limits are for.
    rateLimit: 0,
    // The suites deliver to local receivers; WebhookTargets.test holds the default (off).
    webhookAllowPrivate: true,
    ...options.config
  }
  const runtime = ManagedRuntime.make(
    Server.appLayer(config).pipe(
      Layer.provideMerge(
        NodeHttpServer.layer(() => Edge.createServer({ maxBodyBytes: config.maxBodyBytes }), { port: 0 })
      )
    )
  )
  const server = await runtime.runPromise(HttpServer.HttpServer)
  const address = server.address
  if (address._tag !== "TcpAddress") throw new Error("expected a TCP address")
  const baseUrl = `http://127.0.0.1:${address.port}`

  return { ...client(baseUrl), sql: (effect) => runtime.runPromise(effect), close: () => runtime.dispose() }
}

/** Requests to a laari server at `baseUrl` (in this process or another), the operator's with `OpsToken`. */
export const client = (baseUrl: string): Omit<TestServer, "close"> => {
  const request = async <T>(method: string, path: string, o: RequestOptions = {}): Promise<Response<T>> => {
    const headers: Record<string, string> = { ...o.headers }
    if (o.key !== undefined) headers.authorization = `Bearer ${o.key}`
    let body: string | undefined
    if (o.rawBody !== undefined) body = o.rawBody
    else if (o.body !== undefined) body = JSON.stringify(o.body)
    if (body !== undefined && headers["content-type"] === undefined)
      headers["content-type"] = "application/json"
    const res = await fetch(`${baseUrl}${path}`, { method, headers, body })
    const text = await res.text()
    let parsed: unknown = text
    try {
      parsed = text.length > 0 ? JSON.parse(text) : undefined
    } catch {
      // not JSON: keep the text
    }
    return { status: res.status, headers: res.headers, body: parsed as T, text }
  }
  return {
    baseUrl,
    request,
    ops: (method, path, body) => request(method, path, { key: OpsToken, body })
  }
}
