/**
 * The load generator every HTTP benchmark uses: keep-alive `node:http` (no fetch: its per-request cost
 * would be measured as the server's), a closed loop (N requests always in flight) and an open loop (a
 * fixed arrival rate, latency counted from when each request was due, so a stall is not hidden).
 */
import http from "node:http"

export interface Response {
  readonly status: number
  readonly body: string
}

export interface Client {
  readonly request: (
    method: string,
    path: string,
    headers: Record<string, string>,
    body?: unknown
  ) => Promise<Response>
  readonly json: (method: string, path: string, key: string, body?: unknown) => Promise<any>
  readonly close: () => void
}

export const client = (base: string): Client => {
  const url = new URL(base)
  // An idle timeout of its own makes Node 20's agent follow the server's `Keep-Alive: timeout=5` (less a
  // second); without one it keeps idle sockets until the server closes them, and a request written just
  // then is reset (ECONNRESET, counted as a failure: one in 5,583 at half rate, 2026-11-28).
  const agent = new http.Agent({ keepAlive: true, maxSockets: 512, timeout: 60_000 })
  const request = (method: string, path: string, headers: Record<string, string>, body?: unknown) =>
    new Promise<Response>((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body)
      const req = http.request(
        {
          agent,
          host: url.hostname,
          port: url.port,
          method,
          path,
          headers: payload === undefined ? headers : { ...headers, "content-type": "application/json" }
        },
        (res) => {
          const chunks: Array<Buffer> = []
          res.on("data", (c: Buffer) => chunks.push(c))
          res.on("end", () =>
            resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() })
          )
          res.on("error", reject)
        }
      )
      req.on("error", reject)
      req.end(payload)
    })
  const json = async (method: string, path: string, key: string, body?: unknown) => {
    const res = await request(method, path, { authorization: `Bearer ${key}` }, body)
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.body}`)
    return JSON.parse(res.body)
  }
  return { request, json, close: () => agent.destroy() }
}

export interface Run {
  readonly requests: number
  readonly failures: number
  readonly seconds: number
  readonly perSecond: number
  readonly latencyMs: {
    readonly p50: number
    readonly p95: number
    readonly p99: number
    readonly p999: number
    readonly max: number
  }
  /** The statuses seen other than the expected one (or the error of a request with no answer), with counts. */
  readonly unexpected: Record<string, number>
}

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted.length === 0
    ? 0
    : Number(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!.toFixed(2))

const summarize = (
  latencies: Array<number>,
  failures: number,
  seconds: number,
  unexpected: Record<string, number>
): Run => {
  latencies.sort((a, b) => a - b)
  return {
    requests: latencies.length,
    failures,
    seconds: Number(seconds.toFixed(3)),
    perSecond: Number(((latencies.length - failures) / seconds).toFixed(1)),
    latencyMs: {
      p50: percentile(latencies, 50),
      p95: percentile(latencies, 95),
      p99: percentile(latencies, 99),
      p999: percentile(latencies, 99.9),
      max: percentile(latencies, 100)
    },
    unexpected
  }
}

/** One request of a workload: `i` counts from 0; resolves to whether it succeeded, and its status. */
export type Shot = (i: number) => Promise<{ readonly ok: boolean; readonly status: number }>

/** What a run records: each request's latency, and the statuses of those that failed. */
const recorder = () => {
  const latencies: Array<number> = []
  const unexpected: Record<string, number> = {}
  let failures = 0
  const record = (shot: Promise<{ readonly ok: boolean; readonly status: number }>, since: () => number) =>
    shot
      // No answer at all: counted under the error's code (ECONNRESET, ...), never hidden.
      .catch((error: { readonly code?: string }) => ({ ok: false, status: error.code ?? "no answer" }))
      .then(({ ok, status }) => {
        latencies.push(performance.now() - since())
        if (!ok) {
          failures++
          unexpected[status] = (unexpected[status] ?? 0) + 1
        }
      })
  const result = (started: number) =>
    summarize(latencies, failures, (performance.now() - started) / 1000, unexpected)
  return { record, result }
}

/** `concurrency` requests always in flight for `seconds`. */
export const closedLoop = async (options: {
  readonly concurrency: number
  readonly seconds: number
  readonly shot: Shot
}): Promise<Run> => {
  const { record, result } = recorder()
  let next = 0
  const started = performance.now()
  const deadline = started + options.seconds * 1000
  const worker = async () => {
    while (performance.now() < deadline) {
      const t0 = performance.now()
      await record(options.shot(next++), () => t0)
    }
  }
  await Promise.all(Array.from({ length: options.concurrency }, worker))
  return result(started)
}

/** `rate` requests a second for `seconds`, each timed from when it was due. */
export const openLoop = async (options: {
  readonly rate: number
  readonly seconds: number
  readonly shot: Shot
}): Promise<Run> => {
  const { record, result } = recorder()
  const pending: Array<Promise<void>> = []
  const total = Math.round(options.rate * options.seconds)
  const interval = 1000 / options.rate
  const started = performance.now()
  for (let i = 0; i < total; i++) {
    const due = started + i * interval
    const wait = due - performance.now()
    if (wait > 1) await new Promise((r) => setTimeout(r, wait))
    pending.push(record(options.shot(i), () => due))
  }
  await Promise.all(pending)
  return result(started)
}
