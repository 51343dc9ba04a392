/**
 * The data directory is the user's own: the server started as a user starts it makes
 * it `0700` and every file in it `0600` whatever the umask, and refuses to start on one others can read.
 */
import { execFileSync, spawn } from "node:child_process"
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync } from "node:fs"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import { Effect, Exit } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import * as DataDir from "../../src/Platform/DataDir.js"
import * as CliProcess from "../support/CliProcess.js"
import * as ServerProcess from "../support/ServerProcess.js"

const scratch = mkdtempSync(Path.join(tmpdir(), "laari-datadir-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

/** Every path under `dir`, itself included, with its permission bits. */
const modes = (dir: string): Array<[string, number]> => [
  [dir, statSync(dir).mode & 0o777],
  ...readdirSync(dir, { recursive: true, encoding: "utf8" }).map((name): [string, number] => [
    name,
    statSync(Path.join(dir, name)).mode & 0o777
  ])
]

describe("DataDir.exposure", () => {
  it("passes a private directory and refuses one with any group or other bit", () => {
    expect(DataDir.exposure("/d", 0o40700)).toBeUndefined()
    for (const mode of [0o755, 0o750, 0o701, 0o710, 0o770, 0o704])
      expect(DataDir.exposure("/d", mode)).toContain("chmod 700 /d")
  })
})

describe("the server process", () => {
  it("under umask 022 keeps a new data directory 0700 and every file in it 0600", async () => {
    const dir = Path.join(scratch, "fresh")
    const previous = process.umask(0o022)
    const server = await ServerProcess.start({ env: { LAARI_DATA_DIR: dir } }).finally(() =>
      process.umask(previous)
    )
    await server.stop()
    const all = modes(dir)
    expect(all.length).toBeGreaterThan(10)
    expect(all[0]![1]).toBe(0o700)
    expect(all.filter(([, mode]) => (mode & 0o077) !== 0)).toEqual([])
  }, 120_000)

  it("refuses, with what to do, a data directory others can read", async () => {
    const dir = Path.join(scratch, "shared")
    mkdirSync(dir)
    chmodSync(dir, 0o755)
    const server = await ServerProcess.spawnServer({ env: { LAARI_DATA_DIR: dir } })
    const exit = await Promise.race([
      server.exited,
      new Promise<undefined>((r) => setTimeout(() => r(undefined), 60_000))
    ])
    server.kill()
    expect(exit?.code).toBe(1)
    expect(server.stderr()).toContain(
      `can be read by other users (mode 755); make it private with: chmod 700 ${dir}`
    )
    expect(server.stderr()).not.toMatch(/\n\s+at /)
    expect(readdirSync(dir)).toEqual([])
  }, 120_000)
})

/**
 * One process on a data directory at a time: two services on one PGlite directory each kept their own
 * database in memory (a mandate made through one was a 404 through the other) and overwrote each other's
 * files. The second is refused at once; a holder killed with SIGKILL leaves nothing that blocks the next.
 */
describe("one process per data directory", () => {
  /** What a process that must be refused wrote, once it exited (within `withinMs`). */
  const refused = async (child: { exited: Promise<unknown>; kill: () => void }, withinMs: number) => {
    const started = Date.now()
    const exit = await Promise.race([
      child.exited,
      new Promise<"running">((r) => setTimeout(() => r("running"), withinMs))
    ])
    child.kill()
    return { exit, ms: Date.now() - started }
  }

  it("a second service on the directory is refused at once, naming the holder; after the holder's SIGKILL the next starts", async () => {
    const dir = Path.join(scratch, "one")
    const first = await ServerProcess.start({ env: { LAARI_DATA_DIR: dir } })
    const expected = `laari: ${DataDir.inUse(dir, { pid: first.pid, what: `the laari service on port ${first.port}` })}\n`
    try {
      // Through another path to the same directory, on another port.
      const second = await ServerProcess.spawnServer({ env: { LAARI_DATA_DIR: `${scratch}/./one/` } })
      const { exit, ms } = await refused(second, 30_000)
      expect(exit).toEqual({ code: 78, signal: null })
      expect(second.stderr()).toBe(expected)
      expect(second.stderr()).toContain(`the data directory ${dir} is in use by process ${first.pid}`)
      expect(second.stdout()).toBe("")
      // Refused before the database is opened: seconds, not a start's worth.
      expect(ms).toBeLessThan(15_000)
      expect((await fetch(`${first.baseUrl}/healthz`)).status).toBe(200)

      // The CLI opening the directory is refused in the same line, before any progress.
      const migrate = await CliProcess.run(["migrate"], { LAARI_DATA_DIR: dir })
      expect(migrate.code).toBe(1)
      expect(migrate.stderr).toBe(expected)
      expect(migrate.stdout).toBe("")
    } finally {
      first.kill()
      await first.exited
    }
    // No stale lock: the next start after a SIGKILL takes the directory.
    const next = await ServerProcess.start({ env: { LAARI_DATA_DIR: dir } })
    try {
      expect(next.stderr()).not.toContain("in use")
      const migrate = await CliProcess.run(["migrate"], { LAARI_DATA_DIR: dir })
      expect(migrate.stderr).toBe(
        `laari: ${DataDir.inUse(dir, { pid: next.pid, what: `the laari service on port ${next.port}` })}\n`
      )
    } finally {
      expect((await next.stop()).code).toBe(0)
    }
    // Stopped cleanly, it lets go too: migrate runs.
    const migrate = await CliProcess.run(["migrate"], { LAARI_DATA_DIR: dir })
    expect(migrate.stderr).toBe("")
    expect(migrate.code).toBe(0)
  }, 240_000)

  it("the lock is shared within a process, refused to another, and released by the operating system when its holder dies", async () => {
    const dir = Path.join(scratch, "lock")
    mkdirSync(dir, { mode: 0o700 })
    // A holder in another process, killed with SIGKILL while it holds the directory.
    const holder = spawn(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `import * as Net from "node:net"
         const server = Net.createServer((s) => s.end(JSON.stringify({ pid: process.pid, what: "a test holder" })))
         server.listen(${JSON.stringify(DataDir.lockAddress(dir))}, () => console.log("held"))`
      ],
      { stdio: ["ignore", "pipe", "inherit"] }
    )
    await new Promise((r) => holder.stdout!.once("data", r))
    const taken = await Effect.runPromiseExit(Effect.scoped(DataDir.lock(dir)))
    expect(taken).toEqual(
      Exit.fail(
        new DataDir.DataDirInUse({
          message: DataDir.inUse(dir, { pid: holder.pid!, what: "a test holder" }),
          pid: holder.pid!
        })
      )
    )
    holder.kill("SIGKILL")
    await new Promise((r) => holder.once("exit", r))
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          yield* DataDir.lock(dir, "this test")
          // The same process again (the service, then its database): shared, not refused.
          yield* Effect.scoped(DataDir.lock(dir, "this test"))
          yield* DataDir.lock(dir, "this test")
        })
      )
    )
    // Released when the last hold ends: another process may take it.
    const other = execFileSync(process.execPath, [
      "--input-type=module",
      "-e",
      `import * as Net from "node:net"
       const server = Net.createServer().listen(${JSON.stringify(DataDir.lockAddress(dir))}, () => { console.log("took"); server.close() })
       server.on("error", (e) => console.log(e.code))`
    ])
    expect(other.toString().trim()).toBe("took")
  })

  it("names the lock by the directory itself on Linux, and by a socket file in it elsewhere", () => {
    const dir = Path.join(scratch, "named")
    mkdirSync(dir, { mode: 0o700 })
    symlinkSync(dir, Path.join(scratch, "named-link"))
    expect(DataDir.lockAddress(Path.join(scratch, "named-link"), "linux")).toBe(
      DataDir.lockAddress(dir, "linux")
    )
    expect(DataDir.lockAddress(dir, "linux")).toMatch(/^\0laari-data-dir:\d+:\d+$/)
    expect(DataDir.lockAddress(dir, "darwin")).toBe(Path.join(dir, "laari.lock"))
  })
})
