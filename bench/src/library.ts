/**
 * The library without a server (issue 11, goal 4): pure charge decisions (`Mandate.authorizeCharge`)
 * per second, and whole charges per second through `Mandates.charge` on the testkit's memory adapters.
 * Prints JSON; `suite.ts` runs it as its own process so nothing else shares its heap.
 */
import { DateTime, Effect, Either } from "effect"
import { Mandate, Mandates } from "@laari/core"
import { Seed, Testkit } from "@laari/testkit"

const seconds = Number(process.env.BENCH_LIBRARY_SECONDS ?? 3)

/** Runs `f` in rounds of `batch` for `seconds`; returns calls per second. */
const rate = (f: (i: number) => void, batch = 1_000) => {
  let n = 0
  const started = performance.now()
  const deadline = started + seconds * 1000
  while (performance.now() < deadline) {
    for (let i = 0; i < batch; i++) f(n + i)
    n += batch
  }
  return n / ((performance.now() - started) / 1000)
}

const program = Effect.gen(function* () {
  const seed = yield* Seed.Seed
  const mandates = yield* Mandates.Mandates
  const merchant = yield* seed.merchant({ name: "Library bench" })
  const tenant = { merchantId: merchant.id, environment: "test" as const }
  yield* seed.setPayer(merchant.sandboxPayer, { balance: 1_000_000_000_000 })
  const created = yield* mandates.create(tenant, {
    reference: "library",
    title: "Library",
    description: null,
    perChargeCap: 500_000,
    periodCap: 900_000_000_000,
    period: "MONTH",
    returnUrl: null,
    expiresAt: null
  })
  const now = yield* DateTime.now

  // Pure: the decision alone, alternating amounts so neither branch is folded away.
  let accepted = 0
  const decisions = rate((i) => {
    const d = Mandate.authorizeCharge(created, 100 + (i % 2) * 600_000, now, "Indian/Maldives")
    if (Either.isRight(d)) accepted++
  })
  if (accepted === 0) throw new Error("no decision accepted: the benchmark measured nothing")

  // Whole charges: load, decide, move money, record, emit, notify; on the memory adapters.
  const total = Math.max(2_000, Math.round(seconds * 5_000))
  const started = performance.now()
  for (let i = 0; i < total; i++) yield* mandates.charge(tenant, created.id, { amount: 100 })
  const chargesPerSecond = total / ((performance.now() - started) / 1000)
  const after = yield* mandates.get(tenant, created.id)
  return {
    benchmark: "library",
    decisionsPerSecond: Math.round(decisions),
    memoryChargesPerSecond: Math.round(chargesPerSecond),
    charges: total,
    periodChargedAfter: after.periodCharged
  }
})

const result = await Effect.runPromise(program.pipe(Effect.provide(Testkit.layer())))
console.log(JSON.stringify(result))
