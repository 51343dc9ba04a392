/**
 * The webhook endpoints part of the store contract, through core's `WebhookEndpoints`: an endpoint is
 * its tenant's alone (an operator reads a merchant's in both environments), listed newest first and
 * paged, at most `Webhook.MaxEndpoints` in each environment; changes, deletion and rotation keep what
 * they should; the store keeps each secret as the sealer wrote it, the previous one after a rotation.
 */
import { describe, expect } from "@effect/vitest"
import { SecretSealer, Store, Webhook, WebhookEndpoints } from "@laari/core"
import { DateTime, Duration, Effect } from "effect"
import { type It, freshMerchant, freshTenant, plain, tenantOf, uuid } from "../support/Helpers.js"

/** Marks what it seals, so the test sees that the store holds the sealed text, never the secret. */
const marking: SecretSealer.SecretSealerService = {
  seal: (id, secret) => Effect.succeed(`sealed:${id}:${secret}`),
  open: (id, sealed) => Effect.sync(() => sealed.slice(`sealed:${id}:`.length))
}
const sealing = Effect.provideService(SecretSealer.SecretSealer, marking)

const input = (n: number) => ({
  url: `https://example.com/hooks/${n}`,
  enabledEvents: ["*"],
  description: n % 2 === 0 ? null : `Endpoint ${n}`
})

export const tests = (it: It): void => {
  describe("Webhook endpoints", () => {
    it.effect("are their tenant's, listed newest first, and at most MaxEndpoints in an environment", () =>
      Effect.gen(function* () {
        const endpoints = yield* WebhookEndpoints.WebhookEndpoints
        const { merchant, tenant } = yield* freshTenant()
        const { endpoint, secret } = yield* sealing(endpoints.create(tenant, input(1)))
        expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
        expect(endpoint).toMatchObject({
          merchantId: merchant.id,
          environment: "test",
          url: "https://example.com/hooks/1",
          enabledEvents: ["*"],
          description: "Endpoint 1",
          status: "ENABLED",
          statusReason: null,
          failingSince: null
        })
        expect(plain(yield* endpoints.get(tenant, endpoint.id))).toEqual(plain(endpoint))
        expect(plain(yield* endpoints.get(tenant, endpoint.id.toUpperCase()))).toEqual(plain(endpoint))
        const store = yield* Store.WebhookEndpointsStore
        expect((yield* store.sealedSecrets(tenant, endpoint.id))?.secret).toBe(
          `sealed:${endpoint.id}:${secret}`
        )
        expect(yield* sealing(endpoints.secrets(tenant, endpoint.id))).toEqual({
          secret,
          previousSecret: null,
          previousSecretExpiresAt: null
        })

        // Another merchant, the other environment, an id that is no UUID: not found.
        const other = tenantOf(yield* freshMerchant())
        for (const [owner, id] of [
          [other, endpoint.id],
          [tenantOf(merchant, "live"), endpoint.id],
          [tenant, "not-a-uuid"],
          [{ merchantId: "not-a-uuid", environment: "test" as const }, endpoint.id],
          [tenant, yield* uuid]
        ] as const) {
          const missing = yield* Effect.flip(endpoints.get(owner, id))
          expect(missing).toBeInstanceOf(Webhook.WebhookEndpointNotFound)
        }
        expect(yield* endpoints.list(other, { limit: 10, offset: 0 })).toEqual([])
        expect(yield* endpoints.list({ merchantId: "not-a-uuid" }, { limit: 10, offset: 0 })).toEqual([])
        // The operator's view: the merchant's in both environments.
        const live = yield* sealing(endpoints.create(tenantOf(merchant, "live"), input(2)))
        expect(
          (yield* endpoints.list({ merchantId: merchant.id }, { limit: 10, offset: 0 })).map((e) => e.id)
        ).toEqual([live.endpoint.id, endpoint.id])

        const more = [endpoint.id]
        for (let n = 2; n <= Webhook.MaxEndpoints; n++)
          more.unshift((yield* sealing(endpoints.create(tenant, input(n)))).endpoint.id)
        const refused = yield* Effect.flip(sealing(endpoints.create(tenant, input(99))))
        expect(refused).toBeInstanceOf(Webhook.EndpointLimitReached)
        expect((yield* endpoints.list(tenant, { limit: 100, offset: 0 })).map((e) => e.id)).toEqual(more)
        expect((yield* endpoints.list(tenant, { limit: 2, offset: 1 })).map((e) => e.id)).toEqual(
          more.slice(1, 3)
        )

        // A deleted one is gone, and no longer counts.
        const removed = yield* endpoints.remove(tenant, endpoint.id)
        expect(removed.id).toBe(endpoint.id)
        expect(yield* Effect.flip(endpoints.get(tenant, endpoint.id))).toBeInstanceOf(
          Webhook.WebhookEndpointNotFound
        )
        expect(yield* Effect.flip(endpoints.remove(tenant, endpoint.id))).toBeInstanceOf(
          Webhook.WebhookEndpointNotFound
        )
        expect(yield* sealing(endpoints.secrets(tenant, endpoint.id))).toBeUndefined()
        yield* sealing(endpoints.create(tenant, input(100)))
      })
    )

    it.effect("changes apply what they name; disabling records the merchant, enabling clears it", () =>
      Effect.gen(function* () {
        const endpoints = yield* WebhookEndpoints.WebhookEndpoints
        const tenant = tenantOf(yield* freshMerchant())
        const { endpoint } = yield* sealing(endpoints.create(tenant, input(1)))
        const changed = yield* endpoints.update(tenant, endpoint.id, {
          url: "https://example.com/other",
          enabledEvents: ["payment.succeeded"]
        })
        expect(changed).toMatchObject({
          url: "https://example.com/other",
          enabledEvents: ["payment.succeeded"],
          description: "Endpoint 1",
          status: "ENABLED"
        })
        const cleared = yield* endpoints.update(tenant, endpoint.id, {
          description: null,
          status: "DISABLED"
        })
        expect(cleared).toMatchObject({
          description: null,
          status: "DISABLED",
          statusReason: Webhook.DisabledByMerchant
        })
        const enabled = yield* endpoints.update(tenant, endpoint.id, { status: "ENABLED" })
        expect(enabled).toMatchObject({ status: "ENABLED", statusReason: null, failingSince: null })
        expect(plain(yield* endpoints.get(tenant, endpoint.id))).toEqual(plain(enabled))
        const other = tenantOf(yield* freshMerchant())
        expect(
          yield* Effect.flip(endpoints.update(other, endpoint.id, { status: "DISABLED" }))
        ).toBeInstanceOf(Webhook.WebhookEndpointNotFound)
      })
    )

    it.effect("a rotation keeps the previous secret signing until the overlap ends", () =>
      Effect.gen(function* () {
        const endpoints = yield* WebhookEndpoints.WebhookEndpoints
        const tenant = tenantOf(yield* freshMerchant())
        const { endpoint, secret } = yield* sealing(endpoints.create(tenant, input(1)))
        const before = yield* DateTime.now
        const rotated = yield* sealing(endpoints.rotate(tenant, endpoint.id, Duration.hours(2)))
        expect(rotated.secret).not.toBe(secret)
        const overlap = DateTime.distance(before, rotated.previousSecretExpiresAt)
        expect(overlap).toBeGreaterThanOrEqual(7_200_000)
        expect(overlap).toBeLessThan(7_260_000)
        expect(plain(yield* sealing(endpoints.secrets(tenant, endpoint.id)))).toEqual(
          plain({
            secret: rotated.secret,
            previousSecret: secret,
            previousSecretExpiresAt: rotated.previousSecretExpiresAt
          })
        )
        const other = tenantOf(yield* freshMerchant())
        expect(yield* Effect.flip(sealing(endpoints.rotate(other, endpoint.id)))).toBeInstanceOf(
          Webhook.WebhookEndpointNotFound
        )
      })
    )
  })
}
