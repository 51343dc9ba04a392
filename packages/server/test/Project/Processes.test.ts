/**
 * `LAARI_PROCESSES`: how many processes run, and (on PostgreSQL) several processes on one port
 * serving as one service: a change made through one is seen by the others, and SIGTERM stops them all.
 */
import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import os from "node:os"
import { Effect, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Processes from "../../src/Processes.js"
import * as Turns from "../../src/Background/Turns.js"
import * as F from "../support/Fixtures.js"
import * as ServerCluster from "../support/ServerCluster.js"
import * as ServerProcess from "../support/ServerProcess.js"
import * as TestDatabase from "../support/TestDatabase.js"
import * as TestServer from "../support/TestServer.js"

describe("Processes.plan", () => {
  const pg = { DATABASE_URL: "postgres://db/laari" }
  it("defaults to the number of cores on PostgreSQL, and takes LAARI_PROCESSES", () => {
    expect(Processes.plan(pg)).toEqual({ processes: os.availableParallelism() })
    expect(Processes.plan({ ...pg, LAARI_PROCESSES: "3" })).toEqual({ processes: 3 })
    expect(Processes.plan({ ...pg, LAARI_PROCESSES: "1" })).toEqual({ processes: 1 })
  })
  it("runs one process on PGlite and on the manual clock, and says why", () => {
    expect(Processes.plan({ LAARI_PROCESSES: "4" })).toMatchObject({ processes: 1, reason: /PGlite/ })
    expect(Processes.plan({ ...pg, LAARI_PROCESSES: "4", LAARI_CLOCK: "manual" })).toMatchObject({
      processes: 1,
      reason: /manual clock/
    })
  })
  it("refuses what is not a whole number of processes", () => {
    for (const bad of ["0", "-1", "1.5", "two"])
      expect(() => Processes.plan({ ...pg, LAARI_PROCESSES: bad })).toThrow(/LAARI_PROCESSES/)
  })
})

describe.skipIf(TestDatabase.postgresUrl === undefined)("three processes on one port (PostgreSQL)", () => {
  const scope = Effect.runSync(Scope.make())
  let server: ServerProcess.ServerProcess

  beforeAll(async () => {
    server = await ServerCluster.start({ url: TestDatabase.postgresUrl!, scope, processes: 3 })
  }, 90_000)

  afterAll(async () => {
    await server?.stop()
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }, 30_000)

  it("serves from three processes; a feature enabled through one holds in all at once", async () => {
    expect(server.stdout()).toContain("all 3 processes listening")
    const workers = execFileSync("ps", ["-o", "pid=", "--ppid", String(server.pid)])
      .toString()
      .trim()
      .split(/\s+/)
    expect(workers).toHaveLength(3)
    // The demo merchant is seeded once, by the first process.
    expect(server.stdout().match(/Seeded the demo merchant/g)).toHaveLength(1)

    const api = TestServer.client(server.baseUrl)
    const merchant = await F.merchant(api as TestServer.TestServer)
    // A new connection per request: the primary hands connections to the processes in turn.
    const live = () =>
      api.request("POST", "/mandates", {
        key: merchant.live,
        headers: { connection: "close" },
        body: F.mandateBody()
      })
    // Every process has the merchant cached without the feature.
    for (let i = 0; i < 6; i++) expect((await live()).status).toBe(403)
    const enabled = await api.ops("POST", `/ops/merchants/${merchant.id}/features`, { mandates_live: true })
    expect(enabled.status, enabled.text).toBe(200)
    // The change is announced on commit; within moments no process remembers the old merchant.
    let statuses: Array<number> = []
    for (let attempt = 0; attempt < 20; attempt++) {
      statuses = []
      for (let i = 0; i < 6; i++) statuses.push((await live()).status)
      if (statuses.every((s) => s === 201)) break
      await new Promise((r) => setTimeout(r, 50))
    }
    expect(statuses).toEqual([201, 201, 201, 201, 201, 201])
  })

  it("gives each process its own slot for the pollers' turns, and a young generation of 16 MiB semi-spaces", () => {
    const workers = execFileSync("ps", ["-o", "pid=", "--ppid", String(server.pid)])
      .toString()
      .trim()
      .split(/\s+/)
    const slots = workers.map((pid) => {
      const env = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0")
      const args = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")
      expect(args).toContain("--max-semi-space-size=16")
      expect(args).toContain("--heap-growing-percent=100")
      expect(env).toContain("MALLOC_MMAP_THRESHOLD_=131072")
      return env.find((e) => e.startsWith(`${Turns.SlotEnv}=`))
    })
    expect(slots.sort()).toEqual([0, 1, 2].map((i) => `${Turns.SlotEnv}=${i}/3`))
  })

  it("stops every process on SIGTERM and exits 0", async () => {
    const workers = execFileSync("ps", ["-o", "pid=", "--ppid", String(server.pid)])
      .toString()
      .trim()
      .split(/\s+/)
      .map(Number)
    const exit = await server.stop()
    expect(exit).toEqual({ code: 0, signal: null })
    for (const pid of workers) expect(() => process.kill(pid, 0)).toThrow()
  }, 40_000)
})
