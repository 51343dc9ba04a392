/**
 * The balance reads part of the store contract: a merchant's movements newest first, paged by cursor, and
 * the movements of a Maldives day. `StoreContract.suite` runs it on every adapter; every test makes its own
 * merchant.
 */
import { describe, expect } from "@effect/vitest"
import { Balance, Ids, Store, Wallet, Work } from "@laari/core"
import { DateTime, Effect, Either } from "effect"
import { Seed } from "../../Seed.js"
import { type It, freshMerchant, freshTenant, freshPhone, tenantOf, uuid } from "../support/Helpers.js"

export const tests = (it: It): void => {
  describe("balance reads", () => {
    /** A transfer of `amount` (fee `fee`) from `payer` to `merchant`, booked at `iso`. */
    const payAt = (
      iso: string,
      merchant: Store.Merchant,
      payer: Ids.CustomerId,
      id: string,
      amount: number,
      fee: number,
      environment: Ids.Environment = "test"
    ) =>
      Effect.flatMap(Wallet.Wallet, (wallet) =>
        wallet.transfer({
          id,
          environment,
          payer,
          merchant: merchant.id,
          amount: amount as Wallet.Transfer["amount"],
          fee: fee as Wallet.Transfer["fee"],
          memo: "balance reads"
        })
      ).pipe(Effect.withClock(Work.makeManualClock(Date.parse(iso)).clock))

    it.effect("movements: newest first, ties by id in byte order, paged by cursor, one tenant's only", () =>
      Effect.gen(function* () {
        const seed = yield* Seed
        const reads = yield* Store.LedgerReadsStore
        const merchant = yield* freshMerchant()
        const other = yield* freshMerchant()
        const tenant = tenantOf(merchant)
        const payer = yield* seed.customer({
          environment: "test",
          phone: yield* freshPhone,
          balance: 1_000_000
        })
        const livePayer = yield* seed.customer({
          environment: "live",
          phone: yield* freshPhone,
          balance: 1_000_000
        })
        const p = yield* uuid
        // Three at one instant: byte order puts `A` before `B` before `a` (a collation might not).
        const booked: Array<readonly [string, string, number, number]> = [
          ["2026-02-28T18:59:59.999Z", `${p}:early`, 1_000, 10],
          ["2026-02-28T19:00:00.000Z", `${p}:start`, 2_000, 20],
          ["2026-03-01T12:00:00.000Z", `${p}:B`, 3_000, 0],
          ["2026-03-01T12:00:00.000Z", `${p}:a`, 4_000, 40],
          ["2026-03-01T12:00:00.000Z", `${p}:A`, 5_000, 50],
          ["2026-03-01T18:59:59.999Z", `${p}:end`, 6_000, 60],
          ["2026-03-01T19:00:00.000Z", `${p}:next`, 7_000, 70]
        ]
        for (const [iso, id, amount, fee] of booked) yield* payAt(iso, merchant, payer.id, id, amount, fee)
        // Not this tenant's: another merchant's, and this merchant's live ones, at the same moments.
        yield* payAt("2026-03-01T12:00:00.000Z", other, payer.id, `${p}:other`, 9_000, 90)
        yield* payAt("2026-03-01T12:00:00.000Z", merchant, livePayer.id, `${p}:live`, 9_000, 90, "live")

        const newest = [`${p}:next`, `${p}:end`, `${p}:a`, `${p}:B`, `${p}:A`, `${p}:start`, `${p}:early`]
        const all = (yield* reads.movements(tenant, { limit: 100 }))!
        expect(all.map((m) => m.transferId)).toEqual(newest)
        const byId = new Map(booked.map(([iso, id, amount, fee]) => [id, { iso, amount, fee }]))
        for (const m of all) {
          const b = byId.get(m.transferId)!
          expect({ kind: m.kind, net: m.net, fee: m.fee, at: DateTime.formatIso(m.createdAt) }).toEqual({
            kind: "payment",
            net: b.amount - b.fee,
            fee: b.fee,
            at: b.iso
          })
        }
        expect(yield* reads.available(tenant)).toBe(all.reduce((s, m) => s + m.net, 0))
        expect(yield* reads.available(tenantOf(merchant, "live"))).toBe(9_000 - 90)
        expect(yield* reads.available(tenantOf(yield* freshMerchant()))).toBe(0)

        // Pages of 2 through the ties give every movement once, in order.
        const paged: Array<string> = []
        let after: string | undefined
        for (;;) {
          const page = (yield* reads.movements(tenant, { startingAfter: after, limit: 2 }))!
          paged.push(...page.map((m) => m.transferId))
          if (page.length < 2) break
          after = page[1]!.transferId
        }
        expect(paged).toEqual(newest)
        expect((yield* reads.movements(tenant, { startingAfter: `${p}:early`, limit: 5 }))!).toEqual([])
        // Another tenant's transfer, or none at all, is no cursor.
        for (const cursor of [`${p}:other`, `${p}:live`, `${p}:missing`, "nul\u0000"])
          expect(yield* reads.movements(tenant, { startingAfter: cursor, limit: 5 })).toBeUndefined()
        expect((yield* reads.movements(tenantOf(other), { limit: 5 }))!.map((m) => m.transferId)).toEqual([
          `${p}:other`
        ])
      })
    )

    it.effect("between: a Maldives day, 19:00 UTC to 19:00 UTC, oldest first", () =>
      Effect.gen(function* () {
        const seed = yield* Seed
        const reads = yield* Store.LedgerReadsStore
        const { merchant, tenant } = yield* freshTenant()
        const payer = yield* seed.customer({
          environment: "test",
          phone: yield* freshPhone,
          balance: 100_000
        })
        const p = yield* uuid
        for (const [iso, id] of [
          ["2026-02-28T18:59:59.999Z", "before"],
          ["2026-02-28T19:00:00.000Z", "first"],
          ["2026-03-01T18:59:59.999Z", "last"],
          ["2026-03-01T19:00:00.000Z", "after"]
        ] as const)
          yield* payAt(iso, merchant, payer.id, `${p}:${id}`, 1_000, 10)
        const day = Either.getOrThrow(Balance.day("2026-03-01"))
        const inDay = yield* reads.between(tenant, day.from, day.to)
        expect(inDay.map((m) => m.transferId)).toEqual([`${p}:first`, `${p}:last`])
        expect(yield* reads.between(tenantOf(yield* freshMerchant()), day.from, day.to)).toEqual([])
      })
    )

    it.effect("payments: one customer's, newest first, ties by id in byte order, at most limit", () =>
      Effect.gen(function* () {
        const seed = yield* Seed
        const reads = yield* Store.LedgerReadsStore
        const merchant = yield* freshMerchant()
        const other = yield* freshMerchant()
        const customer = () =>
          Effect.flatMap(freshPhone, (phone) =>
            seed.customer({ environment: "test", phone, balance: 100_000 })
          )
        const payer = yield* customer()
        const someoneElse = yield* customer()
        const p = yield* uuid
        yield* payAt("2026-03-01T10:00:00.000Z", merchant, payer.id, `${p}:old`, 1_000, 10)
        yield* payAt("2026-03-01T12:00:00.000Z", other, payer.id, `${p}:B`, 2_000, 20)
        yield* payAt("2026-03-01T12:00:00.000Z", merchant, payer.id, `${p}:a`, 3_000, 0)
        yield* payAt("2026-03-01T12:00:00.000Z", merchant, someoneElse.id, `${p}:theirs`, 4_000, 40)
        const all = yield* reads.payments(payer.id, 10)
        expect(
          all.map((x) => [
            x.transferId,
            x.merchantId,
            x.environment,
            x.amount,
            DateTime.formatIso(x.createdAt)
          ])
        ).toEqual([
          [`${p}:a`, merchant.id, "test", 3_000, "2026-03-01T12:00:00.000Z"],
          [`${p}:B`, other.id, "test", 2_000, "2026-03-01T12:00:00.000Z"],
          [`${p}:old`, merchant.id, "test", 1_000, "2026-03-01T10:00:00.000Z"]
        ])
        expect((yield* reads.payments(payer.id, 2)).map((x) => x.transferId)).toEqual([`${p}:a`, `${p}:B`])
        expect((yield* reads.payments(someoneElse.id, 10)).map((x) => x.transferId)).toEqual([`${p}:theirs`])
        expect(yield* reads.payments((yield* customer()).id, 10)).toEqual([])
      })
    )
  })
}
