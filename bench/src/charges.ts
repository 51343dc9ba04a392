/**
 * Mandate charge throughput over real HTTP: one server (embedded PGlite, or PostgreSQL with
 * DATABASE_URL), one mandate, N charges at a fixed concurrency. Prints the figures and writes
 * bench/results/charges-<backend>.json.
 *
 *   pnpm bench                       # PGlite
 *   DATABASE_URL=postgres://... pnpm bench
 *   BENCH_CHARGES=5000 BENCH_CONCURRENCY=32 pnpm bench
 */
import { mkdirSync, writeFileSync } from "node:fs"
import * as Serve from "./Serve.js"

const { backend, opsToken } = Serve

const charges = Number(process.env.BENCH_CHARGES ?? 2000)
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 16)

const { call, stop } = await Serve.start()

const merchant = await call("POST", "/ops/merchants", opsToken, {
  name: "Bench",
  outlets: [{ name: "Main" }]
})
const key = (await call("POST", `/ops/merchants/${merchant.body.id}/keys`, opsToken, { environment: "test" }))
  .body.key
await call("POST", "/test-helpers/payer", key, { balance: 1_000_000_000 })
const mandate = await call("POST", "/mandates", key, {
  reference: "bench",
  title: "Bench",
  per_charge_cap: 500_000
})

const latencies: Array<number> = []
let failures = 0
let next = 0
const started = performance.now()
const worker = async () => {
  while (next < charges) {
    next++
    const t0 = performance.now()
    const res = await call("POST", `/mandates/${mandate.body.id}/charges`, key, { amount: 1000 })
    latencies.push(performance.now() - t0)
    if (res.status !== 201) failures++
  }
}
await Promise.all(Array.from({ length: concurrency }, worker))
const seconds = (performance.now() - started) / 1000

latencies.sort((a, b) => a - b)
const pct = (p: number) =>
  Number(latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]!.toFixed(2))
const balance = (await call("GET", "/test-helpers/payer", key)).body.balance as number
const result = {
  benchmark: "mandate-charges-http",
  backend,
  charges,
  concurrency,
  failures,
  seconds: Number(seconds.toFixed(3)),
  chargesPerSecond: Number((charges / seconds).toFixed(1)),
  latencyMs: { p50: pct(50), p95: pct(95), p99: pct(99), max: pct(100) },
  rssMiB: Number((process.memoryUsage().rss / 2 ** 20).toFixed(1)),
  moneyConserved: balance === 1_000_000_000 - (charges - failures) * 1000
}
console.log(JSON.stringify(result, null, 2))
mkdirSync(new URL("../results/", import.meta.url), { recursive: true })
writeFileSync(
  new URL(`../results/charges-${backend}.json`, import.meta.url),
  `${JSON.stringify(result, null, 2)}\n`
)
await stop()
