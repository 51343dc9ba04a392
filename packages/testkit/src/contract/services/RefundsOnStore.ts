/**
 * The refunds part of the store contract (`StoreContract.suite` runs it on every adapter): the `Refunds`
 * service over the adapter's store and ledger. Every test makes its own merchant.
 *
 * The invariants checked throughout: a payment's refunds never sum to more than it; a refund moves its
 * amount from the merchant's balance back to the payer's wallet and no fee (laari keeps its fee), so
 * payments minus refunds equals the merchant's balance plus fees; the ledger sums to zero; a refused
 * refund moves and records nothing.
 */
import { describe, expect } from "@effect/vitest"
import {
  type Events,
  type Ids,
  Mandates,
  Notifications,
  QrCodes,
  Refund,
  Refunds,
  Store,
  Subscriptions,
  Wallet
} from "@laari/core"
import { DateTime, Effect, Either } from "effect"
import { SandboxPayerBalance, Seed } from "../../Seed.js"
import {
  type It,
  cycleInvoice,
  freshMerchant,
  freshTenant,
  merchantWithOutlet,
  qrRequest,
  subscribe,
  tenantOf,
  uuid
} from "../support/Helpers.js"
import { mandateTerms } from "../support/Payments.js"
import { at } from "./ManualClock.js"

export const tests = (it: It): void => {
  /** A fresh merchant with an active sandbox mandate and `amounts` charged under it. */
  const charged = (amounts: ReadonlyArray<number>, feeBps?: number) =>
    Effect.gen(function* () {
      const mandates = yield* Mandates.Mandates
      const { merchant, tenant } = yield* freshTenant(feeBps === undefined ? {} : { feeBps })
      const m = yield* mandates.create(tenant, yield* mandateTerms("refund", "Refunds"))
      const charges = []
      for (const amount of amounts) charges.push(yield* mandates.charge(tenant, m.id, { amount }))
      return { merchant, tenant, mandate: m, charges }
    })

  const source = (id: string): Refund.Source => ({ kind: "charge", id })

  /** Payer, merchant and fee balances and the ledger total, for before/after comparisons. */
  const balances = (merchant: Store.Merchant) =>
    Effect.gen(function* () {
      const seed = yield* Seed
      const payer = yield* (yield* Wallet.Wallet).payer(merchant.sandboxPayer)
      return {
        payer: payer!.balance as number,
        merchant: yield* seed.merchantBalance(merchant.id, "test"),
        fee: yield* seed.feeBalance("test"),
        total: yield* seed.ledgerTotal
      }
    })

  /** Two charges of 100 MVR (so the merchant's balance never stops a refund of the first), and the balances. */
  const twoCharges = Effect.gen(function* () {
    const setting = yield* charged([10_000, 10_000])
    return { ...setting, charge: setting.charges[0]!, before: yield* balances(setting.merchant) }
  })

  const eventsOf = (merchant: Store.Merchant, type: Events.Type) =>
    Effect.map(
      Effect.flatMap(Seed, (s) => s.events),
      (events) => events.filter((e) => e.merchantId === merchant.id && e.envelope.type === type)
    )

  describe("refunds", () => {
    it.effect("partial refunds up to the payment, then the rest by default; the fee stays with laari", () =>
      Effect.gen(function* () {
        const refunds = yield* Refunds.Refunds
        const { merchant, tenant, charges, charge, before } = yield* twoCharges

        const first = yield* refunds.create(tenant, {
          source: source(charge.id),
          amount: 2_500,
          reason: "requested_by_customer",
          reference: `r1-${charge.id}`,
          description: "Cold coffee"
        })
        expect(first).toMatchObject({
          amount: 2_500,
          customerId: merchant.sandboxPayer,
          source: { kind: "charge", id: charge.id },
          reason: "requested_by_customer",
          description: "Cold coffee"
        })
        const second = yield* refunds.create(tenant, { source: source(charge.id.toUpperCase()) })
        // The default is what remains.
        expect(second.amount).toBe(7_500)
        expect(second.reason).toBeNull()
        expect(second.reference).toBeNull()

        const after = yield* balances(merchant)
        expect(after.payer - before.payer).toBe(10_000)
        expect(before.merchant - after.merchant).toBe(10_000)
        // No fee moves: payments minus refunds = merchant balance + fees.
        expect(after.fee).toBe(before.fee)
        expect(after.total).toBe(0)
        const fees = charges.reduce((s, c) => s + c.fee, 0)
        expect(20_000 - 10_000).toBe(after.merchant + fees)

        const stored = (yield* (yield* Store.ChargesStore).listByMandate(charge.mandateId)).find(
          (c) => c.id === charge.id
        )
        expect(stored?.amountRefunded).toBe(10_000)
        // Nothing remains: a further refund is refused and moves nothing.
        const again = yield* Effect.either(refunds.create(tenant, { source: source(charge.id), amount: 1 }))
        expect(Either.getLeft(again).pipe((l) => l._tag === "Some" && l.value)).toMatchObject({
          _tag: "RefundRefused",
          code: "PAYMENT_ALREADY_REFUNDED"
        })
        expect(yield* balances(merchant)).toEqual(after)

        // Read back by id and by reference; listed newest first, filtered by the payment.
        expect(yield* refunds.get(tenant, first.id)).toEqual(first)
        expect(yield* refunds.get(tenant, `r1-${charge.id}`)).toEqual(first)
        const listed = yield* refunds.list(tenant, { chargeId: charge.id, limit: 10, offset: 0 })
        expect(listed.map((r) => r.id)).toEqual([second.id, first.id])
        expect(yield* refunds.list(tenant, { chargeId: charges[1]!.id, limit: 10, offset: 0 })).toEqual([])
        expect(yield* refunds.list(tenant, { qrPaymentId: charge.id, limit: 10, offset: 0 })).toEqual([])
        expect((yield* refunds.list(tenant, { limit: 1, offset: 1 })).map((r) => r.id)).toEqual([first.id])

        // One `refund.created` each, and a notice to the payer each.
        const events = yield* eventsOf(merchant, "refund.created")
        expect(events.map((e) => e.envelope.data.object)).toEqual([
          Refund.refundObject(first),
          Refund.refundObject(second)
        ])
        const notices = (yield* (yield* Notifications.Notifications).list(merchant.sandboxPayer)).filter(
          (n) => n.kind === "refund" && n.data.charge_id === charge.id
        )
        expect(notices.map((n) => n.data.amount).sort()).toEqual([2_500, 7_500])
      }).pipe(at("2026-03-15T10:00:00Z"))
    )

    it.effect("refusals: too much, not settled, not found, a taken reference; each moves nothing", () =>
      Effect.gen(function* () {
        const refunds = yield* Refunds.Refunds
        const { merchant, tenant, charges, charge, before } = yield* twoCharges
        const refused = (request: Refunds.RefundRequest, t: Ids.Tenant = tenant) =>
          Effect.flip(refunds.create(t, request))

        expect(yield* refused({ source: source(charge.id), amount: 10_001 })).toMatchObject({
          _tag: "RefundRefused",
          code: "REFUND_EXCEEDS_PAYMENT"
        })
        for (const amount of [0, -1, 1.5])
          expect(yield* refused({ source: source(charge.id), amount })).toMatchObject({
            code: "REFUND_AMOUNT_INVALID"
          })
        for (const id of [yield* uuid, "not-a-uuid"])
          expect(yield* refused({ source: source(id) })).toMatchObject({ _tag: "PaymentNotFound" })
        // Another merchant's charge, and this merchant's charge named as a QR payment: not found.
        const other = yield* freshMerchant()
        expect(yield* refused({ source: source(charge.id) }, tenantOf(other))).toMatchObject({
          _tag: "PaymentNotFound"
        })
        expect(yield* refused({ source: { kind: "qr_payment", id: charge.id } })).toMatchObject({
          _tag: "PaymentNotFound",
          message: "QR payment not found"
        })
        expect(
          yield* refused({ source: source(charge.id) }, { ...tenant, environment: "live" })
        ).toMatchObject({ _tag: "PaymentNotFound" })

        const ok = yield* refunds.create(tenant, { source: source(charge.id), amount: 100, reference: "dup" })
        const mid = yield* balances(merchant)
        expect(
          yield* refused({ source: source(charges[1]!.id), amount: 100, reference: "dup" })
        ).toMatchObject({ _tag: "RefundReferenceTaken" })
        expect(yield* balances(merchant)).toEqual(mid)
        expect(mid.merchant).toBe(before.merchant - 100)
        expect((yield* refunds.list(tenant, { limit: 10, offset: 0 })).map((r) => r.id)).toEqual([ok.id])
        expect(yield* eventsOf(merchant, "refund.created")).toHaveLength(1)
        // A reference is the merchant's own: another merchant may use it.
        const theirs = yield* charged([1_000])
        yield* refunds.create(theirs.tenant, {
          source: source(theirs.charges[0]!.id),
          amount: 100,
          reference: "dup"
        })
      }).pipe(at("2026-03-15T10:00:00Z"))
    )

    it.effect("the merchant's balance must cover the refund: the fee it never had is not given back", () =>
      Effect.gen(function* () {
        const refunds = yield* Refunds.Refunds
        // One charge of 5,000 at 1%: the merchant holds 4,950, so a full refund is short by the fee.
        const { merchant, tenant, charges } = yield* charged([5_000], 100)
        const charge = charges[0]!
        const before = yield* balances(merchant)
        expect(before.merchant).toBe(4_950)
        expect(yield* Effect.flip(refunds.create(tenant, { source: source(charge.id) }))).toMatchObject({
          _tag: "RefundRefused",
          code: "INSUFFICIENT_MERCHANT_BALANCE"
        })
        expect(yield* balances(merchant)).toEqual(before)
        expect(yield* refunds.list(tenant, { limit: 10, offset: 0 })).toEqual([])
        expect(yield* eventsOf(merchant, "refund.created")).toEqual([])
        // What the balance covers goes through, and leaves it at zero.
        yield* refunds.create(tenant, { source: source(charge.id), amount: 4_950 })
        expect(yield* (yield* Seed).merchantBalance(merchant.id, "test")).toBe(0)
        expect(yield* Effect.flip(refunds.create(tenant, { source: source(charge.id) }))).toMatchObject({
          code: "INSUFFICIENT_MERCHANT_BALANCE"
        })
      }).pipe(at("2026-03-15T10:00:00Z"))
    )

    it.effect("a QR payment and a paid invoice are refundable; an open invoice is not", () =>
      Effect.gen(function* () {
        const refunds = yield* Refunds.Refunds
        const seed = yield* Seed
        const qr = yield* QrCodes.QrCodes
        const { merchant, outlet, tenant } = yield* merchantWithOutlet()
        const customer = yield* seed.customer({
          environment: "test",
          phone: `+960 ${yield* uuid}`,
          balance: 50_000
        })
        const code = yield* qr.create(tenant, qrRequest(outlet.id, { type: "DYNAMIC", amount: 12_000 }))
        const payment = yield* qr.pay({
          environment: "test",
          customerId: customer.id,
          payload: code.payload,
          amount: null
        })
        const refund = yield* refunds.create(tenant, {
          source: { kind: "qr_payment", id: payment.id },
          amount: 2_000
        })
        expect(refund.customerId).toBe(customer.id)
        expect((yield* (yield* Wallet.Wallet).payer(customer.id))?.balance).toBe(50_000 - 12_000 + 2_000)
        const stored = yield* (yield* Store.QrPaymentsStore).listByCode(code.id)
        expect(stored.map((p) => p.amountRefunded)).toEqual([2_000])
        const byQr = yield* refunds.list(tenant, { qrPaymentId: payment.id, limit: 10, offset: 0 })
        expect(byQr.map((r) => r.id)).toEqual([refund.id])

        // A subscription's first invoice is paid at activation; the next cycle's is open.
        const sub = yield* subscribe(tenant, customer.id)
        expect(sub.invoice.status).toBe("PAID")
        const open = yield* cycleInvoice(sub.subscription, 1)
        yield* (yield* Store.InvoicesStore).insert(open)
        expect(
          yield* Effect.flip(
            refunds.create(tenant, { source: { kind: "invoice", id: open.id }, amount: 100 })
          )
        ).toMatchObject({ code: "PAYMENT_NOT_REFUNDABLE" })
        const fromInvoice = yield* refunds.create(tenant, {
          source: { kind: "invoice", id: sub.invoice.id },
          amount: 1_000,
          reason: "duplicate"
        })
        // The payer is the subscription's customer.
        expect(fromInvoice.customerId).toBe(customer.id)
        const invoices = yield* (yield* Store.InvoicesStore).list(sub.subscription.id, {
          limit: 10,
          offset: 0
        })
        expect(invoices.find((i) => i.id === sub.invoice.id)?.amountRefunded).toBe(1_000)
        expect(invoices.find((i) => i.id === open.id)?.amountRefunded).toBe(0)
        expect(
          yield* Effect.flip(
            refunds.create(tenant, {
              source: { kind: "invoice", id: sub.invoice.id },
              amount: sub.invoice.amount
            })
          )
        ).toMatchObject({ code: "REFUND_EXCEEDS_PAYMENT" })
        expect(yield* seed.ledgerTotal).toBe(0)
        void merchant
      }).pipe(at("2026-03-15T10:00:00Z"))
    )

    it.effect("100 concurrent partial refunds of one payment never exceed it", () =>
      Effect.gen(function* () {
        const refunds = yield* Refunds.Refunds
        const { merchant, tenant, charge, before } = yield* twoCharges
        const started = performance.now()
        const outcomes = yield* Effect.all(
          Array.from({ length: 100 }, () =>
            Effect.either(refunds.create(tenant, { source: source(charge.id), amount: 150 }))
          ),
          { concurrency: "unbounded" }
        )
        console.info(
          `100 concurrent partial refunds of one payment: ${Math.round(performance.now() - started)} ms`
        )
        const succeeded = outcomes.filter(Either.isRight).map((o) => o.right)
        const refused = outcomes.filter(Either.isLeft).map((o) => o.left)
        // On a loaded machine some refunds wait on the payment's row lock past the store's lock bound
        // and are `ServiceUnavailable` (they move nothing); the rest are refused for the amount. The ones
        // that timed out are tried again one at a time: still exactly what fits, never more.
        const timedOut = refused.filter((r) => r._tag === "ServiceUnavailable").length
        for (const r of refused)
          if (r._tag !== "ServiceUnavailable")
            expect(r).toMatchObject({ _tag: "RefundRefused", code: "REFUND_EXCEEDS_PAYMENT" })
        for (let i = 0; i < timedOut; i++) {
          const again = yield* Effect.either(
            refunds.create(tenant, { source: source(charge.id), amount: 150 })
          )
          if (Either.isRight(again)) succeeded.push(again.right)
          else expect(again.left).toMatchObject({ _tag: "RefundRefused", code: "REFUND_EXCEEDS_PAYMENT" })
        }
        const sum = succeeded.reduce((s, r) => s + r.amount, 0)
        // 66 fit (9,900); the 100 laari left cannot take another 150.
        expect(succeeded).toHaveLength(66)
        expect(sum).toBe(9_900)
        const after = yield* balances(merchant)
        expect(after.payer - before.payer).toBe(sum)
        expect(before.merchant - after.merchant).toBe(sum)
        expect(after.fee).toBe(before.fee)
        expect(after.total).toBe(0)
        const stored = yield* (yield* Store.ChargesStore).listByMandate(charge.mandateId)
        expect(stored.find((c) => c.id === charge.id)?.amountRefunded).toBe(sum)
        expect(yield* eventsOf(merchant, "refund.created")).toHaveLength(66)
      }).pipe(at("2026-03-15T10:00:00Z"))
    )

    it.effect("concurrent refunds of many payments never take the merchant's balance below zero", () =>
      Effect.gen(function* () {
        const refunds = yield* Refunds.Refunds
        // Ten charges of 1,000 at 1%: the merchant holds 9,900, so nine full refunds fit and a tenth does not.
        const { merchant, tenant, charges } = yield* charged(
          Array.from({ length: 10 }, () => 1_000),
          100
        )
        const before = yield* balances(merchant)
        expect(before.merchant).toBe(9_900)
        const outcomes = yield* Effect.all(
          charges.map((c) => Effect.either(refunds.create(tenant, { source: source(c.id), amount: 1_000 }))),
          { concurrency: "unbounded" }
        )
        const succeeded = outcomes.filter(Either.isRight)
        const refused = outcomes.filter(Either.isLeft).map((o) => o.left)
        expect(succeeded).toHaveLength(9)
        expect(refused).toEqual([expect.objectContaining({ code: "INSUFFICIENT_MERCHANT_BALANCE" })])
        const after = yield* balances(merchant)
        expect(after.merchant).toBe(900)
        expect(after.payer - before.payer).toBe(9_000)
        expect(after.total).toBe(0)
      }).pipe(at("2026-03-15T10:00:00Z"))
    )

    it.effect(
      "a refund of a paid invoice racing the subscription's cancellation: both happen, once each",
      () =>
        Effect.gen(function* () {
          const refunds = yield* Refunds.Refunds
          const subscriptions = yield* Subscriptions.Subscriptions
          // A charge first, so the merchant's balance can fund the invoice's refund.
          const { merchant, tenant } = yield* charged([10_000])
          const sub = yield* subscribe(tenant, merchant.sandboxPayer)
          const [refund, cancelled] = yield* Effect.all(
            [
              refunds.create(tenant, { source: { kind: "invoice", id: sub.invoice.id }, amount: 1_000 }),
              subscriptions.cancel(tenant, sub.subscription.id, false)
            ],
            { concurrency: "unbounded" }
          )
          expect(refund.amount).toBe(1_000)
          expect(cancelled.status).toBe("CANCELLED")
          const invoices = yield* (yield* Store.InvoicesStore).list(sub.subscription.id, {
            limit: 10,
            offset: 0
          })
          expect(invoices.find((i) => i.id === sub.invoice.id)).toMatchObject({
            status: "PAID",
            amountRefunded: 1_000
          })
          // A cancelled subscription's paid invoice stays refundable.
          yield* refunds.create(tenant, { source: { kind: "invoice", id: sub.invoice.id }, amount: 500 })
          expect(yield* (yield* Seed).ledgerTotal).toBe(0)
        }).pipe(at("2026-03-15T10:00:00Z"))
    )

    it.effect("a refund racing the mandate's revocation: both happen, once each", () =>
      Effect.gen(function* () {
        const refunds = yield* Refunds.Refunds
        const mandates = yield* Mandates.Mandates
        const { merchant, tenant, mandate, charges } = yield* charged([10_000, 10_000])
        const [refund, revoked] = yield* Effect.all(
          [
            refunds.create(tenant, { source: source(charges[0]!.id), amount: 3_000 }),
            mandates.revoke(tenant, mandate.id)
          ],
          { concurrency: "unbounded" }
        )
        expect(refund.amount).toBe(3_000)
        expect(revoked.status).toBe("REVOKED")
        // A revoked mandate's charges stay refundable.
        yield* refunds.create(tenant, { source: source(charges[1]!.id), amount: 1_000 })
        const payer = yield* (yield* Wallet.Wallet).payer(merchant.sandboxPayer)
        expect(SandboxPayerBalance - payer!.balance).toBe(20_000 - 4_000)
        expect(yield* (yield* Seed).ledgerTotal).toBe(0)
        expect(DateTime.isDateTime(refund.createdAt)).toBe(true)
      }).pipe(at("2026-03-15T10:00:00Z"))
    )
  })
}
