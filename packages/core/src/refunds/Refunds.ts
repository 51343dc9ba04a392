/**
 * The refund service: lock the payment, decide with `Refund.decide`, move the money back and record the
 * refund, the payment's `amountRefunded` and `refund.created`, all in one transaction.
 */
import { DateTime, Effect, Either, Schema } from "effect"
import { Crypto } from "../kernel/Crypto.js"
import type { ServiceUnavailable } from "../kernel/Errors.js"
import * as Outbox from "../kernel/Outbox.js"
import { type Tenant } from "../kernel/Ids.js"
import { display, Laari } from "../kernel/Money.js"
import { Notifications } from "../kernel/Notifications.js"
import * as Refund from "./Refund.js"
import { Merchants, registeredMerchant } from "../directory/MerchantsStore.js"
import { RefundsStore, type RefundFilter } from "./RefundsStore.js"
import { Transactor, findOrFail } from "../kernel/Storage.js"
import * as Telemetry from "../kernel/Telemetry.js"
import { Wallet } from "../wallet/Wallet.js"

export class RefundNotFound extends Schema.TaggedError<RefundNotFound>()("RefundNotFound", {
  message: Schema.optionalWith(Schema.String, { default: () => "Refund not found" })
}) {}

/** The charge, QR payment or invoice named is not the tenant's (or does not exist). */
export class PaymentNotFound extends Schema.TaggedError<PaymentNotFound>()("PaymentNotFound", {
  kind: Refund.SourceKind,
  message: Schema.String
}) {
  static of(kind: Refund.SourceKind): PaymentNotFound {
    const what = kind === "charge" ? "Charge" : kind === "qr_payment" ? "QR payment" : "Invoice"
    return new PaymentNotFound({ kind, message: `${what} not found` })
  }
}

/** A reference several of the tenant's payments carry: the request must name one by id. */
export class PaymentReferenceAmbiguous extends Schema.TaggedError<PaymentReferenceAmbiguous>()(
  "PaymentReferenceAmbiguous",
  { kind: Refund.ReferencedKind, message: Schema.String }
) {
  static of(kind: Refund.ReferencedKind): PaymentReferenceAmbiguous {
    const [what, field] = kind === "charge" ? ["charges", "charge_id"] : ["QR payments", "qr_payment_id"]
    return new PaymentReferenceAmbiguous({
      kind,
      message: `Several ${what} carry this reference; name the one to refund by ${field}`
    })
  }
}

/** A refused refund: nothing moved, nothing recorded. */
export class RefundRefused extends Schema.TaggedError<RefundRefused>()("RefundRefused", {
  code: Refund.RefusalCode,
  message: Schema.String
}) {
  static of(code: Refund.RefusalCode): RefundRefused {
    return new RefundRefused({ code, message: Refund.refusalMessages[code] })
  }
}

export class RefundReferenceTaken extends Schema.TaggedError<RefundReferenceTaken>()("RefundReferenceTaken", {
  message: Schema.optionalWith(Schema.String, {
    default: () => "A refund with this reference already exists"
  })
}) {}

export interface RefundRequest {
  /** The payment, by id or (a charge, a QR payment) by the merchant's reference. */
  readonly source: Refund.Selector
  /** `undefined`: all that remains of the payment. */
  readonly amount?: number | undefined
  readonly reason?: Refund.Reason | undefined
  readonly reference?: string | undefined
  readonly description?: string | undefined
}

export class Refunds extends Effect.Service<Refunds>()("laari/Refunds", {
  effect: Effect.gen(function* () {
    const tx = yield* Transactor
    const store = yield* RefundsStore
    const merchants = yield* Merchants
    const wallet = yield* Wallet
    const emit = yield* Outbox.emitter
    const notifications = yield* Notifications
    const crypto = yield* Crypto
    const find = findOrFail(store.find, () => new RefundNotFound())

    /** The one payment of the tenant's that `selector` names, or why there is none. */
    const resolve = (tenant: Tenant, selector: Refund.Selector) =>
      selector.id !== undefined
        ? Effect.succeed<Refund.Source>(selector)
        : Effect.flatMap(
            // Two are enough to know the reference names more than one payment.
            store.paymentIdsByReference(tenant, selector.kind, selector.reference, 2),
            (ids): Effect.Effect<Refund.Source, PaymentNotFound | PaymentReferenceAmbiguous> =>
              ids.length === 1
                ? Effect.succeed({ kind: selector.kind, id: ids[0]! })
                : ids.length === 0
                  ? Effect.fail(PaymentNotFound.of(selector.kind))
                  : Effect.fail(PaymentReferenceAmbiguous.of(selector.kind))
          )

    /** `POST /refunds`. */
    const create = Telemetry.fn("Refunds.create")(function* (tenant: Tenant, request: RefundRequest) {
      const id = Refund.RefundId.make(yield* crypto.uuid)
      return yield* tx.withTransaction(
        Effect.gen(function* () {
          // The payment's lock first: refunds of one payment are decided one after the other, each
          // against what the previous one left.
          const source = yield* resolve(tenant, request.source)
          const payment = yield* store.lockPayment(tenant, source)
          if (payment === undefined) return yield* PaymentNotFound.of(source.kind)
          const decided = Refund.decide(payment, request.amount)
          if (Either.isLeft(decided)) return yield* RefundRefused.of(decided.left)
          const amount = Laari(decided.right)
          const now = yield* DateTime.now
          const merchant = yield* registeredMerchant(merchants, tenant.merchantId)
          const refund: Refund.Refund = {
            id,
            merchantId: tenant.merchantId,
            environment: tenant.environment,
            // As the store names it (an id in its canonical lower case).
            source: payment.source,
            customerId: payment.customerId,
            amount,
            reason: request.reason ?? null,
            reference: request.reference ?? null,
            description: request.description ?? null,
            createdAt: now
          }
          yield* store
            .insert(refund)
            .pipe(Effect.catchTag("DuplicateReference", () => Effect.fail(new RefundReferenceTaken())))
          yield* wallet
            .reverse({
              id: Refund.transferId(id),
              environment: tenant.environment,
              payer: payment.customerId,
              merchant: tenant.merchantId,
              amount,
              memo: `Refund from ${merchant.name}${refund.description === null ? "" : `: ${refund.description}`}`
            })
            .pipe(
              Effect.catchTag("InsufficientMerchantBalance", () =>
                Effect.fail(RefundRefused.of("INSUFFICIENT_MERCHANT_BALANCE"))
              )
            )
          yield* store.setRefunded(payment.source, Refund.apply(payment, amount).amountRefunded)
          yield* emit("refund.created", refund, Refund.refundObject(refund), now)
          yield* notifications.send({
            id: yield* crypto.uuid,
            customerId: payment.customerId,
            environment: tenant.environment,
            kind: "refund",
            title: `${merchant.name} refunded ${display(amount)}`,
            body: `${merchant.name} refunded ${display(amount)} to your wallet${refund.description === null ? "" : `: ${refund.description}`}.`,
            data: {
              refund_id: id,
              amount,
              ...Refund.sourceFields(payment.source),
              merchant_name: merchant.name
            },
            createdAt: now
          })
          return refund
        })
      )
    }, Telemetry.withTenant)

    const get = Telemetry.fn("Refunds.get")(
      (tenant: Tenant, idOrReference: string) => find(tenant, idOrReference),
      Telemetry.withTenant
    )

    const list = Telemetry.fn("Refunds.list")(
      (tenant: Tenant, filter: RefundFilter) => store.list(tenant, filter),
      Telemetry.withTenant
    )

    return { create, get, list } as const
  })
}) {}

/** Every error a refund command can end with, for exhaustive mapping at the edges. */
export type RefundError =
  | RefundNotFound
  | PaymentNotFound
  | PaymentReferenceAmbiguous
  | RefundRefused
  | RefundReferenceTaken
  | ServiceUnavailable
