/**
 * A test server on a fresh PostgreSQL database, optionally reached through a TCP proxy to stage outages.
 * Needs `DATABASE_URL`; the database is dropped on close.
 */
import { Effect, Exit, Scope } from "effect"
import type { ServerConfig } from "../../src/Platform/Config.js"
import * as TcpProxy from "./TcpProxy.js"
import { createDatabase, postgresUrl, withDatabase } from "./TestDatabase.js"
import * as TestServer from "./TestServer.js"

export const startOnPostgres = async (
  options: { readonly proxy?: boolean; readonly config?: Partial<ServerConfig> } = {}
) => {
  const scope = Effect.runSync(Scope.make())
  const url = await Effect.runPromise(Scope.extend(createDatabase(postgresUrl!), scope))
  let proxy: TcpProxy.TcpProxy | undefined
  let databaseUrl = url
  if (options.proxy) {
    const parsed = new URL(url)
    proxy = await Effect.runPromise(
      Scope.extend(TcpProxy.make({ host: parsed.hostname, port: Number(parsed.port || 5432) }), scope)
    )
    parsed.port = String(proxy.port)
    parsed.hostname = "127.0.0.1"
    databaseUrl = withDatabase(parsed.toString(), parsed.pathname.slice(1))
  }
  const server = await TestServer.start({ databaseUrl, config: options.config })
  return {
    server: {
      ...server,
      close: async () => {
        await server.close()
        await Effect.runPromise(Scope.close(scope, Exit.void))
      }
    },
    proxy,
    /** The database itself, not through the proxy: for checks that must work while the proxy is down. */
    directUrl: url
  }
}

/**
 * A whole server over HTTP on each database: embedded PGlite always, PostgreSQL (a fresh database) when
 * DATABASE_URL is set; skipped otherwise, and `TestDatabase` says so.
 */
export const serverBackends: ReadonlyArray<{
  readonly name: "PGlite" | "PostgreSQL"
  readonly skip: boolean
  readonly start: (config?: Partial<ServerConfig>) => Promise<TestServer.LocalTestServer>
}> = [
  { name: "PGlite", skip: false, start: (config) => TestServer.start({ config }) },
  {
    name: "PostgreSQL",
    skip: postgresUrl === undefined,
    start: async (config) => (await startOnPostgres({ config })).server
  }
]

/**
 * A whole server for a suite that is not about the database: on a fresh PostgreSQL database when
 * DATABASE_URL is set (created and migrated in about a second), else on embedded PGlite (whose initdb and
 * migrations take seconds of CPU in WebAssembly).
 */
export const startQuickest = (config?: Partial<ServerConfig>): Promise<TestServer.LocalTestServer> =>
  postgresUrl === undefined
    ? TestServer.start({ config })
    : startOnPostgres({ config }).then((started) => started.server)
