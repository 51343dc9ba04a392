/**
 * The idempotency store part of the store contract: claim, complete, hold and replay inside transactions,
 * replacing an expired record, and purging past the retention. `StoreContract.suite` runs it on every
 * adapter; every test makes its own merchant.
 */
import { describe, expect } from "@effect/vitest"
import { Idempotency, Store } from "@laari/core"
import { DateTime, Effect, Exit } from "effect"
import { type It, T0, day, freshMerchant, hour, plain, plus, second, uuid } from "../support/Helpers.js"

export const tests = (it: It): void => {
  describe("idempotency store", () => {
    const scopeFor = (merchant: Store.Merchant) =>
      Effect.map(
        uuid,
        (key): Idempotency.Scope => ({
          merchantId: merchant.id,
          environment: "test",
          method: "POST",
          path: "/mandates",
          key
        })
      )

    it.effect("claim, complete, hold and replay, inside transactions", () =>
      Effect.gen(function* () {
        const store = yield* Store.IdempotencyStore
        const tx = yield* Store.Transactor
        const claim = (scope: Idempotency.Scope, fingerprint: string, at: DateTime.Utc) =>
          tx.withTransaction(store.claim(scope, fingerprint, at))
        const merchant = yield* freshMerchant()
        const scope = yield* scopeFor(merchant)
        const response: Idempotency.StoredResponse = {
          status: 201,
          headers: { "content-type": "application/json", location: "/mandates/1" },
          body: '{"id":"1","status":"ACTIVE"}'
        }
        yield* tx.withTransaction(
          Effect.gen(function* () {
            expect(yield* store.claim(scope, "fp-1", T0)).toEqual({ _tag: "Claimed" })
            yield* store.complete(scope, response)
          })
        )
        const later = plus(T0, second)
        const held = yield* claim(scope, "fp-1", later)
        expect(held._tag).toBe("Held")
        const record = held._tag === "Held" ? held.record : undefined
        expect(plain(record)).toEqual(plain({ scope, fingerprint: "fp-1", response, createdAt: T0 }))
        expect(Idempotency.decide(record, "fp-1", later)).toEqual({ _tag: "Replay", response })
        expect(Idempotency.decide(record, "fp-2", later)).toEqual({ _tag: "Mismatch" })

        // Every part of the scope separates keys.
        const other = yield* freshMerchant()
        for (const s of [
          { ...scope, path: "/mandates/x/charges" },
          { ...scope, method: "PUT" },
          { ...scope, environment: "live" as const },
          { ...scope, merchantId: other.id },
          { ...scope, key: yield* uuid }
        ])
          expect(yield* claim(s, "fp-1", T0)).toEqual({ _tag: "Claimed" })

        // A claim whose transaction failed leaves nothing behind, so the client may retry.
        const failed = yield* scopeFor(merchant)
        const exit = yield* Effect.exit(
          tx.withTransaction(Effect.zipRight(store.claim(failed, "fp-1", T0), Effect.fail("boom")))
        )
        expect(Exit.isFailure(exit)).toBe(true)
        expect(yield* claim(failed, "fp-2", later)).toEqual({ _tag: "Claimed" })
      })
    )

    it.effect("an expired record is replaced, and the replacement is what later claims hold", () =>
      Effect.gen(function* () {
        const store = yield* Store.IdempotencyStore
        const tx = yield* Store.Transactor
        const merchant = yield* freshMerchant()
        const scope = yield* scopeFor(merchant)
        yield* tx.withTransaction(
          Effect.zipRight(
            store.claim(scope, "fp", T0),
            store.complete(scope, { status: 200, headers: {}, body: "{}" })
          )
        )
        const expiredAt = plus(T0, Idempotency.RetentionHours * hour)
        yield* tx.withTransaction(
          Effect.gen(function* () {
            const held = yield* store.claim(scope, "fp-new", expiredAt)
            expect(held._tag === "Held" && Idempotency.decide(held.record, "fp-new", expiredAt)).toEqual({
              _tag: "Proceed"
            })
            yield* store.replace(scope, "fp-new", expiredAt)
          })
        )
        const again = yield* tx.withTransaction(store.claim(scope, "fp-new", expiredAt))
        expect(again._tag === "Held" ? plain(again.record) : again).toEqual(
          plain({ scope, fingerprint: "fp-new", response: null, createdAt: expiredAt })
        )
      })
    )

    it.effect("purge deletes exactly the records past the retention", () =>
      Effect.gen(function* () {
        const store = yield* Store.IdempotencyStore
        const tx = yield* Store.Transactor
        const merchant = yield* freshMerchant()
        const t = (days: number) => plus(DateTime.unsafeMake("1950-01-01T00:00:00Z"), days * day)
        // Clear what an earlier, interrupted run may have left in the era.
        yield* store.purge(t(10))
        const old = yield* scopeFor(merchant)
        const young = yield* scopeFor(merchant)
        yield* tx.withTransaction(store.claim(old, "fp", t(0)))
        yield* tx.withTransaction(
          Effect.zipRight(
            store.claim(young, "fp", t(1)),
            store.complete(young, { status: 201, headers: {}, body: "{}" })
          )
        )
        expect(yield* store.purge(t(3) /* exactly 72 h after `old` */)).toBe(1)
        expect(yield* tx.withTransaction(store.claim(old, "fp", t(3)))).toEqual({ _tag: "Claimed" })
        const kept = yield* tx.withTransaction(store.claim(young, "fp", t(3)))
        expect(kept._tag === "Held" && kept.record.response).not.toBeNull()
        expect(yield* store.purge(t(10))).toBe(2)
      })
    )
  })
}
