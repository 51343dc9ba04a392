/**
 * A QR code's payment once it went through, whichever ledger moved it (`recorded`: the payment, its
 * event, the customer's notice), and the payment through the wallet provider's core, in two transactions:
 * `begin` commits its movement pending (a dynamic code's holds the code, so it is paid once), the call goes
 * out, and `settle` records the payment when the core posted it and nothing but the movement when not;
 * the resolver settles the same way when the answer was lost.
 */
import { Effect, Either, Schema } from "effect"
import type { DateTime } from "effect"
import { Crypto } from "../kernel/Crypto.js"
import { PaymentOutcomeUnknown, type ServiceUnavailable } from "../kernel/Errors.js"
import * as Fees from "../kernel/Fees.js"
import type { CustomerId, Environment, Tenant } from "../kernel/Ids.js"
import { display, Laari } from "../kernel/Money.js"
import { Notifications } from "../kernel/Notifications.js"
import * as Outbox from "../kernel/Outbox.js"
import * as Telemetry from "../kernel/Telemetry.js"
import type { Merchant } from "../directory/Merchant.js"
import { MerchantsStore, registeredMerchant } from "../directory/MerchantsStore.js"
import * as Movement from "../wallet/Movement.js"
import {
  RemoteLedger,
  remoteOf,
  pending,
  sendThenSettle,
  settleOnce,
  tenantMovement,
  remoteFor
} from "../wallet/RemoteLedger.js"
import type { RefusalReason } from "../wallet/Wallet.js"
import type * as QrCode from "./QrCode.js"
import * as QrEvents from "./QrEvents.js"
import { QrPaymentsStore } from "./QrStore.js"
import { MovementsStore } from "../wallet/WalletStore.js"
import { Transactor } from "../kernel/Transactor.js"

/** The customer's wallet refused the payment. */
export class QrPaymentDeclined extends Schema.TaggedError<QrPaymentDeclined>()("QrPaymentDeclined", {
  reason: Schema.Literal(
    "insufficient-balance",
    "wallet-limit",
    "wallet-frozen",
    "blocked-by-rules",
    "executor-error"
  ),
  message: Schema.String
}) {}

const declinedMessages: Record<QrPaymentDeclined["reason"], string> = {
  "insufficient-balance": "Insufficient funds",
  "wallet-limit": "The payment was blocked by a wallet limit",
  "wallet-frozen": "The payment could not be taken",
  "blocked-by-rules": "The payment could not be taken",
  "executor-error": "The payment could not be taken"
}

export const declined = (reason: RefusalReason): QrPaymentDeclined =>
  new QrPaymentDeclined({ reason, message: declinedMessages[reason] })

/** What a dynamic code's pending movement holds it under: a second payment of it waits for this one. */
export const holdKey = (code: QrCode.QrCode): string => `qr-code:${code.id}`

/** What a payment's movement keeps of it while pending: what settling writes. */
const Detail = Schema.Struct({
  qrCodeId: Schema.String,
  qrid: Schema.String,
  outletId: Schema.Number,
  reference: Schema.String,
  title: Schema.String
})
type Detail = typeof Detail.Type
const detailOf = Schema.decodeUnknownSync(Detail)

export class QrPayments extends Effect.Service<QrPayments>()("laari/QrPayments", {
  effect: Effect.gen(function* () {
    const tx = yield* Transactor
    const payments = yield* QrPaymentsStore
    const merchants = yield* MerchantsStore
    const emit = yield* Outbox.emitter
    const notifications = yield* Notifications
    const crypto = yield* Crypto
    const remote = remoteOf(
      yield* Effect.serviceOption(RemoteLedger),
      yield* Effect.serviceOption(MovementsStore)
    )

    /** The core's ports when this environment's money lives there. */
    const remoteIn = (environment: Environment) => remoteFor(remote, environment)

    /** A payment that went through, in the caller's transaction: its row, its event, the customer's notice. */
    const recorded = (payment: QrCode.Payment, title: string, merchantName: string, now: DateTime.Utc) =>
      Effect.gen(function* () {
        yield* payments.insert(payment)
        yield* emit("qr_code.payment.succeeded", payment, QrEvents.qrPaymentObject(payment), now)
        yield* notifications.send({
          id: yield* crypto.uuid,
          customerId: payment.customerId,
          environment: payment.environment,
          kind: "payment",
          title: `Paid ${display(payment.amount)} to ${merchantName}`,
          body: `You paid ${display(payment.amount)} to ${merchantName} (${title}) by QR code.`,
          data: {
            qr_code_id: payment.qrCodeId,
            qrid: payment.qrid,
            payment_id: payment.id,
            amount: payment.amount,
            merchant_name: merchantName
          },
          createdAt: now
        })
        return payment
      })

    /**
     * Whether a movement paying this dynamic code is pending in the core: it counts as paid until the
     * movement settles (refused, the code is payable again). The caller holds the code's lock.
     */
    const pendingOn = (code: QrCode.QrCode) => {
      const away = remoteIn(code.environment)
      return code.type === "DYNAMIC" && away !== undefined
        ? Effect.map(away.movements.held(holdKey(code)), (held) => held.count > 0)
        : Effect.succeed(false)
    }

    /**
     * The first step, in the caller's transaction under the code's lock: the payment's movement committed
     * pending from the payer's wallet in the core. A payer without one is refused as the built-in ledger
     * refuses an unknown payer, nothing committed.
     */
    const begin = (
      code: QrCode.QrCode,
      customerId: CustomerId,
      amount: number,
      paymentId: string,
      merchant: Merchant,
      now: DateTime.Utc
    ) =>
      Effect.gen(function* () {
        const away = remoteIn(code.environment)
        if (away === undefined) return yield* Effect.dieMessage("no wallet connector for this environment")
        const payer = yield* away.ledger.payer({ id: customerId, environment: code.environment })
        if (payer === undefined) return yield* declined("executor-error")
        const split = Fees.split(amount, merchant.feeBps)
        const movement = Movement.pending(
          {
            id: yield* crypto.uuid,
            merchantId: code.merchantId,
            environment: code.environment,
            kind: "payment",
            cause: "qr-payment",
            causeId: paymentId,
            holdKey: code.type === "DYNAMIC" ? holdKey(code) : null,
            customerId,
            from: payer.walletId,
            to: away.ledger.merchantWallet(code.merchantId),
            feeTo: split.fee > 0 ? away.ledger.feeWallet : null,
            amount: Laari(amount),
            fee: split.fee,
            memo: `${merchant.name}: ${code.title}`,
            detail: {
              qrCodeId: code.id,
              qrid: code.qrid,
              outletId: code.outletId,
              reference: code.reference,
              title: code.title
            } satisfies Detail
          },
          now
        )
        yield* away.movements.insert(movement)
        return movement
      })

    /** What a settled movement of a payment came to; a pending one is still unknown. */
    const outcomeOf = (
      movement: Movement.Movement
    ): Effect.Effect<Either.Either<QrCode.Payment, QrPaymentDeclined>, ServiceUnavailable> =>
      Effect.gen(function* () {
        if (movement.status === "pending") return yield* PaymentOutcomeUnknown.forPayment()
        if (movement.status === "posted") {
          const payment = yield* payments.find(movement, movement.causeId)
          if (payment === undefined) return yield* Effect.dieMessage(`QR payment ${movement.causeId} lost`)
          return Either.right(payment)
        }
        return Either.left(declined(movement.reason ?? "executor-error"))
      })

    /** A pending payment's settlement by the core's answer, in the settling transaction. */
    const settleFirst =
      (answer: Movement.Settling) =>
      (
        current: Movement.Movement,
        now: DateTime.Utc
      ): Effect.Effect<Either.Either<QrCode.Payment, QrPaymentDeclined>, ServiceUnavailable> =>
        Effect.gen(function* () {
          const reason = Movement.refusalOf(answer)
          // Refused or cancelled: nothing but the movement is left, and a dynamic code is payable again.
          if (reason !== undefined) return Either.left(declined(reason))
          const d = detailOf(current.detail)
          const merchant = yield* registeredMerchant(merchants, current.merchantId)
          // Recorded even if the code was deactivated or expired meanwhile: the money moved while it was payable.
          const payment: QrCode.Payment = {
            id: current.causeId,
            qrCodeId: d.qrCodeId,
            qrid: d.qrid,
            merchantId: current.merchantId,
            environment: current.environment,
            outletId: d.outletId,
            customerId: current.customerId,
            amount: current.amount,
            fee: current.fee,
            netAmount: Laari(current.amount - current.fee),
            amountRefunded: 0,
            reference: d.reference,
            createdAt: current.createdAt
          }
          return Either.right(yield* recorded(payment, d.title, merchant.name, now))
        })

    /**
     * Settles a payment's movement with the core's answer, once, in its own transaction; a movement
     * someone settled first (the request and the resolver may both hold an answer) answers what it came to.
     */
    const settle = (movementId: string, answer: Movement.Settling, by: Movement.SettledBy) =>
      tx.withTransaction(
        Effect.gen(function* () {
          if (remote === undefined) return yield* Effect.dieMessage("no wallet connector")
          return yield* settleOnce(remote.movements, movementId, answer, by, settleFirst(answer), outcomeOf)
        })
      )

    /** The second step, in two: the call, then the settlement; no answer leaves it pending for the resolver. */
    const steps = (movement: Movement.Movement) => pending(remote, movement, settle)

    /** The second step whole. */
    const finish = Telemetry.fn("QrPayments.finish")((movement: Movement.Movement) =>
      sendThenSettle(steps(movement))
    )

    /** A payment's outcome by its movement, for a retry of a request whose answer was unknown. */
    const outcome = Telemetry.fn("QrPayments.outcome")(function* (tenant: Tenant, movementId: string) {
      if (remote === undefined) return yield* Effect.dieMessage("no wallet connector")
      const movement = yield* tx.withTransaction(tenantMovement(remote.movements, tenant, movementId))
      return yield* yield* outcomeOf(movement)
    })

    return { remoteFor: remoteIn, recorded, pendingOn, begin, settle, finish, steps, outcome } as const
  })
}) {}
