/**
 * The demo merchant a first start seeds on an empty database, through core's `Merchants`, `ApiKeys` and
 * `People`: the merchant, its sandbox keys, and its owner's account with a one-time password.
 */
import { ApiKeys, type Errors, Merchants, People } from "@laari/core"
import { Effect } from "effect"
import type * as Banner from "./Banner.js"

/** The demo merchant's owner, who signs in to the dashboard with the one-time password printed at start. */
export const DemoOwnerEmail = "owner@demo.laari.mv"

/**
 * On an empty database: a demo merchant with an outlet, its sandbox keys and its owner, for the start-up
 * output.
 */
export const seedDemo: Effect.Effect<
  Banner.Seeded | undefined,
  Errors.ServiceUnavailable,
  Merchants.Merchants | ApiKeys.ApiKeys | People.People
> = Effect.gen(function* () {
  const merchants = yield* Merchants.Merchants
  const keys = yield* ApiKeys.ApiKeys
  const people = yield* People.People
  if ((yield* merchants.count) > 0) return undefined
  const { merchant, outlets } = yield* merchants
    .create({ name: "Demo Cafe", city: "Male", mcc: "5814", outlets: ["Majeedhee Magu"] })
    // The demo's own input: a refusal is a bug here, not the operator's mistake.
    .pipe(Effect.catchTag("InvalidRequest", Effect.die))
  const secret = yield* keys.issue({ merchantId: merchant.id, environment: "test", kind: "secret" })
  const publishable = yield* keys.issue({ merchantId: merchant.id, environment: "test", kind: "publishable" })
  const owner = yield* people
    .createMember({ merchantId: merchant.id, email: DemoOwnerEmail, role: "owner" })
    .pipe(Effect.catchTag("InvalidRequest", Effect.die))
  return {
    merchant: { id: merchant.id, name: merchant.name },
    outlet: outlets[0] && { id: outlets[0].id, name: outlets[0].name },
    secretKey: secret.key,
    publishableKey: publishable.key,
    // On an empty database the account is new: it always has a one-time password.
    owner: { email: owner.user.email, password: owner.password ?? null }
  }
})
