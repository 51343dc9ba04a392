/**
 * A checkout session's payment once it went through, whichever ledger moved it (`paid`: the session
 * complete, or the subscription started with invoice 0 paid; their events and the customer's notice), and
 * the payment through the wallet provider's core, in two transactions: `begin` commits its movement
 * pending, holding the session (paid once; neither expired nor cancelled meanwhile), the call goes out,
 * and `settle` completes the session when the core posted it and leaves it open when not; the resolver
 * settles the same way when the answer was lost.
 */
import { Effect, Either, Schema } from "effect"
import type { DateTime } from "effect"
import { Crypto } from "../kernel/Crypto.js"
import { PaymentOutcomeUnknown, type ServiceUnavailable } from "../kernel/Errors.js"
import * as Fees from "../kernel/Fees.js"
import type { CustomerId, Environment } from "../kernel/Ids.js"
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
import * as BillingEvents from "./BillingEvents.js"
import { CheckoutSessionsStore, InvoicesStore, SubscriptionsStore } from "./BillingStore.js"
import * as CheckoutSession from "./CheckoutSession.js"
import * as Invoice from "./Invoice.js"
import * as Subscription from "./Subscription.js"
import { MovementsStore } from "../wallet/WalletStore.js"
import { Transactor } from "../kernel/Transactor.js"

/** The customer's wallet refused the payment; nothing moved and the session stays open. */
export class CheckoutPaymentDeclined extends Schema.TaggedError<CheckoutPaymentDeclined>()(
  "CheckoutPaymentDeclined",
  {
    reason: Schema.Literal(
      "insufficient-balance",
      "wallet-limit",
      "wallet-frozen",
      "blocked-by-rules",
      "executor-error"
    ),
    message: Schema.String
  }
) {}

const declinedMessages: Record<CheckoutPaymentDeclined["reason"], string> = {
  "insufficient-balance": "Insufficient funds",
  "wallet-limit": "The payment was blocked by a wallet limit",
  "wallet-frozen": "The payment could not be taken",
  "blocked-by-rules": "The payment could not be taken",
  "executor-error": "The payment could not be taken"
}

export const declined = (reason: RefusalReason, message?: string): CheckoutPaymentDeclined =>
  new CheckoutPaymentDeclined({ reason, message: message ?? declinedMessages[reason] })

/** What a session's pending movement holds it under. */
export const holdKey = (s: CheckoutSession.CheckoutSession): string => `checkout:${s.id}`

/** A session whose payment is pending in the core: neither paid again, nor cancelled, until it settles. */
export const settling = (): PaymentOutcomeUnknown =>
  new PaymentOutcomeUnknown({
    message:
      "A payment of this checkout session is being settled with the wallet provider, so whether it went through is not known yet; it is settled within minutes. Retry then: the session is complete if it went through, and still open if not"
  })

export interface Settlement {
  readonly session: CheckoutSession.CheckoutSession
  readonly subscription: Subscription.Subscription | null
}

/** What a session's movement keeps of it while pending. */
const Detail = Schema.Struct({ sessionId: Schema.String })
type Detail = typeof Detail.Type
const detailOf = Schema.decodeUnknownSync(Detail)

export class CheckoutPayments extends Effect.Service<CheckoutPayments>()("laari/CheckoutPayments", {
  effect: Effect.gen(function* () {
    const tx = yield* Transactor
    const sessions = yield* CheckoutSessionsStore
    const subscriptions = yield* SubscriptionsStore
    const invoices = yield* InvoicesStore
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

    /**
     * The session paid, in the caller's transaction holding its lock: `PAYMENT` completes it; `SUBSCRIPTION`
     * completes it and creates the subscription with invoice 0 `PAID`; their events, the customer's notice.
     * `openAt` is when the payment was taken, for a payment settled after it (see `CheckoutSession.complete`).
     */
    const paid = (
      s: CheckoutSession.CheckoutSession,
      customerId: CustomerId,
      paymentId: string,
      merchantName: string,
      now: DateTime.Utc,
      openAt?: DateTime.Utc
    ): Effect.Effect<Either.Either<Settlement, CheckoutSession.Refusal>, ServiceUnavailable> =>
      Effect.gen(function* () {
        const owner = { merchantId: s.merchantId, environment: s.environment }
        if (s.mode === "PAYMENT") {
          const completed = CheckoutSession.complete(s, now, { customerId, paymentId, openAt })
          if (Either.isLeft(completed)) return Either.left(completed.left)
          yield* sessions.update(completed.right)
          yield* emit(
            "checkout.session.completed",
            owner,
            BillingEvents.checkoutSessionObject(completed.right),
            now
          )
          yield* notifications.send({
            id: yield* crypto.uuid,
            customerId,
            environment: s.environment,
            kind: "payment",
            title: `Paid ${display(s.amount)} to ${merchantName}`,
            body: `You paid ${display(s.amount)} to ${merchantName} for ${s.title}.`,
            data: { checkout_session_id: s.id, amount: s.amount, merchant_name: merchantName },
            createdAt: now
          })
          return Either.right({ session: completed.right, subscription: null })
        }
        const activated = Subscription.activate(s, customerId, now, {
          subscriptionId: Subscription.SubscriptionId.make(yield* crypto.uuid),
          invoiceId: Invoice.InvoiceId.make(yield* crypto.uuid),
          paymentId,
          openAt
        })
        if (Either.isLeft(activated)) return Either.left(activated.left)
        const { subscription, invoice, session } = activated.right
        yield* sessions.update(session)
        yield* subscriptions.insert(subscription, Subscription.nextDueAt(subscription, invoice) ?? null)
        yield* invoices.insert(invoice)
        for (const type of activated.right.events)
          yield* emit(
            type,
            owner,
            BillingEvents.subscriptionEventObject(type, { subscription, invoice, session }),
            now
          )
        yield* notifications.send({
          id: yield* crypto.uuid,
          customerId,
          environment: s.environment,
          kind: "payment",
          title: `Subscribed to ${subscription.planName}`,
          body: `You paid ${display(s.amount)} to ${merchantName} and subscribed to ${subscription.planName}. It renews every ${subscription.intervalCount > 1 ? `${subscription.intervalCount} ` : ""}${subscription.interval.toLowerCase()}${subscription.intervalCount > 1 ? "s" : ""}; you can cancel it at any time in the app.`,
          data: {
            checkout_session_id: s.id,
            subscription_id: subscription.id,
            amount: s.amount,
            merchant_name: merchantName,
            plan_name: subscription.planName
          },
          createdAt: now
        })
        return Either.right({ session, subscription })
      })

    /** Whether a movement paying the session is pending in the core. The caller holds the session's lock. */
    const pendingOn = (s: CheckoutSession.CheckoutSession) => {
      const away = remoteIn(s.environment)
      return away === undefined
        ? Effect.succeed(false)
        : Effect.map(away.movements.held(holdKey(s)), (held) => held.count > 0)
    }

    /**
     * The first step, in the caller's transaction under the session's lock (open, nothing pending on
     * it): the payment's movement committed pending from the payer's wallet in the core. Each attempt
     * has its own cause id: a refused one leaves the session open for another, which the core must not
     * take for the refused one. A payer without a wallet there is refused as the built-in ledger refuses
     * an unknown payer, nothing committed.
     */
    const begin = (
      s: CheckoutSession.CheckoutSession,
      customerId: CustomerId,
      merchant: Merchant,
      now: DateTime.Utc
    ) =>
      Effect.gen(function* () {
        const away = remoteIn(s.environment)
        if (away === undefined) return yield* Effect.dieMessage("no wallet connector for this environment")
        const payer = yield* away.ledger.payer({ id: customerId, environment: s.environment })
        if (payer === undefined) return yield* declined("executor-error")
        const split = Fees.split(s.amount, merchant.feeBps)
        const movement = Movement.pending(
          {
            id: yield* crypto.uuid,
            merchantId: s.merchantId,
            environment: s.environment,
            kind: "payment",
            cause: "checkout",
            causeId: yield* crypto.uuid,
            holdKey: holdKey(s),
            customerId,
            from: payer.walletId,
            to: away.ledger.merchantWallet(s.merchantId),
            feeTo: split.fee > 0 ? away.ledger.feeWallet : null,
            amount: Laari(s.amount),
            fee: split.fee,
            memo: `${merchant.name}: ${s.title}`,
            detail: { sessionId: s.id } satisfies Detail
          },
          now
        )
        yield* away.movements.insert(movement)
        return movement
      })

    /** What a settled movement of a session came to; a pending one is still unknown. */
    const outcomeOf = (
      movement: Movement.Movement
    ): Effect.Effect<Either.Either<Settlement, CheckoutPaymentDeclined>, ServiceUnavailable> =>
      Effect.gen(function* () {
        if (movement.status === "pending") return yield* PaymentOutcomeUnknown.forPayment()
        if (movement.status !== "posted") return Either.left(declined(movement.reason ?? "executor-error"))
        const { sessionId } = detailOf(movement.detail)
        const s = yield* sessions.lockById(sessionId)
        if (s === undefined) return yield* Effect.dieMessage(`checkout session ${sessionId} lost`)
        const subscription =
          s.subscriptionId === null ? null : yield* subscriptions.lockById(s.subscriptionId)
        return Either.right({ session: s, subscription: subscription ?? null })
      })

    /** A pending payment's settlement by the core's answer, in the settling transaction. */
    const settleFirst =
      (answer: Movement.Settling) =>
      (
        current: Movement.Movement,
        now: DateTime.Utc
      ): Effect.Effect<Either.Either<Settlement, CheckoutPaymentDeclined>, ServiceUnavailable> =>
        Effect.gen(function* () {
          const reason = Movement.refusalOf(answer)
          // Refused or cancelled: the session stays open, to be paid again or to expire.
          if (reason !== undefined) return Either.left(declined(reason))
          const { sessionId } = detailOf(current.detail)
          const s = yield* sessions.lockById(sessionId)
          if (s === undefined) return yield* Effect.dieMessage(`checkout session ${sessionId} lost`)
          const merchant = yield* registeredMerchant(merchants, s.merchantId)
          // The pending movement kept the session open (the sweep and a cancel leave it alone), and it was
          // open when the payment was taken: it completes even past its expiry.
          const settled = yield* paid(
            s,
            current.customerId,
            current.id,
            merchant.name,
            now,
            current.createdAt
          )
          if (Either.isLeft(settled))
            return yield* Effect.dieMessage(`checkout session ${s.id} paid in the core but ${settled.left}`)
          return Either.right(settled.right)
        })

    /**
     * Settles a session's movement with the core's answer, once, in its own transaction; a movement
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
    const finish = Telemetry.fn("CheckoutPayments.finish")((movement: Movement.Movement) =>
      sendThenSettle(steps(movement))
    )

    /** A payment's outcome by its movement, for a retry of a request whose answer was unknown. */
    const outcome = Telemetry.fn("CheckoutPayments.outcome")(function* (
      tenant: { readonly merchantId: string; readonly environment: Environment },
      movementId: string
    ) {
      if (remote === undefined) return yield* Effect.dieMessage("no wallet connector")
      const result = yield* tx.withTransaction(
        Effect.gen(function* () {
          const movement = yield* tenantMovement(remote.movements, tenant, movementId)
          return yield* outcomeOf(movement)
        })
      )
      return yield* result
    })

    return { remoteFor: remoteIn, paid, pendingOn, begin, settle, finish, steps, outcome } as const
  })
}) {}
