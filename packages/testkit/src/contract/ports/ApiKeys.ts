/**
 * The API-keys part of the store contract: keys stored by hash and listed oldest first, revoked once and
 * only by their merchant, a hash upgraded only from the hash it has; and core's `ApiKeys` over them:
 * an issued key finds its principal until revoked, a key whose prefix lies finds none, and a key stored
 * under its plain SHA-256 (before keyed hashes) is found once and rehashed.
 */
import { describe, expect } from "@effect/vitest"
import { ApiKeys, Crypto, type Ids, Store } from "@laari/core"
import { Effect } from "effect"
import { type It, T0, freshMerchant, plain, plus, second, uuid } from "../support/Helpers.js"

const newKey = (merchantId: Ids.MerchantId, keyHash: string) =>
  Effect.map(uuid, (id) => ({
    id,
    merchantId,
    environment: "live" as const,
    kind: "publishable" as const,
    scopes: ["checkout:write" as const],
    keyHash,
    keyPrefix: "pk_live_AbCd"
  }))

export const tests = (it: It): void => {
  describe("API keys", () => {
    it.effect("keys are stored by hash, listed oldest first, revoked once and only by their merchant", () =>
      Effect.gen(function* () {
        const store = yield* Store.ApiKeysStore
        const merchant = yield* freshMerchant()
        const other = yield* freshMerchant()
        const first = yield* newKey(merchant.id, `h1:${yield* uuid}`)
        const second_ = yield* newKey(merchant.id, `h1:${yield* uuid}`)
        yield* store.insert(second_, plus(T0, second))
        yield* store.insert(first, T0)

        expect(plain(yield* store.findByHash(first.keyHash))).toEqual(
          plain({ ...first, createdAt: T0, revokedAt: null })
        )
        expect(yield* store.findByHash(`h1:${yield* uuid}`)).toBeUndefined()
        expect((yield* store.list(merchant.id)).map((k) => k.id)).toEqual([first.id, second_.id])
        expect(yield* store.list(other.id)).toEqual([])

        expect(yield* store.revoke(other.id, first.id, plus(T0, 2 * second))).toBe(false)
        expect(yield* store.revoke(merchant.id, first.id, plus(T0, 2 * second))).toBe(true)
        expect(yield* store.revoke(merchant.id, first.id, plus(T0, 3 * second))).toBe(false)
        expect(yield* store.revoke(merchant.id, yield* uuid, plus(T0, 3 * second))).toBe(false)
        expect(plain((yield* store.findByHash(first.keyHash))?.revokedAt)).toEqual(
          plain(plus(T0, 2 * second))
        )
        expect((yield* store.findByHash(second_.keyHash))?.revokedAt).toBeNull()
      })
    )

    it.effect("a hash is replaced only when the key still has it", () =>
      Effect.gen(function* () {
        const store = yield* Store.ApiKeysStore
        const merchant = yield* freshMerchant()
        const key = yield* newKey(merchant.id, `old-${yield* uuid}`)
        yield* store.insert(key, T0)
        const to = `h1:${yield* uuid}`
        yield* store.upgradeHash(key.id, `other-${yield* uuid}`, to)
        expect((yield* store.findByHash(key.keyHash))?.id).toBe(key.id)
        yield* store.upgradeHash(key.id, key.keyHash, to)
        expect(yield* store.findByHash(key.keyHash)).toBeUndefined()
        expect((yield* store.findByHash(to))?.id).toBe(key.id)
      })
    )

    it.effect("an issued key finds its principal until it is revoked; a lying prefix finds none", () =>
      Effect.gen(function* () {
        const keys = yield* ApiKeys.ApiKeys
        const store = yield* Store.ApiKeysStore
        const merchant = yield* freshMerchant()
        const issued = yield* keys.issue({ merchantId: merchant.id, environment: "test", kind: "secret" })
        expect(issued.key).toMatch(/^sk_test_[0-9a-f]{48}$/)
        const restricted = yield* keys.issue({
          merchantId: merchant.id,
          environment: "live",
          kind: "secret",
          scopes: ["qr:write"]
        })
        const publishable = yield* keys.issue({
          merchantId: merchant.id,
          environment: "test",
          kind: "publishable"
        })
        expect(publishable.scopes).toEqual(["checkout:write"])

        // Only the keyed hash and a short prefix are kept. (By id: keys made in one instant list in id order.)
        const stored = (yield* store.list(merchant.id)).find((k) => k.id === issued.id)
        expect(stored?.keyHash).toBe(yield* keys.digest(issued.key))
        expect(stored?.keyHash).not.toContain(issued.key.slice(8))
        expect(stored?.keyPrefix).toBe(issued.key.slice(0, 12))

        expect(yield* keys.authenticate(issued.key)).toEqual({
          merchantId: merchant.id,
          environment: "test",
          keyId: issued.id,
          kind: "secret",
          scopes: issued.scopes
        })
        expect((yield* keys.authenticate(restricted.key))?.scopes).toEqual(["qr:write"])
        expect((yield* keys.authenticate(publishable.key))?.kind).toBe("publishable")
        // The same secret part under another kind or environment is another key.
        expect(yield* keys.authenticate(issued.key.replace("sk_test_", "sk_live_"))).toBeUndefined()
        expect(yield* keys.authenticate(issued.key.replace("sk_test_", "pk_test_"))).toBeUndefined()
        expect(yield* keys.authenticate("not a key")).toBeUndefined()

        expect(yield* keys.revoke(merchant.id, issued.id)).toBe(true)
        expect(yield* keys.revoke(merchant.id, issued.id)).toBe(false)
        expect(yield* keys.authenticate(issued.key)).toBeUndefined()
        expect((yield* keys.authenticate(restricted.key))?.keyId).toBe(restricted.id)
        // A revoked key is told apart from one never issued, which stays unknown under any prefix.
        expect(yield* keys.identify(issued.key)).toEqual({ _tag: "Revoked" })
        expect(yield* keys.identify(issued.key.replace("sk_test_", "sk_live_"))).toEqual({ _tag: "Unknown" })
        const altered = `${issued.key.slice(0, -1)}${issued.key.endsWith("0") ? "1" : "0"}`
        expect(yield* keys.identify(altered)).toEqual({ _tag: "Unknown" })
        expect(yield* keys.identify("not a key")).toEqual({ _tag: "Unknown" })
        expect((yield* keys.identify(restricted.key))._tag).toBe("Valid")
      })
    )

    it.effect("a key stored under its plain hash is found once, then kept under its keyed hash", () =>
      Effect.gen(function* () {
        const keys = yield* ApiKeys.ApiKeys
        const store = yield* Store.ApiKeysStore
        const crypto = yield* Crypto.Crypto
        const merchant = yield* freshMerchant()
        const key = `pk_live_${Crypto.hex(yield* crypto.bytes(24))}`
        const plainHash = yield* crypto.sha256(key)
        const legacy = yield* newKey(merchant.id, plainHash)
        yield* store.insert(legacy, T0)

        expect((yield* keys.authenticate(key))?.keyId).toBe(legacy.id)
        expect(yield* store.findByHash(plainHash)).toBeUndefined()
        expect((yield* store.findByHash(yield* keys.digest(key)))?.id).toBe(legacy.id)
        expect((yield* keys.authenticate(key))?.keyId).toBe(legacy.id)
      })
    )
  })
}
