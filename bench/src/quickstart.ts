/**
 * The quick start as a newcomer meets it, timed: in a fresh clone of a commit,
 * `pnpm install && pnpm start` to ready (the build included), a restart to ready, `pnpm laari --help`,
 * a CLI command against the running server, and the resident memory of the idle server process.
 *
 *   pnpm bench:quickstart                                   # HEAD
 *   BENCH_QUICKSTART_BEFORE=6686369 pnpm bench:quickstart   # and an earlier commit, in the same run
 *   BENCH_QUICKSTART_RUNS=5                                 # CLI calls per figure (median)
 *
 * Prints a table on stderr and its JSON result as the last line of stdout.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import os from "node:os"
import path from "node:path"
import * as Smoke from "./Smoke.js"
import * as Spawn from "./Spawn.js"

const runs = Number(process.env.BENCH_QUICKSTART_RUNS ?? Smoke.size(5, 1))
// The checkout's own HEAD, by commit: in a clone of a worktree, "HEAD" would be the repository's default branch.
const head = execFileSync("git", ["-C", Spawn.root, "rev-parse", "HEAD"]).toString().trim()
const refs = [head, ...(process.env.BENCH_QUICKSTART_BEFORE ? [process.env.BENCH_QUICKSTART_BEFORE] : [])]
/** How long the server idles before its memory is read. */
const idleMs = Smoke.size(5_000, 1_000)
const log = (line: string) => console.error(`[quickstart] ${line}`)
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

/** Environment of the commands: the bench's own, less anything that would configure laari behind its back. */
const baseEnv = () =>
  Object.fromEntries(
    Object.entries(process.env).filter(
      ([name, value]) => value !== undefined && !/^(LAARI_|DATABASE_URL$|PORT$|NODE_OPTIONS$)/.test(name)
    )
  ) as Record<string, string>

/** Milliseconds `command` took in `cwd`; throws on a non-zero exit. */
const timed = (cwd: string, env: Record<string, string>, command: string, args: ReadonlyArray<string>) => {
  const started = performance.now()
  execFileSync(command, args, { cwd, env, stdio: ["ignore", "ignore", "pipe"], timeout: 600_000 })
  return performance.now() - started
}

/** The pids of `pid` and every process under it (Linux `/proc`). */
const tree = (pid: number): Array<number> => {
  const children = new Map<number, Array<number>>()
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8")
      const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
      children.set(parent, [...(children.get(parent) ?? []), Number(entry)])
    } catch {
      // the process ended while we looked
    }
  }
  const all = [pid]
  for (let i = 0; i < all.length; i++) all.push(...(children.get(all[i]!) ?? []))
  return all
}

/** Resident memory of the server process under `pnpm start` (the node process running its entry), MiB. */
const serverRss = (pid: number) => {
  for (const p of tree(pid)) {
    try {
      // The node process itself: not the shell of `a && node ...` (its command line names the entry too).
      const argv = readFileSync(`/proc/${p}/cmdline`, "utf8").split("\0")
      if (!/(^|\/)node$/.test(argv[0] ?? "")) continue
      if (!argv.some((arg) => /server\/(dist\/bin\.js|src\/bin\.ts)$/.test(arg))) continue
      if (argv.some((arg) => /tsx\/dist\/cli/.test(arg))) continue
      const status = readFileSync(`/proc/${p}/status`, "utf8")
      return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1]) / 1024
    } catch {
      // not ours or gone
    }
  }
  return Number.NaN
}

/** `pnpm start` in `cwd`, timed to the first 200 from `/readyz`. */
const start = async (cwd: string, env: Record<string, string>, port: number) => {
  const started = performance.now()
  const child: ChildProcess = spawn("pnpm", ["start"], { cwd, env, stdio: "ignore", detached: true })
  const deadline = Date.now() + 600_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`pnpm start exited with ${child.exitCode} in ${cwd}`)
    if (Date.now() > deadline) throw new Error("pnpm start was not ready within 600 s")
    const status = await fetch(`http://127.0.0.1:${port}/readyz`, {
      signal: AbortSignal.timeout(2_000)
    }).then(
      (r) => r.status,
      () => 0
    )
    if (status === 200) break
    await sleep(50)
  }
  const readyMs = performance.now() - started
  const stop = async () => {
    const exited = new Promise((r) => child.once("exit", r))
    process.kill(-child.pid!, "SIGTERM")
    const timer = setTimeout(() => process.kill(-child.pid!, "SIGKILL"), 30_000)
    await exited
    clearTimeout(timer)
  }
  return { readyMs, pid: child.pid!, stop }
}

const measure = async (ref: string) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "laari-quickstart-"))
  try {
    execFileSync("git", ["clone", "--quiet", Spawn.root, dir])
    execFileSync("git", ["-C", dir, "checkout", "--quiet", ref])
    const commit = execFileSync("git", ["-C", dir, "rev-parse", "--short", "HEAD"]).toString().trim()
    const port = await Spawn.freePort()
    const env = { ...baseEnv(), PORT: String(port), LAARI_DATA_DIR: path.join(dir, ".data") }
    log(`${commit}: pnpm install && pnpm start`)
    const installMs = timed(dir, env, "pnpm", ["install", "--frozen-lockfile", "--prefer-offline"])
    const first = await start(dir, env, port)
    await sleep(idleMs)
    const firstRssMiB = serverRss(first.pid)
    await first.stop()
    log(`${commit}: restart`)
    const again = await start(dir, env, port)
    await sleep(idleMs)
    const idleRssMiB = serverRss(again.pid)
    log(`${commit}: pnpm laari --help, pnpm laari merchants list (${runs} each)`)
    const help = Array.from({ length: runs }, () => timed(dir, env, "pnpm", ["laari", "--help"]))
    const command = Array.from({ length: runs }, () =>
      timed(dir, env, "pnpm", ["laari", "merchants", "list"])
    )
    await again.stop()
    return {
      ref,
      commit,
      freshToReadyMs: Math.round(installMs + first.readyMs),
      installMs: Math.round(installMs),
      firstStartMs: Math.round(first.readyMs),
      restartToReadyMs: Math.round(again.readyMs),
      helpMedianMs: Math.round(median(help)),
      commandMedianMs: Math.round(median(command)),
      firstStartRssMiB: Math.round(firstRssMiB),
      idleRssMiB: Math.round(idleRssMiB)
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const results = []
for (const ref of refs) results.push(await measure(ref))

const targets: Record<string, [string, number]> = {
  freshToReadyMs: ["fresh clone: install + start to ready (ms)", 60_000],
  restartToReadyMs: ["restart to ready (ms)", 3_000],
  helpMedianMs: ["pnpm laari --help, median (ms)", 1_500],
  commandMedianMs: ["pnpm laari merchants list, median (ms)", 2_000],
  idleRssMiB: ["RSS of the idle server after a restart (MiB)", 200]
}
console.error(`\n| figure | target | ${results.map((r) => r.commit).join(" | ")} |`)
console.error(`| --- | --- | ${results.map(() => "---").join(" | ")} |`)
for (const [key, [label, target]] of Object.entries(targets))
  console.error(`| ${label} | <= ${target} | ${results.map((r) => (r as any)[key]).join(" | ")} |`)
console.log(JSON.stringify({ cpus: os.cpus().length, load: os.loadavg(), results }))
