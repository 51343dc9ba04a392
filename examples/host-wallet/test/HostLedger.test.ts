import { it } from "@effect/vitest"
import { Wallet } from "@laari/core"
import type { Ids } from "@laari/core"
import { Effect, Exit } from "effect"
import { describe, expect } from "vitest"
import { HostLedger, accountId } from "../src/HostLedger.js"
import * as HostLedgerModule from "../src/HostLedger.js"

const customerId = "c-1" as Ids.CustomerId
const merchantId = "m-1" as Ids.MerchantId
const transfer = (id: string, amount: number, fee = 0): Wallet.Transfer => ({
  id,
  environment: "live",
  payer: customerId,
  merchant: merchantId,
  amount: amount as Wallet.Transfer["amount"],
  fee: fee as Wallet.Transfer["fee"],
  memo: "test"
})

describe("the host ledger on its own", () => {
  it.effect("refuses a hand posting that would overdraw an account, and keeps the book as it was", () =>
    Effect.gen(function* () {
      const ledger = yield* HostLedger
      yield* ledger.openCustomer({ customerId, environment: "live", balance: 1_000 })
      const refused = yield* Effect.flip(
        ledger.post({
          id: "manual-1",
          memo: "too much",
          lines: [
            { account: accountId.customer(customerId), amount: -1_001 },
            { account: accountId.fees("live"), amount: 1_001 }
          ]
        })
      )
      expect(refused).toMatchObject({
        _tag: "Overdrawn",
        account: accountId.customer(customerId),
        balance: -1
      })
      expect(yield* ledger.balance(accountId.customer(customerId))).toBe(1_000)
      expect((yield* ledger.trialBalance).postings).toBe(1)
    }).pipe(Effect.provide(HostLedgerModule.layer))
  )

  it.effect("a transfer is refused in the port's order and is idempotent on its id", () =>
    Effect.gen(function* () {
      const ledger = yield* HostLedger
      const wallet = yield* Wallet.Wallet
      yield* ledger.openCustomer({ customerId, environment: "live", balance: 5_000 })
      yield* ledger.updateCustomer(customerId, { frozen: true, limit: 100 })
      expect(yield* Effect.flip(wallet.transfer(transfer("t-1", 6_000)))).toMatchObject({
        reason: "wallet-frozen"
      })
      yield* ledger.updateCustomer(customerId, { frozen: false })
      expect(yield* Effect.flip(wallet.transfer(transfer("t-1", 6_000)))).toMatchObject({
        reason: "wallet-limit"
      })
      yield* ledger.updateCustomer(customerId, { limit: null })
      expect(yield* Effect.flip(wallet.transfer(transfer("t-1", 6_000)))).toMatchObject({
        reason: "insufficient-balance"
      })
      const first = yield* wallet.transfer(transfer("t-2", 4_000, 40))
      const again = yield* wallet.transfer(transfer("t-2", 999, 0))
      expect(again).toEqual(first)
      expect(yield* ledger.balance(accountId.customer(customerId))).toBe(1_000)
      expect(yield* ledger.balance(accountId.merchant("live", merchantId))).toBe(3_960)
      expect(yield* ledger.balance(accountId.fees("live"))).toBe(40)
      // A wallet of the other environment cannot pay a live transfer.
      expect(
        yield* Effect.flip(wallet.transfer({ ...transfer("t-3", 10), environment: "test" }))
      ).toMatchObject({
        reason: "executor-error"
      })
    }).pipe(Effect.provide(HostLedgerModule.layer))
  )

  it.effect("a failed transaction leaves nothing in the book", () =>
    Effect.gen(function* () {
      const ledger = yield* HostLedger
      const wallet = yield* Wallet.Wallet
      yield* ledger.openCustomer({ customerId, environment: "live", balance: 5_000 })
      const exit = yield* Effect.exit(
        ledger.withTransaction(
          Effect.zipRight(wallet.transfer(transfer("t-1", 2_000)), Effect.fail("rollback"))
        )
      )
      expect(Exit.isFailure(exit)).toBe(true)
      expect(yield* ledger.balance(accountId.customer(customerId))).toBe(5_000)
      // The id was forgotten with the rest: the same transfer now moves money.
      yield* wallet.transfer(transfer("t-1", 2_000))
      expect(yield* ledger.balance(accountId.customer(customerId))).toBe(3_000)
      expect((yield* ledger.trialBalance).sum).toBe(0)
    }).pipe(Effect.provide(HostLedgerModule.layer))
  )
})
