/**
 * `pnpm start` and `pnpm laari` skip `tsc -b` when dist is current (scripts/ensure-built.mjs): every kind
 * of change to what the build reads must make it build again, and nothing else may. A small project graph
 * in a temporary folder stands in for the service's, with a build that only counts and writes outputs.
 */
import { execFileSync, spawn } from "node:child_process"
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  readFileSync,
  unlinkSync,
  utimesSync,
  writeFileSync
} from "node:fs"
import os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { duplicates } from "../../../../scripts/bundle-server.mjs"
import {
  buildWithProgress,
  compiling,
  ensureBuilt,
  runEntry,
  server,
  staleness
} from "../../../../scripts/ensure-built.mjs"

let root: string
let builds: number
const write = (file: string, text: string) => {
  mkdirSync(Path.dirname(Path.join(root, file)), { recursive: true })
  writeFileSync(Path.join(root, file), text)
}
const project = () => ({
  root,
  tsconfig: Path.join(root, "app/tsconfig.build.json"),
  stamp: Path.join(root, "app/build/stamp"),
  outputs: [Path.join(root, "app/dist/main.js")],
  build: () => {
    builds++
    write("app/dist/main.js", "")
  }
})
/** A save of `file` after the last build; the clock then moves on, so the next build starts later. */
const touch = (file: string) => {
  const now = new Date(Date.now() + 1)
  utimesSync(Path.join(root, file), now, now)
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5)
}

beforeEach(() => {
  root = mkdtempSync(Path.join(os.tmpdir(), "laari-ensure-built-"))
  builds = 0
  for (const file of [
    "tsconfig.base.json",
    "package.json",
    "pnpm-lock.yaml",
    "lib/package.json",
    "app/package.json"
  ])
    write(file, "{}")
  write("lib/tsconfig.build.json", JSON.stringify({ include: ["src"] }))
  write(
    "app/tsconfig.build.json",
    JSON.stringify({ include: ["src"], references: [{ path: "../lib/tsconfig.build.json" }] })
  )
  write("lib/src/a.ts", "export const a = 1")
  write("app/src/deep/b.ts", "export const b = 1")
  // Saved a minute ago: on a fast machine the first build would otherwise start in the millisecond the
  // fixture was written, and count it as changed since (a save in the build's millisecond must count).
  const past = new Date(Date.now() - 60_000)
  const age = (path: string) => {
    if (statSync(path).isDirectory()) for (const entry of readdirSync(path)) age(Path.join(path, entry))
    utimesSync(path, past, past)
  }
  age(root)
})
afterEach(() => rmSync(root, { recursive: true, force: true }))

describe("ensure-built", () => {
  it("builds the first time, then not again while nothing changed", () => {
    expect(ensureBuilt(project())).toBe(true)
    expect(ensureBuilt(project())).toBe(false)
    expect(ensureBuilt(project())).toBe(false)
    expect(builds).toBe(1)
  })

  it.each([
    ["a source of the project", "app/src/deep/b.ts"],
    ["a source of a referenced project", "lib/src/a.ts"],
    ["a tsconfig of the graph", "lib/tsconfig.build.json"],
    ["the base tsconfig", "tsconfig.base.json"],
    ["the lockfile", "pnpm-lock.yaml"],
    ["a package.json", "app/package.json"]
  ])("builds again after a change to %s", (_, file) => {
    ensureBuilt(project())
    touch(file)
    expect(staleness(project())).toBe(`${file} changed`)
    expect(ensureBuilt(project())).toBe(true)
    expect(builds).toBe(2)
    expect(ensureBuilt(project())).toBe(false)
  })

  it("builds again after a change to a bundling script, which the service's build runs after tsc", () => {
    write("scripts/bundle.mjs", "")
    const bundled = { ...project(), bundles: [Path.join(root, "scripts/bundle.mjs")] }
    ensureBuilt(bundled)
    touch("scripts/bundle.mjs")
    expect(staleness(bundled)).toBe("scripts/bundle.mjs changed")
    expect(ensureBuilt(bundled)).toBe(true)
    expect(ensureBuilt(bundled)).toBe(false)
    // `pnpm start` and `pnpm laari` run the bundles: their scripts are inputs, their entries outputs.
    expect(server.bundles.map((file) => Path.relative(server.root, file))).toEqual([
      "scripts/bundle-server.mjs",
      "scripts/bundle-cli.mjs"
    ])
    expect(server.outputs.map((file) => Path.relative(server.root, file))).toEqual(
      expect.arrayContaining(["packages/server/build/laari-server.js", "packages/server/build/laari-cli.js"])
    )
  })

  it("builds again when a source is added or removed, and when an output is gone", () => {
    ensureBuilt(project())
    write("app/src/deep/c.ts", "export const c = 1")
    touch("app/src/deep/c.ts")
    expect(ensureBuilt(project())).toBe(true)
    unlinkSync(Path.join(root, "lib/src/a.ts"))
    touch("lib/src")
    expect(staleness(project())).toBe("lib/src changed")
    expect(ensureBuilt(project())).toBe(true)
    unlinkSync(Path.join(root, "app/dist/main.js"))
    expect(staleness(project())).toBe("app/dist/main.js is missing")
    expect(ensureBuilt(project())).toBe(true)
    expect(builds).toBe(4)
  })

  it("a file saved while the build runs is built again next time; a failed build leaves no stamp", () => {
    ensureBuilt({ ...project(), build: () => touch("app/src/deep/b.ts") })
    expect(ensureBuilt(project())).toBe(true)
    touch("lib/src/a.ts")
    expect(() =>
      ensureBuilt({
        ...project(),
        build: () => {
          throw new Error("tsc failed")
        }
      })
    ).toThrow("tsc failed")
    expect(staleness(project())).toBe("lib/src/a.ts changed")
  })

  it("the service's build reads core's and the server's sources", () => {
    // The real graph, read only: a change to either package's sources must count.
    const reason = staleness({ ...server, stamp: Path.join(root, "stamp") })
    expect(reason).toBe("never built here")
    writeFileSync(Path.join(root, "stamp"), "0")
    const stale = staleness({ ...server, stamp: Path.join(root, "stamp"), outputs: [] })
    expect(stale).toMatch(/changed$/)
    writeFileSync(Path.join(root, "stamp"), String(Date.now() + 3_600_000))
    expect(staleness({ ...server, stamp: Path.join(root, "stamp"), outputs: [] })).toBeUndefined()
  })

  it("runs the entry in its own process, with the entry and its arguments where node would put them", async () => {
    // `pnpm start` / `pnpm laari`: one node process checks the build, then runs the service or the CLI.
    write(
      "app/dist/entry.mjs",
      "globalThis.laariEntrySaw = { argv: process.argv.slice(1), pid: process.pid }"
    )
    const saved = process.argv
    try {
      await runEntry(Path.join(root, "app/dist/entry.mjs"), ["merchants", "list", "--json"])
      const saw = (globalThis as { laariEntrySaw?: { argv: Array<string>; pid: number } }).laariEntrySaw
      expect(saw).toEqual({
        argv: [Path.join(root, "app/dist/entry.mjs"), "merchants", "list", "--json"],
        pid: process.pid
      })
    } finally {
      process.argv = saved
    }
  })

  /** The compiled launchers in a copy of the server's layout, with bundles and dists that say which ran. */
  const layout = () => {
    const dist = Path.resolve(fileURLToPath(import.meta.url), "../../../dist")
    mkdirSync(Path.join(root, "packages/server/dist/Cli"), { recursive: true })
    for (const file of ["bin.js", "Bundle.js", "Cli/laari.js"])
      copyFileSync(Path.join(dist, file), Path.join(root, "packages/server/dist", file))
    write("packages/server/package.json", JSON.stringify({ type: "module" }))
    write("packages/server/dist/main.js", 'console.log("dist", process.argv.slice(2).join(" "))')
    write("packages/server/dist/Cli/main.js", 'console.log("dist", process.argv.slice(2).join(" "))')
    write("packages/server/build/laari-server.js", 'console.log("bundle", process.argv.slice(2).join(" "))')
    write("packages/server/build/laari-cli.js", 'console.log("bundle", process.argv.slice(2).join(" "))')
    write("packages/server/build/tsconfig.build.tsbuildinfo", "{}")
    write("packages/core/build/tsconfig.build.tsbuildinfo", "{}")
  }
  const at = (minutes: number, file: string) => {
    const time = new Date(Date.now() + minutes * 60_000)
    utimesSync(Path.join(root, file), time, time)
  }
  const run =
    (launcher: string) =>
    (...args: Array<string>) =>
      execFileSync(process.execPath, [Path.join(root, "packages/server/dist", launcher), ...args])
        .toString()
        .trim()

  /**
   * The bundle `name` of packages/server/build, made after the last `tsc -b`, runs; after a `pnpm build`
   * of either package since, or without the bundle (the packed package ships dist alone), dist runs.
   */
  const expectTheBundleWhileCurrent = (launch: (...args: Array<string>) => string, name: string) => {
    const bundle = `packages/server/build/${name}`
    at(0, "packages/core/build/tsconfig.build.tsbuildinfo")
    expect(launch("--help")).toBe("dist --help")
    at(-2, "packages/core/build/tsconfig.build.tsbuildinfo")
    at(0, "packages/server/build/tsconfig.build.tsbuildinfo")
    expect(launch("--help")).toBe("dist --help")
    at(1, bundle)
    expect(launch("--help")).toBe("bundle --help")
    unlinkSync(Path.join(root, bundle))
    expect(launch("--help")).toBe("dist --help")
  }

  it.each([
    ["pnpm start's", "bin.js", "laari-server.js"],
    ["pnpm laari's", "Cli/laari.js", "laari-cli.js"]
  ])(
    "%s launcher (dist/%s) runs its bundle (build/%s) only when it is newer than the last tsc -b",
    (_, launcher, name) => {
      layout()
      const launch = run(launcher)
      at(-2, "packages/server/build/tsconfig.build.tsbuildinfo")
      at(-2, "packages/core/build/tsconfig.build.tsbuildinfo")
      at(-1, `packages/server/build/${name}`)
      expect(launch("merchants", "list")).toBe("bundle merchants list")
      expectTheBundleWhileCurrent(launch, name)
    }
  )

  it("pnpm laari's launcher runs serve and migrate from dist: the server is not in the CLI's bundle", () => {
    layout()
    const laari = run("Cli/laari.js")
    at(-2, "packages/server/build/tsconfig.build.tsbuildinfo")
    at(-2, "packages/core/build/tsconfig.build.tsbuildinfo")
    at(-1, "packages/server/build/laari-cli.js")
    expect(laari("serve")).toBe("dist serve")
    expect(laari("migrate", "--help")).toBe("dist migrate --help")
    expect(laari("--help")).toBe("bundle --help")
  })

  it("the server's bundle holds one build of each library", () => {
    const inputs = (...files: Array<string>) => ({
      inputs: Object.fromEntries(files.map((file) => [file, {}]))
    })
    const store = "node_modules/.pnpm"
    // A package's ES and CommonJS builds of one file, in either layout: twice.
    expect(
      duplicates(
        inputs(
          `${store}/@opentelemetry+api@1.10.0/node_modules/@opentelemetry/api/dist/index.mjs`,
          `${store}/@opentelemetry+api@1.10.0/node_modules/@opentelemetry/api/dist/index.cjs`,
          `${store}/q@2.0.0/node_modules/q/dist/esm/index.js`,
          `${store}/q@2.0.0/node_modules/q/dist/cjs/index.js`
        )
      )
    ).toHaveLength(2)
    // Distinct files of one build, two versions the lockfile holds, and laari's own files: once each.
    expect(
      duplicates(
        inputs(
          `${store}/effect@3.22.4/node_modules/effect/dist/esm/Effect.js`,
          `${store}/effect@3.22.4/node_modules/effect/dist/esm/Layer.js`,
          `${store}/@opentelemetry+core@2.12.0_x/node_modules/@opentelemetry/core/build/src/index.js`,
          `${store}/@opentelemetry+core@2.12.1_x/node_modules/@opentelemetry/core/build/src/index.js`,
          "packages/server/dist/main.js"
        )
      )
    ).toEqual([])
  })
})

/**
 * The first `pnpm start` compiles for about a minute: it says what it is compiling and bundling, with the
 * seconds since it began, and again whenever it has said nothing for a while. Real tsc on a graph of two
 * small projects; a bundling script that takes its time.
 */
describe("the build pnpm start runs", () => {
  const repository = Path.resolve(fileURLToPath(import.meta.url), "../../../../..")
  const tsc = Path.join(repository, "node_modules/typescript/bin/tsc")
  const composite = (extra: object = {}) =>
    JSON.stringify({
      compilerOptions: {
        composite: true,
        rootDir: "src",
        outDir: "dist",
        module: "esnext",
        target: "es2022",
        types: []
      },
      include: ["src"],
      ...extra
    })
  const graph = (bundle: string) => {
    write("lib/tsconfig.build.json", composite())
    write("app/tsconfig.build.json", composite({ references: [{ path: "../lib/tsconfig.build.json" }] }))
    write("scripts/bundle.mjs", bundle)
    // Saved before the build, as the fixture is: a file's time can trail the clock a tick on a busy machine,
    // and one saved in the build's millisecond counts as changed since.
    const past = new Date(Date.now() - 60_000)
    for (const file of ["lib/tsconfig.build.json", "app/tsconfig.build.json", "scripts/bundle.mjs"])
      utimesSync(Path.join(root, file), past, past)
    return {
      ...project(),
      outputs: [Path.join(root, "app/dist/deep/b.js")],
      bundles: [Path.join(root, "scripts/bundle.mjs")],
      tsc
    }
  }

  it("says each project it compiles and each bundle, with the seconds since it began, and again in a silence", async () => {
    const build = graph("setTimeout(() => {}, 700)")
    const said: Array<string> = []
    const shown: Array<string> = []
    const progress = buildWithProgress({
      ...build,
      log: (l) => said.push(l),
      show: (l) => shown.push(l),
      quietMs: 200
    })
    expect(await ensureBuilt({ ...build, build: progress })).toBe(true)
    const steps = said.filter((l) => !l.startsWith("  still "))
    expect(steps.map((l) => l.replace(/\(\d+ s\)$/, "(N s)"))).toEqual([
      "  starting tsc -b (N s)",
      "  compiling lib (N s)",
      "  compiling app (N s)",
      "  bundling with scripts/bundle.mjs (N s)",
      expect.stringMatching(/^built in \d+ s$/)
    ])
    // The bundle took 700 ms with nothing said: said again, what it is still doing.
    const bundling = said.indexOf(steps[3]!)
    expect(said[bundling + 1]).toMatch(/^ {2}still bundling with scripts\/bundle\.mjs \(\d+ s\)$/)
    // tsc's own account of what it builds is not shown beside the progress.
    expect(shown).toEqual([])
    expect(staleness(build)).toBeUndefined()
    expect(compiling("6:23:06 AM - Building project '/r/packages/core/tsconfig.build.json'...")).toBe(
      "/r/packages/core/tsconfig.build.json"
    )
  }, 60_000)

  it("shows the compiler's errors as it prints them, and a failed build leaves no stamp", async () => {
    const build = graph("")
    write("app/src/bad.ts", 'export const n: number = "one"')
    const shown: Array<string> = []
    const progress = buildWithProgress({ ...build, log: () => {}, show: (l) => shown.push(l) })
    await expect(ensureBuilt({ ...build, build: progress })).rejects.toThrow()
    expect(shown).toEqual([expect.stringMatching(/^app\/src\/bad\.ts\(1,14\): error TS2322: /)])
    expect(staleness(build)).toBe("never built here")
  }, 60_000)

  it("a SIGTERM while it builds stops what it runs, and ends it as the signal does", async () => {
    const pidFile = Path.join(root, "bundle.pid")
    const build = graph(
      `import { writeFileSync } from "node:fs"; writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setTimeout(() => {}, 60_000)`
    )
    const script = Path.join(repository, "scripts/ensure-built.mjs")
    const builder = spawn(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `import { buildWithProgress } from ${JSON.stringify(script)}
         await buildWithProgress(${JSON.stringify({ root: build.root, tsconfig: build.tsconfig, bundles: build.bundles, tsc })})()`
      ],
      { stdio: "ignore" }
    )
    const exited = new Promise<{ code: number | null; signal: string | null }>((r) =>
      builder.once("exit", (code, signal) => r({ code, signal }))
    )
    const deadline = Date.now() + 50_000
    while (!existsSync(pidFile) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
    const bundlePid = Number(readFileSync(pidFile, "utf8"))
    builder.kill("SIGTERM")
    expect(await exited).toEqual({ code: null, signal: "SIGTERM" })
    const alive = () => {
      try {
        process.kill(bundlePid, 0)
        return true
      } catch {
        return false
      }
    }
    expect(alive()).toBe(false)
  }, 60_000)
})
