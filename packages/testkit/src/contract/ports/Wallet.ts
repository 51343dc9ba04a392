/**
 * The wallet part of the store contract: refusals in `decideTransfer` order, balanced transfers idempotent
 * on their id, and one move of money under concurrency. `StoreContract.suite` runs it on every adapter;
 * every test makes its own merchant.
 */
import { describe, expect } from "@effect/vitest"
import { Store, Wallet } from "@laari/core"
import { Effect } from "effect"
import { type PayerPatch, Seed } from "../../Seed.js"
import { type It, freshMerchant, freshPhone, plain, uuid } from "../support/Helpers.js"

/**
 * A fresh merchant, a customer of theirs holding `balance`, and a transfer of `amount` (`fee` of it) from
 * the customer to the merchant under a fresh id, not yet made; the fee account's balance before.
 */
const transferCase = (balance: number, amount: number, fee: number, memo: string) =>
  Effect.gen(function* () {
    const seed = yield* Seed
    const merchant = yield* freshMerchant()
    const customer = yield* seed.customer({ environment: "test", phone: yield* freshPhone, balance })
    const transfer: Wallet.Transfer = {
      id: `contract:${yield* uuid}`,
      environment: "test",
      payer: customer.id,
      merchant: merchant.id,
      amount: amount as Wallet.Transfer["amount"],
      fee: fee as Wallet.Transfer["fee"],
      memo
    }
    return {
      seed,
      wallet: yield* Wallet.Wallet,
      merchant,
      customer,
      transfer,
      feeBefore: yield* seed.feeBalance("test")
    }
  })

export const tests = (it: It): void => {
  describe("wallet", () => {
    it.effect("refuses in decideTransfer order and moves nothing when it refuses", () =>
      Effect.gen(function* () {
        const { seed, wallet, merchant, customer, transfer, feeBefore } = yield* transferCase(
          5_000,
          6_000,
          60,
          "refusals"
        )
        const steps: ReadonlyArray<readonly [PayerPatch, Wallet.RefusalReason]> = [
          [{ frozen: true, blockedByRules: true, limit: 1_000 }, "wallet-frozen"],
          [{ frozen: false }, "blocked-by-rules"],
          [{ blockedByRules: false }, "wallet-limit"],
          [{ limit: null }, "insufficient-balance"]
        ]
        for (const [patch, reason] of steps) {
          const account = yield* seed.setPayer(customer.id, patch)
          expect(plain(yield* wallet.payer(customer.id))).toEqual(plain(account))
          expect(Wallet.decideTransfer(account, transfer.amount)).toBe(reason)
          const refused = yield* Effect.flip(wallet.transfer(transfer))
          expect(refused).toMatchObject({ _tag: "TransferRefused", reason })
          expect((yield* wallet.payer(customer.id))?.balance).toBe(5_000)
          expect(yield* seed.merchantBalance(merchant.id, "test")).toBe(0)
          expect(yield* seed.feeBalance("test")).toBe(feeBefore)
        }
        // A refusal does not use up the transfer id.
        yield* seed.setPayer(customer.id, { balance: 6_000 })
        expect((yield* wallet.transfer(transfer)).netAmount).toBe(5_940)
        expect((yield* wallet.payer(customer.id))?.balance).toBe(0)
        expect(yield* seed.ledgerTotal).toBe(0)
      })
    )

    it.effect("a transfer writes balanced entries, is idempotent on its id, and conserves money", () =>
      Effect.gen(function* () {
        const { seed, wallet, merchant, customer, transfer, feeBefore } = yield* transferCase(
          50_000,
          12_350,
          124,
          "balanced"
        )
        const receipt = yield* wallet.transfer(transfer)
        expect(receipt).toMatchObject({ id: transfer.id, amount: 12_350, fee: 124, netAmount: 12_226 })
        const moved = {
          payer: (yield* wallet.payer(customer.id))?.balance,
          merchant: yield* seed.merchantBalance(merchant.id, "test"),
          fee: (yield* seed.feeBalance("test")) - feeBefore
        }
        expect(moved).toEqual({ payer: 50_000 - 12_350, merchant: 12_226, fee: 124 })
        expect(yield* seed.merchantBalance(merchant.id, "live")).toBe(0)
        expect(yield* seed.ledgerTotal).toBe(0)

        // The same id again, even with other figures: the first receipt, and nothing moves.
        const again = yield* wallet.transfer({
          ...transfer,
          amount: 999 as Wallet.Transfer["amount"],
          fee: 0 as Wallet.Transfer["fee"]
        })
        expect(plain(again)).toEqual(plain(receipt))
        expect((yield* wallet.payer(customer.id))?.balance).toBe(moved.payer)
        expect(yield* seed.merchantBalance(merchant.id, "test")).toBe(12_226)

        // A new id is a new transfer.
        yield* wallet.transfer({ ...transfer, id: `contract:${yield* uuid}` })
        expect((yield* wallet.payer(customer.id))?.balance).toBe(50_000 - 2 * 12_350)
        expect(yield* seed.merchantBalance(merchant.id, "test")).toBe(2 * 12_226)
        expect(yield* seed.ledgerTotal).toBe(0)
      })
    )

    it.effect("concurrent transfers with one id move money once", () =>
      Effect.gen(function* () {
        const { seed, wallet, merchant, customer, transfer } = yield* transferCase(10_000, 1_000, 0, "once")
        const tx = yield* Store.Transactor
        yield* Effect.all(
          Array.from({ length: 10 }, () => tx.withTransaction(wallet.transfer(transfer))),
          {
            concurrency: "unbounded"
          }
        )
        expect((yield* wallet.payer(customer.id))?.balance).toBe(9_000)
        expect(yield* seed.merchantBalance(merchant.id, "test")).toBe(1_000)
      })
    )
  })
}
