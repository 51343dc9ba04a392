/**
 * The mandates part of the store contract: insert and find (by id, by reference, locked), another tenant's
 * never found, duplicate references, lists and updates, and the global expiry claims. `StoreContract.suite`
 * runs it on every adapter; every test makes its own merchant.
 */
import { describe, expect } from "@effect/vitest"
import { Ids, Mandate, Store } from "@laari/core"
import { DateTime, Effect } from "effect"
import { Seed } from "../../Seed.js"
import {
  Era,
  type It,
  T0,
  day,
  freshMerchant,
  freshTenant,
  freshPhone,
  hour,
  ids,
  insertMandate,
  minute,
  newMandate,
  plain,
  plus,
  rolledBack,
  second,
  tenantOf,
  uuid
} from "../support/Helpers.js"

export const tests = (it: It): void => {
  describe("mandates", () => {
    it.effect("insert, then find by id and by reference (also locked, and by lockById)", () =>
      Effect.gen(function* () {
        const store = yield* Store.MandatesStore
        const tx = yield* Store.Transactor
        const tenant = tenantOf(yield* freshMerchant())
        const m = yield* insertMandate(tenant, { description: "with a description" })
        expect(plain(yield* store.find(tenant, Ids.lookup(m.id)))).toEqual(plain(m))
        expect(plain(yield* store.find(tenant, Ids.lookup(m.id.toUpperCase())))).toEqual(plain(m))
        expect(plain(yield* store.find(tenant, Ids.lookup(m.reference)))).toEqual(plain(m))
        const locked = yield* tx.withTransaction(store.find(tenant, Ids.lookup(m.id), { forUpdate: true }))
        expect(plain(locked)).toEqual(plain(m))
        expect(plain(yield* tx.withTransaction(store.lockById(m.id)))).toEqual(plain(m))
        expect(yield* store.find(tenant, Ids.lookup(yield* uuid))).toBeUndefined()
        expect(yield* store.find(tenant, Ids.lookup("no-such-reference"))).toBeUndefined()
        expect(yield* store.lockById(yield* uuid)).toBeUndefined()
      })
    )

    it.effect("another merchant's or another environment's mandate is not found", () =>
      Effect.gen(function* () {
        const store = yield* Store.MandatesStore
        const owner = yield* freshMerchant()
        const other = yield* freshMerchant()
        const m = yield* insertMandate(tenantOf(owner))
        for (const tenant of [tenantOf(other), tenantOf(owner, "live"), tenantOf(other, "live")]) {
          expect(yield* store.find(tenant, Ids.lookup(m.id))).toBeUndefined()
          expect(yield* store.find(tenant, Ids.lookup(m.reference))).toBeUndefined()
          expect(yield* store.list(tenant, { limit: 100, offset: 0 })).toEqual([])
        }
        // The customer's side has no tenant: it finds any mandate by id.
        expect((yield* store.lockById(m.id))?.id).toBe(m.id)
      })
    )

    it.effect("a duplicate reference is DuplicateReference; the same reference elsewhere is fine", () =>
      Effect.gen(function* () {
        const store = yield* Store.MandatesStore
        const merchant = yield* freshMerchant()
        const other = yield* freshMerchant()
        const first = yield* insertMandate(tenantOf(merchant))
        const again = yield* newMandate(tenantOf(merchant), { reference: first.reference, title: "Again" })
        const refused = yield* Effect.flip(store.insert(again))
        expect(refused).toBeInstanceOf(Store.DuplicateReference)
        expect(refused).toMatchObject({ _tag: "DuplicateReference", reference: first.reference })
        expect(yield* store.find(tenantOf(merchant), Ids.lookup(again.id))).toBeUndefined()
        expect((yield* store.find(tenantOf(merchant), Ids.lookup(first.reference)))?.id).toBe(first.id)

        const elsewhere = [
          yield* newMandate(tenantOf(other), { reference: first.reference }),
          yield* newMandate(tenantOf(merchant, "live"), { reference: first.reference })
        ]
        for (const m of elsewhere) {
          yield* store.insert(m)
          expect((yield* store.find(m, Ids.lookup(first.reference)))?.id).toBe(m.id)
        }
      })
    )

    it.effect("list is newest first, filters by status and reference, pages by limit and offset", () =>
      Effect.gen(function* () {
        const store = yield* Store.MandatesStore
        const { merchant, tenant } = yield* freshTenant()
        const statuses: ReadonlyArray<Mandate.Status> = ["INITIATED", "ACTIVE", "ACTIVE", "REVOKED", "ACTIVE"]
        const made = yield* Effect.forEach(statuses, (status, i) =>
          newMandate(tenant, {
            status,
            createdAt: plus(T0, (i + 1) * minute),
            customerId: status === "INITIATED" ? null : merchant.sandboxPayer
          })
        )
        // Inserted out of order: the order of a list comes from `createdAt`, not from insertion.
        for (const i of [2, 0, 4, 1, 3]) yield* store.insert(made[i]!)
        yield* insertMandate(tenantOf(yield* freshMerchant()), { createdAt: plus(T0, 3 * minute) })
        yield* insertMandate(tenantOf(merchant, "live"), { createdAt: plus(T0, 3 * minute) })

        const newest = [...made].reverse()
        const list = (filter: Partial<Store.MandateFilter>) =>
          Effect.map(store.list(tenant, { limit: 25, offset: 0, ...filter }), ids)
        expect(yield* list({})).toEqual(ids(newest))
        expect(plain(yield* store.list(tenant, { limit: 25, offset: 0 }))).toEqual(plain(newest))
        expect(yield* list({ status: "ACTIVE" })).toEqual(ids(newest.filter((m) => m.status === "ACTIVE")))
        expect(yield* list({ status: "EXPIRED" })).toEqual([])
        expect(yield* list({ reference: made[3]!.reference })).toEqual([made[3]!.id])
        expect(yield* list({ reference: made[3]!.reference, status: "ACTIVE" })).toEqual([])
        expect(yield* list({ limit: 2, offset: 1 })).toEqual(ids(newest.slice(1, 3)))
        expect(yield* list({ limit: 1, offset: 4 })).toEqual([newest[4]!.id])
        expect(yield* list({ offset: 5 })).toEqual([])
        expect(yield* list({ status: "ACTIVE", limit: 1, offset: 1 })).toEqual([made[2]!.id])
      })
    )

    it.effect("update round-trips every field, to the millisecond and through nulls", () =>
      Effect.gen(function* () {
        const store = yield* Store.MandatesStore
        const { merchant, tenant } = yield* freshTenant()
        const m = yield* insertMandate(tenant)
        const bystander = yield* insertMandate(tenant, { createdAt: plus(T0, second) })

        const filled: Mandate.Mandate = {
          ...m,
          status: "SUSPENDED",
          title: "A new title",
          description: "Now with a description",
          perChargeCap: 20_000,
          periodCap: 50_000,
          period: "MONTH",
          periodKey: "2026-03",
          periodCharged: 12_345,
          returnUrl: "https://shop.example/back?x=1",
          customerId: merchant.sandboxPayer,
          setupExpiresAt: plus(T0, day + 456),
          expiresAt: plus(T0, 200 * day + 789),
          approvedAt: plus(T0, hour + 1),
          revokedAt: plus(T0, 2 * hour + 2),
          revokedBy: "SERVICE",
          declinedAt: plus(T0, 3 * hour + 3),
          expiredAt: plus(T0, 4 * hour + 4)
        }
        yield* store.update(filled)
        expect(plain(yield* store.find(tenant, Ids.lookup(m.id)))).toEqual(plain(filled))

        const emptied: Mandate.Mandate = {
          ...filled,
          status: "EXPIRED",
          description: null,
          periodCap: null,
          period: null,
          periodKey: null,
          periodCharged: 0,
          returnUrl: null,
          customerId: null,
          approvedAt: null,
          revokedAt: null,
          revokedBy: null,
          declinedAt: null,
          expiredAt: null
        }
        yield* store.update(emptied)
        expect(plain(yield* store.find(tenant, Ids.lookup(m.id)))).toEqual(plain(emptied))
        expect(plain(yield* store.find(tenant, Ids.lookup(bystander.id)))).toEqual(plain(bystander))
      })
    )

    it.effect("listByCustomer lists the mandates bound to that wallet, newest first", () =>
      Effect.gen(function* () {
        const store = yield* Store.MandatesStore
        const seed = yield* Seed
        const { merchant, tenant } = yield* freshTenant()
        const customer = yield* seed.customer({ environment: "test", phone: yield* freshPhone })
        const older = yield* insertMandate(tenant, { status: "ACTIVE", customerId: customer.id })
        const newer = yield* insertMandate(tenant, {
          status: "REVOKED",
          customerId: customer.id,
          createdAt: plus(T0, second)
        })
        yield* insertMandate(tenant, { status: "ACTIVE", customerId: merchant.sandboxPayer })
        yield* insertMandate(tenant)
        expect(ids(yield* store.listByCustomer(customer.id))).toEqual([newer.id, older.id])
        expect(yield* store.listByCustomer((yield* uuid) as Ids.CustomerId)).toEqual([])
      })
    )

    it.effect("claimExpiring claims exactly the due mandates, up to the limit", () =>
      Effect.gen(function* () {
        const store = yield* Store.MandatesStore
        const { merchant, tenant } = yield* freshTenant()
        const now = Era
        const base = { createdAt: plus(now, -2 * day), setupExpiresAt: plus(now, -day) }
        const bound = { ...base, customerId: merchant.sandboxPayer }
        yield* rolledBack(
          Effect.gen(function* () {
            const due = [
              yield* insertMandate(tenant, { setupExpiresAt: plus(now, -1), createdAt: base.createdAt }),
              yield* insertMandate(tenant, { setupExpiresAt: now, createdAt: base.createdAt }),
              yield* insertMandate(tenant, { ...bound, status: "ACTIVE", expiresAt: plus(now, -day) }),
              yield* insertMandate(tenant, { ...bound, status: "ACTIVE", expiresAt: now }),
              yield* insertMandate(tenant, { ...bound, status: "SUSPENDED", expiresAt: plus(now, -hour) })
            ]
            // Not due: a link still open, a lifetime still running, and every terminal state.
            yield* insertMandate(tenant, { setupExpiresAt: plus(now, 1), createdAt: base.createdAt })
            yield* insertMandate(tenant, {
              ...base,
              setupExpiresAt: plus(now, hour),
              expiresAt: plus(now, -day)
            })
            yield* insertMandate(tenant, { ...bound, status: "ACTIVE", expiresAt: plus(now, 1) })
            yield* insertMandate(tenant, { ...bound, status: "REVOKED", expiresAt: plus(now, -day) })
            yield* insertMandate(tenant, { ...bound, status: "EXPIRED", expiresAt: plus(now, -day) })
            yield* insertMandate(tenant, { ...base, status: "DECLINED", expiresAt: plus(now, -day) })

            const claimed = yield* store.claimExpiring(now, 100)
            expect(new Set(ids(claimed))).toEqual(new Set(ids(due)))
            expect(claimed.every((m) => Mandate.isDueToExpire(m, now))).toBe(true)
            const some = yield* store.claimExpiring(now, 2)
            expect(some).toHaveLength(2)
            expect(new Set(ids(some)).size).toBe(2)
            for (const id of ids(some)) expect(ids(due)).toContain(id)
            expect(yield* store.claimExpiring(plus(now, -2 * day), 100)).toEqual([])
          })
        )
      })
    )

    it.effect("nextExpiryAt is the earliest setup or lifetime end of a mandate that can still expire", () =>
      Effect.gen(function* () {
        const store = yield* Store.MandatesStore
        const { merchant, tenant } = yield* freshTenant()
        const createdAt = plus(Era, -30 * day)
        const bound = { createdAt, customerId: merchant.sandboxPayer }
        yield* rolledBack(
          Effect.gen(function* () {
            const expectNext = (t: DateTime.Utc) =>
              Effect.map(store.nextExpiryAt, (next) =>
                expect(next && DateTime.formatIso(next)).toBe(DateTime.formatIso(t))
              )
            // Terminal mandates never expire again, however early their dates.
            yield* insertMandate(tenant, { ...bound, status: "REVOKED", expiresAt: plus(Era, -20 * day) })
            yield* insertMandate(tenant, {
              createdAt,
              status: "DECLINED",
              setupExpiresAt: plus(Era, -20 * day)
            })
            const link = yield* insertMandate(tenant, { createdAt, setupExpiresAt: plus(Era, 250) })
            const life = yield* insertMandate(tenant, {
              ...bound,
              status: "ACTIVE",
              expiresAt: plus(Era, 3 * day + 7)
            })
            yield* expectNext(link.setupExpiresAt)
            yield* store.update({ ...link, status: "DECLINED", declinedAt: Era })
            yield* expectNext(life.expiresAt)
            yield* store.update({ ...life, status: "SUSPENDED" })
            yield* expectNext(life.expiresAt)
            yield* store.update({ ...life, status: "EXPIRED", expiredAt: life.expiresAt })
            const next = yield* store.nextExpiryAt
            if (next !== undefined) expect(DateTime.greaterThan(next, life.expiresAt)).toBe(true)
          })
        )
      })
    )
  })
}
