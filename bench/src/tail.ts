/**
 * Tail latency and memory, one server at a time:
 *
 * - the spread workload (closed loop, 32 in flight), then half its rate (open loop) with the latency
 *   timeline (`Timeline.ts`) lined up with the server's own log of stalls (`LAARI_STALL_LOG`);
 * - `BENCH_RSS_RUNS=5`: then that many 60 s spread runs (`BENCH_RSS_SECONDS`), each process's RSS after each.
 *
 *   pnpm bench:tail                                   # this tree's server
 *   BENCH_SERVER=/work/wt/x/packages/server/dist/bin.js pnpm bench:tail   # another build, same workload
 *   BENCH_HALF_RATE=150 pnpm bench:tail               # a fixed open-loop rate (comparing two builds)
 *
 * Prints one JSON line (the last) and writes `bench/results/tail-<label>.json` (`BENCH_LABEL`).
 */
import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import os from "node:os"
import path from "node:path"
import * as Databases from "./Databases.js"
import * as Load from "./Load.js"
import * as Smoke from "./Smoke.js"
import * as Spawn from "./Spawn.js"
import * as Timeline from "./Timeline.js"
import * as Workload from "./Workload.js"

const admin = process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres"
const seconds = Number(process.env.BENCH_SECONDS ?? Smoke.size(20, 2))
const processes = Number(process.env.LAARI_PROCESSES || Smoke.size(os.availableParallelism(), 2))
const rssRuns = Number(process.env.BENCH_RSS_RUNS ?? 0)
const rssSeconds = Number(process.env.BENCH_RSS_SECONDS ?? 60)
const label = process.env.BENCH_LABEL ?? "tail"
const seeded = Smoke.size({ merchants: 50, mandates: 4 }, { merchants: 4, mandates: 2 })
const databases = Databases.make(admin, process.env.BENCH_DB_PREFIX ?? "laari_")
const log = (line: string) => console.error(`[tail] ${line}`)

/** RSS in MiB of each process the server's supervisor started (or of the server itself, alone). */
export const rssMiB = (pid: number): Array<number> => {
  const read = (args: Array<string>) =>
    execFileSync("ps", ["-o", "rss=", ...args])
      .toString()
      .split("\n")
      .filter((l) => l.trim() !== "")
      .map((l) => Math.round(Number(l.trim()) / 1024))
  try {
    return read(["--ppid", String(pid)])
  } catch {
    return read(["-p", String(pid)])
  }
}

const stallDir = mkdtempSync(path.join(os.tmpdir(), "laari-stalls-"))
const url = await databases.fresh("tail")
const env = { DATABASE_URL: url, LAARI_STALL_LOG: stallDir }
const server =
  process.env.BENCH_SERVER === undefined
    ? await Spawn.laari(env, { processes })
    : await Spawn.start(
        process.env.BENCH_SERVER,
        {
          LAARI_RATE_LIMIT: "0",
          LAARI_OPS_TOKEN: Workload.OpsToken,
          LAARI_PROCESSES: String(processes),
          ...env
        },
        processes > 1 ? { readyLine: /all \d+ processes listening/ } : {}
      )
try {
  const client = Load.client(server.base)
  const targets = await Workload.seed(client, seeded.merchants, seeded.mandates)
  const shoot = Workload.charge(client, targets)
  await Load.closedLoop({ concurrency: 32, seconds: Math.min(5, seconds / 4), shot: shoot })
  const spread = await Load.closedLoop({ concurrency: 32, seconds, shot: shoot })
  const rate = Number(process.env.BENCH_HALF_RATE ?? spread.perSecond / 2)
  log(`${label}: spread ${spread.perSecond}/s; half rate at ${rate}/s for ${seconds} s`)
  // Only the half-rate run's events: those of the seeding and the spread run are dropped.
  rmSync(stallDir, { recursive: true, force: true })
  mkdirSync(stallDir)
  const timeline = Timeline.make()
  const half = await Load.openLoop({ rate, seconds, shot: timeline.record(shoot) })
  // The processes write their logs every second.
  await new Promise((r) => setTimeout(r, 1_500))
  const report = timeline.report({ stallDir, print: log })
  const rss: Array<Array<number>> = [rssMiB(server.child.pid!)]
  for (let i = 0; i < rssRuns; i++) {
    const run = await Load.closedLoop({ concurrency: 32, seconds: rssSeconds, shot: shoot })
    rss.push(rssMiB(server.child.pid!))
    log(
      `${label}: RSS after ${rssSeconds} s spread run ${i + 1} (${run.perSecond}/s): ${rss.at(-1)!.join(", ")} MiB`
    )
  }
  client.close()
  const result = {
    label,
    processes,
    seconds,
    spread,
    rate,
    half,
    latencyMs: report.overall,
    timeline: report,
    rssMiB: rss
  }
  const dir = path.join(Spawn.root, Smoke.size("bench/results", "bench/results/smoke"))
  mkdirSync(dir, { recursive: true })
  writeFileSync(path.join(dir, `tail-${label}.json`), `${JSON.stringify(result, null, 2)}\n`)
  const { timeline: _, ...brief } = result
  console.log(
    JSON.stringify({
      ...brief,
      timeline: { attribution: report.attribution, serverTotals: report.serverTotals }
    })
  )
} finally {
  await server.stop()
  rmSync(stallDir, { recursive: true, force: true })
  if (Smoke.on) await databases.dropAll()
}
