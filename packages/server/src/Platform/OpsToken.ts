/**
 * The operator token, when `LAARI_OPS_TOKEN` does not set one: generated at the first start and kept in
 * `<data dir>/ops-token` (mode 0600, beside PGlite's files, which hold the whole database anyway), so a
 * restart accepts the same token and the `laari` CLI on the same machine finds it. A production
 * deployment sets `LAARI_OPS_TOKEN` from its secret store; then no file is read or written.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import * as Keys from "./Keys.js"

export const FileName = "ops-token"

export interface Resolved {
  readonly value: string
  /** `env`: LAARI_OPS_TOKEN; `file`: read from `file`; `generated`: new, saved in `file` when it is set. */
  readonly source: "env" | "file" | "generated"
  /** Where the token is kept; `undefined` when it is not (set by env, or the folder is not writable). */
  readonly file: string | undefined
}

export const pathOf = (dataDir: string): string => resolve(join(dataDir, FileName))

/** The token saved in `dataDir`, if any. */
export const read = (dataDir: string): string | undefined => {
  try {
    const value = readFileSync(pathOf(dataDir), "utf8").trim()
    return value === "" ? undefined : value
  } catch {
    return undefined
  }
}

/**
 * The configured token, else the saved one, else a new one saved with an exclusive create (two processes
 * starting at once both end with the token that was written first).
 */
export const resolveToken = (configured: string | undefined, dataDir: string): Resolved => {
  if (configured !== undefined) return { value: configured, source: "env", file: undefined }
  const saved = read(dataDir)
  if (saved !== undefined) return { value: saved, source: "file", file: pathOf(dataDir) }
  const value = Keys.generateOpsToken()
  try {
    mkdirSync(dataDir, { recursive: true })
    writeFileSync(pathOf(dataDir), `${value}\n`, { mode: 0o600, flag: "wx" })
    return { value, source: "generated", file: pathOf(dataDir) }
  } catch (e) {
    const raced = (e as NodeJS.ErrnoException).code === "EEXIST" ? read(dataDir) : undefined
    if (raced !== undefined) return { value: raced, source: "file", file: pathOf(dataDir) }
    return { value, source: "generated", file: undefined }
  }
}

/**
 * The `.data` of the laari repository this code runs from (`pnpm start` keeps its data there), or
 * `undefined` where laari is an installed package.
 */
export const repositoryDataDir = (): string | undefined => {
  // This file is packages/server/{src,dist}/Platform/OpsToken.* (four folders below the repository), or
  // inlined in a bundle in packages/server/build (three).
  const here = dirname(fileURLToPath(import.meta.url))
  const root = ["../../..", "../../../.."]
    .map((up) => resolve(here, up))
    .find((dir) => existsSync(join(dir, "pnpm-workspace.yaml")) && existsSync(join(dir, "packages/server")))
  return root === undefined ? undefined : join(root, ".data")
}

/**
 * Where the CLI looks for a saved token, in order: `LAARI_DATA_DIR` when set, `./.data`, and the
 * repository's `.data`; each once.
 */
export const searchDirs = (dataDirEnv: string | undefined): ReadonlyArray<string> => [
  ...new Set(
    [dataDirEnv, "./.data", repositoryDataDir()].flatMap((d) =>
      d === undefined || d === "" ? [] : [resolve(d)]
    )
  )
]
