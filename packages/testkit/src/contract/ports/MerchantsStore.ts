/**
 * The merchants store part of the store contract (core's `Store.MerchantRegistryStore`, through core's
 * `Merchants`): a merchant is created in one unit with its sandbox payer and wallet, its own wallets at zero
 * and its outlets numbered in order; merchants list oldest first with their outlets; outlets are added
 * only to a merchant that exists; a feature gate changes only when named, and the cached read sees it.
 */
import { describe, expect } from "@effect/vitest"
import { Ids, Merchant, Merchants, Store, Wallet } from "@laari/core"
import { Effect, Either } from "effect"
import { Seed } from "../../Seed.js"
import { type It, T0, plain, plus, second, uuid } from "../support/Helpers.js"

let made = 0
const freshName = () => `Contract merchant store ${++made}`

/** A new merchant as the store is given it, ids fresh. */
const newMerchant = (outlets: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const opened = Merchant.open(
      { name: freshName() },
      Ids.MerchantId.make(yield* uuid),
      Ids.CustomerId.make(yield* uuid)
    )
    return { ...Either.getOrThrow(opened), outlets }
  })

export const tests = (it: It): void => {
  describe("merchants store", () => {
    it.effect("a merchant is created with its sandbox payer, its wallets and its outlets in order", () =>
      Effect.gen(function* () {
        const merchants = yield* Merchants.Merchants
        const seed = yield* Seed
        const before = yield* merchants.count
        const name = freshName()
        const { merchant, outlets } = yield* merchants.create({
          name,
          mcc: "5814",
          outlets: ["Majeedhee Magu", "Airport"]
        })
        expect(merchant).toMatchObject({
          name,
          city: Merchant.DefaultCity,
          mcc: "5814",
          feeBps: 100,
          features: { mandatesLive: false, subscriptionsLive: false }
        })
        expect(outlets.map((o) => [o.merchantId, o.name])).toEqual([
          [merchant.id, "Majeedhee Magu"],
          [merchant.id, "Airport"]
        ])
        expect(outlets[0]!.id).toBeLessThan(outlets[1]!.id)
        expect(yield* merchants.count).toBe(before + 1)
        expect(plain(yield* merchants.get(merchant.id))).toEqual(plain(merchant))
        expect(yield* merchants.listOutlets(merchant.id)).toEqual(outlets)

        const payer = yield* (yield* Store.CustomersStore).get(merchant.sandboxPayer)
        expect(payer).toEqual({
          id: merchant.sandboxPayer,
          environment: "test",
          phone: Merchant.sandboxPhone(merchant.id),
          name: `${name} sandbox payer`
        })
        expect(yield* (yield* Wallet.Wallet).payer(merchant.sandboxPayer)).toMatchObject({
          environment: "test",
          balance: Merchant.SandboxPayerBalance,
          limit: null,
          frozen: false,
          timeZone: Merchant.SandboxPayerZone
        })
        expect(yield* seed.merchantBalance(merchant.id, "test")).toBe(0)
        expect(yield* seed.merchantBalance(merchant.id, "live")).toBe(0)
      })
    )

    it.effect("a merchant the model refuses is not stored", () =>
      Effect.gen(function* () {
        const merchants = yield* Merchants.Merchants
        const before = yield* merchants.count
        const refused = yield* Effect.flip(merchants.create({ name: freshName(), mcc: "58", feeBps: 10_001 }))
        expect(refused._tag === "InvalidRequest" && refused.errors.map((e) => e.field)).toEqual([
          "mcc",
          "fee_bps"
        ])
        expect(yield* merchants.count).toBe(before)
      })
    )

    it.effect("merchants list oldest first with their outlets, at most the limit", () =>
      Effect.gen(function* () {
        const store = yield* Store.MerchantRegistryStore
        const first = yield* newMerchant(["Counter"])
        const next = yield* newMerchant([])
        // Created long before any other test's merchants, so they are the first two.
        const outlets = yield* store.create(first, T0)
        expect(yield* store.create(next, plus(T0, second))).toEqual([])
        const listed = yield* store.list(1_000_000)
        const mine = listed.filter(
          (m) => m.merchant.id === first.merchant.id || m.merchant.id === next.merchant.id
        )
        expect(plain(mine)).toEqual(
          plain([
            { merchant: first.merchant, outlets },
            { merchant: next.merchant, outlets: [] }
          ])
        )
        expect(listed.length).toBe(yield* store.count)
        expect(yield* store.list(1)).toHaveLength(1)
      })
    )

    it.effect("outlets are added to a merchant that exists only", () =>
      Effect.gen(function* () {
        const merchants = yield* Merchants.Merchants
        const { merchant, outlets } = yield* merchants.create({ name: freshName(), outlets: ["Harbour"] })
        const added = yield* merchants.addOutlet(merchant.id, "Airport")
        expect(added).toMatchObject({ merchantId: merchant.id, name: "Airport" })
        expect(added!.id).toBeGreaterThan(outlets[0]!.id)
        expect(yield* merchants.listOutlets(merchant.id)).toEqual([...outlets, added])
        expect(yield* merchants.addOutlet(yield* uuid, "Nowhere")).toBeUndefined()
        expect(yield* merchants.addOutlet("not-a-uuid", "Nowhere")).toBeUndefined()
        expect(yield* merchants.listOutlets(yield* uuid)).toEqual([])
        expect(yield* merchants.listOutlets("not-a-uuid")).toEqual([])
        expect((yield* Effect.flip(merchants.addOutlet(merchant.id, "")))._tag).toBe("InvalidRequest")
      })
    )

    it.effect("a feature gate changes only when named, and the merchant read sees it", () =>
      Effect.gen(function* () {
        const merchants = yield* Merchants.Merchants
        const reads = yield* Store.MerchantsStore
        const { merchant } = yield* merchants.create({ name: freshName() })
        // Read once first, so a store that caches the read is seen to drop it.
        expect((yield* reads.get(merchant.id))?.features.mandatesLive).toBe(false)
        expect((yield* merchants.setFeatures(merchant.id, { mandatesLive: true }))?.features).toEqual({
          mandatesLive: true,
          subscriptionsLive: false
        })
        expect((yield* reads.get(merchant.id))?.features.mandatesLive).toBe(true)
        const both = yield* merchants.setFeatures(merchant.id, {
          subscriptionsLive: true,
          mandatesLive: undefined
        })
        expect(both).toEqual({ ...merchant, features: { mandatesLive: true, subscriptionsLive: true } })
        expect(yield* merchants.setFeatures(merchant.id, {})).toEqual(both)
        expect(plain(yield* reads.get(merchant.id))).toEqual(plain(both))
        expect(yield* merchants.setFeatures(yield* uuid, { mandatesLive: true })).toBeUndefined()
        expect(yield* merchants.setFeatures("not-a-uuid", { mandatesLive: true })).toBeUndefined()
      })
    )
  })
}
