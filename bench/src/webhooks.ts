/**
 * Webhook deliveries over real HTTP to a local receiver: one server (embedded PGlite, or PostgreSQL
 * with DATABASE_URL), events made by mandate charges. Prints and writes bench/results/webhooks-<backend>.json:
 *
 * - latency: charges paced at BENCH_LATENCY_CONCURRENCY (default 2), one endpoint; for each event, the
 *   time from the API's answer to the charge (its transaction committed before) to the delivery's
 *   first byte at the receiver: p50/p99;
 * - throughput: BENCH_ENDPOINTS endpoints (default 10) subscribed to every event, BENCH_EVENTS charges
 *   (default 300) at concurrency 16; deliveries per second from the first answer to the last delivery;
 * - fairness: one merchant's BENCH_HANGING endpoints (default 12) that never answer,
 *   BENCH_HANGING_CHARGES charges (default 40) to them; meanwhile another merchant's paced charges
 *   (BENCH_FAIR_EVENTS, default 40) to its own endpoint: their answer-to-first-byte p50/p99 (goal: p99
 *   under 1 s), and the most attempts the hanging endpoints ever held open, per endpoint and in all. On
 *   PostgreSQL a second server on the same database delivers too, as a second process would.
 *
 *   pnpm bench:webhooks
 *   DATABASE_URL=postgres://... pnpm bench:webhooks
 */
import { mkdirSync, writeFileSync } from "node:fs"
import * as Serve from "./Serve.js"
import * as Smoke from "./Smoke.js"

const { backend, opsToken } = Serve
import http from "node:http"

const latencyEvents = Number(process.env.BENCH_LATENCY_EVENTS ?? Smoke.size(300, 20))
const latencyConcurrency = Number(process.env.BENCH_LATENCY_CONCURRENCY ?? 2)
const endpoints = Number(process.env.BENCH_ENDPOINTS ?? Smoke.size(10, 2))
const events = Number(process.env.BENCH_EVENTS ?? Smoke.size(300, 20))
const hangingEndpoints = Number(process.env.BENCH_HANGING ?? Smoke.size(12, 3))
const hangingCharges = Number(process.env.BENCH_HANGING_CHARGES ?? Smoke.size(40, 4))
const fairEvents = Number(process.env.BENCH_FAIR_EVENTS ?? Smoke.size(40, 5))

// The receiver: notes when each delivery's first byte arrives, per endpoint path and charge id.
const arrivals = new Map<string, number>()
let delivered = 0
let lastArrival = 0
const receiver = http.createServer((req, res) => {
  const at = performance.now()
  const chunks: Array<Buffer> = []
  req.on("data", (c: Buffer) => chunks.push(c))
  req.on("end", () => {
    const envelope = JSON.parse(Buffer.concat(chunks).toString("utf8"))
    if (envelope.type === "mandate.charge.succeeded") {
      arrivals.set(`${req.url}:${envelope.data.object.id}`, at)
      delivered++
      lastArrival = at
    }
    res.writeHead(204).end()
  })
})
await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r))
const receiverUrl = (path: string) =>
  `http://127.0.0.1:${(receiver.address() as { port: number }).port}${path}`

const { call, stop } = await Serve.start()

const merchant = async (name: string) => {
  const m = await call("POST", "/ops/merchants", opsToken, { name, outlets: [{ name: "Main" }] })
  const key = (await call("POST", `/ops/merchants/${m.body.id}/keys`, opsToken, { environment: "test" })).body
    .key
  await call("POST", "/test-helpers/payer", key, { balance: 1_000_000_000 })
  const mandate = await call("POST", "/mandates", key, {
    reference: name,
    title: name,
    per_charge_cap: 500_000
  })
  return { key, mandate: mandate.body.id as string }
}

/** Charges `n` times at `concurrency`; the moment each answer arrived, by charge id. */
const charge = async (m: { key: string; mandate: string }, n: number, concurrency: number) => {
  const answered = new Map<string, number>()
  let next = 0
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        next++
        const res = await call("POST", `/mandates/${m.mandate}/charges`, m.key, { amount: 1_000 })
        if (res.status !== 201) throw new Error(`charge: ${res.status} ${JSON.stringify(res.body)}`)
        answered.set(res.body.id, performance.now())
      }
    })
  )
  return answered
}

const waitFor = async (n: number, timeoutMs: number) => {
  const end = Date.now() + timeoutMs
  while (delivered < n && Date.now() < end) await new Promise((r) => setTimeout(r, 5))
  if (delivered < n) throw new Error(`only ${delivered} of ${n} deliveries arrived`)
}

const pct = (sorted: ReadonlyArray<number>, p: number) =>
  Number(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!.toFixed(1))

// Latency: one endpoint, paced charges.
const a = await merchant("bench-latency")
await call("POST", "/webhook-endpoints", a.key, { url: receiverUrl("/latency"), enabled_events: ["*"] })
const paced = await charge(a, latencyEvents, latencyConcurrency)
await waitFor(latencyEvents, 60_000)
const latencies = [...paced].map(([id, t]) => arrivals.get(`/latency:${id}`)! - t).sort((x, y) => x - y)

// Throughput: every event to `endpoints` endpoints.
const b = await merchant("bench-throughput")
for (let i = 0; i < endpoints; i++)
  await call("POST", "/webhook-endpoints", b.key, { url: receiverUrl(`/t${i}`), enabled_events: ["*"] })
delivered = 0
const started = performance.now()
const burst = await charge(b, events, 16)
const chargesSeconds = (performance.now() - started) / 1000
await waitFor(events * endpoints, 120_000)
const seconds = (lastArrival - started) / 1000
const lag = [...burst].map(([id, t]) => arrivals.get(`/t0:${id}`)! - t).sort((x, y) => x - y)

// Fairness: a merchant's endpoints that never answer, and another merchant's deliveries meanwhile.
const open = new Map<string, number>()
const mostOpen = new Map<string, number>()
let openTotal = 0
let mostOpenTotal = 0
const hanging = http.createServer((req, res) => {
  const path = req.url ?? ""
  req.resume()
  open.set(path, (open.get(path) ?? 0) + 1)
  mostOpen.set(path, Math.max(mostOpen.get(path) ?? 0, open.get(path)!))
  mostOpenTotal = Math.max(mostOpenTotal, ++openTotal)
  res.on("close", () => {
    open.set(path, open.get(path)! - 1)
    openTotal--
  })
})
await new Promise<void>((r) => hanging.listen(0, "127.0.0.1", r))
// On PostgreSQL a second server delivers from the same database: the caps must hold across both.
const second = backend === "postgresql" ? await Serve.start() : undefined
const slow = await merchant("bench-hanging")
for (let i = 0; i < hangingEndpoints; i++)
  await call("POST", "/webhook-endpoints", slow.key, {
    url: `http://127.0.0.1:${(hanging.address() as { port: number }).port}/h${i}`,
    enabled_events: ["*"]
  })
const fair = await merchant("bench-fair")
await call("POST", "/webhook-endpoints", fair.key, { url: receiverUrl("/fair"), enabled_events: ["*"] })
await charge(slow, hangingCharges, 4)
delivered = 0
const fairCharges = await charge(fair, fairEvents, latencyConcurrency)
await waitFor(fairEvents, 60_000)
const fairLatencies = [...fairCharges]
  .map(([id, t]) => arrivals.get(`/fair:${id}`)! - t)
  .sort((x, y) => x - y)
const heldOpen = { perEndpointMax: Math.max(...mostOpen.values()), totalMax: mostOpenTotal }
hanging.closeAllConnections()
hanging.close()
const fairness = {
  hangingEndpoints,
  hangingCharges,
  processes: second === undefined ? 1 : 2,
  otherMerchant: {
    events: fairEvents,
    answerToFirstByteMs: { p50: pct(fairLatencies, 50), p99: pct(fairLatencies, 99) },
    p99UnderOneSecond: pct(fairLatencies, 99) < 1000
  },
  hangingInFlight: heldOpen
}
await second?.stop()

const result = {
  benchmark: "webhook-deliveries",
  backend,
  latency: {
    events: latencyEvents,
    concurrency: latencyConcurrency,
    answerToFirstByteMs: { p50: pct(latencies, 50), p99: pct(latencies, 99), max: pct(latencies, 100) }
  },
  throughput: {
    endpoints,
    events,
    deliveries: events * endpoints,
    chargesPerSecond: Number((events / chargesSeconds).toFixed(1)),
    deliveriesPerSecond: Number(((events * endpoints) / seconds).toFixed(1)),
    answerToFirstByteMs: { p50: pct(lag, 50), p99: pct(lag, 99) }
  },
  fairness,
  rssMiB: Number((process.memoryUsage().rss / 2 ** 20).toFixed(1))
}
console.log(JSON.stringify(result, null, 2))
// The smoke's figures stay out of the real ones.
const resultsDir = new URL(Smoke.size("../results/", "../results/smoke/"), import.meta.url)
mkdirSync(resultsDir, { recursive: true })
writeFileSync(new URL(`webhooks-${backend}.json`, resultsDir), `${JSON.stringify(result, null, 2)}\n`)
await stop()
receiver.close()
if (!fairness.otherMerchant.p99UnderOneSecond) {
  console.error("fairness: the other merchant's p99 is not under 1 s")
  process.exitCode = 1
}
