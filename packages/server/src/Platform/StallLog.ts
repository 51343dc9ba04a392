/**
 * `LAARI_STALL_LOG=<directory>`: what can hold a request up, written by each process as JSON lines
 * (`stalls-<pid>.jsonl`) for the benchmark's latency timeline (`bench/src/Timeline.ts`) to line up with
 * its requests. Times are wall-clock milliseconds (`t`) and durations (`d`):
 *
 * - `gc`: each garbage collection (`perf_hooks`), with its kind;
 * - `lag`: the event loop late by more than `LagMs` (a timer ticking every `TickMs`);
 * - `pool`: statements waiting for a database connection, sampled at every tick;
 * - `job`: each run of a background job (`span`): the roll-up, the pollers, the dispatchers' claims.
 *
 * Unset (always, outside a benchmark) nothing is observed and `span` is the effect itself.
 */
import { appendFile, mkdirSync } from "node:fs"
import path from "node:path"
import { constants, PerformanceObserver } from "node:perf_hooks"
import { Effect } from "effect"

const TickMs = 10
const LagMs = 5
const FlushMs = 1_000

type Entry =
  | { readonly k: "gc"; readonly t: number; readonly d: number; readonly kind: string }
  | { readonly k: "lag"; readonly t: number; readonly d: number }
  | { readonly k: "pool"; readonly t: number; readonly waiting: number }
  | { readonly k: "job"; readonly t: number; readonly d: number; readonly name: string }

const gcKinds: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: "minor",
  [constants.NODE_PERFORMANCE_GC_MAJOR]: "major",
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: "incremental",
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: "weakcb"
}

const wall = (since: number) => performance.timeOrigin + since

let entries: Array<Entry> | undefined

/** Starts observing when `LAARI_STALL_LOG` is set; `waiting` reads the pool's waiting statements. */
export const start = (waiting: () => number | undefined): (() => void) => {
  const dir = process.env.LAARI_STALL_LOG
  if (dir === undefined || dir === "" || entries !== undefined) return () => {}
  mkdirSync(dir, { recursive: true })
  const file = path.join(dir, `stalls-${process.pid}.jsonl`)
  const buffer: Array<Entry> = []
  entries = buffer
  const gc = new PerformanceObserver((list) => {
    for (const e of list.getEntries())
      buffer.push({
        k: "gc",
        t: wall(e.startTime),
        d: e.duration,
        kind: gcKinds[(e as { detail?: { kind?: number } }).detail?.kind ?? -1] ?? "other"
      })
  })
  gc.observe({ entryTypes: ["gc"] })
  let last = performance.now()
  const tick = setInterval(() => {
    const now = performance.now()
    if (now - last - TickMs > LagMs) buffer.push({ k: "lag", t: wall(last + TickMs), d: now - last - TickMs })
    last = now
    const w = waiting()
    if (w !== undefined && w > 0) buffer.push({ k: "pool", t: wall(now), waiting: w })
  }, TickMs)
  const flush = () => {
    if (buffer.length === 0) return
    const lines = buffer.splice(0).map((e) => JSON.stringify(e))
    appendFile(file, `${lines.join("\n")}\n`, () => {})
  }
  const flusher = setInterval(flush, FlushMs)
  tick.unref()
  flusher.unref()
  return () => {
    clearInterval(tick)
    clearInterval(flusher)
    gc.disconnect()
    flush()
    entries = undefined
  }
}

/** `effect`, its run logged as a `job` named `name` while observing. */
export const span = <A, E, R>(name: string, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.suspend(() => {
    const buffer = entries
    if (buffer === undefined) return effect
    const t0 = performance.now()
    return Effect.ensuring(
      effect,
      Effect.sync(() => buffer.push({ k: "job", t: wall(t0), d: performance.now() - t0, name }))
    )
  })
