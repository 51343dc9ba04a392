/**
 * The charges and challenges part of the store contract: charges listed by mandate, newest first, and
 * challenges that round-trip through insert, lock and update. `StoreContract.suite` runs it on every
 * adapter; every test makes its own merchant.
 */
import { describe, expect } from "@effect/vitest"
import { Approval, Ids, Mandate, Store } from "@laari/core"
import { Effect } from "effect"
import {
  type It,
  T0,
  freshMerchant,
  freshTenant,
  insertMandate,
  minute,
  plain,
  plus,
  second,
  uuid
} from "../support/Helpers.js"

export const tests = (it: It): void => {
  describe("charges and challenges", () => {
    it.effect("charges: insert, then listByMandate newest first", () =>
      Effect.gen(function* () {
        const charges = yield* Store.ChargesStore
        const { merchant, tenant } = yield* freshTenant()
        const m = yield* insertMandate(tenant, { status: "ACTIVE", customerId: merchant.sandboxPayer })
        const other = yield* insertMandate(tenant, { status: "ACTIVE", customerId: merchant.sandboxPayer })
        const charge = (mandate: Mandate.Mandate, i: number) =>
          Effect.map(
            uuid,
            (id): Mandate.Charge => ({
              id,
              mandateId: mandate.id,
              merchantId: merchant.id,
              environment: "test",
              customerId: merchant.sandboxPayer,
              amount: 1_000 + i,
              description: `charge ${i}`,
              reference: `charge-ref-${i}`,
              fee: 10,
              netAmount: 990 + i,
              amountRefunded: 0,
              periodKey: "2026-03",
              periodCharged: 1_000 * i,
              createdAt: plus(T0, i * second + i)
            })
          )
        const made = yield* Effect.forEach([1, 2, 3], (i) => charge(m, i))
        for (const i of [1, 2, 0]) yield* charges.insert(made[i]!)
        yield* charges.insert(yield* charge(other, 4))
        expect(plain(yield* charges.listByMandate(m.id))).toEqual(plain([...made].reverse()))
        expect(yield* charges.listByMandate(yield* uuid)).toEqual([])
      })
    )

    it.effect("charges: listByMandates gives each mandate's newest, at most n each, in one go", () =>
      Effect.gen(function* () {
        const charges = yield* Store.ChargesStore
        const { merchant, tenant } = yield* freshTenant()
        const mandates = yield* Effect.forEach([0, 1, 2], () =>
          insertMandate(tenant, { status: "ACTIVE", customerId: merchant.sandboxPayer })
        )
        const made: Array<Mandate.Charge> = []
        for (const [k, mandate] of mandates.entries())
          for (let i = 0; i < 3 - k; i++) {
            const c: Mandate.Charge = {
              id: yield* uuid,
              mandateId: mandate.id,
              merchantId: merchant.id,
              environment: "test",
              customerId: merchant.sandboxPayer,
              amount: 100 + i,
              description: "c",
              reference: "r",
              fee: 1,
              netAmount: 99 + i,
              amountRefunded: 0,
              periodKey: "2026-03",
              periodCharged: 100 * (i + 1),
              createdAt: plus(T0, i * second)
            }
            made.push(c)
            yield* charges.insert(c)
          }
        const newest = (mandate: Mandate.Mandate, n: number) =>
          made
            .filter((c) => c.mandateId === mandate.id)
            .reverse()
            .slice(0, n)
        const [a, b, c] = mandates as [Mandate.Mandate, Mandate.Mandate, Mandate.Mandate]
        const got = yield* charges.listByMandates([a.id, b.id.toUpperCase(), c.id, yield* uuid, "x"], 2)
        const of = (m: Mandate.Mandate) => plain(got.filter((x) => x.mandateId === m.id))
        expect(of(a)).toEqual(plain(newest(a, 2)))
        expect(of(b)).toEqual(plain(newest(b, 2)))
        expect(of(c)).toEqual(plain(newest(c, 2)))
        expect(got).toHaveLength(5)
        expect(yield* charges.listByMandates([], 5)).toEqual([])
        expect((yield* charges.listByMandates([a.id], 1)).map((x) => x.id)).toEqual([newest(a, 1)[0]!.id])
      })
    )

    it.effect("challenges: insert, lock and update round-trip", () =>
      Effect.gen(function* () {
        const challenges = yield* Store.ChallengesStore
        const merchant = yield* freshMerchant()
        const challenge = Approval.issue({
          id: (yield* uuid) as Ids.ChallengeId,
          subjectKind: "mandate",
          subjectId: yield* uuid,
          customerId: merchant.sandboxPayer,
          environment: "test",
          codeHash: "ab".repeat(32),
          now: T0
        })
        yield* challenges.insert(challenge)
        expect(plain(yield* challenges.lock(challenge.id))).toEqual(plain(challenge))
        const used: Approval.Challenge = { ...challenge, attempts: 3, usedAt: plus(T0, minute + 5) }
        yield* challenges.update(used)
        expect(plain(yield* challenges.lock(challenge.id))).toEqual(plain(used))
        expect(yield* challenges.lock((yield* uuid) as Ids.ChallengeId)).toBeUndefined()
      })
    )
  })
}
