/**
 * Refunds beside charges through the library: core's `Mandates.charge` and
 * `Refunds.create` on the testkit's memory adapters, one call at a time, in interleaved rounds (charges,
 * then partial refunds of those charges one each, then 1-laari refunds of one charge), medians.
 * Prints JSON; `suite.ts` runs it as its own process so nothing else shares its heap.
 */
import { Mandates, Refunds } from "@laari/core"
import { Seed, Testkit } from "@laari/testkit"
import { Effect } from "effect"
import * as Smoke from "./Smoke.js"

const perRound = Number(process.env.BENCH_REFUNDS_LIBRARY_CALLS ?? Smoke.size(2_000, 100))
/** Odd: a median. */
const rounds = Smoke.size(5, 3)

const median = (xs: ReadonlyArray<number>) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

const program = Effect.gen(function* () {
  const seed = yield* Seed.Seed
  const mandates = yield* Mandates.Mandates
  const refunds = yield* Refunds.Refunds
  const merchant = yield* seed.merchant({ name: "Refunds bench" })
  const tenant = { merchantId: merchant.id, environment: "test" as const }
  yield* seed.setPayer(merchant.sandboxPayer, { balance: 1_000_000_000_000 })
  const mandate = yield* mandates.create(tenant, {
    reference: "refunds-library",
    title: "Refunds",
    description: null,
    perChargeCap: 500_000,
    periodCap: null,
    period: null,
    returnUrl: null,
    expiresAt: null
  })
  const timed = <A, E, R>(n: number, f: (i: number) => Effect.Effect<A, E, R>) =>
    Effect.gen(function* () {
      const t0 = performance.now()
      for (let i = 0; i < n; i++) yield* f(i)
      return n / ((performance.now() - t0) / 1000)
    })
  // The refunds in sequence all come from this one charge: 1 laari each.
  const big = yield* mandates.charge(tenant, mandate.id, { amount: 500_000 })

  const charges: Array<number> = []
  const distinct: Array<number> = []
  const oneCharge: Array<number> = []
  let refunded = 0
  for (let r = 0; r < rounds; r++) {
    const ids: Array<string> = []
    charges.push(
      yield* timed(perRound, () =>
        Effect.map(mandates.charge(tenant, mandate.id, { amount: 1_000 }), (c) => ids.push(c.id))
      )
    )
    distinct.push(
      yield* timed(perRound, (i) =>
        Effect.map(refunds.create(tenant, { source: { kind: "charge", id: ids[i]! }, amount: 100 }), (x) => {
          refunded += x.amount
        })
      )
    )
    oneCharge.push(
      yield* timed(perRound, () =>
        Effect.map(refunds.create(tenant, { source: { kind: "charge", id: big.id }, amount: 1 }), (x) => {
          refunded += x.amount
        })
      )
    )
  }
  const expected = rounds * perRound * (100 + 1)
  if (refunded !== expected) throw new Error(`refunded ${refunded} laari, expected ${expected}`)
  const c = median(charges)
  return {
    benchmark: "refunds-library",
    callsPerRound: perRound,
    rounds,
    chargesPerSecond: Math.round(c),
    refundsDistinctPerSecond: Math.round(median(distinct)),
    refundsOneChargePerSecond: Math.round(median(oneCharge)),
    refundOverCharge: {
      distinct: Number((median(distinct) / c).toFixed(3)),
      oneCharge: Number((median(oneCharge) / c).toFixed(3))
    }
  }
})

const result = await Effect.runPromise(program.pipe(Effect.provide(Testkit.layer())))
console.log(JSON.stringify(result))
