/**
 * A laari server as a child process, started as `pnpm start` starts it (`node packages/server/dist/bin.js`,
 * the compiled build a host installs, made fresh by the project's global setup) on a free port: for what only a process shows (start-up, signals, exit
 * codes, memory, `kill -9`). Its configuration comes only from `env`, not from the test's environment.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import * as Net from "node:net"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

/** The repository root, where `pnpm start` runs. */
const root = Path.resolve(fileURLToPath(import.meta.url), "../../../../..")
const entry = "packages/server/dist/bin.js"

export interface Exit {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
}

export interface ServerProcess {
  readonly pid: number
  readonly port: number
  readonly baseUrl: string
  /** What the process has written so far. */
  readonly stdout: () => string
  readonly stderr: () => string
  /** Settles when the process exits. */
  readonly exited: Promise<Exit>
  /** Resolves once `/healthz` answers `200`; rejects if the process exits first or `timeoutMs` passes. */
  readonly ready: (timeoutMs?: number) => Promise<void>
  /** The process's resident memory now and at its peak, in bytes (Linux `/proc`); `undefined` elsewhere. */
  readonly memory: () => { readonly rss: number; readonly peak: number } | undefined
  /** `SIGKILL`, at once. */
  readonly kill: () => void
  /** `signal` (default `SIGTERM`), then waits for the exit; `SIGKILL` after `timeoutMs`. */
  readonly stop: (options?: {
    readonly signal?: NodeJS.Signals
    readonly timeoutMs?: number
  }) => Promise<Exit>
}

/** A port nothing listens on right now. */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = Net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address() as Net.AddressInfo
      server.close(() => resolve(address.port))
    })
  })

/** The test's environment without anything that would configure the server behind the test's back. */
const baseEnv = (): Record<string, string> => {
  const env: Record<string, string> = {}
  for (const [name, value] of Object.entries(process.env))
    if (value !== undefined && !/^(LAARI_|DATABASE_URL$|PORT$|NODE_OPTIONS$)/.test(name)) env[name] = value
  return env
}

const readMemory = (pid: number) => {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8")
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1]) * 1024
    return { rss: kb("VmRSS"), peak: kb("VmHWM") }
  } catch {
    return undefined
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Spawns the server and returns at once: it is not listening yet (see `ready`). */
export const spawnServer = async (options: {
  readonly env: Record<string, string>
  readonly port?: number
}): Promise<ServerProcess> => {
  const port = options.port ?? (await freePort())
  const child: ChildProcess = spawn(process.execPath, [entry], {
    cwd: root,
    env: { ...baseEnv(), ...options.env, PORT: String(port) },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stdout = ""
  let stderr = ""
  child.stdout!.setEncoding("utf8").on("data", (s: string) => (stdout += s))
  child.stderr!.setEncoding("utf8").on("data", (s: string) => (stderr += s))
  let done: Exit | undefined
  const exited = new Promise<Exit>((resolve) =>
    child.once("exit", (code, signal) => {
      done = { code, signal }
      resolve(done)
    })
  )
  const baseUrl = `http://127.0.0.1:${port}`
  const output = () => `\n--- stdout\n${stdout}\n--- stderr\n${stderr}`

  // Compiled, the server is ready in seconds; the bound is for a 2-core machine shared with a CPU hog.
  const ready = async (timeoutMs = 120_000) => {
    const deadline = Date.now() + timeoutMs
    while (Date.now() < deadline) {
      if (done !== undefined)
        throw new Error(`the server exited (${JSON.stringify(done)}) before it was ready${output()}`)
      const status = await fetch(`${baseUrl}/healthz`, { signal: AbortSignal.timeout(2_000) }).then(
        (r) => r.status,
        () => 0
      )
      if (status === 200) return
      await sleep(100)
    }
    throw new Error(`the server was not ready within ${timeoutMs} ms${output()}`)
  }

  const stop = async (o: { readonly signal?: NodeJS.Signals; readonly timeoutMs?: number } = {}) => {
    if (done !== undefined) return done
    child.kill(o.signal ?? "SIGTERM")
    const timer = setTimeout(() => child.kill("SIGKILL"), o.timeoutMs ?? 30_000)
    const exit = await exited
    clearTimeout(timer)
    return exit
  }

  return {
    pid: child.pid!,
    port,
    baseUrl,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    ready,
    memory: () => readMemory(child.pid!),
    kill: () => {
      if (done === undefined) child.kill("SIGKILL")
    },
    stop
  }
}

/** Spawns the server and waits until it answers `/healthz`. */
export const start = async (options: {
  readonly env: Record<string, string>
  readonly port?: number
  readonly readyTimeoutMs?: number
}): Promise<ServerProcess> => {
  const server = await spawnServer(options)
  try {
    await server.ready(options.readyTimeoutMs)
  } catch (error) {
    server.kill()
    throw error
  }
  return server
}
