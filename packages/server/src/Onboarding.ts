/**
 * Issuing keys, and the demo merchant a first start seeds on an empty database.
 */
import { Auth, Crypto, type Errors, type Ids } from "@laari/core"
import { Effect } from "effect"
import type * as Banner from "./Banner.js"
import * as Keys from "./Keys.js"
import { Directory } from "./Sql/Directory.js"

export interface IssuedKey {
  readonly id: string
  readonly key: string
  readonly environment: Ids.Environment
  readonly kind: Auth.KeyKind
  readonly scopes: ReadonlyArray<Auth.Scope>
}

/** Secret keys get every scope unless told otherwise; publishable keys only `checkout:write`. */
export const defaultScopes = (kind: Auth.KeyKind): ReadonlyArray<Auth.Scope> =>
  kind === "secret" ? Auth.allScopes : ["checkout:write"]

/** Creates a key; the full key is returned once and only its hash is kept. */
export const issueKey = (input: {
  merchantId: Ids.MerchantId
  environment: Ids.Environment
  kind: Auth.KeyKind
  scopes?: ReadonlyArray<Auth.Scope> | undefined
}) =>
  Effect.gen(function* () {
    const directory = yield* Directory
    const crypto = yield* Crypto.Crypto
    const scopes = input.scopes ?? defaultScopes(input.kind)
    const key = Keys.generate(input.kind, input.environment)
    const id = yield* crypto.uuid
    yield* directory.insertKey({
      id,
      merchantId: input.merchantId,
      environment: input.environment,
      kind: input.kind,
      scopes,
      keyHash: yield* directory.keyDigest(key),
      keyPrefix: Keys.displayPrefix(key)
    })
    return { id, key, environment: input.environment, kind: input.kind, scopes } satisfies IssuedKey
  })

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
