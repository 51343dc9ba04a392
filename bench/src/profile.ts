/**
 * Where a charge's CPU goes: laari on PostgreSQL under the spread charge workload, each server
 * process under `node --cpu-prof`, and the samples of the measured window only (not start-up, seeding or
 * warm-up) summed by package and by function, per charge.
 *
 *   pnpm bench:profile                        # 2 processes, 10 s; the unbundled dist, so packages show
 *   PROFILE_SECONDS=20 LAARI_PROCESSES=1 PROFILE_HOT=1 pnpm bench:profile   # all on one mandate
 *   PROFILE_ENTRY=packages/server/build/laari-server.js pnpm bench:profile # what `pnpm start` runs
 *   PROFILE_PGLITE=1 pnpm bench:profile       # on PGlite in a fresh data directory (one process)
 *   PROFILE_RENEWALS=1 pnpm bench:profile     # renewals.ts's run instead of charges (BENCH_RENEWALS etc.)
 *   PROFILE_CONNECTOR=1 pnpm bench:profile    # charges through the wallet connector to the reference core
 *
 * The profile's timestamps and `process.hrtime` read the same monotonic clock, which is what lets the
 * window be cut out of a profile that covers the process's whole life. The `.cpuprofile` files stay in
 * bench/results/profile (open them in Chrome's DevTools).
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import os from "node:os"
import path from "node:path"
import { ensureBuilt, server } from "../../scripts/ensure-built.mjs"
import pg from "pg"
import { connectorEnv, seedConnector, startCore } from "./connectorParts.js"
import * as Databases from "./Databases.js"
import * as Load from "./Load.js"
import * as Renewals from "./renewals.js"
import * as Spawn from "./Spawn.js"
import * as Workload from "./Workload.js"

interface Node {
  readonly id: number
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
  readonly children?: ReadonlyArray<number>
}

interface Profile {
  readonly nodes: ReadonlyArray<Node>
  readonly startTime: number
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

const seconds = Number(process.env.PROFILE_SECONDS ?? 10)
const pglite = process.env.PROFILE_PGLITE === "1"
const processes = pglite ? 1 : Number(process.env.LAARI_PROCESSES ?? 2)
const hot = process.env.PROFILE_HOT === "1"
const renewals = process.env.PROFILE_RENEWALS === "1"
const connector = process.env.PROFILE_CONNECTOR === "1"
const entry = process.env.PROFILE_ENTRY ?? "packages/server/dist/main.js"
const top = Number(process.env.PROFILE_TOP ?? 40)
const dir = path.join(Spawn.root, "bench/results/profile")

/** Which library (or part of node, or of laari) a frame's code belongs to. */
const owner = (frame: Node["callFrame"]): string => {
  const { url, functionName } = frame
  if (url === "") return functionName.startsWith("(") ? functionName : "(native)"
  if (url.startsWith("node:")) return url.split("/")[0]!
  const at = url.lastIndexOf("node_modules/")
  if (at >= 0) {
    const rest = url.slice(at + "node_modules/".length).split("/")
    return rest[0]!.startsWith("@") ? `${rest[0]}/${rest[1]}` : rest[0]!
  }
  const laari = /packages\/([^/]+)\/(?:dist|src|build)\/(.*)$/.exec(url)
  if (laari !== null) return `laari ${laari[1]}/${laari[2]!.split("/").slice(0, -1).join("/") || "."}`
  return url
}

/** A frame's file, short: from its package's folder on, or from the repository's `packages/`. */
const where = (frame: Node["callFrame"]): string => {
  if (frame.url === "") return ""
  const at = frame.url.lastIndexOf("node_modules/")
  const file =
    at >= 0
      ? frame.url.slice(at + "node_modules/".length).replace(/\/(dist|build)\/(esm|cjs)?\/?/, "/")
      : frame.url.replace(/^.*\/packages\//, "").replace(/^file:\/\//, "")
  return `${file}:${frame.lineNumber + 1}`
}

/** Self time (µs) by owner and by function, of the samples between `from` and `to` (µs, monotonic). */
const summarize = (profile: Profile, from: number, to: number) => {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const owners = new Map<string, number>()
  const functions = new Map<string, number>()
  const inclusive = new Map<string, number>()
  const parent = new Map<number, number>()
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
  const label = (f: Node["callFrame"]) => `${f.functionName || "(anonymous)"} ${where(f)}`
  let t = profile.startTime
  let total = 0
  let idle = 0
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i]!
    // A sample's time is the interval that ends at the next one.
    const dt = profile.timeDeltas[i + 1] ?? 0
    if (t < from || t > to) continue
    const node = byId.get(profile.samples[i]!)!
    const f = node.callFrame
    if (f.functionName === "(idle)") {
      idle += dt
      continue
    }
    total += dt
    const o = owner(f)
    owners.set(o, (owners.get(o) ?? 0) + dt)
    const name = label(f)
    functions.set(name, (functions.get(name) ?? 0) + dt)
    // Each function on the stack once, however deep it recurses.
    const seen = new Set<string>()
    for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
      const l = label(byId.get(id)!.callFrame)
      if (seen.has(l)) continue
      seen.add(l)
      inclusive.set(l, (inclusive.get(l) ?? 0) + dt)
    }
  }
  return { total, idle, owners, functions, inclusive }
}

/** CPU seconds (user + system) of the processes `match` picks, from /proc (Linux only). */
const cpuOf = (match: (pid: number, cmdline: string, ppid: number) => boolean): number => {
  let ticks = 0
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry)
    if (!Number.isInteger(pid)) continue
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ")
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      if (match(pid, cmdline, Number(fields[1]))) ticks += Number(fields[11]) + Number(fields[12])
    } catch {
      // gone meanwhile
    }
  }
  return ticks / 100
}

const add = (into: Map<string, number>, from: Map<string, number>) => {
  for (const [k, v] of from) into.set(k, (into.get(k) ?? 0) + v)
}

rmSync(dir, { recursive: true, force: true })
mkdirSync(dir, { recursive: true })
ensureBuilt(server)
const databases = Databases.make(
  process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres",
  process.env.BENCH_DB_PREFIX ?? "laari_"
)
const url = await databases.fresh("profile")
/** CPU of the server processes (the supervisor `serverPid` and its children) and their backends. */
const cpu = (serverPid: number) => ({
  server: cpuOf((pid, _, ppid) => pid === serverPid || ppid === serverPid),
  postgres: cpuOf((_, cmdline) => cmdline.startsWith("postgres: ") && cmdline.includes(` ${database} `)),
  self: process.cpuUsage()
})
const database = new URL(url).pathname.slice(1)
const nodeArgs = ["--cpu-prof", "--cpu-prof-dir", dir]

/** The charge workload for `seconds`, after 5 s of warm-up; what it did, and the window measured. */
const measureCharges = async () => {
  const liteDir = pglite ? mkdtempSync(path.join(os.tmpdir(), "laari-profile-pglite-")) : undefined
  // The reference core on its own database, not profiled: only laari's CPU is looked at.
  const core = connector ? await startCore(await databases.fresh("profile_core")) : undefined
  if (core !== undefined) await core.openWallet("laari-fees", 0)
  const started = await Spawn.start(
    entry,
    {
      ...(liteDir === undefined ? { DATABASE_URL: url } : { LAARI_DATA_DIR: liteDir }),
      ...(core === undefined ? {} : connectorEnv(core.base, core, 1_000)),
      LAARI_RATE_LIMIT: "0",
      LAARI_OPS_TOKEN: Workload.OpsToken,
      LAARI_PROCESSES: String(processes)
    },
    { nodeArgs, ...(processes > 1 ? { readyLine: /all \d+ processes listening/ } : {}) }
  )
  const client = Load.client(started.base)
  const targets = await (async () => {
    if (core === undefined) return Workload.seed(client, 50, 4)
    const db = new pg.Client({ connectionString: url })
    await db.connect()
    try {
      return await seedConnector(started.base, db, core, 50, 4)
    } finally {
      await db.end()
    }
  })()
  const shot = Workload.charge(client, hot ? targets.slice(0, 1) : targets)
  await Load.closedLoop({ concurrency: 32, seconds: 5, shot })
  const before = cpu(started.child.pid!)
  const from = Number(process.hrtime.bigint() / 1000n)
  const run = await Load.closedLoop({ concurrency: 32, seconds, shot })
  const to = Number(process.hrtime.bigint() / 1000n)
  const after = cpu(started.child.pid!)
  client.close()
  await started.stop()
  await core?.stop()
  if (liteDir !== undefined) rmSync(liteDir, { recursive: true, force: true })
  const done = run.requests - run.failures
  return {
    done,
    before,
    after,
    from,
    to,
    title: `${hot ? "hot mandate" : "spread"}${connector ? " through the wallet connector" : ""}: ${run.perSecond}/s (${done} charges, ${run.failures} failed), p50 ${run.latencyMs.p50} ms, p99 ${run.latencyMs.p99} ms; ${processes} processes`
  }
}

/** `renewals.ts`'s run, measured from the renewing processes listening to the last renewal paid. */
const measureRenewals = async () => {
  let pid = 0
  let before = cpu(0)
  let after = before
  let from = 0
  let to = 0
  const result = await Renewals.run(url, {
    nodeArgs,
    started: (p) => {
      pid = p
      before = cpu(pid)
      from = Number(process.hrtime.bigint() / 1000n)
    },
    finished: () => {
      to = Number(process.hrtime.bigint() / 1000n)
      after = cpu(pid)
    }
  })
  return {
    done: result.paid,
    before,
    after,
    from,
    to,
    title: `renewals: ${result.paid} of ${result.subscriptions} in ${result.seconds} s (${result.renewalsPerSecond}/s) across ${result.payers} payers; ${result.processes} processes; exactly once ${result.exactlyOnce}`
  }
}

const measured = renewals ? await measureRenewals() : await measureCharges()
const load = os.loadavg()
await databases.dropAll()

const owners = new Map<string, number>()
const functions = new Map<string, number>()
const inclusive = new Map<string, number>()
let total = 0
let idle = 0
for (const file of readdirSync(dir).filter((f) => f.endsWith(".cpuprofile"))) {
  const s = summarize(
    JSON.parse(readFileSync(path.join(dir, file), "utf8")) as Profile,
    measured.from,
    measured.to
  )
  // The supervisor (primary) is idle: its profile adds nothing but its own few samples.
  total += s.total
  idle += s.idle
  add(owners, s.owners)
  add(functions, s.functions)
  add(inclusive, s.inclusive)
}
const { before, after } = measured
const charges = measured.done
const used = {
  server: after.server - before.server,
  postgres: after.postgres - before.postgres,
  load: (after.self.user + after.self.system - before.self.user - before.self.system) / 1e6
}
const unit = renewals ? "renewal" : "charge"
const perCharge = (us: number) => `${(us / charges).toFixed(0)} µs`
const pct = (us: number) => `${((100 * us) / total).toFixed(1)}%`
const table = (m: Map<string, number>, n: number) =>
  [...m.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, v]) => `  ${pct(v).padStart(6)}  ${perCharge(v).padStart(8)}  ${k}`)
    .join("\n")
const report = [
  `${measured.title}; load ${load.map((l) => l.toFixed(1)).join(" ")}`,
  `CPU per ${unit} from /proc: server processes ${perCharge(used.server * 1e6)}, their PostgreSQL backends ${perCharge(used.postgres * 1e6)}, this process ${perCharge(used.load * 1e6)}`,
  `profile samples in the server processes: ${(total / 1e6).toFixed(2)} s busy, ${(idle / 1e6).toFixed(2)} s idle; ${perCharge(total)} per ${unit}`,
  "by package (self time):",
  table(owners, 25),
  `by function (self time, top ${top}):`,
  table(functions, top),
  `by function with what it calls (top ${2 * top}; the run loops of fibers include everything):`,
  table(inclusive, Number(process.env.PROFILE_INCLUSIVE ?? 2 * top))
].join("\n")
writeFileSync(path.join(dir, "summary.txt"), `${report}\n`)
console.log(report)
