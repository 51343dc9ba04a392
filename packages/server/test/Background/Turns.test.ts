/**
 * `Turns`: background polls of several processes take turns, and the jobs of one process keep apart
 * within the period; `StallLog`: what the benchmark's latency timeline lines requests up with.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import os from "node:os"
import path from "node:path"
import { Work } from "@laari/core"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import * as Processes from "../../src/Processes.js"
import * as StallLog from "../../src/Platform/StallLog.js"
import * as Turns from "../../src/Background/Turns.js"

describe("Turns", () => {
  it("reads the slot the supervisor gives, and is alone without one", () => {
    expect(Turns.slot({ [Turns.SlotEnv]: Turns.slotValue({ index: 1, count: 3 }) })).toMatchObject({
      index: 1,
      count: 3
    })
    for (const bad of [undefined, "", "3/3", "1", "a/b", "1/0"])
      expect(Turns.slot({ [Turns.SlotEnv]: bad })).toMatchObject({ index: 0, count: 1 })
  })

  it("shifts each host's turns by a share of the period drawn from its name", () => {
    const env = { [Turns.SlotEnv]: Turns.slotValue({ index: 0, count: 2 }) }
    const a = Turns.slot(env, "laari-a")
    const b = Turns.slot(env, "laari-b")
    expect(Turns.slot(env, "laari-a")).toEqual(a)
    expect(a.shift).not.toBe(b.shift)
    for (const s of [a, b]) expect(s.shift).toBeGreaterThanOrEqual(0)
    for (const s of [a, b]) expect(s.shift).toBeLessThan(1)
    // Slot 0 of each host polls at its own instant of the period.
    expect(Turns.untilTurn(a, 1_000, 0, 0)).not.toBe(Turns.untilTurn(b, 1_000, 0, 0))
    expect(Turns.untilTurn(a, 1_000, 0, 0) % 1_000).toBeCloseTo(a.shift! * 1_000)
  })

  it("gives each of N processes a turn every N periods, the cluster one every period", () => {
    for (const count of [1, 2, 3, 4])
      for (const now of [0, 1, 999, 1_000, 123_456_789]) {
        const turns = Array.from(
          { length: count },
          (_, index) => now + Turns.untilTurn({ index, count }, 1_000, 0.25, now)
        ).sort((a, b) => a - b)
        for (const t of turns) {
          expect(t).toBeGreaterThan(now)
          expect(t - now).toBeLessThanOrEqual(1_000 * count)
          expect(((t % 1_000) + 1_000) % 1_000).toBe(250)
        }
        // One turn per period, each process's in its own period.
        for (let i = 1; i < turns.length; i++) expect(turns[i]! - turns[i - 1]!).toBe(1_000)
      }
  })

  it("keeps a process's jobs apart within the period, and waits a whole cycle on the turn itself", () => {
    const slot = { index: 0, count: 2 }
    expect(Turns.untilTurn(slot, 1_000, 0, 0)).toBe(2_000)
    expect(Turns.untilTurn(slot, 1_000, 0.5, 0)).toBe(500)
    expect(Turns.untilTurn({ index: 1, count: 2 }, 1_000, 0.5, 0)).toBe(1_500)
    expect(Turns.untilTurn(slot, 1_000, 0.5, 600)).toBe(1_900)
  })

  it("waits by the wall clock: a manual clock standing 1 ms before a turn does not make it poll each ms", async () => {
    const manual = Work.makeManualClock(199)
    const started = Date.now()
    await Effect.runPromise(
      Effect.repeatN(Turns.wait({ index: 0, count: 1 }, 200, 0), 2).pipe(Effect.withClock(manual.clock))
    )
    // Three turns of a 200 ms period: at least two whole periods, where the manual clock gave 3 ms.
    expect(Date.now() - started).toBeGreaterThanOrEqual(390)
  })
})

describe("the processes' node settings", () => {
  it("gives serving processes 16 MiB semi-spaces, a 100% old-generation growth, and the malloc thresholds unless set", () => {
    expect(
      Processes.processNodeArgs([
        "--enable-source-maps",
        "--max-semi-space-size=4",
        "--heap-growing-percent=50"
      ])
    ).toEqual(["--enable-source-maps", "--max-semi-space-size=16", "--heap-growing-percent=100"])
    expect(Processes.processNodeArgs([])).toEqual(["--max-semi-space-size=16", "--heap-growing-percent=100"])
    expect(Processes.processMallocEnv({})).toEqual({
      MALLOC_MMAP_THRESHOLD_: "131072",
      MALLOC_TRIM_THRESHOLD_: "131072"
    })
    expect(Processes.processMallocEnv({ MALLOC_TRIM_THRESHOLD_: "0" })).toEqual({
      MALLOC_MMAP_THRESHOLD_: "131072"
    })
  })
})

describe("StallLog", () => {
  it("logs nothing unless LAARI_STALL_LOG names a directory; then job runs, event-loop lag and pool waits", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "stalls-"))
    const before = process.env.LAARI_STALL_LOG
    try {
      delete process.env.LAARI_STALL_LOG
      StallLog.start(() => 1)()
      expect(await Effect.runPromise(StallLog.span("idle", Effect.succeed(7)))).toBe(7)
      expect(readdirSync(dir)).toEqual([])

      process.env.LAARI_STALL_LOG = dir
      const stop = StallLog.start(() => 2)
      await new Promise((r) => setTimeout(r, 30))
      expect(await Effect.runPromise(StallLog.span("work", Effect.as(Effect.sleep(20), 7)))).toBe(7)
      const t0 = Date.now()
      while (Date.now() - t0 < 60) {
        // the event loop held up
      }
      await new Promise((r) => setTimeout(r, 30))
      stop()
      await new Promise((r) => setTimeout(r, 100))
      const lines = readFileSync(path.join(dir, `stalls-${process.pid}.jsonl`), "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l))
      const job = lines.find((e) => e.k === "job")
      expect(job).toMatchObject({ k: "job", name: "work" })
      expect(job.d).toBeGreaterThanOrEqual(15)
      expect(Math.abs(job.t - Date.now())).toBeLessThan(5_000)
      expect(lines.some((e) => e.k === "lag" && e.d >= 40)).toBe(true)
      expect(lines.some((e) => e.k === "pool" && e.waiting === 2)).toBe(true)
    } finally {
      if (before === undefined) delete process.env.LAARI_STALL_LOG
      else process.env.LAARI_STALL_LOG = before
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
