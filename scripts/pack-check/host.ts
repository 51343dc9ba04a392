// A host compiled by tsc against the packed declarations, run by plain node (scripts/pack-check.sh).
import { Engine, Mandates } from "@laari/core"
import { MemoryQrImages, Seed, Testkit } from "@laari/testkit"
import { Effect, Layer } from "effect"

// The engine wired from the testkit's ports, as a host wires it from its own adapters.
const services = Engine.layer.pipe(
  Layer.provideMerge(MemoryQrImages.layer),
  Layer.provideMerge(Testkit.ports())
)

const program = Effect.gen(function* () {
  const seed = yield* Seed.Seed
  const mandates = yield* Mandates.Mandates
  const merchant = yield* seed.merchant({ name: "Typed Host" })
  const tenant = { merchantId: merchant.id, environment: "test" as const }
  const mandate = yield* mandates.create(tenant, {
    reference: "HOST-1",
    title: "Typed",
    description: null,
    perChargeCap: 20_000,
    periodCap: 50_000,
    period: "MONTH",
    expiresAt: null,
    returnUrl: null
  })
  const charge = yield* mandates.charge(tenant, mandate.id, { amount: 12_550 })
  console.log(`charged ${charge.amount} laari, fee ${charge.fee}`)
})

Effect.runPromise(program.pipe(Effect.provide(services)))
