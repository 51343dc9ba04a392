/**
 * The payment reads of the store contract (`StoreContract.suite` runs it on every adapter): a charge, a
 * QR payment and an invoice read by id, the tenant's only; and a refund naming a charge or a QR payment
 * by the merchant's reference, which must name exactly one payment of the tenant's.
 */
import { describe, expect } from "@effect/vitest"
import { type Ids, Mandates, QrCodes, Refunds, Store, Wallet } from "@laari/core"
import { Effect } from "effect"
import { Seed } from "../../Seed.js"
import { type It, freshMerchant, qrRequest, subscribe, tenantOf, uuid } from "../support/Helpers.js"
import { chargeable } from "../support/Payments.js"
import { at } from "./ManualClock.js"

/** Plain data, so records from two adapters' mappings compare by value. */
const plain = (u: unknown) => JSON.parse(JSON.stringify(u))

export const tests = (it: It): void => {
  /** A QR payment of `amount` by `customerId` through `code`. */
  const pay = (customerId: Ids.CustomerId, code: { readonly payload: string }, amount: number | null) =>
    Effect.flatMap(QrCodes.QrCodes, (qr) =>
      qr.pay({ environment: "test", customerId, payload: code.payload, amount })
    )

  describe("payment reads", () => {
    it.effect("a charge, a QR payment and an invoice by id: the tenant's, in any case, else none", () =>
      Effect.gen(function* () {
        const { tenant, outlet, customer, mandate } = yield* chargeable
        const other = tenantOf(yield* freshMerchant())
        const live: Ids.Tenant = { ...tenant, environment: "live" }
        const charge = yield* (yield* Mandates.Mandates).charge(tenant, mandate.id, { amount: 3_000 })
        const code = yield* (yield* QrCodes.QrCodes).create(
          tenant,
          qrRequest(outlet.id, { type: "DYNAMIC", amount: 4_000 })
        )
        const payment = yield* pay(customer.id, code, null)
        const sub = yield* subscribe(tenant, customer.id)

        const charges = yield* Store.ChargesStore
        const qrPayments = yield* Store.QrPaymentsStore
        const invoices = yield* Store.InvoicesStore
        const storedCharge = (yield* charges.listByMandate(mandate.id))[0]
        expect(plain(yield* charges.find(tenant, charge.id))).toEqual(plain(storedCharge))
        expect(plain(yield* charges.find(tenant, charge.id.toUpperCase()))).toEqual(plain(storedCharge))
        expect(plain(yield* qrPayments.find(tenant, payment.id))).toEqual(
          plain((yield* qrPayments.listByCode(code.id))[0])
        )
        expect(plain(yield* invoices.find(tenant, sub.invoice.id.toUpperCase()))).toEqual(
          plain(yield* invoices.latest(sub.subscription.id))
        )
        // Another merchant's, the other environment's, an unknown id and a malformed one: none.
        for (const t of [other, live]) {
          expect(yield* charges.find(t, charge.id)).toBeUndefined()
          expect(yield* qrPayments.find(t, payment.id)).toBeUndefined()
          expect(yield* invoices.find(t, sub.invoice.id)).toBeUndefined()
        }
        for (const id of [yield* uuid, "not-a-uuid", "\u0000"]) {
          expect(yield* charges.find(tenant, id)).toBeUndefined()
          expect(yield* qrPayments.find(tenant, id)).toBeUndefined()
          expect(yield* invoices.find(tenant, id)).toBeUndefined()
        }
        // Ids of one kind name nothing of another.
        expect(yield* charges.find(tenant, payment.id)).toBeUndefined()
        expect(yield* invoices.find(tenant, charge.id)).toBeUndefined()
      }).pipe(at("2026-03-15T10:00:00Z"))
    )

    it.effect(
      "a refund names a charge or a QR payment by reference when exactly one of the tenant's has it",
      () =>
        Effect.gen(function* () {
          const refunds = yield* Refunds.Refunds
          const mandates = yield* Mandates.Mandates
          const qr = yield* QrCodes.QrCodes
          const seed = yield* Seed
          const { merchant, tenant, outlet, customer, mandate } = yield* chargeable
          const other = tenantOf(yield* freshMerchant())
          const unique = `order-${yield* uuid}`
          const charge = yield* mandates.charge(tenant, mandate.id, { amount: 5_000, reference: unique })
          // Two charges with the mandate's reference (the default): the reference names neither.
          yield* mandates.charge(tenant, mandate.id, { amount: 1_000 })
          yield* mandates.charge(tenant, mandate.id, { amount: 1_000 })

          const byReference = yield* refunds.create(tenant, {
            source: { kind: "charge", reference: unique },
            amount: 1_500
          })
          expect(byReference.source).toEqual({ kind: "charge", id: charge.id })
          expect((yield* (yield* Store.ChargesStore).find(tenant, charge.id))?.amountRefunded).toBe(1_500)

          const before = yield* seed.merchantBalance(merchant.id, "test")
          expect(
            yield* Effect.flip(
              refunds.create(tenant, { source: { kind: "charge", reference: mandate.reference } })
            )
          ).toMatchObject({ _tag: "PaymentReferenceAmbiguous", kind: "charge" })
          // Another merchant's reference, and one nobody has: not found.
          for (const [t, reference] of [
            [other, unique],
            [tenant, `none-${yield* uuid}`]
          ] as const)
            expect(
              yield* Effect.flip(refunds.create(t, { source: { kind: "charge", reference }, amount: 100 }))
            ).toMatchObject({ _tag: "PaymentNotFound", kind: "charge" })

          // The refusals moved nothing.
          expect(yield* seed.merchantBalance(merchant.id, "test")).toBe(before)

          // A dynamic code's one payment is named by the code's reference; a static code's several are not.
          const dynamicRef = `qr-${yield* uuid}`
          const dynamic = yield* qr.create(
            tenant,
            qrRequest(outlet.id, { type: "DYNAMIC", amount: 2_000, reference: dynamicRef })
          )
          const paid = yield* pay(customer.id, dynamic, null)
          const staticRef = `till-${yield* uuid}`
          const till = yield* qr.create(tenant, qrRequest(outlet.id, { reference: staticRef }))
          yield* pay(customer.id, till, 700)
          yield* pay(customer.id, till, 800)
          const wallet = yield* Wallet.Wallet
          const merchantBefore = yield* seed.merchantBalance(merchant.id, "test")
          const payerBefore = (yield* wallet.payer(customer.id))!.balance
          const qrRefund = yield* refunds.create(tenant, {
            source: { kind: "qr_payment", reference: dynamicRef }
          })
          expect(qrRefund).toMatchObject({ source: { kind: "qr_payment", id: paid.id }, amount: 2_000 })
          expect((yield* wallet.payer(customer.id))!.balance - payerBefore).toBe(2_000)
          expect(
            yield* Effect.flip(
              refunds.create(tenant, { source: { kind: "qr_payment", reference: staticRef } })
            )
          ).toMatchObject({ _tag: "PaymentReferenceAmbiguous", kind: "qr_payment" })
          // A charge's reference names no QR payment.
          expect(
            yield* Effect.flip(refunds.create(tenant, { source: { kind: "qr_payment", reference: unique } }))
          ).toMatchObject({ _tag: "PaymentNotFound", kind: "qr_payment" })
          // The refusals moved nothing: only the QR refund left the balance since.
          expect(yield* seed.merchantBalance(merchant.id, "test")).toBe(merchantBefore - 2_000)
          expect(yield* seed.ledgerTotal).toBe(0)
        }).pipe(at("2026-03-15T10:00:00Z"))
    )
  })
}
