/**
 * The data directory is the user's own (issue 23, item 1): the server started as a user starts it makes
 * it `0700` and every file in it `0600` whatever the umask, and refuses to start on one others can read.
 */
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import * as DataDir from "../src/Platform/DataDir.js"
import * as ServerProcess from "./support/ServerProcess.js"

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
