import { describe, expect, it } from "@effect/vitest"
import { DateTime, Either, Schema } from "effect"
import fc from "fast-check"
import type { CustomerId, MerchantId } from "../src/kernel/Ids.js"
import * as Refund from "../src/refunds/Refund.js"

const payment = (overrides: Partial<Refund.Payment> = {}): Refund.Payment => ({
  source: { kind: "charge", id: "0b6a3c8e-0d3e-4f59-9a39-5f3b8f5f0c01" },
  merchantId: "6f1c1f44-9a39-4c5e-8a57-0b3fe4d0a111" as MerchantId,
  environment: "test",
  customerId: "c7a0b1f2-1111-4c5e-8a57-0b3fe4d0a111" as CustomerId,
  amount: 10_000,
  amountRefunded: 0,
  settled: true,
  ...overrides
})

/** A payment of 1..1,000,000 laari with any part of it already refunded. */
const anyPayment = fc
  .integer({ min: 1, max: 1_000_000 })
  .chain((amount) =>
    fc.record({ amount: fc.constant(amount), amountRefunded: fc.integer({ min: 0, max: amount }) })
  )
  .map((p) => payment(p))

/**
 * Requests as a client may send them for `p`: none (all that remains), whole amounts anywhere and on
 * either side of each boundary (0, 1, what remains), fractions, and numbers that are not amounts.
 */
const anyRequest = (p: Refund.Payment) => {
  const left = p.amount - p.amountRefunded
  return fc.oneof(
    fc.constant(undefined),
    fc.integer({ min: -10, max: 2_000_000 }),
    fc.constantFrom(-1, 0, 1, 2, left - 1, left, left + 1),
    fc.integer({ min: -2, max: 2 }).map((d) => left + d + 0.5),
    fc.double({ min: -10, max: 2_000_000, noNaN: true }),
    fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, Number.MAX_SAFE_INTEGER + 2)
  )
}

describe("Refund.decide", () => {
  it("a settled payment: refunds the amount asked for, or all that remains", () => {
    expect(Refund.decide(payment(), 2_500)).toEqual(Either.right(2_500))
    expect(Refund.decide(payment({ amountRefunded: 2_500 }), undefined)).toEqual(Either.right(7_500))
    expect(Refund.decide(payment({ amountRefunded: 2_500 }), 7_500)).toEqual(Either.right(7_500))
    expect(Refund.decide(payment(), 1)).toEqual(Either.right(1))
  })

  it("refuses in order: not settled, nothing left, an invalid amount, more than remains", () => {
    expect(Refund.decide(payment({ settled: false, amountRefunded: 10_000 }), 0)).toEqual(
      Either.left("PAYMENT_NOT_REFUNDABLE")
    )
    expect(Refund.decide(payment({ amountRefunded: 10_000 }), 0)).toEqual(
      Either.left("PAYMENT_ALREADY_REFUNDED")
    )
    for (const amount of [0, -1, 0.5, 100.5, Number.NaN])
      expect(Refund.decide(payment(), amount)).toEqual(Either.left("REFUND_AMOUNT_INVALID"))
    expect(Refund.decide(payment({ amountRefunded: 2_500 }), 7_501)).toEqual(
      Either.left("REFUND_EXCEEDS_PAYMENT")
    )
  })

  it("accepts exactly the whole amounts from 1 to what remains of a settled payment (both ways)", () => {
    fc.assert(
      fc.property(
        anyPayment.chain((p) => fc.tuple(fc.constant(p), fc.boolean(), anyRequest(p))),
        ([p0, settled, requested]) => {
          const p = { ...p0, settled }
          const left = p.amount - p.amountRefunded
          const acceptable =
            settled &&
            left > 0 &&
            (requested === undefined ||
              (Number.isSafeInteger(requested) && requested >= Refund.MinAmount && requested <= left))
          const decided = Refund.decide(p, requested)
          expect(Either.isRight(decided)).toBe(acceptable)
          if (Either.isRight(decided)) {
            expect(decided.right).toBe(requested ?? left)
            expect(Refund.apply(p, decided.right).amountRefunded).toBeLessThanOrEqual(p.amount)
          }
        }
      )
    )
  })

  it("refunds decided one after the other never sum to more than the payment, and can reach it", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 100_000 }),
        fc.array(fc.option(fc.integer({ min: -5, max: 120_000 }), { nil: undefined }), { maxLength: 40 }),
        (amount, requests) => {
          let p = payment({ amount })
          let sum = 0
          for (const requested of requests) {
            const decided = Refund.decide(p, requested)
            if (Either.isLeft(decided)) continue
            sum += decided.right
            p = Refund.apply(p, decided.right)
          }
          expect(sum).toBe(p.amountRefunded)
          expect(sum).toBeLessThanOrEqual(amount)
          // Whatever came before, a refund of all that remains is accepted while anything remains.
          const rest = Refund.decide(p, undefined)
          if (sum < amount) expect(rest).toEqual(Either.right(amount - sum))
          else expect(rest).toEqual(Either.left("PAYMENT_ALREADY_REFUNDED"))
        }
      )
    )
  })
})

describe("Refund.refundObject", () => {
  it("names the payment under its own field, the other two null, and decodes as published", () => {
    const refund: Refund.Refund = {
      id: "5e0b9f1a-1c2d-4e3f-8a9b-0c1d2e3f4a5b" as Refund.RefundId,
      merchantId: payment().merchantId,
      environment: "test",
      source: { kind: "qr_payment", id: "7d6c5b4a-3f2e-4d1c-8b0a-9f8e7d6c5b4a" },
      customerId: payment().customerId,
      amount: 2_500,
      reason: "duplicate",
      reference: null,
      description: null,
      createdAt: DateTime.unsafeMake("2026-03-31T10:00:00Z")
    }
    const object = Refund.refundObject(refund)
    expect(object).toMatchObject({
      object: "refund",
      charge_id: null,
      qr_payment_id: refund.source.id,
      invoice_id: null,
      created_at: 1_774_951_200
    })
    expect(Schema.decodeUnknownSync(Refund.RefundObject)(JSON.parse(JSON.stringify(object)))).toEqual(object)
  })
})

describe("Refund.decideCountingPending", () => {
  it("counts what is pending as refunded: nothing pending is plain decide, both ways", () => {
    fc.assert(
      fc.property(
        anyPayment.chain((p) => fc.tuple(fc.constant(p), fc.boolean(), anyRequest(p))),
        ([p0, settled, requested]) => {
          const p = { ...p0, settled }
          expect(Refund.decideCountingPending(p, 0, requested)).toEqual(Refund.decide(p, requested))
        }
      )
    )
  })

  it("what is pending is held: never refunds more than is left beside it", () => {
    fc.assert(
      fc.property(
        anyPayment.chain((p) =>
          fc.tuple(
            fc.constant(p),
            fc.integer({ min: 1, max: p.amount - p.amountRefunded + 5 }),
            anyRequest(p)
          )
        ),
        ([p, pending, requested]) => {
          const left = p.amount - p.amountRefunded - pending
          const decided = Refund.decideCountingPending(p, pending, requested)
          if (left <= 0) {
            // Fully held by pending refunds: it exceeds the payment, not refunded in full (one may fail).
            expect(decided).toEqual(Either.left("REFUND_EXCEEDS_PAYMENT"))
          } else {
            expect(decided).toEqual(
              Refund.decide({ ...p, amountRefunded: p.amountRefunded + pending }, requested)
            )
          }
        }
      )
    )
  })

  it("examples: 10,000 paid, 2,500 back, 5,000 pending", () => {
    const p = payment({ amountRefunded: 2_500 })
    expect(Refund.decideCountingPending(p, 5_000, undefined)).toEqual(Either.right(2_500))
    expect(Refund.decideCountingPending(p, 5_000, 2_500)).toEqual(Either.right(2_500))
    expect(Refund.decideCountingPending(p, 5_000, 2_501)).toEqual(Either.left("REFUND_EXCEEDS_PAYMENT"))
    expect(Refund.decideCountingPending(p, 7_500, undefined)).toEqual(Either.left("REFUND_EXCEEDS_PAYMENT"))
    expect(Refund.decideCountingPending(p, 7_500, 1)).toEqual(Either.left("REFUND_EXCEEDS_PAYMENT"))
    // Nothing pending and nothing left is refunded in full; a payment not settled stays not refundable.
    expect(Refund.decideCountingPending(payment({ amountRefunded: 10_000 }), 0, undefined)).toEqual(
      Either.left("PAYMENT_ALREADY_REFUNDED")
    )
    expect(Refund.decideCountingPending(payment({ settled: false }), 5_000, 1)).toEqual(
      Either.left("PAYMENT_NOT_REFUNDABLE")
    )
  })
})

describe("Refund.walletRefusal", () => {
  it("too little in the merchant's wallet is its balance too low; every other refusal is not refundable now", () => {
    expect(Refund.walletRefusal("insufficient-balance")).toEqual({
      code: "INSUFFICIENT_MERCHANT_BALANCE",
      message: "The merchant's balance is too low to fund this refund"
    })
    expect(Refund.walletRefusal("wallet-frozen")).toEqual({
      code: "PAYMENT_NOT_REFUNDABLE",
      message: "The paying wallet is frozen: it cannot be refunded now"
    })
    expect(Refund.walletRefusal("blocked-by-rules")).toEqual({
      code: "PAYMENT_NOT_REFUNDABLE",
      message: "The wallet provider's rules refused this refund"
    })
    expect(Refund.walletRefusal("wallet-limit")).toEqual({
      code: "PAYMENT_NOT_REFUNDABLE",
      message: "The paying wallet's limit cannot take this refund now"
    })
    expect(Refund.walletRefusal("executor-error")).toEqual({
      code: "PAYMENT_NOT_REFUNDABLE",
      message: "The wallet provider did not make this refund; nothing moved. Try again later"
    })
  })
})

describe("Refund ids and fields", () => {
  const id = "0b6a3c8e-0d3e-4f59-9a39-5f3b8f5f0c01"

  it("the hold and the transfer are named after the payment and the refund", () => {
    expect(Refund.holdKey({ kind: "qr_payment", id })).toBe(`refund:qr_payment:${id}`)
    expect(Refund.transferId(id)).toBe(`refund:${id}`)
  })

  it("each kind of source under its own field, the other two null", () => {
    expect(Refund.sourceFields({ kind: "charge", id })).toEqual({
      charge_id: id,
      qr_payment_id: null,
      invoice_id: null
    })
    expect(Refund.sourceFields({ kind: "qr_payment", id })).toEqual({
      charge_id: null,
      qr_payment_id: id,
      invoice_id: null
    })
    expect(Refund.sourceFields({ kind: "invoice", id })).toEqual({
      charge_id: null,
      qr_payment_id: null,
      invoice_id: id
    })
  })
})
