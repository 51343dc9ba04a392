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
import { execFileSync, spawn } from "node:child_process"
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { createInterface } from "node:readline"
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
 * Builds when stale (with `build`, by default `tsc -b` then each script of `bundles`, in silence but for
 * their errors); returns whether it built. Throws when the build fails. A `build` that returns a promise
 * (`buildWithProgress`) makes this return one too.
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
  const built = () => {
    mkdirSync(Path.dirname(stamp), { recursive: true })
    writeFileSync(stamp, String(startedAt))
    return true
  }
  const running = build(reason)
  return running instanceof Promise ? running.then(built) : built()
}

/** The project whose compiling `tsc -b --verbose` announces in `line` (its tsconfig), if it does. */
export const compiling = (line) => /^\S.* - Building project '(.+)'\.\.\.\s*$/.exec(line)?.[1]

/** `tsc -b --verbose`'s own messages, which the progress lines replace; anything else (errors) is shown. */
const verboseMessage =
  /^\S.* - (Projects in this build:|Project '|Building project '|Updating output timestamps|Updating unchanged output timestamps|Skipping build of project|A non-dry build would)/

const signals = ["SIGTERM", "SIGINT", "SIGHUP"]

/**
 * Runs `node ...args` in `cwd`, each line of its output to `onLine` (or straight through without one). A
 * signal to stop this process is passed on to it, and once it has ended this process ends as that signal
 * says: a `pnpm start` stopped while it builds leaves no compiler running.
 */
const step = (args, cwd, onLine) =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, {
      cwd,
      stdio: ["ignore", onLine === undefined ? "inherit" : "pipe", "inherit"]
    })
    let stoppedBy
    const forward = (signal) => {
      stoppedBy = signal
      child.kill(signal)
    }
    for (const signal of signals) process.on(signal, forward)
    if (onLine !== undefined) createInterface({ input: child.stdout, crlfDelay: Infinity }).on("line", onLine)
    child.once("error", reject)
    child.once("close", (code, signal) => {
      for (const s of signals) process.off(s, forward)
      if (stoppedBy !== undefined) process.kill(process.pid, stoppedBy)
      else if (code === 0) resolve()
      else reject(new Error(`${Path.basename(args[0])} ended with ${signal ?? `status ${code}`}`))
    })
  })

/**
 * The build `pnpm start` and `pnpm laari` run: `tsc -b` then each script of `bundles`, saying as it goes
 * what it is doing and for how long it has been at it (`log`), and again after `quietMs` of silence, so a
 * first build's minute is not a minute of nothing. The compiler's errors are shown as it prints them.
 */
export const buildWithProgress =
  ({
    root,
    tsconfig,
    bundles = [],
    tsc = Path.join(root, "node_modules/typescript/bin/tsc"),
    log = (line) => process.stderr.write(`${line}\n`),
    show = (line) => process.stdout.write(`${line}\n`),
    quietMs = 10_000
  }) =>
  async () => {
    const startedAt = Date.now()
    const elapsed = () => `${Math.round((Date.now() - startedAt) / 1000)} s`
    let doing
    let saidAt
    const say = (what) => {
      doing = what
      saidAt = Date.now()
      log(`  ${what} (${elapsed()})`)
    }
    say("starting tsc -b")
    const quiet = setInterval(
      () => {
        if (Date.now() - saidAt < quietMs) return
        saidAt = Date.now()
        log(`  still ${doing} (${elapsed()})`)
      },
      Math.min(quietMs, 1_000)
    )
    quiet.unref()
    let listing = false
    try {
      await step([tsc, "-b", "--verbose", tsconfig], root, (raw) => {
        const line = raw.replace(/\r$/, "")
        const project = compiling(line)
        if (project !== undefined)
          return say(`compiling ${Path.relative(root, Path.dirname(project)) || "."}`)
        if (verboseMessage.test(line)) {
          listing = line.includes("Projects in this build:")
          return
        }
        // The list of projects under "Projects in this build:", and the blank line after each message.
        if (line.trim() === "" || (listing && /^\s+\* /.test(line))) return
        listing = false
        show(line)
      })
      // A bundle reads what tsc emitted: after it, in the same build, so the stamp covers both.
      for (const script of bundles) {
        say(`bundling with ${Path.relative(root, script)}`)
        await step([script], root)
      }
      log(`built in ${elapsed()}`)
    } finally {
      clearInterval(quiet)
    }
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
    await ensureBuilt({ ...server, build: buildWithProgress(server) })
  } catch {
    // tsc printed its errors; nothing stale runs.
    process.exit(1)
  }
  const [entry, ...args] = process.argv.slice(2)
  if (entry !== undefined) await runEntry(entry, args)
}
