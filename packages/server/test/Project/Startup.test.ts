/**
 * Start-up failures of configuration: one line saying what to do, no stack, exit
 * status 78 (`Startup.ConfigExitCode`), and with several processes no restart loop. Real service
 * processes; the database that does not exist needs PostgreSQL (DATABASE_URL names the server).
 */
import { mkdtempSync, readdirSync, rmSync } from "node:fs"
import * as Net from "node:net"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import { Cause, Effect, Exit, Scope } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import * as Startup from "../../src/Startup.js"
import * as ServerProcess from "../support/ServerProcess.js"
import * as TestDatabase from "../support/TestDatabase.js"
import * as TestServer from "../support/TestServer.js"

const databaseUrl = process.env.DATABASE_URL
if (databaseUrl === undefined)
  console.warn("Startup.test: DATABASE_URL is not set: the missing PostgreSQL database case is SKIPPED")

const stacks = /\n\s+at |ServeError|SqlError|_tag/

/** What the process wrote, once it has exited. */
const failedStart = async (env: Record<string, string>, port?: number) => {
  // Its own data folder: the operator token is written before the database is opened.
  const own = mkdtempSync(Path.join(tmpdir(), "laari-startup-"))
  const server = await ServerProcess.spawnServer({
    env: { LAARI_DATA_DIR: own, ...env },
    ...(port === undefined ? {} : { port })
  })
  const exit = await Promise.race([
    server.exited,
    new Promise<"running">((r) => setTimeout(() => r("running"), 240_000))
  ])
  server.kill()
  rmSync(own, { recursive: true, force: true })
  return { exit, stdout: server.stdout(), stderr: server.stderr() }
}

const occupied: Array<Net.Server> = []
afterAll(() => {
  for (const s of occupied) s.close()
})

describe("start-up errors of configuration", { timeout: 300_000 }, () => {
  it("a port in use: one line naming it and PORT, before the database is opened", async () => {
    const port = await ServerProcess.freePort()
    const holder = Net.createServer()
    occupied.push(holder)
    await new Promise<void>((r) => holder.listen(port, r))
    const dataDir = mkdtempSync(Path.join(tmpdir(), "laari-port-"))
    const run = await failedStart({ LAARI_DATA_DIR: dataDir }, port)
    // Said before the database was opened (and migrated): nothing was written to the data folder.
    const written = readdirSync(dataDir)
    rmSync(dataDir, { recursive: true, force: true })
    expect(written).toEqual([])
    expect(run.exit).toEqual({ code: 78, signal: null })
    expect(run.stderr).toBe(`laari: ${Startup.portInUse(port)}\n`)
    expect(run.stderr).toContain(`port ${port}`)
    expect(run.stderr).toContain("PORT=")
  })

  it("PostgreSQL unreachable: one line, exit 78", async () => {
    const port = await ServerProcess.freePort()
    const run = await failedStart({
      DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/laari`,
      LAARI_PROCESSES: "1"
    })
    expect(run.exit).toEqual({ code: 78, signal: null })
    expect(run.stderr).toBe(
      `laari: cannot reach PostgreSQL at 127.0.0.1:${port} (ECONNREFUSED): is PostgreSQL running there? Check DATABASE_URL\n`
    )
  })

  it("PostgreSQL unreachable, with two processes: the error is the first line of the output and the only one", async () => {
    const port = await ServerProcess.freePort()
    const run = await failedStart({
      DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/laari`,
      LAARI_PROCESSES: "2"
    })
    expect(run.exit).toEqual({ code: 78, signal: null })
    expect(run.stdout).toBe("")
    expect(run.stderr).toBe(
      `laari: cannot reach PostgreSQL at 127.0.0.1:${port} (ECONNREFUSED): is PostgreSQL running there? Check DATABASE_URL\n`
    )
  })

  it.skipIf(databaseUrl === undefined)(
    "a database that does not exist, with two processes: one line with the createdb to run, and no restart",
    async () => {
      const url = new URL(databaseUrl!)
      const name = `laari_missing_${process.pid}`
      url.pathname = `/${name}`
      const run = await failedStart({ DATABASE_URL: url.toString(), LAARI_PROCESSES: "2" })
      expect(run.exit).toEqual({ code: 78, signal: null })
      expect(run.stderr).toBe(
        `laari: database "${name}" does not exist: create it with createdb -h ${url.hostname} -p ${url.port || "5432"} -U ${decodeURIComponent(url.username) || "postgres"} ${name}, or name another in DATABASE_URL\n`
      )
      expect(run.stderr).not.toContain("starting another")
      // Alone: nothing before it, on either stream.
      expect(run.stdout).toBe("")
    }
  )

  it("a host list with an unknown target_session_attrs, with two processes: one line, exit 78, no restart", async () => {
    const run = await failedStart({
      DATABASE_URL: "postgres://app:secret@127.0.0.1:1,127.0.0.1:2/laari?target_session_attrs=read-mostly",
      LAARI_PROCESSES: "2"
    })
    expect(run.exit).toEqual({ code: 78, signal: null })
    expect(run.stderr).toBe(
      "laari: DATABASE_URL cannot be used: target_session_attrs=read-mostly is unknown: use read-write, primary or any\n"
    )
    expect(run.stderr).not.toContain("starting another")
    expect(run.stdout).not.toMatch(stacks)
  })

  it("explains a refused password and user, and leaves other failures alone", () => {
    const pg = (code: string, message: string) =>
      Cause.fail({ _tag: "SqlError", message: "PgClient: Failed to connect", cause: { code, message } })
    const target = { port: 4000, databaseUrl: "postgres://app:secret@db.internal:6543/laari" }
    expect(Startup.explain(pg("28P01", "password authentication failed"), target)).toBe(
      'PostgreSQL at db.internal:6543 refused the password of user "app": correct it in DATABASE_URL'
    )
    expect(Startup.explain(pg("28000", 'role "app" does not exist'), target)).toContain(
      'refused user "app" (role "app" does not exist)'
    )
    expect(Startup.explain(pg("3D000", "x"), target)).toContain(
      "createdb -h db.internal -p 6543 -U app laari"
    )
    expect(Startup.explain(pg("3D000", "x"), target)).not.toContain("secret")
    expect(Startup.explain(Cause.die(new Error("boom")), target)).toBeUndefined()
    expect(Startup.explain(pg("3D000", "x"), { port: 4000, databaseUrl: undefined })).toBeUndefined()
  })
})

/**
 * `/readyz` means started: on PostgreSQL it answered `200` seconds before the demo
 * merchant was seeded. Polled from the moment the port opens, every `200` must find the seed done.
 */
describe.skipIf(databaseUrl === undefined)("/readyz on PostgreSQL", { timeout: 300_000 }, () => {
  for (const processes of ["1", "2"])
    it(`with ${processes} process(es): no 200 before the demo merchant is seeded`, async () => {
      const scope = Effect.runSync(Scope.make())
      const url = await Effect.runPromise(Scope.extend(TestDatabase.createDatabase(databaseUrl!), scope))
      const server = await ServerProcess.spawnServer({
        env: { DATABASE_URL: url, LAARI_PROCESSES: processes, LAARI_OPS_TOKEN: TestServer.OpsToken }
      })
      const api = TestServer.client(server.baseUrl)
      try {
        const deadline = Date.now() + 180_000
        const seen: Array<number> = []
        let checked = 0
        // Enough 200s, on new connections, to reach both processes.
        while (checked < 6 && Date.now() < deadline) {
          const status = await fetch(`${server.baseUrl}/readyz`, {
            headers: { connection: "close" },
            signal: AbortSignal.timeout(5_000)
          }).then(
            (r) => r.status,
            () => 0
          )
          if (seen.at(-1) !== status) seen.push(status)
          if (status === 200) {
            checked++
            expect(server.stdout()).toContain("Seeded the demo merchant")
            const merchants = await api.ops("GET", "/ops/merchants")
            expect(merchants.status).toBe(200)
            expect(merchants.text).toContain("Demo Cafe")
          } else await new Promise((r) => setTimeout(r, 10))
        }
        expect(checked, `readyz answered ${seen.join(", ")}`).toBe(6)
        // It was polled while listening and not yet ready, or the test proves nothing.
        expect(seen).toContain(503)
      } finally {
        await server.stop()
        await Effect.runPromise(Scope.close(scope, Exit.void))
      }
    })
})
