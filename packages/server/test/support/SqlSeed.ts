/**
 * The testkit's `Seed` over the SQL `Directory` (merchants, outlets, customers, payer wallets), so the
 * store contract (and any test) can seed a SQL database exactly as it seeds the memory adapters. Kept out
 * of `src` so production code does not import the testkit.
 */
import { Seed } from "@laari/testkit"
import { Effect, Layer } from "effect"
import { Directory } from "../../src/Sql/Directory.js"

export const layer: Layer.Layer<Seed.Seed, never, Directory> = Layer.effect(
  Seed.Seed,
  Effect.map(Directory, (directory) =>
    Seed.Seed.of({
      merchant: (input) =>
        Effect.orDie(Effect.map(directory.createMerchant(input), (created) => created.merchant)),
      outlet: (merchantId, name) =>
        Effect.orDie(directory.addOutlet(merchantId, name)).pipe(
          Effect.flatMap((outlet) =>
            outlet === undefined
              ? Effect.dieMessage(`no merchant ${merchantId}`)
              : Effect.succeed({ id: outlet.id, merchantId, name: outlet.name })
          )
        ),
      customer: (input) => Effect.orDie(directory.createCustomer(input)),
      setPayer: (customerId, patch) =>
        Effect.orDie(directory.setPayer(customerId, patch)).pipe(
          Effect.flatMap((account) =>
            account === undefined
              ? Effect.dieMessage(`no wallet for customer ${customerId}`)
              : Effect.succeed(account)
          )
        ),
      merchantBalance: (merchantId, environment) =>
        Effect.orDie(directory.merchantBalance(merchantId, environment)),
      feeBalance: (environment) => Effect.orDie(directory.feeBalance(environment)),
      ledgerTotal: Effect.orDie(directory.ledgerTotal),
      events: Effect.orDie(directory.listEvents({ limit: 1_000_000 })).pipe(
        Effect.map((events) => [...events].reverse())
      )
    })
  )
)
