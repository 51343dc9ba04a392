/**
 * Several server processes on one port (`LAARI_PROCESSES`), as a host runs them, on a fresh PostgreSQL
 * database: for the tests of what spans processes (the access log, `/metrics`, the supervisor).
 */
import { Effect, Scope } from "effect"
import * as ServerProcess from "./ServerProcess.js"
import * as TestDatabase from "./TestDatabase.js"
import * as TestServer from "./TestServer.js"

/**
 * `processes` server processes on one port (`LAARI_PROCESSES`) on a fresh PostgreSQL database at `url`
 * (dropped when `scope` closes), with the test operator token and no rate limit unless `env` says
 * otherwise; resolves once the supervisor says all of them listen.
 */
export const start = async (options: {
  readonly url: string
  readonly scope: Scope.Scope
  readonly processes: number
  readonly env?: Record<string, string>
}): Promise<ServerProcess.ServerProcess> => {
  const databaseUrl = await Effect.runPromise(
    Scope.extend(TestDatabase.createDatabase(options.url), options.scope)
  )
  const server = await ServerProcess.start({
    env: {
      DATABASE_URL: databaseUrl,
      LAARI_PROCESSES: String(options.processes),
      LAARI_OPS_TOKEN: TestServer.OpsToken,
      LAARI_RATE_LIMIT: "0",
      ...options.env
    }
  })
  const deadline = Date.now() + 90_000
  while (!server.stdout().includes(`all ${options.processes} processes listening`) && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 50))
  return server
}
