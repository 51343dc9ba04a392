/**
 * The testkit's `Seed` over the SQL adapters: merchants and outlets through core's `Merchants.creating`
 * and `Store.MerchantRegistryStore`, customers, payer wallets and read-outs through the `Directory`, so the
 * store contract (and any test) can seed a SQL database exactly as it seeds the memory adapters. Kept out
 * of `src` so production code does not import the testkit.
 */
import { Crypto, Merchants, Store } from "@laari/core"
import { Seed } from "@laari/testkit"
import { DateTime, Effect, Layer } from "effect"
import { Directory } from "../../src/Platform/Directory.js"

export const layer: Layer.Layer<Seed.Seed, never, Directory | Store.MerchantRegistryStore | Crypto.Crypto> =
  Layer.effect(
    Seed.Seed,
    Effect.gen(function* () {
      const directory = yield* Directory
      const merchants = yield* Store.MerchantRegistryStore
      const create = Merchants.creating(merchants, yield* Crypto.Crypto)
      return Seed.Seed.of({
        merchant: (input) => Effect.orDie(Effect.map(create(input), (created) => created.merchant)),
        outlet: (merchantId, name) =>
          DateTime.now.pipe(
            Effect.flatMap((now) => Effect.orDie(merchants.addOutlet(merchantId, name, now))),
            Effect.flatMap((outlet) =>
              outlet === undefined ? Effect.dieMessage(`no merchant ${merchantId}`) : Effect.succeed(outlet)
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
    })
  )
