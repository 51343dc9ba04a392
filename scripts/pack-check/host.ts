// A host compiled by tsc against the packed declarations, run by plain node (scripts/pack-check.sh).
import { ApiKeys, Engine, Mandates, Merchants } from "@laari/core"
import { MemoryQrImages, Testkit } from "@laari/testkit"
import { Effect, Layer } from "effect"

// The engine wired from the testkit's ports, as a host wires it from its own adapters.
const services = Engine.layer.pipe(
  Layer.provideMerge(MemoryQrImages.layer),
  Layer.provideMerge(Testkit.ports())
)

const program = Effect.gen(function* () {
  const mandates = yield* Mandates.Mandates
  // A merchant made through the engine: with its outlets, wallets and a funded sandbox payer.
  const merchants = yield* Merchants.Merchants
  const { merchant, outlets } = yield* merchants.create({ name: "Typed Host", outlets: ["Front desk"] })
  console.log(`merchant created with ${outlets.length} outlet, ${yield* merchants.count} in all`)
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
  // The merchant's API keys are the engine's too: issued, then resolved to their merchant.
  const keys = yield* ApiKeys.ApiKeys
  const issued = yield* keys.issue({ merchantId: merchant.id, environment: "test", kind: "secret" })
  const principal = yield* keys.authenticate(issued.key)
  console.log(
    `key ${principal?.merchantId === merchant.id ? "resolves" : "does not resolve"} to its merchant`
  )
})

Effect.runPromise(program.pipe(Effect.provide(services)))
