/**
 * The merchants and customers part of the store contract: the seeded merchant and its sandbox payer, and
 * customers by id and by phone, in one environment only. `StoreContract.suite` runs it on every adapter;
 * every test makes its own merchant.
 */
import { describe, expect } from "@effect/vitest"
import { Ids, Store, Wallet } from "@laari/core"
import { Effect } from "effect"
import { SandboxPayerBalance, Seed } from "../../Seed.js"
import { type It, freshMerchant, freshPhone, plain, uuid } from "../support/Helpers.js"

export const tests = (it: It): void => {
  describe("merchants and customers", () => {
    it.effect("the seeded merchant, its sandbox payer and a customer are found", () =>
      Effect.gen(function* () {
        const seed = yield* Seed
        const merchant = yield* freshMerchant({
          city: "Hulhumale",
          mcc: "5812",
          feeBps: 150,
          features: { mandatesLive: true }
        })
        expect(merchant).toMatchObject({
          city: "Hulhumale",
          mcc: "5812",
          feeBps: 150,
          features: { mandatesLive: true, subscriptionsLive: false }
        })
        const merchants = yield* Store.MerchantsStore
        expect(plain(yield* merchants.get(merchant.id))).toEqual(plain(merchant))
        expect(yield* merchants.get((yield* uuid) as Ids.MerchantId)).toBeUndefined()

        const customers = yield* Store.CustomersStore
        const wallet = yield* Wallet.Wallet
        const payer = yield* customers.get(merchant.sandboxPayer)
        expect(payer?.environment).toBe("test")
        expect((yield* wallet.payer(merchant.sandboxPayer))?.balance).toBe(SandboxPayerBalance)

        const phone = yield* freshPhone
        const customer = yield* seed.customer({
          environment: "live",
          phone,
          name: "Aisha",
          balance: 5_000,
          timeZone: "Asia/Kathmandu"
        })
        expect(customer).toMatchObject({ environment: "live", phone, name: "Aisha" })
        expect(plain(yield* customers.get(customer.id))).toEqual(plain(customer))
        expect(plain(yield* customers.findByPhone("live", phone))).toEqual(plain(customer))
        expect(yield* customers.findByPhone("test", phone)).toBeUndefined()
        expect(yield* wallet.payer(customer.id)).toEqual({
          customerId: customer.id,
          environment: "live",
          balance: 5_000,
          limit: null,
          frozen: false,
          blockedByRules: false,
          timeZone: "Asia/Kathmandu"
        })
        expect(yield* wallet.payer((yield* uuid) as Ids.CustomerId)).toBeUndefined()
      })
    )
  })
}
