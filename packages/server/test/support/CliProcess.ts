/**
 * The `laari` CLI as a developer runs it: `node packages/server/dist/Cli/laari.js`, what `pnpm laari`
 * runs (the CLI's bundle, or dist for `serve` and `migrate`; made fresh by the project's global setup),
 * as a child process whose configuration comes only from `env`, not from the test's environment.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

/** The repository root, where `pnpm laari` runs. */
export const root = Path.resolve(fileURLToPath(import.meta.url), "../../../../..")
export const entry = Path.join(root, "packages/server/dist/Cli/laari.js")
/** The compiled CLI without the bundle: the installed package's `laari` bin. */
export const unbundledEntry = Path.join(root, "packages/server/dist/Cli/main.js")

export interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** The test's environment without anything that would configure the CLI behind the test's back. */
export const baseEnv = (): Record<string, string> => {
  const env: Record<string, string> = {}
  for (const [name, value] of Object.entries(process.env))
    if (
      value !== undefined &&
      !/^(LAARI_|DATABASE_URL$|PORT$|NODE_OPTIONS$|NO_COLOR$|FORCE_COLOR$)/.test(name)
    )
      env[name] = value
  return env
}

export const launch = (
  args: ReadonlyArray<string>,
  env: Record<string, string>,
  cwd: string = root
): ChildProcess =>
  spawn(process.execPath, [entry, ...args], {
    cwd,
    env: { ...baseEnv(), ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })

export const collect = (child: ChildProcess): Promise<Run> =>
  new Promise((resolve) => {
    let stdout = ""
    let stderr = ""
    child.stdout!.setEncoding("utf8").on("data", (s: string) => (stdout += s))
    child.stderr!.setEncoding("utf8").on("data", (s: string) => (stderr += s))
    child.once("exit", (code) => resolve({ code, stdout, stderr }))
  })

export const run = (args: ReadonlyArray<string>, env: Record<string, string>, cwd?: string): Promise<Run> =>
  collect(launch(args, env, cwd))
