/**
 * The demo merchant a first start seeds on an empty database, through core's `Merchants` and `ApiKeys`.
 */
import { ApiKeys, type Errors, Merchants } from "@laari/core"
import { Effect } from "effect"
import type * as Banner from "./Banner.js"

/** On an empty database: a demo merchant with an outlet and its sandbox keys, for the start-up output. */
export const seedDemo: Effect.Effect<
  Banner.Seeded | undefined,
  Errors.ServiceUnavailable,
  Merchants.Merchants | ApiKeys.ApiKeys
> = Effect.gen(function* () {
  const merchants = yield* Merchants.Merchants
  const keys = yield* ApiKeys.ApiKeys
  if ((yield* merchants.count) > 0) return undefined
  const { merchant, outlets } = yield* merchants
    .create({ name: "Demo Cafe", city: "Male", mcc: "5814", outlets: ["Majeedhee Magu"] })
    // The demo's own input: a refusal is a bug here, not the operator's mistake.
    .pipe(Effect.catchTag("InvalidRequest", Effect.die))
  const secret = yield* keys.issue({ merchantId: merchant.id, environment: "test", kind: "secret" })
  const publishable = yield* keys.issue({ merchantId: merchant.id, environment: "test", kind: "publishable" })
  return {
    merchant: { id: merchant.id, name: merchant.name },
    outlet: outlets[0] && { id: outlets[0].id, name: outlets[0].name },
    secretKey: secret.key,
    publishableKey: publishable.key
  }
})
