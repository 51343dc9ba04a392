/**
 * Paying a QR code through the QrCodes service on the adapter's store: exactly the amount moves, once;
 * a refused payment moves and records nothing. `QrCodesOnStore` registers these inside its describe block.
 */
import { expect } from "@effect/vitest"
import { Emv, type Ids, Notifications, QrCode, QrCodes, QrScheme, Store, Wallet } from "@laari/core"
import { DateTime, Effect, Either } from "effect"
import { Seed } from "../../Seed.js"
import {
  type It,
  freshPhone,
  freshQrid,
  merchantWithOutlet,
  minute,
  plain,
  qrRequest
} from "../support/Helpers.js"
import { Now, iso, onManualClock } from "./ManualClock.js"

/** A customer of `environment` with `balance` in the wallet. */
const payer = (balance: number, environment: Ids.Environment = "test") =>
  Effect.flatMap(freshPhone, (phone) =>
    Effect.flatMap(Seed, (seed) => seed.customer({ environment, phone, balance }))
  )

/** Everything a refused payment must leave alone. */
const moneyOf = (merchant: Store.Merchant, customerId: Ids.CustomerId) =>
  Effect.gen(function* () {
    const seed = yield* Seed
    return {
      payer: (yield* (yield* Wallet.Wallet).payer(customerId))?.balance,
      merchant: yield* seed.merchantBalance(merchant.id, "test"),
      fee: yield* seed.feeBalance("test"),
      total: yield* seed.ledgerTotal
    }
  })

/** The tenant's `qr_code.payment.succeeded` events. */
const qrEvents = (merchant: Store.Merchant) =>
  Effect.map(
    Effect.flatMap(Seed, (seed) => seed.events),
    (events) =>
      events.filter((e) => e.merchantId === merchant.id && e.envelope.type === "qr_code.payment.succeeded")
  )

const pay = (customerId: Ids.CustomerId, payload: string, amount: number | null = null) =>
  Effect.flatMap(QrCodes.QrCodes, (qr) => qr.pay({ environment: "test", customerId, payload, amount }))

export const tests = (it: It): void => {
  it.effect(
    "paying a dynamic code moves exactly its amount, records the qrid, emits the event, notifies",
    () =>
      onManualClock((clock) =>
        Effect.gen(function* () {
          const qr = yield* QrCodes.QrCodes
          const payments = yield* Store.QrPaymentsStore
          const notifications = yield* Notifications.Notifications
          const { merchant, outlet, tenant } = yield* merchantWithOutlet({ name: "Bappa Cafe" })
          const customer = yield* payer(50_000)
          const code = yield* qr.create(
            tenant,
            qrRequest(outlet.id, { type: "DYNAMIC", amount: 12_550, reference: "order-1" })
          )
          const before = yield* moneyOf(merchant, customer.id)
          clock.set(Now + 15 * minute - 1)
          const payment = yield* pay(customer.id, code.payload)
          expect(payment).toMatchObject({
            qrCodeId: code.id,
            qrid: code.qrid,
            merchantId: merchant.id,
            environment: "test",
            outletId: outlet.id,
            customerId: customer.id,
            amount: 12_550,
            fee: 126,
            netAmount: 12_424,
            amountRefunded: 0,
            reference: "order-1"
          })
          expect(DateTime.formatIso(payment.createdAt)).toBe(iso(Now + 15 * minute - 1))
          expect(yield* moneyOf(merchant, customer.id)).toEqual({
            payer: before.payer! - 12_550,
            merchant: before.merchant + 12_424,
            fee: before.fee + 126,
            total: 0
          })
          expect(plain(yield* payments.listByCode(code.id))).toEqual(plain([payment]))

          const [event, ...more] = yield* qrEvents(merchant)
          expect(more).toEqual([])
          expect(event!.environment).toBe("test")
          expect(event!.envelope).toMatchObject({ type: "qr_code.payment.succeeded", livemode: false })
          expect(event!.envelope.data.object).toMatchObject({
            id: payment.id,
            object: "qr_code_payment",
            qrid: code.qrid,
            qr_code_id: code.id,
            outlet_id: String(outlet.id),
            amount: 12_550,
            currency: "MVR",
            fee: 126,
            net_amount: 12_424,
            reference: "order-1"
          })

          const [notice] = yield* notifications.list(customer.id)
          expect(notice).toMatchObject({
            kind: "payment",
            environment: "test",
            data: { qr_code_id: code.id, qrid: code.qrid, payment_id: payment.id, amount: 12_550 }
          })
          expect(notice!.title).toContain("125.50")

          // Typing the exact amount is fine too.
          const exact = yield* qr.create(tenant, qrRequest(outlet.id, { type: "DYNAMIC", amount: 2_000 }))
          expect((yield* pay(customer.id, exact.payload, 2_000)).amount).toBe(2_000)
        })
      )
  )

  it.effect("a static code is paid what the customer types, from 100 laari", () =>
    onManualClock(() =>
      Effect.gen(function* () {
        const qr = yield* QrCodes.QrCodes
        const { merchant, outlet, tenant } = yield* merchantWithOutlet()
        const customer = yield* payer(5_000)
        const code = yield* qr.create(tenant, qrRequest(outlet.id))
        const before = yield* moneyOf(merchant, customer.id)
        expect(yield* pay(customer.id, code.payload, 100)).toMatchObject({
          amount: 100,
          fee: 1,
          netAmount: 99,
          amountRefunded: 0
        })
        expect(yield* pay(customer.id, code.payload, 1_000)).toMatchObject({ amount: 1_000, fee: 10 })
        expect(yield* moneyOf(merchant, customer.id)).toEqual({
          payer: before.payer! - 1_100,
          merchant: before.merchant + 1_089,
          fee: before.fee + 11,
          total: 0
        })
        expect((yield* (yield* Store.QrPaymentsStore).listByCode(code.id)).map((p) => p.amount)).toEqual([
          1_000, 100
        ])
      })
    )
  )

  it.effect("refuses an expired, inactive or wrongly typed payment, and moves nothing", () =>
    onManualClock((clock) =>
      Effect.gen(function* () {
        const qr = yield* QrCodes.QrCodes
        const payments = yield* Store.QrPaymentsStore
        const { merchant, outlet, tenant } = yield* merchantWithOutlet()
        const customer = yield* payer(100_000)
        const timed = yield* qr.create(
          tenant,
          qrRequest(outlet.id, { type: "DYNAMIC", amount: 12_550, expiresInMinutes: 5 })
        )
        const fixed = yield* qr.create(tenant, qrRequest(outlet.id))
        const retired = yield* qr.create(tenant, qrRequest(outlet.id))
        yield* qr.deactivate(tenant, retired.id)
        const before = yield* moneyOf(merchant, customer.id)

        const refusals: ReadonlyArray<readonly [string, number | null, QrCode.PaymentRefusal]> = [
          [timed.payload, 12_551, "amount-mismatch"],
          [timed.payload, 100, "amount-mismatch"],
          [fixed.payload, null, "amount-required"],
          [fixed.payload, 99, "amount-required"],
          [fixed.payload, 150.5, "amount-required"],
          [fixed.payload, 0, "amount-required"],
          [retired.payload, 1_000, "inactive"]
        ]
        const expectRefused = (payload: string, amount: number | null, reason: QrCode.PaymentRefusal) =>
          Effect.gen(function* () {
            const refused = yield* Effect.flip(pay(customer.id, payload, amount))
            expect(refused, `${reason} ${amount}`).toMatchObject({
              _tag: "QrPaymentRefused",
              reason,
              message: QrCode.paymentMessages[reason]
            })
          })
        for (const [payload, amount, reason] of refusals) yield* expectRefused(payload, amount, reason)
        // It stops at expiresAt, exactly, whatever the customer types.
        clock.set(Now + 5 * minute)
        yield* expectRefused(timed.payload, null, "expired")
        yield* expectRefused(timed.payload, 12_550, "expired")

        expect(yield* moneyOf(merchant, customer.id)).toEqual(before)
        for (const code of [timed, fixed, retired]) expect(yield* payments.listByCode(code.id)).toEqual([])
        expect(yield* qrEvents(merchant)).toEqual([])
        expect(yield* (yield* Notifications.Notifications).list(customer.id)).toEqual([])
      })
    )
  )

  it.effect(
    "a tampered payload is QrPayloadInvalid; a foreign, unknown or other-environment code QrCodeNotFound",
    () =>
      onManualClock(() =>
        Effect.gen(function* () {
          const qr = yield* QrCodes.QrCodes
          const { merchant, outlet, tenant } = yield* merchantWithOutlet()
          const customer = yield* payer(100_000)
          const code = yield* qr.create(tenant, qrRequest(outlet.id, { type: "DYNAMIC", amount: 12_550 }))
          const before = yield* moneyOf(merchant, customer.id)
          const scheme = (qrid: string, amount: number) =>
            Either.getOrThrow(
              QrScheme.build({
                type: "DYNAMIC",
                qrid,
                merchant: {
                  id: merchant.id,
                  name: merchant.name,
                  city: merchant.city,
                  mcc: merchant.mcc
                },
                outletId: outlet.id,
                outletLabel: outlet.name,
                amount
              })
            )
          // The builder and the service agree: the cases below differ from the real payload only as stated.
          expect(scheme(code.qrid, 12_550)).toBe(code.payload)

          const last = code.payload.at(-1)
          const badCrc = `${code.payload.slice(0, -1)}${last === "0" ? "1" : "0"}`
          const badAmount = code.payload.replace("5406125.50", "5406999.50")
          for (const payload of [badCrc, badAmount, "not a QR payload", ""]) {
            expect(badAmount).not.toBe(code.payload)
            const refused = yield* Effect.flip(pay(customer.id, payload))
            expect(refused._tag, payload).toBe("QrPayloadInvalid")
          }

          const foreign = Either.getOrThrow(
            Emv.encode([
              { tag: "00", value: "01" },
              { tag: "01", value: "12" },
              {
                tag: "26",
                value: [
                  { tag: "00", value: "com.example.wallet" },
                  { tag: "01", value: "merchant-42" }
                ]
              },
              { tag: "52", value: "5999" },
              { tag: "53", value: "462" },
              { tag: "54", value: "125.50" },
              { tag: "58", value: "MV" },
              { tag: "59", value: "OTHER SHOP" },
              { tag: "60", value: "MALE" },
              { tag: "62", value: [{ tag: "05", value: code.qrid }] }
            ])
          )
          expect(yield* Effect.flip(pay(customer.id, foreign))).toMatchObject({
            _tag: "QrCodeNotFound",
            message: "This QR code is not one of ours"
          })
          expect(yield* Effect.flip(pay(customer.id, scheme(yield* freshQrid, 12_550)))).toMatchObject({
            _tag: "QrCodeNotFound",
            message: "QR code not found"
          })
          const live = yield* payer(100_000, "live")
          expect(
            yield* Effect.flip(
              qr.pay({ environment: "live", customerId: live.id, payload: code.payload, amount: null })
            )
          ).toMatchObject({ _tag: "QrCodeNotFound" })
          // Our scheme, this code's qrid, a valid CRC, but not the content that was issued.
          expect(yield* Effect.flip(pay(customer.id, scheme(code.qrid, 100)))).toMatchObject({
            _tag: "QrPaymentRefused",
            reason: "payload-mismatch"
          })

          expect(yield* moneyOf(merchant, customer.id)).toEqual(before)
          expect(yield* (yield* Store.QrPaymentsStore).listByCode(code.id)).toEqual([])
          expect(yield* qrEvents(merchant)).toEqual([])
        })
      )
  )

  it.effect("a wallet that cannot pay is QrPaymentDeclined, and nothing moves or is recorded", () =>
    onManualClock(() =>
      Effect.gen(function* () {
        const qr = yield* QrCodes.QrCodes
        const seed = yield* Seed
        const { merchant, outlet, tenant } = yield* merchantWithOutlet()
        const customer = yield* payer(12_549)
        const code = yield* qr.create(tenant, qrRequest(outlet.id, { type: "DYNAMIC", amount: 12_550 }))
        const before = yield* moneyOf(merchant, customer.id)
        expect(yield* Effect.flip(pay(customer.id, code.payload))).toMatchObject({
          _tag: "QrPaymentDeclined",
          reason: "insufficient-balance",
          message: "Insufficient funds"
        })
        yield* seed.setPayer(customer.id, { balance: 20_000, limit: 10_000 })
        expect(yield* Effect.flip(pay(customer.id, code.payload))).toMatchObject({
          _tag: "QrPaymentDeclined",
          reason: "wallet-limit"
        })
        yield* seed.setPayer(customer.id, { balance: 12_549, limit: null })
        expect(yield* moneyOf(merchant, customer.id)).toEqual(before)
        expect(yield* (yield* Store.QrPaymentsStore).listByCode(code.id)).toEqual([])
        expect(yield* qrEvents(merchant)).toEqual([])
        expect(yield* (yield* Notifications.Notifications).list(customer.id)).toEqual([])
      })
    )
  )
}
