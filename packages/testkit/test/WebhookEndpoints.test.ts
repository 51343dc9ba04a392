/**
 * A host on the testkit gets core's webhook endpoints with nothing more to wire: `Testkit.layer` brings
 * the store and a sealer that keeps secrets as they are, so the secret shown is the one that signs.
 */
import { expect, it } from "@effect/vitest"
import { Store, WebhookEndpoints } from "@laari/core"
import { Effect } from "effect"
import { Seed } from "../src/Seed.js"
import * as Testkit from "../src/Testkit.js"

it.effect(
  "registers an endpoint on Testkit.layer; the store keeps the secret as the plain sealer gave it",
  () =>
    Effect.gen(function* () {
      const merchant = yield* Effect.flatMap(Seed, (seed) => seed.merchant({ name: "Hooked" }))
      const tenant = { merchantId: merchant.id, environment: "test" as const }
      const endpoints = yield* WebhookEndpoints.WebhookEndpoints
      const { endpoint, secret } = yield* endpoints.create(tenant, {
        url: "https://example.com/hook",
        enabledEvents: ["*"],
        description: null
      })
      const store = yield* Store.WebhookEndpointsStore
      expect((yield* store.sealedSecrets(tenant, endpoint.id))?.secret).toBe(secret)
      expect((yield* endpoints.secrets(tenant, endpoint.id))?.secret).toBe(secret)
    }).pipe(Effect.provide(Testkit.layer()))
)
