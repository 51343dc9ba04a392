/**
 * Core's read service over the adapter's store (`StoreContract.suite` runs it on every adapter): each
 * query of `Reads` once, with what it must leave out (another tenant's rows, the other environment's,
 * unknown ids), on data made by core's own services.
 */
import { describe, expect } from "@effect/vitest"
import { Approval, Approvals, Checkout, type Ids, Mandates, QrCodes, Reads, Store } from "@laari/core"
import { DateTime, Effect } from "effect"
import { Seed } from "../../Seed.js"
import {
  type It,
  freshMerchant,
  freshPhone,
  plain,
  qrRequest,
  subscribe,
  tenantOf,
  uuid
} from "../support/Helpers.js"
import { chargeable } from "../support/Payments.js"
import { at } from "./ManualClock.js"

export const tests = (it: It): void => {
  const charge = (tenant: Ids.Tenant, mandateId: string, amount: number) =>
    Effect.flatMap(Mandates.Mandates, (m) => m.charge(tenant, mandateId, { amount }))

  describe("reads", () => {
    it.effect("a payment by id: the tenant's, else none", () =>
      Effect.gen(function* () {
        const reads = yield* Reads.Reads
        const { tenant, outlet, customer, mandate } = yield* chargeable
        const c = yield* charge(tenant, mandate.id, 3_000)
        const qr = yield* QrCodes.QrCodes
        const code = yield* qr.create(tenant, qrRequest(outlet.id, { type: "DYNAMIC", amount: 4_000 }))
        const p = yield* qr.pay({
          environment: "test",
          customerId: customer.id,
          payload: code.payload,
          amount: null
        })
        const sub = yield* subscribe(tenant, customer.id)
        expect((yield* reads.charge(tenant, c.id))?.amount).toBe(3_000)
        expect((yield* reads.qrPayment(tenant, p.id))?.qrCodeId).toBe(code.id)
        expect((yield* reads.invoice(tenant, sub.invoice.id))?.subscriptionId).toBe(sub.subscription.id)
        for (const t of [tenantOf(yield* freshMerchant()), { ...tenant, environment: "live" as const }]) {
          expect(yield* reads.charge(t, c.id)).toBeUndefined()
          expect(yield* reads.qrPayment(t, p.id)).toBeUndefined()
          expect(yield* reads.invoice(t, sub.invoice.id)).toBeUndefined()
        }
      }).pipe(at("2026-03-15T10:00:00Z"))
    )

    it.effect(
      "a mandate's charges: all of one, newest first; the newest few of many, the tenant's only",
      () =>
        Effect.gen(function* () {
          const reads = yield* Reads.Reads
          const mine = yield* chargeable
          const theirs = yield* chargeable
          const first = yield* charge(mine.tenant, mine.mandate.id, 1_000)
          const second = yield* charge(mine.tenant, mine.mandate.id, 2_000).pipe(at("2026-03-15T10:01:00Z"))
          const third = yield* charge(mine.tenant, mine.mandate.id, 3_000).pipe(at("2026-03-15T10:02:00Z"))
          const other = yield* (yield* Mandates.Mandates).create(mine.tenant, {
            ...mine.mandate,
            reference: `reads-${yield* uuid}`,
            expiresAt: null,
            returnUrl: null
          })
          const lone = yield* charge(mine.tenant, other.id, 500)
          yield* charge(theirs.tenant, theirs.mandate.id, 700)

          const ids = (list: ReadonlyArray<{ readonly id: string }>) => list.map((x) => x.id)
          expect(ids(yield* reads.chargesOfMandate(mine.mandate.id))).toEqual([third.id, second.id, first.id])
          const batched = yield* reads.chargesOfMandates(
            mine.tenant,
            [mine.mandate.id, other.id.toUpperCase(), theirs.mandate.id, yield* uuid],
            2
          )
          expect(batched.map(ids)).toEqual([[third.id, second.id], [lone.id], [], []])
          // As each one alone reads them.
          expect(plain(batched[0])).toEqual(
            plain((yield* reads.chargesOfMandate(mine.mandate.id)).slice(0, 2))
          )
        }).pipe(at("2026-03-15T10:00:00Z"))
    )

    it.effect("a subscription's invoices: one page of one; the newest few of many, the tenant's only", () =>
      Effect.gen(function* () {
        const reads = yield* Reads.Reads
        const mine = yield* chargeable
        const theirs = yield* chargeable
        const a = yield* subscribe(mine.tenant, mine.customer.id)
        const b = yield* subscribe(theirs.tenant, theirs.customer.id)
        expect(
          plain(yield* reads.invoicesOfSubscription(a.subscription.id, { limit: 5, offset: 0 }))
        ).toEqual(plain([a.invoice]))
        expect(yield* reads.invoicesOfSubscription(a.subscription.id, { limit: 5, offset: 1 })).toEqual([])
        const batched = yield* reads.invoicesOfSubscriptions(
          mine.tenant,
          [a.subscription.id.toUpperCase(), b.subscription.id, yield* uuid],
          5
        )
        expect(batched.map((l) => l.map((i) => i.id))).toEqual([[a.invoice.id], [], []])
      }).pipe(at("2026-03-15T10:00:00Z"))
    )

    it.effect("a QR code's payments: newest first, up to the limit", () =>
      Effect.gen(function* () {
        const reads = yield* Reads.Reads
        const { tenant, outlet, customer } = yield* chargeable
        const qr = yield* QrCodes.QrCodes
        const code = yield* qr.create(tenant, qrRequest(outlet.id))
        const pay = (amount: number) =>
          qr.pay({ environment: "test", customerId: customer.id, payload: code.payload, amount })
        const first = yield* pay(1_000)
        const second = yield* pay(2_000).pipe(at("2026-03-15T10:01:00Z"))
        expect((yield* reads.paymentsOfQrCode(code.id, 25)).map((p) => p.id)).toEqual([second.id, first.id])
        expect((yield* reads.paymentsOfQrCode(code.id, 1)).map((p) => p.id)).toEqual([second.id])
      }).pipe(at("2026-03-15T10:00:00Z"))
    )

    it.effect("the tenant's checkout sessions, newest first, paged", () =>
      Effect.gen(function* () {
        const reads = yield* Reads.Reads
        const checkout = yield* Checkout.Checkout
        const tenant = tenantOf(yield* freshMerchant())
        const open = (n: number) =>
          checkout.create(tenant, {
            mode: "PAYMENT",
            reference: `cs-${n}-${tenant.merchantId}`,
            title: "Reads",
            description: null,
            returnUrl: null,
            amount: 1_000,
            priceData: null
          })
        const a = yield* open(1)
        const b = yield* open(2).pipe(at("2026-03-15T10:01:00Z"))
        const ids = (list: ReadonlyArray<{ readonly id: string }>) => list.map((s) => s.id)
        expect(ids(yield* reads.checkoutSessions(tenant, { limit: 10, offset: 0 }))).toEqual([b.id, a.id])
        expect(ids(yield* reads.checkoutSessions(tenant, { limit: 1, offset: 1 }))).toEqual([a.id])
        expect(
          yield* reads.checkoutSessions({ ...tenant, environment: "live" }, { limit: 10, offset: 0 })
        ).toEqual([])
      }).pipe(at("2026-03-15T10:00:00Z"))
    )

    it.effect("the event log: the tenant's events newest first, one by id", () =>
      Effect.gen(function* () {
        const reads = yield* Reads.Reads
        const seed = yield* Seed
        const { tenant, mandate } = yield* chargeable
        yield* charge(tenant, mandate.id, 1_000)
        const recorded = (yield* seed.events).filter((e) => e.merchantId === tenant.merchantId)
        expect(recorded.length).toBeGreaterThan(0)
        const listed = yield* reads.events({ merchantId: tenant.merchantId, environment: "test", limit: 100 })
        expect(listed.map((e) => e.text)).toEqual(recorded.map((e) => JSON.stringify(e.envelope)).reverse())
        const newest = listed[0]!
        expect((yield* reads.event(tenant, newest.id))?.text).toBe(newest.text)
        expect(yield* reads.event({ ...tenant, environment: "live" }, newest.id)).toBeUndefined()
      }).pipe(at("2026-03-15T10:00:00Z"))
    )

    it.effect("merchants and customers by id, customers by phone however typed", () =>
      Effect.gen(function* () {
        const reads = yield* Reads.Reads
        const seed = yield* Seed
        const { merchant } = yield* chargeable
        expect((yield* reads.merchant(merchant.id))?.name).toBe(merchant.name)
        const phone = yield* freshPhone
        const customer = yield* seed.customer({ environment: "test", phone })
        expect((yield* reads.customer(customer.id))?.phone).toBe(phone)
        expect((yield* reads.customerByPhone("test", ` ${phone} `))?.id).toBe(customer.id)
        expect(yield* reads.customerByPhone("live", phone)).toBeUndefined()
        expect(yield* reads.merchant((yield* uuid) as Ids.MerchantId)).toBeUndefined()
      })
    )

    it.effect("a customer's live codes: each unspent code with its challenge, until it expires", () =>
      Effect.gen(function* () {
        const reads = yield* Reads.Reads
        const approvals = yield* Approvals.Approvals
        const tx = yield* Store.Transactor
        const { customer, mandate } = yield* chargeable
        const challenge = yield* tx.withTransaction(
          approvals.issue({ kind: "mandate", id: mandate.id }, customer, "the contract's mandate")
        )
        const live = yield* reads.liveCodes(customer.id)
        expect(live.map((c) => c.challenge.id)).toEqual([challenge.id])
        expect(live[0]!.notice.data.code).toMatch(/^\d+$/)
        const later = DateTime.add(challenge.expiresAt, { seconds: 1 })
        expect(yield* reads.liveCodes(customer.id).pipe(at(DateTime.formatIso(later)))).toEqual([])
        expect(Approval.isSpent(challenge, later)).toBe(true)
      }).pipe(at("2026-03-15T10:00:00Z"))
    )
  })
}
