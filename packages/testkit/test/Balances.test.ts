/**
 * The `Balances` service over memory: the invariant that payments minus refunds equal the
 * merchant's balance plus fees, after random sequences of charges and refunds, and the list and the
 * settlement days agreeing with the ledger. Refunds are booked straight into the memory ledger as the
 * refunds service books them: a transfer of kind `refund`, merchant to customer, no fee moved.
 */
import { describe, expect, it } from "@effect/vitest"
import { Balance, Balances, Calendar, Fees, type Ids, Mandates, type Store } from "@laari/core"
import { DateTime, Effect, Either } from "effect"
import fc from "fast-check"
import { MemoryDb } from "../src/MemoryDb.js"
import * as MemoryWallet from "../src/MemoryWallet.js"
import { Seed } from "../src/Seed.js"
import * as Testkit from "../src/Testkit.js"
import { ControllableClock } from "../src/ControllableClock.js"

const world = Effect.provide(Testkit.layer())

const tenantOf = (m: Store.Merchant): Ids.Tenant => ({ merchantId: m.id, environment: "test" })

/** Books a refund as the refunds service does: merchant to payer, fee kept. */
const refund = (tenant: Ids.Tenant, payer: string, id: string, amount: number) =>
  Effect.gen(function* () {
    const db = yield* MemoryDb
    const createdAt = yield* DateTime.now
    yield* db.update((t) =>
      MemoryWallet.book(
        t,
        {
          id: `refund:${id}`,
          kind: "refund",
          environment: tenant.environment,
          merchantId: tenant.merchantId,
          payer,
          amount,
          createdAt
        },
        [
          [MemoryWallet.account.merchant(tenant.environment, tenant.merchantId), -amount],
          [MemoryWallet.account.customer(payer), amount]
        ]
      )
    )
  })

/** Every movement, paging `limit` at a time. */
const everything = (tenant: Ids.Tenant, limit: number) =>
  Effect.gen(function* () {
    const balances = yield* Balances.Balances
    const out: Array<Balance.Transaction> = []
    let startingAfter: string | undefined
    for (;;) {
      const page = yield* balances.list(tenant, { startingAfter, limit })
      out.push(...page.data)
      if (!page.hasMore) return out
      startingAfter = page.data[page.data.length - 1]!.id
    }
  })

type Op =
  | { readonly op: "charge"; readonly who: 0 | 1; readonly amount: number }
  | { readonly op: "refund"; readonly who: 0 | 1; readonly pick: number; readonly part: number }
  | { readonly op: "tick"; readonly minutes: number }

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      op: fc.constant("charge" as const),
      who: fc.constantFrom(0 as const, 1 as const),
      amount: fc.integer({ min: 100, max: 50_000 })
    })
  },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant("refund" as const),
      who: fc.constantFrom(0 as const, 1 as const),
      pick: fc.nat(),
      part: fc.double({ min: 0.01, max: 1, noNaN: true })
    })
  },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant("tick" as const),
      minutes: fc.constantFrom(0, 0, 1, 59, 6 * 60, 17 * 60)
    })
  }
)

describe("Balances over memory", () => {
  it.effect("payments minus refunds equals the balance plus fees, after any charges and refunds", () =>
    Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(fc.array(op, { maxLength: 40 }), fc.integer({ min: 1, max: 7 }), (ops, limit) =>
          Effect.gen(function* () {
            const seed = yield* Seed
            const mandates = yield* Mandates.Mandates
            const balances = yield* Balances.Balances
            const clock = yield* ControllableClock
            const merchants = [
              yield* seed.merchant({ name: "A", feeBps: 100 }),
              yield* seed.merchant({ name: "B", feeBps: 275 })
            ] as const
            const setups = yield* Effect.forEach(merchants, (m) =>
              Effect.map(
                mandates.create(tenantOf(m), {
                  reference: "r",
                  title: "t",
                  description: null,
                  perChargeCap: 500_000,
                  periodCap: null,
                  period: null,
                  expiresAt: null,
                  returnUrl: null
                }),
                (mandate) => ({ merchant: m, tenant: tenantOf(m), mandate })
              )
            )
            // The model: what was paid, refunded and kept as fees, per merchant, counted here.
            const model = setups.map(() => ({
              paid: 0,
              refunded: 0,
              fees: 0,
              moves: 0,
              payments: [] as Array<{ amount: number; left: number }>
            }))
            let refunds = 0
            for (const o of ops) {
              if (o.op === "tick") {
                yield* clock.skip(`${o.minutes} minutes`)
                continue
              }
              const s = setups[o.who]!
              const mm = model[o.who]!
              if (o.op === "charge") {
                yield* mandates.charge(s.tenant, s.mandate.id, { amount: o.amount })
                mm.paid += o.amount
                mm.fees += Fees.split(o.amount, s.merchant.feeBps).fee
                mm.payments.push({ amount: o.amount, left: o.amount })
                mm.moves++
              } else {
                const p = mm.payments[o.pick % Math.max(1, mm.payments.length)]
                const available = yield* balances.get(s.tenant)
                const amount =
                  p === undefined
                    ? 0
                    : Math.min(p.left, Math.max(1, Math.floor(p.amount * o.part)), available.available)
                if (p === undefined || amount <= 0) continue
                yield* refund(
                  s.tenant,
                  s.merchant.sandboxPayer,
                  `00000000-0000-4000-8000-${String(++refunds).padStart(12, "0")}`,
                  amount
                )
                p.left -= amount
                mm.refunded += amount
                mm.moves++
              }
            }
            for (const [i, s] of setups.entries()) {
              const mm = model[i]!
              const balance = (yield* balances.get(s.tenant)).available
              const list = yield* everything(s.tenant, limit)
              const fees = list.reduce((sum, t) => sum + t.fee, 0)
              // The invariant, with the service's balance and fees.
              expect(mm.paid - mm.refunded).toBe(balance + fees)
              expect(fees).toBe(mm.fees)
              expect(list.length).toBe(mm.moves)
              expect(list.reduce((sum, t) => sum + t.net, 0)).toBe(balance)
              expect(list.filter((t) => t.type === "refund").reduce((sum, t) => sum - t.gross, 0)).toBe(
                mm.refunded
              )
              expect(list.filter((t) => t.type === "charge").reduce((sum, t) => sum + t.gross, 0)).toBe(
                mm.paid
              )
              expect(balance).toBe(yield* seed.merchantBalance(s.merchant.id, "test"))
              // Newest first, each once.
              for (let k = 1; k < list.length; k++)
                expect(DateTime.toEpochMillis(list[k - 1]!.createdAt)).toBeGreaterThanOrEqual(
                  DateTime.toEpochMillis(list[k]!.createdAt)
                )
              expect(new Set(list.map((t) => t.id)).size).toBe(list.length)
              // The settlement days cover the list exactly, and their totals add up to the balance.
              const days = new Set(
                list.map((t) =>
                  Calendar.toInstant(t.createdAt)
                    .toZonedDateTimeISO(Calendar.MaldivesZone)
                    .toPlainDate()
                    .toString()
                )
              )
              let net = 0
              let count = 0
              for (const date of days) {
                const report = yield* balances.settlement(s.tenant, date)
                net += report.totals.net
                count += report.totals.count
              }
              expect(net).toBe(balance)
              expect(count).toBe(list.length)
            }
          }).pipe(world, Effect.runPromise)
        ),
        { numRuns: 40 }
      )
    )
  )

  it.effect("another merchant's or environment's movements never show, and their ids are no cursor", () =>
    Effect.gen(function* () {
      const seed = yield* Seed
      const mandates = yield* Mandates.Mandates
      const balances = yield* Balances.Balances
      const a = yield* seed.merchant({ name: "A" })
      const b = yield* seed.merchant({ name: "B" })
      const terms = {
        reference: "r",
        title: "t",
        description: null,
        perChargeCap: 50_000,
        periodCap: null,
        period: null,
        expiresAt: null,
        returnUrl: null
      }
      const ma = yield* mandates.create(tenantOf(a), terms)
      const charge = yield* mandates.charge(tenantOf(a), ma.id, { amount: 10_000 })
      const [mine] = (yield* balances.list(tenantOf(a), { limit: 10 })).data
      expect(mine).toMatchObject({ type: "charge", sourceId: charge.id, gross: 10_000, fee: 100, net: 9_900 })
      expect(yield* balances.list(tenantOf(b), { limit: 10 })).toEqual({ data: [], hasMore: false })
      const liveA = { merchantId: a.id, environment: "live" as const }
      expect(yield* balances.list(liveA, { limit: 10 })).toEqual({ data: [], hasMore: false })
      expect((yield* balances.get(tenantOf(b))).available).toBe(0)
      expect((yield* balances.get(liveA)).available).toBe(0)
      for (const tenant of [tenantOf(b), liveA])
        expect(
          yield* Effect.flip(balances.list(tenant, { startingAfter: mine!.id, limit: 10 }))
        ).toBeInstanceOf(Balances.BalanceTransactionNotFound)
      expect(yield* Effect.flip(balances.list(tenantOf(a), { limit: 0 }))).toMatchObject({
        _tag: "InvalidRequest"
      })
      expect(yield* Effect.flip(balances.list(tenantOf(a), { limit: 101 }))).toMatchObject({
        _tag: "InvalidRequest"
      })
      const bad = yield* Effect.flip(balances.settlement(tenantOf(a), "2026-02-30"))
      expect(bad).toBeInstanceOf(Balances.InvalidReportDate)
      expect(Either.isRight(Balance.day("2026-03-31"))).toBe(true)
    }).pipe(world)
  )
})
