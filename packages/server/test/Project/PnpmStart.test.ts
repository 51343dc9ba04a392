/**
 * `pnpm start` stopped as a container or systemd stops a service: SIGTERM to its top process (pnpm). The
 * whole tree (pnpm, the node that checks the build and runs the service, the service's processes) drains
 * and stops, and pnpm exits 0 after a clean drain, with no `ELIFECYCLE`. Run as a user runs it: `pnpm start`
 * in the repository, on a free port, on its own data folder (PGlite) and on PostgreSQL with two processes.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { Effect, Exit, Scope } from "effect"
import { describe, expect, it } from "vitest"
import * as ServerProcess from "../support/ServerProcess.js"
import * as TestDatabase from "../support/TestDatabase.js"
import * as TestServer from "../support/TestServer.js"

const root = Path.resolve(fileURLToPath(import.meta.url), "../../../../..")

/** The test's environment without anything that would configure the service behind the test's back. */
const baseEnv = (): Record<string, string> => {
  const env: Record<string, string> = {}
  for (const [name, value] of Object.entries(process.env))
    if (value !== undefined && !/^(LAARI_|DATABASE_URL$|PORT$|NODE_OPTIONS$|npm_)/.test(name))
      env[name] = value
  return env
}

/** Every live process whose chain of parents reaches `top`, `top` included (Linux `/proc`). */
const tree = (top: number): Array<number> => {
  const parent = new Map<number, number>()
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue
    try {
      // `pid (comm) state ppid ...`: comm may hold spaces and parentheses, so read after the last ")".
      const stat = readFileSync(`/proc/${name}/stat`, "utf8")
      parent.set(Number(name), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]))
    } catch {
      // ended while we read
    }
  }
  const reaches = (pid: number): boolean => {
    for (let p: number | undefined = pid, hops = 0; p !== undefined && p > 1 && hops < 64; hops++) {
      if (p === top) return true
      p = parent.get(p)
    }
    return false
  }
  return [...parent.keys()].filter(reaches)
}

/** Whether `pid` is a live process (a zombie, ended but not yet reaped, is not). */
const alive = (pid: number) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z"
  } catch {
    return false
  }
}

const pnpmStart = (env: Record<string, string>) => {
  const child: ChildProcess = spawn("pnpm", ["start"], {
    cwd: root,
    env: { ...baseEnv(), ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout!.setEncoding("utf8").on("data", (s: string) => (output += s))
  child.stderr!.setEncoding("utf8").on("data", (s: string) => (output += s))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    child.once("exit", (code, signal) => r({ code, signal }))
  )
  return { child, exited, output: () => output }
}

/** Starts `pnpm start`, waits for `ready` in its output, SIGTERMs pnpm; what happened. */
const startThenTerminate = async (env: Record<string, string>, ready: string) => {
  const port = await ServerProcess.freePort()
  const run = pnpmStart({ ...env, PORT: String(port), LAARI_OPS_TOKEN: TestServer.OpsToken })
  let seen: Array<number> = []
  try {
    const deadline = Date.now() + 180_000
    let healthy = false
    while (!(healthy && run.output().includes(ready)) && Date.now() < deadline) {
      if (run.child.exitCode !== null)
        throw new Error(`pnpm start ended before it was ready:\n${run.output()}`)
      healthy = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(2_000) }).then(
        (r) => r.status === 200,
        () => false
      )
      await new Promise((r) => setTimeout(r, 200))
    }
    seen = tree(run.child.pid!)
    run.child.kill("SIGTERM")
    const exit = await Promise.race([
      run.exited,
      new Promise<"running">((r) => setTimeout(() => r("running"), 45_000))
    ])
    // Whatever was left, a moment after pnpm's exit.
    await new Promise((r) => setTimeout(r, 500))
    return { exit, seen, left: seen.filter(alive), output: run.output() }
  } finally {
    for (const pid of [run.child.pid!, ...seen]) if (alive(pid)) process.kill(pid, "SIGKILL")
  }
}

describe.skipIf(process.platform !== "linux")("SIGTERM to pnpm start", { timeout: 300_000 }, () => {
  it("on PGlite: the service drains and stops, pnpm exits 0, no process is left", async () => {
    const dataDir = mkdtempSync(Path.join(tmpdir(), "laari-pnpm-start-"))
    try {
      const run = await startThenTerminate({ LAARI_DATA_DIR: dataDir }, "laari is running on")
      // pnpm and the node running the service, at least.
      expect(run.seen.length, run.output).toBeGreaterThanOrEqual(2)
      expect(run.exit, run.output).toEqual({ code: 0, signal: null })
      expect(run.output).not.toContain("ELIFECYCLE")
      expect(run.left).toEqual([])
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
    }
  })

  it.skipIf(TestDatabase.postgresUrl === undefined)(
    "on PostgreSQL with two processes: every process stops, pnpm exits 0, no process is left",
    async () => {
      const scope = Effect.runSync(Scope.make())
      try {
        const url = await Effect.runPromise(
          Scope.extend(TestDatabase.createDatabase(TestDatabase.postgresUrl!), scope)
        )
        const run = await startThenTerminate(
          { DATABASE_URL: url, LAARI_PROCESSES: "2" },
          "all 2 processes listening"
        )
        // pnpm, the supervisor and its two processes, at least.
        expect(run.seen.length, run.output).toBeGreaterThanOrEqual(4)
        expect(run.exit, run.output).toEqual({ code: 0, signal: null })
        expect(run.output).not.toContain("ELIFECYCLE")
        expect(run.left).toEqual([])
      } finally {
        await Effect.runPromise(Scope.close(scope, Exit.void))
      }
    }
  )
})
