/**
 * The OAuth clients part of the store contract: clients listed oldest first and found by `clientId`,
 * revoked only by their merchant together with their tokens, tokens found by hash with their client; and
 * core's `OAuthClients` over them: credentials authenticate until the client is revoked, a token stands
 * for its grant until it expires or is revoked, and only its own client can revoke it.
 */
import { describe, expect } from "@effect/vitest"
import { OAuthClients } from "@laari/core"
import { DateTime, Effect } from "effect"
import { type It, freshMerchant, plain, uuid } from "../support/Helpers.js"
import { onManualClock } from "../services/ManualClock.js"

export const tests = (it: It): void => {
  describe("OAuth clients", () => {
    it.effect(
      "clients authenticate by secret, list oldest first and are revoked by their merchant only",
      () =>
        Effect.gen(function* () {
          const clients = yield* OAuthClients.OAuthClients
          const merchant = yield* freshMerchant()
          const other = yield* freshMerchant()
          const { client, secret } = yield* clients.create({
            merchantId: merchant.id,
            environment: "live",
            scopes: ["qr:write"],
            name: "Till"
          })
          expect(client.clientId).toMatch(/^lci_live_[0-9a-f]{24}$/)
          expect(secret).toMatch(/^lcs_live_[0-9a-f]{48}$/)
          expect(client.secretHash).not.toContain(secret.slice(9))
          yield* Effect.sleep("5 millis")
          const second = yield* clients.create({
            merchantId: merchant.id,
            environment: "test",
            scopes: [],
            name: null
          })

          expect(plain(yield* clients.list(merchant.id))).toEqual(plain([client, second.client]))
          expect(yield* clients.list(other.id)).toEqual([])
          expect(yield* clients.list("not-a-uuid")).toEqual([])

          expect(plain(yield* clients.authenticate(client.clientId, secret))).toEqual(plain(client))
          expect(yield* clients.authenticate(client.clientId, second.secret)).toBeUndefined()
          expect(yield* clients.authenticate(`lci_live_${yield* uuid}`, secret)).toBeUndefined()

          expect(yield* clients.revoke(other.id, client.clientId)).toBeUndefined()
          const revoked = yield* clients.revoke(merchant.id, client.clientId)
          expect(revoked?.revokedAt).not.toBeNull()
          // A second revocation keeps the first moment.
          expect(plain((yield* clients.revoke(merchant.id, client.clientId))?.revokedAt)).toEqual(
            plain(revoked?.revokedAt)
          )
          expect(yield* clients.authenticate(client.clientId, secret)).toBeUndefined()
          expect(yield* clients.authenticate(second.client.clientId, second.secret)).toBeDefined()
        })
    )

    it.effect("a token stands for its grant until revoked by its client, or its client is revoked", () =>
      Effect.gen(function* () {
        const clients = yield* OAuthClients.OAuthClients
        const merchant = yield* freshMerchant()
        const { client } = yield* clients.create({
          merchantId: merchant.id,
          environment: "test",
          scopes: ["qr:write", "payments:write"],
          name: null
        })
        const intruder = (yield* clients.create({
          merchantId: merchant.id,
          environment: "test",
          scopes: [],
          name: null
        })).client

        const issued = yield* clients.issue(client, ["qr:write"])
        expect(issued.token).toMatch(/^lat_test_[0-9a-f]{48}$/)
        const lifetime =
          DateTime.toEpochMillis(issued.expiresAt) - DateTime.toEpochMillis(yield* DateTime.now)
        expect(lifetime).toBeGreaterThan(3_590_000)
        expect(lifetime).toBeLessThanOrEqual(3_600_000)
        const grant = yield* clients.grantOf(issued.token)
        expect(plain(grant)).toEqual(
          plain({ tokenId: grant?.tokenId, client, scopes: ["qr:write"], expiresAt: issued.expiresAt })
        )
        expect(yield* clients.grantOf(`lat_test_${"0".repeat(48)}`)).toBeUndefined()

        yield* clients.revokeToken(intruder, issued.token)
        expect(yield* clients.grantOf(issued.token)).toBeDefined()
        yield* clients.revokeToken(client, issued.token)
        expect(yield* clients.grantOf(issued.token)).toBeUndefined()

        const another = yield* clients.issue(client, ["payments:write"])
        expect(yield* clients.grantOf(another.token)).toBeDefined()
        yield* clients.revoke(merchant.id, client.clientId)
        expect(yield* clients.grantOf(another.token)).toBeUndefined()
      })
    )

    it.effect("a token stands for nothing from the moment it expires", () =>
      onManualClock((clock) =>
        Effect.gen(function* () {
          const clients = yield* OAuthClients.OAuthClients
          const merchant = yield* freshMerchant()
          const { client } = yield* clients.create({
            merchantId: merchant.id,
            environment: "live",
            scopes: ["qr:write"],
            name: null
          })
          const issued = yield* clients.issue(client, ["qr:write"])
          expect(DateTime.toEpochMillis(issued.expiresAt)).toBe(clock.now() + 3_600_000)
          clock.set(clock.now() + 3_600_000 - 1)
          expect((yield* clients.grantOf(issued.token))?.client.id).toBe(client.id)
          clock.set(clock.now() + 1)
          expect(yield* clients.grantOf(issued.token)).toBeUndefined()
        })
      )
    )
  })
}
