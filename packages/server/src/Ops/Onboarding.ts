/**
 * Issuing keys, and the demo merchant a first start seeds on an empty database.
 */
import { type ApiKeys, type Crypto, type Errors } from "@laari/core"
import { Effect } from "effect"
import type * as Banner from "./Banner.js"
import { Directory } from "../Sql/Directory.js"

export type IssuedKey = ApiKeys.IssuedKey

/** Creates a key (core's `ApiKeys.issue`); the full key is returned once and only its hash is kept. */
export const issueKey = (input: ApiKeys.IssueRequest) =>
  Effect.flatMap(Directory, (directory) => directory.issueKey(input))

/** On an empty database: a demo merchant with an outlet and its sandbox keys, for the start-up output. */
export const seedDemo: Effect.Effect<
  Banner.Seeded | undefined,
  Errors.ServiceUnavailable,
  Directory | Crypto.Crypto
> = Effect.gen(function* () {
  const directory = yield* Directory
  if ((yield* directory.merchantCount) > 0) return undefined
  const { merchant, outlets } = yield* directory.createMerchant({
    name: "Demo Cafe",
    city: "Male",
    mcc: "5814",
    outlets: ["Majeedhee Magu"]
  })
  const secret = yield* issueKey({ merchantId: merchant.id, environment: "test", kind: "secret" })
  const publishable = yield* issueKey({ merchantId: merchant.id, environment: "test", kind: "publishable" })
  return {
    merchant: { id: merchant.id, name: merchant.name },
    outlet: outlets[0],
    secretKey: secret.key,
    publishableKey: publishable.key
  }
})
