/**
 * A latency timeline: each request's start and latency, bucketed in time, lined up
 * with what the server says held it up (`LAARI_STALL_LOG`, `packages/server/src/StallLog.ts`: garbage
 * collections, event-loop lag, statements waiting for a connection, runs of background jobs).
 *
 * `record(shot)` wraps a workload's shot; `report` prints the slowest buckets, the share of slow requests
 * that overlapped each kind of server event, and returns it all for the results' JSON.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs"
import path from "node:path"
import type * as Load from "./Load.js"

export interface ServerEvent {
  readonly k: "gc" | "lag" | "pool" | "job"
  /** Wall-clock start, milliseconds. */
  readonly t: number
  readonly d?: number
  readonly kind?: string
  readonly name?: string
  readonly waiting?: number
  readonly pid: number
}

const wall = () => performance.timeOrigin + performance.now()

/** Percentile `p` (0-100) of sorted numbers. */
export const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!

const round = (x: number, digits = 1) => Number(x.toFixed(digits))

export const make = () => {
  const starts: Array<number> = []
  const latencies: Array<number> = []
  const record =
    (shot: Load.Shot): Load.Shot =>
    (i) => {
      const t0 = wall()
      const done = () => {
        starts.push(t0)
        latencies.push(wall() - t0)
      }
      return shot(i).then(
        (r) => {
          done()
          return r
        },
        (e) => {
          done()
          throw e
        }
      )
    }
  return { record, report: (options: ReportOptions) => report(starts, latencies, options) }
}

export interface ReportOptions {
  /** The directory of the server's `stalls-<pid>.jsonl`, if it logged any. */
  readonly stallDir?: string
  readonly bucketMs?: number
  /** A request at least this slow counts as slow (default 50 ms, the goal's p99). */
  readonly slowMs?: number
  readonly print?: (line: string) => void
}

/** Every event the server logged, each with its process id. */
export const readStalls = (dir: string | undefined): Array<ServerEvent> => {
  if (dir === undefined || !existsSync(dir)) return []
  return readdirSync(dir)
    .filter((f) => /^stalls-\d+\.jsonl$/.test(f))
    .flatMap((f) => {
      const pid = Number(/\d+/.exec(f)![0])
      return readFileSync(path.join(dir, f), "utf8")
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => ({ ...JSON.parse(l), pid }) as ServerEvent)
    })
}

/** What an event is called in the attribution: a GC by kind, a job by name. */
const label = (e: ServerEvent) =>
  e.k === "gc"
    ? `gc ${e.kind}`
    : e.k === "job"
      ? `job ${e.name}`
      : e.k === "pool"
        ? "pool wait"
        : "event-loop lag"

const report = (starts: ReadonlyArray<number>, latencies: ReadonlyArray<number>, options: ReportOptions) => {
  const bucketMs = options.bucketMs ?? 100
  const slowMs = options.slowMs ?? 50
  const print = options.print ?? ((l: string) => console.error(l))
  const n = starts.length
  const t0 = Math.min(...starts)
  const t1 = Math.max(...starts.map((s, i) => s + latencies[i]!))
  const all = [...latencies].sort((a, b) => a - b)
  const overall = {
    requests: n,
    p50: round(percentile(all, 50), 2),
    p99: round(percentile(all, 99), 2),
    p999: round(percentile(all, 99.9), 2),
    max: round(percentile(all, 100), 2)
  }
  // Buckets by start time.
  const buckets = new Map<number, Array<number>>()
  for (let i = 0; i < n; i++) {
    const b = Math.floor((starts[i]! - t0) / bucketMs)
    const list = buckets.get(b) ?? []
    list.push(latencies[i]!)
    buckets.set(b, list)
  }
  const events = readStalls(options.stallDir).filter((e) => e.t + (e.d ?? 0) >= t0 && e.t <= t1)
  const overlapping = (from: number, to: number) =>
    events.filter((e) => e.t <= to && e.t + (e.d ?? 0) >= from)
  const describe = (list: ReadonlyArray<ServerEvent>) => {
    const by = new Map<string, { count: number; ms: number; waiting: number }>()
    for (const e of list) {
      const key = `${label(e)}@${e.pid}`
      const x = by.get(key) ?? { count: 0, ms: 0, waiting: 0 }
      x.count++
      x.ms += e.d ?? 0
      x.waiting = Math.max(x.waiting, e.waiting ?? 0)
      by.set(key, x)
    }
    return [...by]
      .map(([k, x]) =>
        k.startsWith("pool") ? `${k} (max ${x.waiting} waiting)` : `${k} x${x.count} ${round(x.ms)} ms`
      )
      .join(", ")
  }
  const timeline = [...buckets]
    .sort(([a], [b]) => a - b)
    .map(([b, list]) => {
      const sorted = list.sort((x, y) => x - y)
      return {
        atMs: b * bucketMs,
        requests: sorted.length,
        p99: round(percentile(sorted, 99)),
        max: round(percentile(sorted, 100))
      }
    })
  print(
    `[timeline] ${n} requests: p50 ${overall.p50} ms, p99 ${overall.p99} ms, p99.9 ${overall.p999} ms, max ${overall.max} ms; ${events.length} server events logged`
  )
  const worst = [...timeline].sort((a, b) => b.max - a.max).slice(0, 12)
  for (const w of worst.sort((a, b) => a.atMs - b.atMs))
    print(
      `[timeline]  +${(w.atMs / 1000).toFixed(1).padStart(5)} s  n ${String(w.requests).padStart(3)}  p99 ${String(w.p99).padStart(6)}  max ${String(w.max).padStart(6)} ms  ${describe(overlapping(t0 + w.atMs, t0 + w.atMs + bucketMs + w.max))}`
    )
  // Of the slow requests, how many overlapped each kind of event (one request may count under several).
  const slow = latencies.flatMap((l, i) => (l >= slowMs ? [i] : []))
  const blame = new Map<string, number>()
  let unexplained = 0
  for (const i of slow) {
    const seen = new Set(overlapping(starts[i]!, starts[i]! + latencies[i]!).map(label))
    if (seen.size === 0) unexplained++
    for (const s of seen) blame.set(s, (blame.get(s) ?? 0) + 1)
  }
  const attribution = Object.fromEntries([...blame].sort(([, a], [, b]) => b - a))
  if (slow.length > 0)
    print(
      `[timeline] ${slow.length} requests >= ${slowMs} ms overlapped: ${Object.entries(attribution)
        .map(([k, c]) => `${k} ${c}`)
        .join(", ")}; nothing logged: ${unexplained}`
    )
  // What the server logged over the run, whether or not a request was slow then.
  const totals = new Map<string, { count: number; ms: number; maxMs: number }>()
  for (const e of events) {
    const x = totals.get(label(e)) ?? { count: 0, ms: 0, maxMs: 0 }
    x.count++
    x.ms += e.d ?? 0
    x.maxMs = Math.max(x.maxMs, e.d ?? 0)
    totals.set(label(e), x)
  }
  const serverTotals = Object.fromEntries(
    [...totals].map(([k, x]) => [k, { count: x.count, ms: round(x.ms), maxMs: round(x.maxMs) }])
  )
  if (events.length > 0)
    print(
      `[timeline] server, all processes: ${Object.entries(serverTotals)
        .map(([k, x]) => `${k} x${x.count} (${x.ms} ms, longest ${x.maxMs} ms)`)
        .join("; ")}`
    )
  return { overall, bucketMs, slowMs, slow: slow.length, unexplained, attribution, serverTotals, timeline }
}
