/**
 * The checkout sessions part of the store contract: insert, find, list and update, another tenant's never
 * found, duplicate references, the global expiry claims, and a session paid once however many race for it.
 * `StoreContract.suite` runs it on every adapter; every test makes its own merchant.
 */
import { describe, expect } from "@effect/vitest"
import { CheckoutSession, Ids, Store } from "@laari/core"
import { DateTime, Effect, Either } from "effect"
import {
  Era,
  type It,
  T0,
  activation,
  day,
  freshMerchant,
  freshTenant,
  hour,
  ids,
  insertSession,
  isDefect,
  isoOf,
  minute,
  newSession,
  plain,
  plus,
  rolledBack,
  second,
  storeActivation,
  subscribe,
  tenantOf,
  uuid
} from "../support/Helpers.js"

export const tests = (it: It): void => {
  describe("checkout sessions", () => {
    it.effect("list: the tenant's sessions newest first, paged; nobody else's", () =>
      Effect.gen(function* () {
        const store = yield* Store.CheckoutSessionsStore
        const { merchant, tenant } = yield* freshTenant()
        const first = yield* insertSession(tenant, { at: T0 })
        const second = yield* insertSession(tenant, { at: T0 })
        const third = yield* insertSession(tenant, { at: plus(T0, minute) })
        yield* insertSession(tenantOf(yield* freshMerchant()))
        yield* insertSession({ merchantId: merchant.id, environment: "live" })
        const ids = (list: ReadonlyArray<{ readonly id: string }>) => list.map((x) => x.id)
        expect(ids(yield* store.list(tenant, { limit: 10, offset: 0 }))).toEqual([
          third.id,
          second.id,
          first.id
        ])
        expect(ids(yield* store.list(tenant, { limit: 1, offset: 1 }))).toEqual([second.id])
        expect(
          yield* store.list(
            { merchantId: "nope" as Ids.MerchantId, environment: "test" },
            { limit: 10, offset: 0 }
          )
        ).toEqual([])
      })
    )

    it.effect("insert, then find by id (also locked, and by lockById); find takes no reference", () =>
      Effect.gen(function* () {
        const store = yield* Store.CheckoutSessionsStore
        const tx = yield* Store.Transactor
        const tenant = tenantOf(yield* freshMerchant())
        const payment = yield* insertSession(tenant, {
          mode: "PAYMENT",
          request: { description: "Two coffees ބައްޕަ", returnUrl: "https://shop.example/back?order=7" }
        })
        const weekly = yield* insertSession(tenant, {
          at: plus(T0, 456),
          request: {
            reference: `ORDER 7/2026 ${yield* uuid}`,
            priceData: { name: "Fortnightly box", amount: 100, interval: "WEEK", intervalCount: 2 }
          }
        })
        expect(payment.price).toBeNull()
        expect(weekly.price).toEqual({
          name: "Fortnightly box",
          amount: 100,
          interval: "WEEK",
          intervalCount: 2
        })
        for (const s of [payment, weekly]) {
          expect(plain(yield* store.find(tenant, Ids.lookup(s.id)))).toEqual(plain(s))
          expect(plain(yield* store.find(tenant, Ids.lookup(s.id.toUpperCase())))).toEqual(plain(s))
          const locked = yield* tx.withTransaction(store.find(tenant, Ids.lookup(s.id), { forUpdate: true }))
          expect(plain(locked)).toEqual(plain(s))
          expect(plain(yield* tx.withTransaction(store.lockById(s.id)))).toEqual(plain(s))
          expect(plain(yield* store.lockById(s.id.toUpperCase()))).toEqual(plain(s))
          // By reference too, like every resource a merchant names.
          expect(plain(yield* store.find(tenant, Ids.lookup(s.reference)))).toEqual(plain(s))
        }
        expect(yield* store.find(tenant, Ids.lookup(yield* uuid))).toBeUndefined()
        expect(yield* store.find(tenant, Ids.lookup("not-a-uuid"))).toBeUndefined()
        expect(yield* store.lockById(yield* uuid)).toBeUndefined()
        expect(yield* store.lockById("not-a-uuid")).toBeUndefined()
        expect(yield* store.lockById("")).toBeUndefined()
      })
    )

    it.effect("another merchant's or environment's session is not found; lockById finds any", () =>
      Effect.gen(function* () {
        const store = yield* Store.CheckoutSessionsStore
        const owner = yield* freshMerchant()
        const other = yield* freshMerchant()
        const session = yield* insertSession(tenantOf(owner))
        const live = yield* insertSession(tenantOf(owner, "live"))
        for (const tenant of [tenantOf(other), tenantOf(owner, "live"), tenantOf(other, "live")])
          expect(yield* store.find(tenant, Ids.lookup(session.id))).toBeUndefined()
        expect(yield* store.find(tenantOf(owner), Ids.lookup(live.id))).toBeUndefined()
        expect((yield* store.find(tenantOf(owner, "live"), Ids.lookup(live.id)))?.id).toBe(live.id)
        // The customer's side has no tenant: it finds any session by id.
        expect((yield* store.lockById(session.id))?.id).toBe(session.id)
        expect((yield* store.lockById(live.id))?.id).toBe(live.id)
      })
    )

    it.effect("a duplicate reference is DuplicateReference, in either mode; elsewhere it is fine", () =>
      Effect.gen(function* () {
        const store = yield* Store.CheckoutSessionsStore
        const merchant = yield* freshMerchant()
        const other = yield* freshMerchant()
        const tenant = tenantOf(merchant)
        const first = yield* insertSession(tenant)
        for (const mode of ["SUBSCRIPTION", "PAYMENT"] as const) {
          const again = yield* newSession(tenant, {
            mode,
            at: plus(T0, hour),
            request: { reference: first.reference, title: "Again" }
          })
          const refused = yield* Effect.flip(store.insert(again))
          expect(refused).toBeInstanceOf(Store.DuplicateReference)
          expect(refused).toMatchObject({ _tag: "DuplicateReference", reference: first.reference })
          expect(yield* store.find(tenant, Ids.lookup(again.id))).toBeUndefined()
          expect(yield* store.lockById(again.id)).toBeUndefined()
        }
        expect(plain(yield* store.find(tenant, Ids.lookup(first.id)))).toEqual(plain(first))

        for (const elsewhere of [tenantOf(other), tenantOf(merchant, "live")]) {
          const s = yield* newSession(elsewhere, { request: { reference: first.reference } })
          yield* store.insert(s)
          expect(plain(yield* store.find(elsewhere, Ids.lookup(s.id)))).toEqual(plain(s))
        }
      })
    )

    it.effect("the schema refuses, as a defect, a second session with an id already taken", () =>
      Effect.gen(function* () {
        const store = yield* Store.CheckoutSessionsStore
        const tenant = tenantOf(yield* freshMerchant())
        const first = yield* insertSession(tenant)
        const twin = { ...(yield* newSession(tenant, { mode: "PAYMENT" })), id: first.id }
        expect(isDefect(yield* Effect.exit(store.insert(twin)))).toBe(true)
        expect(plain(yield* store.find(tenant, Ids.lookup(first.id)))).toEqual(plain(first))
      })
    )

    it.effect("update changes what the session's life changes, and nothing the merchant asked for", () =>
      Effect.gen(function* () {
        const store = yield* Store.CheckoutSessionsStore
        const { merchant, tenant } = yield* freshTenant()
        const a = yield* subscribe(tenant, merchant.sandboxPayer, {
          request: { description: "Monthly beans", returnUrl: "https://shop.example/done" }
        })
        const bystander = yield* insertSession(tenant, { at: plus(T0, second) })
        // Completed by the activation, through the store.
        expect(plain(yield* store.find(tenant, Ids.lookup(a.session.id)))).toEqual(plain(a.session))
        expect(a.session).toMatchObject({ status: "COMPLETE", subscriptionId: a.subscription.id })

        const filled: CheckoutSession.CheckoutSession = {
          ...a.session,
          status: "CANCELLED",
          completedAt: plus(T0, hour + 1),
          cancelledAt: plus(T0, 2 * hour + 2),
          expiredAt: plus(T0, 3 * hour + 3)
        }
        yield* store.update(filled)
        expect(plain(yield* store.find(tenant, Ids.lookup(a.session.id)))).toEqual(plain(filled))

        const emptied: CheckoutSession.CheckoutSession = {
          ...filled,
          status: "OPEN",
          customerId: null,
          paymentId: null,
          subscriptionId: null,
          completedAt: null,
          cancelledAt: null,
          expiredAt: null
        }
        yield* store.update(emptied)
        expect(plain(yield* store.find(tenant, Ids.lookup(a.session.id)))).toEqual(plain(emptied))
        expect(plain(emptied)).toEqual(plain(a.opened))

        const expired = CheckoutSession.expire(emptied, emptied.expiresAt)
        expect(expired.status).toBe("EXPIRED")
        yield* store.update(expired)
        expect(plain(yield* store.find(tenant, Ids.lookup(a.session.id)))).toEqual(plain(expired))

        // What the merchant asked for, and when, stays as it was.
        yield* store.update({
          ...expired,
          mode: "PAYMENT",
          reference: "another-reference",
          title: "Another title",
          description: null,
          returnUrl: "https://elsewhere.example/",
          amount: 99_999,
          price: null,
          expiresAt: plus(T0, 7 * day),
          createdAt: plus(T0, day)
        })
        expect(plain(yield* store.find(tenant, Ids.lookup(a.session.id)))).toEqual(plain(expired))

        // An update names its tenant: it cannot reach another merchant's or environment's session.
        for (const other of [tenantOf(yield* freshMerchant()), tenantOf(merchant, "live")]) {
          yield* store.update({ ...expired, ...other, status: "CANCELLED", cancelledAt: T0 })
          expect(plain(yield* store.find(tenant, Ids.lookup(a.session.id)))).toEqual(plain(expired))
        }
        // An update of a session never inserted writes nothing.
        const ghost = yield* newSession(tenant)
        yield* store.update({ ...ghost, status: "CANCELLED", cancelledAt: T0 })
        expect(yield* store.lockById(ghost.id)).toBeUndefined()
        expect(plain(yield* store.find(tenant, Ids.lookup(bystander.id)))).toEqual(plain(bystander))
      })
    )

    it.effect("claimExpiring claims exactly the OPEN sessions at or past expiresAt, up to the limit", () =>
      Effect.gen(function* () {
        const store = yield* Store.CheckoutSessionsStore
        const { merchant, tenant } = yield* freshTenant()
        const now = Era
        // Opened `millis` before `now`: it expires 24 hours later.
        const openedAgo = (millis: number, options: Parameters<typeof newSession>[1] = {}) =>
          insertSession(tenant, { ...options, at: plus(now, -millis) })
        yield* rolledBack(
          Effect.gen(function* () {
            const due = [
              yield* openedAgo(25 * hour),
              yield* openedAgo(24 * hour),
              yield* openedAgo(72 * hour, { mode: "PAYMENT" }),
              yield* insertSession(tenantOf(yield* freshMerchant(), "live"), { at: plus(now, -30 * hour) })
            ]
            // Not due: a session with time left, and every terminal one, however long past its expiry.
            yield* openedAgo(24 * hour - 1)
            yield* openedAgo(hour)
            const cancelled = yield* openedAgo(48 * hour)
            yield* store.update(
              Either.getOrThrow(CheckoutSession.cancel(cancelled, plus(cancelled.createdAt, 1)))
            )
            const expired = yield* openedAgo(48 * hour)
            yield* store.update(CheckoutSession.expire(expired, plus(expired.expiresAt, 1)))
            const a = yield* activation(tenant, merchant.sandboxPayer, { at: plus(now, -47 * hour) })
            yield* storeActivation(a)

            const claimed = yield* store.claimExpiring(now, 100)
            const byId = (xs: ReadonlyArray<CheckoutSession.CheckoutSession>) =>
              [...xs].sort((x, y) => x.id.localeCompare(y.id))
            expect(plain(byId(claimed))).toEqual(plain(byId(due)))
            expect(claimed.every((s) => CheckoutSession.isDueToExpire(s, now))).toBe(true)
            const some = yield* store.claimExpiring(now, 2)
            expect(some).toHaveLength(2)
            expect(new Set(ids(some)).size).toBe(2)
            for (const id of ids(some)) expect(ids(due)).toContain(id)
            expect(yield* store.claimExpiring(plus(now, -3 * day), 100)).toEqual([])
            // Once expired, a session is not claimed again.
            yield* store.update(CheckoutSession.expire(due[0]!, now))
            expect(new Set(ids(yield* store.claimExpiring(now, 100)))).toEqual(new Set(ids(due.slice(1))))
          })
        )
      })
    )

    it.effect("nextExpiryAt is the earliest expiresAt of an OPEN session", () =>
      Effect.gen(function* () {
        const store = yield* Store.CheckoutSessionsStore
        const { merchant, tenant } = yield* freshTenant()
        yield* rolledBack(
          Effect.gen(function* () {
            const expectNext = (t: DateTime.Utc) =>
              Effect.map(store.nextExpiryAt, (next) => expect(isoOf(next)).toBe(DateTime.formatIso(t)))
            // Terminal sessions never expire again, however early their dates.
            const cancelled = yield* insertSession(tenant, { at: plus(Era, -20 * day) })
            yield* store.update({ ...cancelled, status: "CANCELLED", cancelledAt: plus(Era, -20 * day) })
            const completed = yield* activation(tenant, merchant.sandboxPayer, { at: plus(Era, -19 * day) })
            yield* storeActivation(completed)

            const soon = yield* insertSession(tenant, { at: plus(Era, -day + 250) })
            const later = yield* insertSession(tenantOf(merchant, "live"), { at: plus(Era, 2 * day + 7) })
            yield* expectNext(soon.expiresAt)
            yield* store.update({ ...soon, status: "CANCELLED", cancelledAt: Era })
            yield* expectNext(later.expiresAt)
            yield* store.update({ ...later, status: "EXPIRED", expiredAt: later.expiresAt })
            const next = yield* store.nextExpiryAt
            if (next !== undefined) expect(DateTime.greaterThan(next, later.expiresAt)).toBe(true)
          })
        )
      })
    )

    it.effect("a session locked by find forUpdate or lockById is paid once, however many race for it", () =>
      Effect.gen(function* () {
        const tx = yield* Store.Transactor
        const store = yield* Store.CheckoutSessionsStore
        const { merchant, tenant } = yield* freshTenant()
        const session = yield* insertSession(tenant, { mode: "PAYMENT" })
        // Read, wait (so the others run), write: without the lock, several would find it OPEN.
        const pay = (i: number) =>
          tx.withTransaction(
            Effect.gen(function* () {
              const found =
                i % 2 === 0
                  ? yield* store.lockById(session.id)
                  : yield* store.find(tenant, Ids.lookup(session.id), { forUpdate: true })
              yield* Effect.sleep("2 millis")
              const paid = CheckoutSession.complete(found!, plus(T0, minute), {
                customerId: merchant.sandboxPayer,
                paymentId: `payment-${i}`
              })
              if (Either.isLeft(paid)) return undefined
              yield* store.update(paid.right)
              return paid.right.paymentId
            })
          )
        const winners = (yield* Effect.all(
          Array.from({ length: 10 }, (_, i) => pay(i)),
          { concurrency: "unbounded" }
        )).filter((p) => p !== undefined)
        expect(winners).toHaveLength(1)
        expect((yield* store.find(tenant, Ids.lookup(session.id)))?.paymentId).toBe(winners[0])
      })
    )
  })
}
