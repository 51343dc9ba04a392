/**
 * Starting `laari` (or the raw baseline) as its own process, the way an operator runs it: the load
 * generator then measures the server, not itself. Ready means `GET /healthz` answers.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { fileURLToPath } from "node:url"

export const root = fileURLToPath(new URL("../../", import.meta.url))

export interface Started {
  readonly base: string
  readonly child: ChildProcess
  /** Milliseconds from spawn to the first healthy answer. */
  readonly readyMs: number
  readonly stop: () => Promise<void>
}

const waitHealthy = async (base: string, child: ChildProcess, deadlineMs: number) => {
  const started = performance.now()
  while (performance.now() - started < deadlineMs) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}`)
    const ok = await fetch(`${base}/healthz`)
      .then((r) => r.ok)
      .catch(() => false)
    if (ok) return
    await new Promise((r) => setTimeout(r, 20))
  }
  throw new Error(`the server at ${base} was not ready within ${deadlineMs} ms`)
}

let nextPort = 4700 + Math.floor(Math.random() * 200)

/** Runs `script` (a TypeScript file, through tsx) with `env`, on a fresh port. */
export const start = async (
  script: string,
  env: Record<string, string | undefined>,
  options: {
    readonly nodeArgs?: ReadonlyArray<string>
    /** Also wait for a line of its output matching this (several processes: all listening). */
    readonly readyLine?: RegExp
  } = {}
): Promise<Started> => {
  const port = nextPort++
  const t0 = performance.now()
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), "--import", "tsx", script], {
    cwd: root,
    // An `undefined` value removes the variable (PGlite: no DATABASE_URL).
    env: Object.fromEntries(
      Object.entries({ ...process.env, PORT: String(port), ...env }).filter(([, v]) => v !== undefined)
    ),
    stdio: ["ignore", "pipe", "inherit"]
  })
  let output = ""
  const line = options.readyLine
  const sawLine =
    line === undefined
      ? Promise.resolve()
      : new Promise<void>((resolve) => {
          child.stdout!.on("data", (chunk: Buffer) => {
            output += chunk.toString()
            if (line.test(output)) resolve()
          })
        })
  if (line === undefined) child.stdout!.resume()
  const base = `http://127.0.0.1:${port}`
  await waitHealthy(base, child, 60_000)
  await sawLine
  const readyMs = performance.now() - t0
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve()
      child.once("exit", () => resolve())
      child.kill("SIGTERM")
    })
  return { base, child, readyMs, stop }
}

/** The standalone service, rate limit off, in `processes` processes (PostgreSQL only for more than one). */
export const laari = (
  env: Record<string, string | undefined>,
  options: { readonly processes?: number; readonly nodeArgs?: ReadonlyArray<string> } = {}
) => {
  const processes = options.processes ?? 1
  return start(
    "packages/server/src/bin.ts",
    {
      LAARI_RATE_LIMIT: "0",
      LAARI_OPS_TOKEN: "ops_bench",
      LAARI_PROCESSES: String(processes),
      ...env
    },
    {
      ...(options.nodeArgs === undefined ? {} : { nodeArgs: options.nodeArgs }),
      ...(processes > 1 ? { readyLine: /all \d+ processes listening/ } : {})
    }
  )
}
