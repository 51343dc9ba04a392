/**
 * What Effect's runtime does per HTTP charge: one server process on PostgreSQL under the spread
 * charge workload, with `OpsCount.mjs` loaded, counted over the measured window only. Prints, per charge:
 * FiberRef changes by FiberRef, fibers started, the services each context change added or replaced, and
 * the statements sent through `@effect/sql`'s `Statement` (each with its own span and Scope). The CPU
 * profile (`bench:profile`) spreads these over Effect's run loop; counting names them.
 *
 *   pnpm bench:ops                 # 5 s, 8 in flight
 *   OPS_SECONDS=10 pnpm bench:ops
 *   OPS_PGLITE=1 pnpm bench:ops    # on PGlite, in a fresh data directory
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import os from "node:os"
import path from "node:path"
import { ensureBuilt, server } from "../../scripts/ensure-built.mjs"
import * as Databases from "./Databases.js"
import * as Load from "./Load.js"
import * as Spawn from "./Spawn.js"
import * as Workload from "./Workload.js"

const seconds = Number(process.env.OPS_SECONDS ?? 5)
const pglite = process.env.OPS_PGLITE === "1"
const dataDir = pglite ? mkdtempSync(path.join(os.tmpdir(), "laari-ops-pglite-")) : undefined
const file = path.join(os.tmpdir(), `laari-ops-${process.pid}.json`)

ensureBuilt(server)
const databases = Databases.make(
  process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres",
  process.env.BENCH_DB_PREFIX ?? "laari_"
)
const started = await Spawn.start(
  "packages/server/dist/main.js",
  {
    ...(pglite
      ? { DATABASE_URL: undefined, LAARI_DATA_DIR: dataDir }
      : { DATABASE_URL: await databases.fresh("ops") }),
    LAARI_RATE_LIMIT: "0",
    LAARI_OPS_TOKEN: Workload.OpsToken,
    LAARI_PROCESSES: "1",
    LAARI_OPS_COUNT_FILE: file
  },
  { nodeArgs: ["--import", path.join(Spawn.root, "bench/src/OpsCount.mjs")] }
)
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const client = Load.client(started.base)
const shot = Workload.charge(client, await Workload.seed(client, 50, 4))
await Load.closedLoop({ concurrency: 8, seconds: 2, shot })
started.child.kill("SIGUSR1")
await pause(200)
const run = await Load.closedLoop({ concurrency: 8, seconds, shot })
started.child.kill("SIGUSR2")
await pause(500)
client.close()
await started.stop()
await databases.dropAll()
if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true })

const charges = run.requests - run.failures
if (charges === 0 || run.failures > 0) throw new Error(`${run.failures} of ${run.requests} charges failed`)
const counted = JSON.parse(readFileSync(file, "utf8")) as Record<string, Record<string, number>>
rmSync(file)
console.log(
  `${charges} charges at ${run.perSecond}/s, 1 process on ${pglite ? "PGlite" : "PostgreSQL"}; per charge:`
)
for (const [title, key] of [
  ["runtime", "counts"],
  ["services a context change added or replaced", "contextKeys"],
  ["statements through @effect/sql's Statement", "statements"]
] as const) {
  console.log(`${title}:`)
  for (const [name, n] of Object.entries(counted[key]!)) {
    if (n / charges >= 0.05) console.log(`  ${(n / charges).toFixed(2).padStart(7)}  ${name}`)
  }
}
