/**
 * Starting `laari` (or the raw baseline) as its own process, the way an operator runs it: the compiled
 * service (`pnpm start`'s `dist`, built first when stale), so the load generator measures the server,
 * not itself nor a TypeScript loader. Ready means `GET /healthz` answers.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs"
import * as Net from "node:net"
import os from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { ensureBuilt, server } from "../../scripts/ensure-built.mjs"

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

/** A port nothing listens on right now (never a fixed range: other servers share the machine). */
export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const probe = Net.createServer()
    probe.once("error", reject)
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as Net.AddressInfo
      probe.close(() => resolve(port))
    })
  })

/** Runs `script` (a TypeScript file through tsx, or JavaScript) with `env`, on a free port. */
export const start = async (
  script: string,
  env: Record<string, string | undefined>,
  options: {
    readonly nodeArgs?: ReadonlyArray<string>
    /** Also wait for a line of its output matching this (several processes: all listening). */
    readonly readyLine?: RegExp
  } = {}
): Promise<Started> => {
  const port = await freePort()
  const t0 = performance.now()
  const loader = script.endsWith(".ts") ? ["--import", "tsx"] : []
  // Its output goes to a file, as under a supervisor that drains it at once: a pipe read by this busy
  // load generator fills, and Node writes to a pipe synchronously, so the server would wait on the
  // generator's event loop (seen as writev in profiles, and in the connector's tail latency).
  const outDir = mkdtempSync(path.join(os.tmpdir(), "laari-bench-"))
  const outPath = path.join(outDir, "stdout.log")
  const out = openSync(outPath, "w")
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), ...loader, script], {
    cwd: root,
    // An `undefined` value removes the variable (PGlite: no DATABASE_URL).
    env: Object.fromEntries(
      Object.entries({ ...process.env, PORT: String(port), ...env }).filter(([, v]) => v !== undefined)
    ),
    stdio: ["ignore", out, "inherit"]
  })
  closeSync(out)
  const line = options.readyLine
  const sawLine =
    line === undefined
      ? Promise.resolve()
      : (async () => {
          while (!line.test(readFileSync(outPath, "utf8"))) {
            if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}`)
            await new Promise((r) => setTimeout(r, 50))
          }
        })()
  const base = `http://127.0.0.1:${port}`
  // Seconds on a quiet machine; a first PGlite start took 118 s at load 25.
  await waitHealthy(base, child, 300_000)
  await sawLine
  const readyMs = performance.now() - t0
  const stop = () =>
    new Promise<void>((resolve) => {
      const done = () => {
        rmSync(outDir, { recursive: true, force: true })
        resolve()
      }
      if (child.exitCode !== null) return done()
      child.once("exit", done)
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
  ensureBuilt(server)
  return start(
    "packages/server/dist/bin.js",
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
