/**
 * `pnpm bench`: the whole benchmark suite in one run, so every ratio compares figures measured side by
 * side on the same machine:
 *
 * - pgbench TPC-B (`-i -s 10`, `-c 16 -j 2 -T <seconds>`), before and after the HTTP runs, averaged;
 * - laari on PostgreSQL in `LAARI_PROCESSES` processes: the spread charge workload (50 merchants x 4
 *   mandates, 32 in flight, a new `Idempotency-Key` each), the same at half its rate (open loop, p99),
 *   and one hot mandate;
 * - the raw `node:http` + `pg` baseline (`bench/baseline/server.ts`) on the same data, as many processes;
 * - renewals (`renewals.ts`), the library (`library.ts`), start-up on a warm PGlite data directory,
 *   charges on PGlite, webhook deliveries (`webhooks.ts`) on both databases, and the quick start
 *   (`quickstart.ts`: a fresh clone installed, built and started, the CLI timed);
 * - refunds beside charges (`refunds.ts`, `refundsLibrary.ts`): over HTTP on PostgreSQL and on PGlite,
 *   and through the library, with the ratios refund/charge;
 * - losing the database primary (`failover.ts`): a pg_auto_failover formation (three nodes,
 *   `BENCH_FAILOVER_NODES=2` for two) and two laari hosts behind HAProxy under charges; `kill -9` of the
 *   primary and `perform switchover` (3 times each, medians; `BENCH_FAILOVER_KILLS`, `_SWITCHOVERS`), to the first 201
 *   again, the 503s, no acknowledged charge lost; charges with synchronous replication against a single
 *   PostgreSQL. Needs pg_autoctl and HAProxy (`scripts/install-ha.sh`) and root; skipped loudly without
 *   them, failing under CI=true;
 * - charges through the wallet connector (`connector.ts`) against the reference core beside the built-in
 *   ledger (rate, ratio, p99 at half rate); then outages (the core unreachable; every other new transfer
 *   lost on the way), pending movements made by charges, and the time until none is pending once it is back.
 *
 * Prints a table and writes `bench/results/suite.json` (and each part's JSON). The rate limit is off
 * (`LAARI_RATE_LIMIT=0`) for every server it starts. A part whose figures are broken (`Check.ts`: 0/s,
 * NaN, a failed request...) makes the run exit non-zero after the table.
 *
 *   pnpm bench                                  # DATABASE_URL: an admin URL (default local postgres)
 *   BENCH_SECONDS=10 BENCH_RENEWALS=20000 pnpm bench
 *   BENCH_ONLY=charges,library pnpm bench       # parts: pgbench charges baseline renewals library startup pglite webhooks quickstart refunds failover connector
 *   BENCH_ONLY=failover pnpm bench:smoke        # one part's smoke
 *   BENCH_ONLY=table pnpm bench                 # the table of what is in bench/results
 *   BENCH_DB_PREFIX=mine_ pnpm bench            # its databases mine_pgbench, mine_charges...: two runs on one server
 *   pnpm bench:smoke                            # BENCH_SMOKE=1: every part, tiny (CI), into bench/results/smoke
 */
import { execFileSync, spawn } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import os from "node:os"
import path from "node:path"
import * as Check from "./Check.js"
import * as Connector from "./connector.js"
import * as Summaries from "./Summaries.js"
import * as Databases from "./Databases.js"
import * as Failover from "./failover.js"
import * as Load from "./Load.js"
import * as Refunds from "./refunds.js"
import * as Renewals from "./renewals.js"
import * as Smoke from "./Smoke.js"
import * as Spawn from "./Spawn.js"
import * as Timeline from "./Timeline.js"
import * as Workload from "./Workload.js"

const admin = process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres"
const seconds = Number(process.env.BENCH_SECONDS ?? Smoke.size(20, 1))
const processes = Number(process.env.LAARI_PROCESSES || Smoke.size(os.availableParallelism(), 2))
const only = process.env.BENCH_ONLY?.split(",")
const runs = (part: string) => only === undefined || only.includes(part)
const results: Record<string, unknown> = {}
const broken: Array<string> = []
/** Merchants, and mandates of each, the charge workloads spread over. */
const seeded = Smoke.size({ merchants: 50, mandates: 4 }, { merchants: 4, mandates: 2 })
const resultsDir = path.join(Spawn.root, Smoke.size("bench/results", "bench/results/smoke"))
const databases = Databases.make(
  admin,
  process.env.BENCH_DB_PREFIX ?? Smoke.size("laari_", `laari_smoke${process.pid}_`)
)
mkdirSync(resultsDir, { recursive: true })

const began = performance.now()
const log = (line: string) =>
  console.error(`[bench] ${((performance.now() - began) / 1000).toFixed(0).padStart(4)} s  ${line}`)

const pgbench = async (): Promise<number> => {
  const out = execFileSync(
    "pgbench",
    ["-c", "16", "-j", "2", "-T", String(seconds), ...databases.pgbenchArgs("pgbench")],
    {
      stdio: ["ignore", "pipe", "ignore"]
    }
  ).toString()
  const tps = /tps = ([\d.]+) \(without initial connection time\)/.exec(out)
  if (tps === null) throw new Error(`pgbench printed no tps:\n${out}`)
  return Number(tps[1])
}

const save = (name: string, value: unknown) => {
  results[name] = value
  if (name !== "suite") broken.push(...Check.problems(name, value))
  writeFileSync(path.join(resultsDir, `${name}.json`), `${JSON.stringify(value, null, 2)}\n`)
}

/** A node script of the bench as its own process; its last line of output is its JSON result. */
const script = (file: string, env: Record<string, string | undefined>) =>
  new Promise<any>((resolve, reject) => {
    // The workspace packages from their sources, as `pnpm bench` itself runs (`tsx -C @laari/source`).
    const child = spawn(process.execPath, ["--conditions", "@laari/source", "--import", "tsx", file], {
      cwd: Spawn.root,
      env: Object.fromEntries(Object.entries({ ...process.env, ...env }).filter(([, v]) => v !== undefined)),
      stdio: ["ignore", "pipe", "inherit"]
    })
    let out = ""
    child.stdout.on("data", (c: Buffer) => {
      out += c.toString()
    })
    child.on("exit", (code) => {
      if (code !== 0) return reject(new Error(`${file} exited with ${code}`))
      try {
        const start = out.lastIndexOf("\n{")
        resolve(JSON.parse(start < 0 ? out : out.slice(start + 1)))
      } catch (e) {
        reject(e)
      }
    })
  })

/**
 * `BENCH_TIMELINE=1`: the half-rate runs print their latency timeline (`Timeline.ts`; `pnpm bench:tail`
 * runs it alone), lined up with what laari's processes log in `stallDir` (`LAARI_STALL_LOG`).
 */
const timelines = process.env.BENCH_TIMELINE === "1"
const stallDir = timelines ? mkdtempSync(path.join(os.tmpdir(), "laari-stalls-")) : undefined

const chargeRuns = async (base: string, targets: ReadonlyArray<Workload.Target>) => {
  const client = Load.client(base)
  const shoot = Workload.charge(client, targets)
  // Warm up: JIT, pools, caches.
  await Load.closedLoop({ concurrency: 32, seconds: Math.min(5, seconds / 4), shot: shoot })
  const spread = await Load.closedLoop({ concurrency: 32, seconds, shot: shoot })
  // Only the half-rate run's stalls.
  if (stallDir !== undefined) {
    rmSync(stallDir, { recursive: true, force: true })
    mkdirSync(stallDir)
  }
  const timeline = Timeline.make()
  const half = await Load.openLoop({
    rate: spread.perSecond / 2,
    seconds,
    shot: timelines ? timeline.record(shoot) : shoot
  })
  if (timelines) {
    await new Promise((r) => setTimeout(r, 1_500))
    timeline.report({ print: log, ...(stallDir === undefined ? {} : { stallDir }) })
  }
  const hot = await Load.closedLoop({
    concurrency: 32,
    seconds,
    shot: Workload.charge(client, targets.slice(0, 1))
  })
  client.close()
  return { spread, half, hot }
}

log(`rate limit off for every server started (LAARI_RATE_LIMIT=0); ${processes} processes; ${seconds} s runs`)
const machine = {
  cpus: os.cpus().length,
  cpuModel: os.cpus()[0]?.model ?? "unknown",
  memoryGiB: Number((os.totalmem() / 2 ** 30).toFixed(1)),
  node: process.version,
  postgres: execFileSync("psql", ["--version"]).toString().trim(),
  date: new Date().toISOString()
}

const tps: Array<number> = []
if (runs("pgbench") || runs("charges") || runs("baseline")) {
  await databases.fresh("pgbench")
  const scale = Smoke.size("10", "1")
  log(`pgbench: initializing (scale ${scale})`)
  execFileSync("pgbench", ["-i", "-s", scale, "-q", ...databases.pgbenchArgs("pgbench")], { stdio: "ignore" })
  log("pgbench: before")
  tps.push(await pgbench())
}

let targets: Array<Workload.Target> = []
const chargesUrl = runs("charges") || runs("baseline") ? await databases.fresh("bench") : ""
if (runs("charges") || runs("baseline")) {
  const server = await Spawn.laari({ DATABASE_URL: chargesUrl, LAARI_STALL_LOG: stallDir }, { processes })
  const client = Load.client(server.base)
  targets = await Workload.seed(client, seeded.merchants, seeded.mandates)
  client.close()
  if (runs("charges")) {
    log("laari: spread, half rate, hot")
    save("charges-postgresql", { processes, ...(await chargeRuns(server.base, targets)) })
  }
  await server.stop()
}
if (runs("baseline")) {
  log("baseline: spread, half rate, hot")
  const server = await Spawn.start(
    "bench/baseline/server.ts",
    { DATABASE_URL: chargesUrl, BASELINE_PROCESSES: String(processes) },
    processes > 1 ? { readyLine: /all \d+ processes listening/ } : {}
  )
  save("baseline-postgresql", { processes, ...(await chargeRuns(server.base, targets)) })
  await server.stop()
}
if (tps.length > 0) {
  log("pgbench: after")
  tps.push(await pgbench())
  save("pgbench", { tps, average: tps.reduce((a, b) => a + b, 0) / tps.length })
}

if (runs("renewals")) {
  log("renewals")
  save("renewals", await Renewals.run(await databases.fresh("renewals")))
}

if (runs("library")) {
  log("library")
  save("library", await script("bench/src/library.ts", {}))
}

if (runs("startup")) {
  log("start-up on PGlite")
  const dir = mkdtempSync(path.join(os.tmpdir(), "laari-start-"))
  const times: Array<number> = []
  for (let i = 0; i < Smoke.size(4, 2); i++) {
    const server = await Spawn.laari({ DATABASE_URL: undefined, LAARI_DATA_DIR: dir })
    times.push(Math.round(server.readyMs))
    await server.stop()
  }
  rmSync(dir, { recursive: true, force: true })
  const warm = times.slice(1).sort((a, b) => a - b)
  save("startup", {
    firstStartMs: times[0],
    warmStartsMs: times.slice(1),
    warmMedianMs: warm[Math.floor(warm.length / 2)]
  })
}

if (runs("pglite")) {
  log("laari on PGlite: spread, half rate, hot")
  const dir = mkdtempSync(path.join(os.tmpdir(), "laari-pglite-"))
  const server = await Spawn.laari({ DATABASE_URL: undefined, LAARI_DATA_DIR: dir })
  const client = Load.client(server.base)
  const lite = await Workload.seed(client, seeded.merchants, seeded.mandates)
  client.close()
  save("charges-pglite", { processes: 1, ...(await chargeRuns(server.base, lite)) })
  await server.stop()
  rmSync(dir, { recursive: true, force: true })
}

if (runs("webhooks")) {
  log("webhooks on PostgreSQL, then PGlite")
  const onPg = await script("bench/src/webhooks.ts", { DATABASE_URL: await databases.fresh("webhooks") })
  const onLite = await script("bench/src/webhooks.ts", { DATABASE_URL: undefined })
  save("webhooks", { postgresql: onPg, pglite: onLite })
}

if (runs("quickstart")) {
  log("quick start: a fresh clone of HEAD installed, built, started; the CLI")
  save("quickstart", await script("bench/src/quickstart.ts", {}))
}

if (runs("refunds")) {
  const refunds = async (base: string) => {
    const client = Load.client(base)
    const targets = await Workload.seed(client, seeded.merchants, seeded.mandates)
    client.close()
    return Refunds.run({ base, targets, seconds, concurrency: 32 })
  }
  log(`refunds beside charges on PostgreSQL (${processes} processes)`)
  const onPg = await Spawn.laari({ DATABASE_URL: await databases.fresh("refunds") }, { processes })
  const postgresql = { processes, ...(await refunds(onPg.base)) }
  await onPg.stop()
  log("refunds beside charges on PGlite")
  const dir = mkdtempSync(path.join(os.tmpdir(), "laari-refunds-"))
  const onLite = await Spawn.laari({ DATABASE_URL: undefined, LAARI_DATA_DIR: dir })
  const pglite = { processes: 1, ...(await refunds(onLite.base)) }
  await onLite.stop()
  rmSync(dir, { recursive: true, force: true })
  log("refunds beside charges through the library")
  const library = await script("bench/src/refundsLibrary.ts", {})
  save("refunds", { postgresql, pglite, library })
}

if (runs("failover") && Failover.available(log)) {
  log("failover: kill -9 of the primary, switchovers; synchronous replication against a single database")
  save(
    "failover",
    await Failover.run({
      admin,
      database: `${databases.prefix}failover`,
      processes: Smoke.size(processes, 1),
      merchants: seeded.merchants,
      mandates: seeded.mandates,
      // BENCH_FAILOVER_KILLS, _SWITCHOVERS, _NODES: to repeat a fault (e.g. proving a formation loses nothing).
      kills: Number(process.env.BENCH_FAILOVER_KILLS ?? Smoke.size(3, 1)),
      switchovers: Number(process.env.BENCH_FAILOVER_SWITCHOVERS ?? Smoke.size(3, 1)),
      dataNodes: process.env.BENCH_FAILOVER_NODES === "2" ? 2 : 3,
      calm: Smoke.size(3, 1),
      faultConcurrency: 8,
      seconds,
      rounds: Smoke.size(2, 1),
      log
    })
  )
}

if (runs("connector")) {
  log(
    `connector: charges through the reference wallet core beside the built-in ledger (${processes} processes)`
  )
  save(
    "connector",
    await Connector.run({
      fresh: databases.fresh,
      processes,
      seconds: Smoke.size(Math.min(seconds, 10), 1),
      rounds: Smoke.size(5, 2),
      halfRounds: Smoke.size(3, 1),
      concurrency: 16,
      merchants: Smoke.size(50, 4),
      mandates: Smoke.size(4, 4),
      // BENCH_CONNECTOR_PENDING: how many movements each outage leaves pending; _UNREACHABLE_S, _LOST_S:
      // for how long at most the unreachable core and the lossy one drive charges to get there (the
      // breaker lets few through while the core is unreachable); _OUTAGE_CONCURRENCY: charges in flight.
      outageTarget: Number(process.env.BENCH_CONNECTOR_PENDING ?? Smoke.size(10_000, 100)),
      unreachableBudgetS: Number(process.env.BENCH_CONNECTOR_UNREACHABLE_S ?? Smoke.size(60, 4)),
      outageBudgetS: Number(process.env.BENCH_CONNECTOR_LOST_S ?? Smoke.size(600, 8)),
      outageConcurrency: Number(process.env.BENCH_CONNECTOR_OUTAGE_CONCURRENCY ?? Smoke.size(64, 16)),
      recoveryBoundS: Smoke.size(600, 40),
      log
    })
  )
}

if (Smoke.on) await databases.dropAll()

// `BENCH_ONLY=table`: print the table of the figures already in bench/results.
if (only?.includes("table"))
  for (const name of [
    "pgbench",
    "charges-postgresql",
    "baseline-postgresql",
    "renewals",
    "library",
    "startup",
    "charges-pglite",
    "webhooks",
    "quickstart",
    "refunds",
    "failover",
    "connector"
  ]) {
    const file = path.join(resultsDir, `${name}.json`)
    if (existsSync(file)) results[name] = JSON.parse(readFileSync(file, "utf8"))
  }
if (only?.includes("table") && Array.isArray((results.pgbench as any)?.tps))
  tps.push(...(results.pgbench as any).tps)

// ---------------------------------------------------------------------------------------------------
// The table
// ---------------------------------------------------------------------------------------------------

const r = results as any
const pgbenchTps: number | undefined = r.pgbench?.average
const ratio = (x: number | undefined, of: number | undefined) =>
  x === undefined || of === undefined ? "" : `${(x / of).toFixed(3)}x`
const rows: Array<[string, string, string, string]> = []
const row = (what: string, figure: string, against: string, goal: string) =>
  rows.push([what, figure, against, goal])
if (pgbenchTps !== undefined)
  row("pgbench TPC-B (before, after)", `${tps.map((t) => t.toFixed(0)).join(", ")} TPS`, "", "")
const c = r["charges-postgresql"]
const b = r["baseline-postgresql"]
if (c !== undefined) {
  row(
    `laari charges, spread (${processes} processes)`,
    `${c.spread.perSecond}/s, p50 ${c.spread.latencyMs.p50} ms, p99 ${c.spread.latencyMs.p99} ms`,
    `${ratio(c.spread.perSecond, pgbenchTps)} pgbench`,
    ">= 0.40x"
  )
  row(
    "laari charges at half that rate",
    `${c.half.perSecond}/s, p50 ${c.half.latencyMs.p50} ms, p99 ${c.half.latencyMs.p99} ms, p99.9 ${c.half.latencyMs.p999} ms`,
    "",
    "p99 <= 50 ms, p99.9 <= 100 ms"
  )
  row(
    "laari charges, one hot mandate",
    `${c.hot.perSecond}/s, p99 ${c.hot.latencyMs.p99} ms`,
    `${ratio(c.hot.perSecond, pgbenchTps)} pgbench`,
    ">= 0.15x"
  )
}
if (b !== undefined) {
  row(
    "raw node:http + pg baseline, spread",
    `${b.spread.perSecond}/s, p99 ${b.spread.latencyMs.p99} ms`,
    `${ratio(b.spread.perSecond, pgbenchTps)} pgbench`,
    ""
  )
  if (c !== undefined)
    row("laari / baseline, spread", "", ratio(c.spread.perSecond, b.spread.perSecond), ">= 1.0x")
  row("raw baseline, one hot mandate", `${b.hot.perSecond}/s`, "", "")
}
if (r.renewals !== undefined) {
  const x = r.renewals
  row(
    `renewals (${x.subscriptions} across ${x.payers} payers, ${x.processes} processes)`,
    `${x.seconds} s, ${x.renewalsPerSecond}/s, exactly once: ${x.exactlyOnce}, RSS ${x.rssMiB.first} -> ${x.rssMiB.last} MiB`,
    `100k in ${(100_000 / x.renewalsPerSecond).toFixed(0)} s`,
    "100k <= 45 s (4 processes)"
  )
}
if (r.library !== undefined) {
  row("library: pure charge decisions", `${r.library.decisionsPerSecond}/s`, "", ">= 50,000/s")
  row("library: charges on memory adapters", `${r.library.memoryChargesPerSecond}/s`, "", ">= 10,000/s")
  row(
    "library: charges, no tracer listening vs tracing disabled vs spans recorded",
    `${r.library.chargesUnheardPerSecond}/s vs ${r.library.chargesDisabledPerSecond}/s vs ${r.library.chargesRecordedPerSecond}/s`,
    `recorded/unheard ${r.library.recordedOverUnheard}; Telemetry.fn ${r.library.spanWrapperMicrosUnheard} us = ${(r.library.spanWrapperShareOfCharge * 100).toFixed(2)}% of a charge (Effect.fn ${r.library.effectFnMicrosUnheard} us)`,
    "unheard: no measurable cost"
  )
}
if (r.startup !== undefined)
  row(
    "start to ready, PGlite (first; warm median)",
    `${r.startup.firstStartMs} ms; ${r.startup.warmMedianMs} ms`,
    "",
    "warm <= 3,000 ms"
  )
const lite = r["charges-pglite"]
if (lite !== undefined)
  row(
    "laari charges on PGlite, spread (1 process)",
    `${lite.spread.perSecond}/s, p99 ${lite.spread.latencyMs.p99} ms; hot ${lite.hot.perSecond}/s`,
    "",
    ">= 300/s"
  )
if (r.webhooks !== undefined)
  for (const [name, w] of Object.entries(r.webhooks as Record<string, any>))
    row(
      `webhooks on ${name}`,
      `answer->delivery p50 ${w.latency.answerToFirstByteMs.p50} ms, p99 ${w.latency.answerToFirstByteMs.p99} ms; ${w.throughput.deliveriesPerSecond} deliveries/s`,
      "",
      "no worse than before"
    )

const q = r.quickstart
if (q !== undefined)
  for (const x of q.results)
    row(
      `quick start at ${x.commit}: fresh clone to ready; restart; --help; a command; idle RSS`,
      `${x.freshToReadyMs} ms; ${x.restartToReadyMs} ms; ${x.helpMedianMs} ms; ${x.commandMedianMs} ms; ${x.idleRssMiB} MiB`,
      "",
      "<= 60 s; 3 s; 1.5 s; 2 s; 200 MiB"
    )

Summaries.refunds(r.refunds, row)
Summaries.failover(r.failover, row)

if (r.connector !== undefined) Connector.summary(r.connector, row)

const table = [
  "| measure | figure | ratio | goal |",
  "|---|---|---|---|",
  ...rows.map((cells) => `| ${cells.join(" | ")} |`)
].join("\n")
save("suite", { machine, processes, seconds, results: { ...results } })
writeFileSync(
  path.join(resultsDir, "suite.md"),
  `Machine: ${machine.cpus} x ${machine.cpuModel}, ${machine.memoryGiB} GiB, Node ${machine.node}, ${machine.postgres}; ${machine.date}\n\n${table}\n`
)
console.log(table)
if (broken.length > 0) {
  console.error(`[bench] BROKEN: ${broken.length} figure(s) measured nothing:\n  ${broken.join("\n  ")}`)
  process.exit(1)
}
log(`every part measured something (${Object.keys(results).length} results)`)
