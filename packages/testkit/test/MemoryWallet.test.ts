import { describe, expect, it } from "@effect/vitest"
import { type Ids, Wallet } from "@laari/core"
import { Effect, Either, Layer } from "effect"
import fc from "fast-check"
import * as MemoryDb from "../src/MemoryDb.js"
import * as MemoryWallet from "../src/MemoryWallet.js"
import type { PayerPatch } from "../src/Seed.js"

const ledger = MemoryWallet.layer.pipe(Layer.provideMerge(MemoryDb.layer))

const customers = ["c1", "c2", "c3"] as const
const merchantId = "m1" as Ids.MerchantId

type Op =
  | {
      readonly _tag: "Transfer"
      readonly id: string
      readonly payer: string
      readonly amount: number
      readonly fee: number
    }
  | { readonly _tag: "Set"; readonly customer: string; readonly patch: PayerPatch }

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .record({
        id: fc.constantFrom("t1", "t2", "t3", "t4", "t5", "t6"),
        payer: fc.constantFrom(...customers),
        amount: fc.integer({ min: 1, max: 5_000 }),
        feeShare: fc.double({ min: 0, max: 1, noNaN: true })
      })
      .map(({ feeShare, ...t }): Op => ({ _tag: "Transfer", ...t, fee: Math.floor(t.amount * feeShare) }))
  },
  {
    weight: 1,
    arbitrary: fc
      .record({
        customer: fc.constantFrom(...customers),
        patch: fc.record(
          {
            balance: fc.integer({ min: 0, max: 10_000 }),
            limit: fc.option(fc.integer({ min: 1, max: 5_000 }), { nil: null }),
            frozen: fc.boolean(),
            blockedByRules: fc.boolean()
          },
          { requiredKeys: [] }
        )
      })
      .map((s): Op => ({ _tag: "Set", ...s }))
  }
)

describe("MemoryWallet", () => {
  it.effect("any sequence of transfers and wallet changes conserves money and matches decideTransfer", () =>
    Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(fc.array(op, { maxLength: 60 }), (ops) =>
          Effect.runPromise(
            Effect.gen(function* () {
              const wallet = yield* MemoryWallet.MemoryWallet
              for (const c of customers)
                yield* wallet.open({ customerId: c, environment: "test", balance: 5_000 })
              const done = new Map<string, Wallet.TransferReceipt>()
              for (const o of ops) {
                if (o._tag === "Set") {
                  yield* wallet.setPayer(o.customer, o.patch)
                } else {
                  const before = (yield* wallet.payer(o.payer as Ids.CustomerId))!
                  const merchantBefore = yield* wallet.balance(
                    MemoryWallet.account.merchant("test", merchantId)
                  )
                  const outcome = yield* Effect.either(
                    wallet.transfer({
                      id: o.id,
                      environment: "test",
                      payer: o.payer as Ids.CustomerId,
                      merchant: merchantId,
                      amount: o.amount as Wallet.Transfer["amount"],
                      fee: o.fee as Wallet.Transfer["fee"],
                      memo: "property"
                    })
                  )
                  const after = (yield* wallet.payer(o.payer as Ids.CustomerId))!
                  const merchantAfter = yield* wallet.balance(
                    MemoryWallet.account.merchant("test", merchantId)
                  )
                  const first = done.get(o.id)
                  if (first !== undefined) {
                    // A repeated id: the first receipt, and nothing moves.
                    expect(outcome).toEqual(Either.right(first))
                    expect(after.balance).toBe(before.balance)
                  } else {
                    const refusal = Wallet.decideTransfer(before, o.amount)
                    if (refusal === undefined) {
                      expect(Either.isRight(outcome)).toBe(true)
                      if (Either.isRight(outcome)) done.set(o.id, outcome.right)
                      expect(before.balance - after.balance).toBe(o.amount)
                      expect(merchantAfter - merchantBefore).toBe(o.amount - o.fee)
                    } else {
                      expect(outcome).toMatchObject(Either.left({ reason: refusal }))
                      expect(after.balance).toBe(before.balance)
                    }
                  }
                }
                expect(yield* wallet.ledgerTotal).toBe(0)
              }
              // Every posting balances, and only the funding account is ever below zero.
              const entries = yield* wallet.entries
              const byPosting = new Map<string, number>()
              for (const e of entries)
                byPosting.set(e.postingId, (byPosting.get(e.postingId) ?? 0) + e.amount)
              for (const sum of byPosting.values()) expect(sum).toBe(0)
              const db = yield* MemoryDb.MemoryDb
              for (const [name, balance] of (yield* db.get).balances)
                if (!name.startsWith("funding:")) expect(balance).toBeGreaterThanOrEqual(0)
              expect(yield* wallet.balance(MemoryWallet.account.fee("test"))).toBe(
                [...done.values()].reduce((s, r) => s + r.fee, 0)
              )
            }).pipe(Effect.provide(ledger))
          )
        ),
        { numRuns: 200 }
      )
    )
  )

  it.effect("a transfer's legs: payer debit = merchant credit + fee credit", () =>
    Effect.gen(function* () {
      const wallet = yield* MemoryWallet.MemoryWallet
      yield* wallet.open({ customerId: "c", environment: "live", balance: 1_000 })
      yield* wallet.transfer({
        id: "x",
        environment: "live",
        payer: "c" as Ids.CustomerId,
        merchant: merchantId,
        amount: 600 as Wallet.Transfer["amount"],
        fee: 6 as Wallet.Transfer["fee"],
        memo: "legs"
      })
      const legs = (yield* wallet.entries).filter((e) => e.postingId === "transfer:x")
      expect(legs.map((e) => [e.account, e.amount])).toEqual([
        ["customer:c", -600],
        [`merchant:live:${merchantId}`, 594],
        ["fee:live", 6]
      ])
      expect(yield* wallet.balance("funding:live")).toBe(-1_000)
    }).pipe(Effect.provide(ledger))
  )

  it.effect("a payer of another environment, or no wallet at all, is an executor error", () =>
    Effect.gen(function* () {
      const wallet = yield* MemoryWallet.MemoryWallet
      yield* wallet.open({ customerId: "c", environment: "test", balance: 1_000 })
      for (const [payer, environment] of [
        ["c", "live"],
        ["nobody", "test"]
      ] as const) {
        const refused = yield* Effect.flip(
          wallet.transfer({
            id: `${payer}-${environment}`,
            environment,
            payer: payer as Ids.CustomerId,
            merchant: merchantId,
            amount: 100 as Wallet.Transfer["amount"],
            fee: 1 as Wallet.Transfer["fee"],
            memo: "x"
          })
        )
        expect(refused).toMatchObject({ _tag: "TransferRefused", reason: "executor-error" })
      }
    }).pipe(Effect.provide(ledger))
  )
})
