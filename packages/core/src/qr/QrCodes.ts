/**
 * The QR code service: create, read, list and deactivate a merchant's codes, and pay a scanned code.
 */
import { DateTime, Effect, Either, Schema } from "effect"
import { Audit, change } from "../audit/Audit.js"
import { Crypto } from "../kernel/Crypto.js"
import { InvalidRequest } from "../kernel/Errors.js"
import * as Fees from "../kernel/Fees.js"
import { type CustomerId, type Environment, type Tenant } from "../kernel/Ids.js"
import { Laari } from "../kernel/Money.js"
import * as QrCode from "./QrCode.js"
import { QrImages } from "./QrImages.js"
import { declined, type QrPaymentDeclined, QrPayments } from "./QrPayments.js"
import * as QrScheme from "./QrScheme.js"
import { MerchantsStore, registeredMerchant, OutletsStore } from "../directory/MerchantsStore.js"
import { QrCodesStore, QrPaymentsStore, type QrCodeFilter } from "./QrStore.js"
import { findOrFail } from "../kernel/Storage.js"
import type * as Movement from "../wallet/Movement.js"
import { guard } from "../wallet/RemoteLedger.js"
import { Wallet } from "../wallet/Wallet.js"
import * as Telemetry from "../kernel/Telemetry.js"
import { Transactor } from "../kernel/Transactor.js"

export class QrCodeNotFound extends Schema.TaggedError<QrCodeNotFound>()("QrCodeNotFound", {
  message: Schema.optionalWith(Schema.String, { default: () => "QR code not found" })
}) {}

export class OutletNotFound extends Schema.TaggedError<OutletNotFound>()("OutletNotFound", {
  message: Schema.optionalWith(Schema.String, { default: () => "Outlet not found" })
}) {}

export class QrReferenceTaken extends Schema.TaggedError<QrReferenceTaken>()("QrReferenceTaken", {
  message: Schema.optionalWith(Schema.String, {
    default: () => "A QR code with this reference already exists"
  })
}) {}

/** `400`: deactivating a code that is already inactive. */
export class QrCodeAlreadyInactive extends Schema.TaggedError<QrCodeAlreadyInactive>()(
  "QrCodeAlreadyInactive",
  {
    message: Schema.optionalWith(Schema.String, { default: () => "QR code is already inactive" })
  }
) {}

/** A scanned payload that does not parse or fails its CRC (`422`). */
export class QrPayloadInvalid extends Schema.TaggedError<QrPayloadInvalid>()("QrPayloadInvalid", {
  message: Schema.String
}) {}

/** A code that exists but cannot be paid now: inactive or expired (`409`), wrong amount (`422`). */
export class QrPaymentRefused extends Schema.TaggedError<QrPaymentRefused>()("QrPaymentRefused", {
  reason: Schema.Literal(
    "payload-mismatch",
    "inactive",
    "expired",
    "already-paid",
    "amount-mismatch",
    "amount-required"
  ),
  message: Schema.String
}) {}

export { QrPaymentDeclined } from "./QrPayments.js"

/** A payment's first step: settled there (the built-in ledger), or its movement pending in the core. */
export type PayStep =
  | { readonly _tag: "settled"; readonly payment: QrCode.Payment }
  | { readonly _tag: "pending"; readonly movement: Movement.Movement }

export interface PayRequest {
  readonly environment: Environment
  readonly customerId: CustomerId
  /** The scanned QR content. */
  readonly payload: string
  /** What the customer typed; required for a static code, optional (and then exact) for a dynamic one. */
  readonly amount: number | null
}

export class QrCodes extends Effect.Service<QrCodes>()("laari/QrCodes", {
  effect: Effect.gen(function* () {
    const tx = yield* Transactor
    const store = yield* QrCodesStore
    const payments = yield* QrPaymentsStore
    const outlets = yield* OutletsStore
    const merchants = yield* MerchantsStore
    const images = yield* QrImages
    const wallet = yield* Wallet
    const qrPayments = yield* QrPayments
    const crypto = yield* Crypto
    const audit = yield* Audit

    const find = findOrFail(store.find, () => new QrCodeNotFound())

    /** `POST /qr-codes`: a static code is rendered and stored in the same transaction. */
    const create = Telemetry.fn("QrCodes.create")(function* (tenant: Tenant, request: QrCode.Request) {
      const problems = QrCode.validate(request)
      if (problems.length > 0) return yield* InvalidRequest.of(problems)
      const outlet = yield* outlets.find(tenant.merchantId, request.outletId)
      if (outlet === undefined) return yield* new OutletNotFound()
      const merchant = yield* registeredMerchant(merchants, tenant.merchantId)
      const now = yield* DateTime.now
      const qrid = QrScheme.makeQrid(yield* crypto.bytes(QrScheme.QridBytes))
      const payload = yield* QrScheme.build({
        type: request.type,
        qrid,
        merchant: { id: merchant.id, name: merchant.name, city: merchant.city, mcc: merchant.mcc },
        outletId: outlet.id,
        outletLabel: outlet.name,
        ...(request.type === "DYNAMIC" && request.amount !== null ? { amount: request.amount } : {})
      }).pipe(Effect.orDie)
      const code = QrCode.make(
        {
          id: yield* crypto.uuid,
          merchantId: tenant.merchantId,
          environment: tenant.environment,
          request,
          outletName: outlet.name,
          qrid,
          payload
        },
        now
      )
      return yield* tx.withTransaction(
        Effect.gen(function* () {
          yield* store
            .insert(code)
            .pipe(Effect.catchTag("DuplicateReference", () => Effect.fail(new QrReferenceTaken())))
          if (code.type === "STATIC") yield* store.saveImage(code, yield* images.renderPng(code.payload))
          yield* audit.note(
            change(tenant, "qr_code.create", { type: "qr_code", id: code.id }, { ...request })
          )
          return code
        })
      )
    }, Telemetry.withTenant)

    const get = Telemetry.fn("QrCodes.get")(
      (tenant: Tenant, idOrReference: string) => find(tenant, idOrReference),
      Telemetry.withTenant
    )

    const list = Telemetry.fn("QrCodes.list")(
      (tenant: Tenant, filter: QrCodeFilter) => store.list(tenant, filter),
      Telemetry.withTenant
    )

    /** Kept, `INACTIVE`; a customer who scans it is told it is no longer active. */
    const deactivate = Telemetry.fn("QrCodes.deactivate")(
      function* (tenant: Tenant, idOrReference: string) {
        const code = yield* find(tenant, idOrReference, true)
        const next = yield* Either.match(QrCode.deactivate(code, yield* DateTime.now), {
          onLeft: () => Effect.fail(new QrCodeAlreadyInactive()),
          onRight: Effect.succeed
        })
        yield* store.update(next)
        yield* audit.note(change(tenant, "qr_code.deactivate", { type: "qr_code", id: next.id }))
        return next
      },
      tx.withTransaction,
      Telemetry.withTenant
    )

    /**
     * A dynamic code is paid once: by a payment recorded, or by one pending in the wallet provider's core
     * (never a second transfer while the first one's outcome is unknown). The caller holds the code's
     * lock, so two payments cannot both pass.
     */
    const alreadyPaid = (code: QrCode.QrCode) =>
      code.type === "DYNAMIC"
        ? Effect.flatMap(payments.listByCode(code.id), (list) =>
            list.length > 0 ? Effect.succeed(true) : qrPayments.pendingOn(code)
          )
        : Effect.succeed(false)

    /** The PNG of a static code. */
    const image = Telemetry.fn("QrCodes.image")((id: string) => store.image(id))

    /**
     * A customer pays a scanned code, the first step, one transaction: verify the payload, find the code
     * by `qrid` and lock it, check it may be paid. With the built-in ledger the money moves payer ->
     * merchant and the payment is recorded here (with its `qrid`, its event and notice); with the wallet
     * provider's core the payment's movement is committed pending, for `finish`. The core's circuit open
     * refuses at once, nothing committed and nothing sent.
     */
    const start = Telemetry.fn("QrCodes.pay")(function* (request: PayRequest) {
      const parsed = yield* Either.match(QrScheme.parse(request.payload), {
        onLeft: (e) =>
          e._tag === "ForeignScheme"
            ? Effect.fail(new QrCodeNotFound({ message: "This QR code is not one of ours" }))
            : Effect.fail(new QrPayloadInvalid({ message: `The QR payload is not valid: ${e.message}` })),
        onRight: Effect.succeed
      })
      const away = qrPayments.remoteFor(request.environment)
      yield* guard(away)
      return yield* tx.withTransaction(
        Effect.gen(function* () {
          const now = yield* DateTime.now
          const code = yield* store.lockByQrid(request.environment, parsed.qrid)
          if (code === undefined) return yield* new QrCodeNotFound()
          const amount = yield* Either.match(
            QrCode.authorizePayment(code, request.payload, request.amount, now, yield* alreadyPaid(code)),
            {
              onLeft: (reason) =>
                Effect.fail(new QrPaymentRefused({ reason, message: QrCode.paymentMessages[reason] })),
              onRight: Effect.succeed
            }
          )
          const merchant = yield* registeredMerchant(merchants, code.merchantId)
          const id = yield* crypto.uuid
          if (away !== undefined)
            return {
              _tag: "pending",
              movement: yield* qrPayments.begin(code, request.customerId, amount, id, merchant, now)
            } satisfies PayStep
          const split = Fees.split(amount, merchant.feeBps)
          const receipt = yield* wallet
            .transfer({
              id: `qr-payment:${id}`,
              environment: code.environment,
              payer: request.customerId,
              merchant: code.merchantId,
              amount: Laari(amount),
              fee: split.fee,
              memo: `${merchant.name}: ${code.title}`
            })
            .pipe(Effect.catchTag("TransferRefused", (e) => Effect.fail(declined(e.reason))))
          const payment: QrCode.Payment = {
            id,
            qrCodeId: code.id,
            qrid: code.qrid,
            merchantId: code.merchantId,
            environment: code.environment,
            outletId: code.outletId,
            customerId: request.customerId,
            amount,
            fee: receipt.fee,
            netAmount: receipt.netAmount,
            amountRefunded: 0,
            reference: code.reference,
            createdAt: now
          }
          return {
            _tag: "settled",
            payment: yield* qrPayments.recorded(payment, code.title, merchant.name, now)
          } satisfies PayStep
        })
      )
    })

    /**
     * A customer pays a scanned code, whole: both steps; a core that did not answer is
     * `PaymentOutcomeUnknown`, the movement left pending for the resolver.
     */
    const pay = (request: PayRequest) =>
      Effect.flatMap(start(request), (step) =>
        step._tag === "settled" ? Effect.succeed(step.payment) : qrPayments.finish(step.movement)
      )

    return { create, get, list, deactivate, image, start, pay } as const
  }),
  // Its payments through the wallet provider's core, settled by the resolver too.
  dependencies: [QrPayments.Default]
}) {}

export type QrCodeError =
  | QrCodeNotFound
  | OutletNotFound
  | QrReferenceTaken
  | QrCodeAlreadyInactive
  | QrPayloadInvalid
  | QrPaymentRefused
  | QrPaymentDeclined
