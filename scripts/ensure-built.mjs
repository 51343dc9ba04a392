#!/usr/bin/env node
/**
 * `pnpm start` and `pnpm laari` build the compiled service incrementally before they run it, but
 * `tsc -b`'s own up-to-date check costs seconds on every call. This script answers "is dist current?"
 * from file times in milliseconds and runs `tsc -b` only when it is not, so nothing stale ever runs:
 *
 * - the inputs are every file and folder under each project's `src` in the build graph (the project and
 *   its `references`, followed), the projects' tsconfig and package.json files, tsconfig.base.json, the
 *   root package.json, the lockfile and the bundling scripts (`bundles`: the server's and the CLI's, run
 *   after `tsc -b`);
 *   a folder's time moves when a file is added, removed or renamed;
 * - after a successful build, a stamp records the time the build STARTED: a file saved during the build
 *   is newer than the stamp, so the next call builds again;
 * - no stamp, an output missing, or any input newer than the stamp: build.
 *
 *   node scripts/ensure-built.mjs                  # packages/server/tsconfig.build.json
 *   node scripts/ensure-built.mjs <entry> [args]   # then runs <entry> in this process, with [args]
 *
 * With an entry (what `pnpm start` and `pnpm laari` do), the entry runs in this same process, as if it
 * had been started as `node <entry> [args]`: one `node` starting instead of two, about 0.1 s of every call.
 */
import { execFileSync } from "node:child_process"
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const root = Path.resolve(fileURLToPath(import.meta.url), "../..")

/** The project directories of the build graph of `tsconfig` (a path to a tsconfig file), itself first. */
const graph = (tsconfig, seen = new Set()) => {
  const file = Path.resolve(tsconfig)
  if (seen.has(file)) return []
  seen.add(file)
  const config = JSON.parse(readFileSync(file, "utf8"))
  const dir = Path.dirname(file)
  const projects = [{ dir, tsconfig: file, config }]
  for (const reference of config.references ?? []) {
    const target = Path.resolve(dir, reference.path)
    projects.push(...graph(target.endsWith(".json") ? target : Path.join(target, "tsconfig.json"), seen))
  }
  return projects
}

/** The newest modification time (ms) of `path` and, for a folder, of everything under it, and whose it is. */
const newest = (path) => {
  let stat
  try {
    stat = statSync(path)
  } catch {
    return { time: 0, path }
  }
  let found = { time: stat.mtimeMs, path }
  if (stat.isDirectory())
    for (const entry of readdirSync(path)) {
      const inner = newest(Path.join(path, entry))
      if (inner.time > found.time) found = inner
    }
  return found
}

/**
 * Why `tsconfig`'s build must run, or undefined when its outputs are current. `outputs` are files that
 * must exist; `stamp` is the file holding the start time of the last successful build.
 */
export const staleness = ({ root, tsconfig, stamp, outputs, bundles = [] }) => {
  if (!existsSync(stamp)) return "never built here"
  const missing = outputs.find((output) => !existsSync(output))
  if (missing !== undefined) return `${Path.relative(root, missing)} is missing`
  const builtAt = Number(readFileSync(stamp, "utf8"))
  if (!Number.isFinite(builtAt)) return "the stamp is unreadable"
  const inputs = [
    Path.join(root, "tsconfig.base.json"),
    Path.join(root, "package.json"),
    Path.join(root, "pnpm-lock.yaml"),
    ...bundles
  ]
  for (const project of graph(tsconfig)) {
    inputs.push(project.tsconfig, Path.join(project.dir, "package.json"))
    for (const included of project.config.include ?? ["src"]) inputs.push(Path.join(project.dir, included))
  }
  for (const input of inputs) {
    const changed = newest(input)
    if (changed.time >= builtAt) return `${Path.relative(root, changed.path)} changed`
  }
  return undefined
}

/**
 * Builds when stale (with `build`, by default `tsc -b` then each script of `bundles`); returns whether it
 * built. Throws when the build fails.
 */
export const ensureBuilt = ({
  root,
  tsconfig,
  stamp,
  outputs,
  bundles = [],
  build = () => {
    execFileSync(process.execPath, [Path.join(root, "node_modules/typescript/bin/tsc"), "-b", tsconfig], {
      cwd: root,
      stdio: "inherit"
    })
    // A bundle reads what tsc emitted: after it, in the same build, so the stamp covers both.
    for (const script of bundles) execFileSync(process.execPath, [script], { cwd: root, stdio: "inherit" })
  }
}) => {
  const reason = staleness({ root, tsconfig, stamp, outputs, bundles })
  if (reason === undefined) return false
  const startedAt = Date.now()
  console.error(`building the service (${reason})`)
  build(reason)
  mkdirSync(Path.dirname(stamp), { recursive: true })
  writeFileSync(stamp, String(startedAt))
  return true
}

/**
 * Runs the module `entry` in this process as `node <entry> ...args` would: it reads its arguments from
 * process.argv[2..], and `cluster.fork` (several server processes) re-runs process.argv[1].
 */
export const runEntry = async (entry, args) => {
  const file = Path.resolve(entry)
  process.argv = [process.argv[0], file, ...args]
  await import(pathToFileURL(file).href)
}

/** The service's build: what `pnpm start` and `pnpm laari` run. */
export const server = {
  root,
  tsconfig: Path.join(root, "packages/server/tsconfig.build.json"),
  stamp: Path.join(root, "packages/server/build/ensure-built.stamp"),
  // The bundles `pnpm start` and `pnpm laari` run (packages/server/dist/bin.js and dist/Cli/laari.js pick them).
  bundles: [Path.join(root, "scripts/bundle-server.mjs"), Path.join(root, "scripts/bundle-cli.mjs")],
  outputs: [
    Path.join(root, "packages/core/dist/index.js"),
    Path.join(root, "packages/server/dist/bin.js"),
    Path.join(root, "packages/server/dist/main.js"),
    Path.join(root, "packages/server/build/laari-server.js"),
    Path.join(root, "packages/server/dist/Cli/main.js"),
    Path.join(root, "packages/server/dist/Cli/laari.js"),
    Path.join(root, "packages/server/build/laari-cli.js")
  ]
}

if (process.argv[1] !== undefined && Path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    ensureBuilt(server)
  } catch {
    // tsc printed its errors; nothing stale runs.
    process.exit(1)
  }
  const [entry, ...args] = process.argv.slice(2)
  if (entry !== undefined) await runEntry(entry, args)
}
