/**
 * The library without a server: pure charge decisions (`Mandate.authorizeCharge`)
 * per second, and whole charges per second through `Mandates.charge` on the testkit's memory adapters.
 * Also what the services' spans cost: charges with no tracer listening (a host that
 * installs none: Effect's default tracer), with tracing disabled (the server without
 * `OTEL_EXPORTER_OTLP_ENDPOINT`) and under an installed tracer that records every span and exports
 * nowhere, in interleaved rounds; and what naming a method costs per call when nobody listens: as the
 * services do (`Telemetry.fn`), and with `Effect.fn`, which makes a span and captures a stack even then.
 * Prints JSON; `suite.ts` runs it as its own process so nothing else shares its heap.
 */
import { DateTime, Effect, Either, Tracer } from "effect"
import { Mandate, Mandates, Telemetry } from "@laari/core"
import { Seed, Testkit } from "@laari/testkit"
import * as Smoke from "./Smoke.js"

const seconds = Number(process.env.BENCH_LIBRARY_SECONDS ?? Smoke.size(3, 0.2))
/** Rounds of the interleaved span comparisons (odd: a median). */
const rounds = Smoke.size({ charges: 7, wrapper: 9 }, { charges: 3, wrapper: 3 })

/** Runs `f` in rounds of `batch` for `seconds`; returns calls per second. */
const rate = (f: (i: number) => void, batch = 1_000, forSeconds = seconds) => {
  let n = 0
  const started = performance.now()
  const deadline = started + forSeconds * 1000
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
  const total = Math.max(Smoke.size(2_000, 200), Math.round(seconds * 5_000))
  const started = performance.now()
  for (let i = 0; i < total; i++) yield* mandates.charge(tenant, created.id, { amount: 100 })
  const chargesPerSecond = total / ((performance.now() - started) / 1000)

  // Spans: the same charges with nobody listening, tracing disabled and under a recording tracer,
  // alternating; medians.
  const native = yield* Effect.tracer
  const recording = Tracer.make({ span: native.span, context: native.context })
  const round = (mode: "unheard" | "disabled" | "recorded") =>
    Effect.gen(function* () {
      const n = Smoke.size(1_000, 100)
      const t0 = performance.now()
      for (let i = 0; i < n; i++) {
        const charge = mandates.charge(tenant, created.id, { amount: 100 })
        yield* mode === "recorded"
          ? Effect.withTracer(charge, recording)
          : mode === "disabled"
            ? Effect.withTracerEnabled(charge, false)
            : charge
      }
      return n / ((performance.now() - t0) / 1000)
    })
  const off: Array<number> = []
  const disabled: Array<number> = []
  const on: Array<number> = []
  for (let r = 0; r < rounds.charges; r++) {
    off.push(yield* round("unheard"))
    disabled.push(yield* round("disabled"))
    on.push(yield* round("recorded"))
  }
  const median = (xs: Array<number>) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

  // Naming alone, nobody listening: a no-op as the services' methods are written (`Telemetry.fn`), and
  // as `Effect.fn` writes it, against the bare one.
  const bare = () => Effect.void
  const named = Telemetry.fn("Bench.bare")(bare)
  const effectFn = Effect.fn("Bench.bare")(bare)
  const rates = { bare: [] as Array<number>, named: [] as Array<number>, effectFn: [] as Array<number> }
  const fns = { bare, named, effectFn }
  for (let r = 0; r < rounds.wrapper; r++)
    for (const k of ["bare", "named", "effectFn"] as const)
      rates[k].push(rate(() => Effect.runSync(fns[k]()), 1_000, Smoke.size(0.2, 0.05)))
  const extraMicros = (rs: Array<number>) => Math.max(0, (1 / median(rs) - 1 / median(rates.bare)) * 1e6)
  const wrapperMicros = extraMicros(rates.named)
  const chargeMicros = 1e6 / median(off)

  const after = yield* mandates.get(tenant, created.id)
  return {
    benchmark: "library",
    decisionsPerSecond: Math.round(decisions),
    memoryChargesPerSecond: Math.round(chargesPerSecond),
    charges: total,
    chargesUnheardPerSecond: Math.round(median(off)),
    chargesDisabledPerSecond: Math.round(median(disabled)),
    chargesRecordedPerSecond: Math.round(median(on)),
    recordedOverUnheard: Number((median(on) / median(off)).toFixed(3)),
    spanWrapperMicrosUnheard: Number(wrapperMicros.toFixed(3)),
    spanWrapperShareOfCharge: Number((wrapperMicros / chargeMicros).toFixed(4)),
    effectFnMicrosUnheard: Number(extraMicros(rates.effectFn).toFixed(3)),
    periodChargedAfter: after.periodCharged
  }
})

const result = await Effect.runPromise(program.pipe(Effect.provide(Testkit.layer())))
console.log(JSON.stringify(result))
