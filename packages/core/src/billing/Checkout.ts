/**
 * The checkout service: sessions a customer pays on the hosted page. Paying a `SUBSCRIPTION` session is
 * the customer's consent: one transaction moves the first payment and creates the subscription.
 */
import { DateTime, Effect, Either, Schema } from "effect"
import * as Phone from "../kernel/Phone.js"
import { Approvals } from "../approvals/Approvals.js"
import * as CheckoutSession from "./CheckoutSession.js"
import { Crypto } from "../kernel/Crypto.js"
import { InvalidRequest } from "../kernel/Errors.js"
import * as Outbox from "../kernel/Outbox.js"
import * as BillingEvents from "./BillingEvents.js"
import * as Fees from "../kernel/Fees.js"
import { type ChallengeId, type CustomerId, type Tenant } from "../kernel/Ids.js"
import * as Invoice from "./Invoice.js"
import { display, Laari } from "../kernel/Money.js"
import { Notifications } from "../kernel/Notifications.js"
import { CheckoutSessionsStore, InvoicesStore, SubscriptionsStore } from "./BillingStore.js"
import { Customers, Merchants, registeredMerchant } from "../directory/MerchantsStore.js"
import { Transactor, findOrFail } from "../kernel/Storage.js"
import * as Subscription from "./Subscription.js"
import { Wallet } from "../wallet/Wallet.js"
import * as Work from "../kernel/Work.js"
import * as Telemetry from "../kernel/Telemetry.js"

export class CheckoutSessionNotFound extends Schema.TaggedError<CheckoutSessionNotFound>()(
  "CheckoutSessionNotFound",
  {
    message: Schema.optionalWith(Schema.String, { default: () => "Checkout session not found" })
  }
) {}

export class SubscriptionsNotEnabled extends Schema.TaggedError<SubscriptionsNotEnabled>()(
  "SubscriptionsNotEnabled",
  {
    message: Schema.optionalWith(Schema.String, {
      default: () => "Subscriptions are not enabled for this merchant"
    })
  }
) {}

export class CheckoutReferenceTaken extends Schema.TaggedError<CheckoutReferenceTaken>()(
  "CheckoutReferenceTaken",
  {
    message: Schema.optionalWith(Schema.String, {
      default: () => "A checkout session with this reference already exists"
    })
  }
) {}

/** The session cannot be paid or cancelled in its state (`409`). */
export class CheckoutSessionClosed extends Schema.TaggedError<CheckoutSessionClosed>()(
  "CheckoutSessionClosed",
  {
    reason: Schema.Literal("already-complete", "expired", "cancelled", "mode-mismatch"),
    message: Schema.String
  }
) {}

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

export class PayerNotFound extends Schema.TaggedError<PayerNotFound>()("PayerNotFound", {
  message: Schema.optionalWith(Schema.String, {
    default: () => "No wallet is registered to this phone number"
  })
}) {}

const closedMessages: Record<CheckoutSession.Refusal, string> = {
  "already-complete": "This checkout session has already been paid",
  expired: "This checkout session has expired",
  cancelled: "This checkout session was cancelled",
  "mode-mismatch": "This checkout session cannot be completed"
}

const declinedMessages: Record<CheckoutPaymentDeclined["reason"], string> = {
  "insufficient-balance": "Insufficient funds",
  "wallet-limit": "The payment was blocked by a wallet limit",
  "wallet-frozen": "The payment could not be taken",
  "blocked-by-rules": "The payment could not be taken",
  "executor-error": "The payment could not be taken"
}

/**
 * A test-mode payment the sandbox payer cannot cover: the developer reading it is told how to fund the
 * sandbox wallet, since no real customer is behind it.
 */
export const sandboxUnfunded = (amount: number): string =>
  `Insufficient funds: the sandbox payer's balance does not cover ${display(amount)}. Fund it with POST /test-helpers/payer {"balance": <laari>} (any sk_test_ secret key), then pay again.`

export const closed = (reason: CheckoutSession.Refusal) =>
  new CheckoutSessionClosed({ reason, message: closedMessages[reason] })

export interface Settlement {
  readonly session: CheckoutSession.CheckoutSession
  readonly subscription: Subscription.Subscription | null
}

export class Checkout extends Effect.Service<Checkout>()("laari/Checkout", {
  effect: Effect.gen(function* () {
    const tx = yield* Transactor
    const sessions = yield* CheckoutSessionsStore
    const subscriptions = yield* SubscriptionsStore
    const invoices = yield* InvoicesStore
    const merchants = yield* Merchants
    const customers = yield* Customers
    const wallet = yield* Wallet
    const emit = yield* Outbox.emitter
    const notifications = yield* Notifications
    const approvals = yield* Approvals
    const crypto = yield* Crypto

    const merchantOf = (id: Tenant["merchantId"]) => registeredMerchant(merchants, id)
    const find = findOrFail(sessions.find, () => new CheckoutSessionNotFound())

    /** `POST /checkout/sessions`. */
    const create = Telemetry.fn("Checkout.create")(function* (
      tenant: Tenant,
      request: CheckoutSession.Request
    ) {
      const terms = yield* Either.match(CheckoutSession.validate(request), {
        onLeft: (problems) => Effect.fail(InvalidRequest.of(problems)),
        onRight: Effect.succeed
      })
      const merchant = yield* merchantOf(tenant.merchantId)
      if (
        terms.mode === "SUBSCRIPTION" &&
        tenant.environment === "live" &&
        !merchant.features.subscriptionsLive
      )
        return yield* new SubscriptionsNotEnabled()
      const now = yield* DateTime.now
      const session = CheckoutSession.open(
        { id: CheckoutSession.CheckoutSessionId.make(yield* crypto.uuid), ...tenant, terms },
        now
      )
      yield* tx.withTransaction(
        sessions
          .insert(session)
          .pipe(Effect.catchTag("DuplicateReference", () => Effect.fail(new CheckoutReferenceTaken())))
      )
      return session
    }, Telemetry.withTenant)

    const get = Telemetry.fn("Checkout.get")(
      (tenant: Tenant, idOrReference: string) => find(tenant, idOrReference),
      Telemetry.withTenant
    )

    /** The merchant withdraws an open session. */
    const cancel = Telemetry.fn("Checkout.cancel")(
      function* (tenant: Tenant, idOrReference: string) {
        const s = yield* find(tenant, idOrReference, true)
        const cancelled = yield* Either.match(CheckoutSession.cancel(s, yield* DateTime.now), {
          onLeft: (reason) => Effect.fail(closed(reason)),
          onRight: Effect.succeed
        })
        yield* sessions.update(cancelled)
        return cancelled
      },
      tx.withTransaction,
      Telemetry.withTenant
    )

    /** A session as the hosted page shows it, whoever's it is (the id is unguessable). */
    const forPayment = Telemetry.fn("Checkout.forPayment")(function* (id: string) {
      const s = yield* tx.withTransaction(sessions.lockById(id))
      if (s === undefined) return yield* new CheckoutSessionNotFound()
      return s
    })

    /**
     * The customer pays the session. One transaction: lock the session, check it is open, move the money,
     * complete it and, in `SUBSCRIPTION` mode, create the subscription with invoice 0 `PAID`. Concurrent
     * settlements queue on the session's lock; the second finds it complete.
     */
    const settle = Telemetry.fn("Checkout.settle")(function* (sessionId: string, customerId: CustomerId) {
      const now = yield* DateTime.now
      const s = yield* sessions.lockById(sessionId)
      if (s === undefined) return yield* new CheckoutSessionNotFound()
      // Checked before any money moves; `complete` checks again when it writes.
      const refusal = CheckoutSession.whyNotOpen(s, now)
      if (refusal !== undefined) return yield* closed(refusal)
      const merchant = yield* merchantOf(s.merchantId)
      const split = Fees.split(s.amount, merchant.feeBps)
      const receipt = yield* wallet
        .transfer({
          id: CheckoutSession.transferId(s),
          environment: s.environment,
          payer: customerId,
          merchant: s.merchantId,
          amount: Laari(s.amount),
          fee: split.fee,
          memo: `${merchant.name}: ${s.title}`
        })
        .pipe(
          Effect.catchTag("TransferRefused", (e) =>
            Effect.fail(
              new CheckoutPaymentDeclined({
                reason: e.reason,
                message:
                  e.reason === "insufficient-balance" &&
                  s.environment === "test" &&
                  customerId === merchant.sandboxPayer
                    ? sandboxUnfunded(s.amount)
                    : declinedMessages[e.reason]
              })
            )
          )
        )
      const owner = { merchantId: s.merchantId, environment: s.environment }
      if (s.mode === "PAYMENT") {
        const completed = yield* Either.match(
          CheckoutSession.complete(s, now, { customerId, paymentId: receipt.id }),
          { onLeft: (reason) => Effect.fail(closed(reason)), onRight: Effect.succeed }
        )
        yield* sessions.update(completed)
        yield* emit("checkout.session.completed", owner, BillingEvents.checkoutSessionObject(completed), now)
        yield* notifications.send({
          id: yield* crypto.uuid,
          customerId,
          environment: s.environment,
          kind: "payment",
          title: `Paid ${display(s.amount)} to ${merchant.name}`,
          body: `You paid ${display(s.amount)} to ${merchant.name} for ${s.title}.`,
          data: { checkout_session_id: s.id, amount: s.amount, merchant_name: merchant.name },
          createdAt: now
        })
        return { session: completed, subscription: null } satisfies Settlement
      }
      const activation = yield* Either.match(
        Subscription.activate(s, customerId, now, {
          subscriptionId: Subscription.SubscriptionId.make(yield* crypto.uuid),
          invoiceId: Invoice.InvoiceId.make(yield* crypto.uuid),
          paymentId: receipt.id
        }),
        { onLeft: (reason) => Effect.fail(closed(reason)), onRight: Effect.succeed }
      )
      const { subscription, invoice, session } = activation
      yield* sessions.update(session)
      yield* subscriptions.insert(subscription, Subscription.nextDueAt(subscription, invoice) ?? null)
      yield* invoices.insert(invoice)
      for (const type of activation.events)
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
        body: `You paid ${display(s.amount)} to ${merchant.name} and subscribed to ${subscription.planName}. It renews every ${subscription.intervalCount > 1 ? `${subscription.intervalCount} ` : ""}${subscription.interval.toLowerCase()}${subscription.intervalCount > 1 ? "s" : ""}; you can cancel it at any time in the app.`,
        data: {
          checkout_session_id: s.id,
          subscription_id: subscription.id,
          amount: s.amount,
          merchant_name: merchant.name,
          plan_name: subscription.planName
        },
        createdAt: now
      })
      return { session, subscription } satisfies Settlement
    }, tx.withTransaction)

    /** The hosted page, step one: a one-time code to the wallet registered to `phone`. */
    const requestPayment = Telemetry.fn("Checkout.requestPayment")(function* (
      sessionId: string,
      phone: string
    ) {
      const now = yield* DateTime.now
      const s = yield* sessions.lockById(sessionId)
      if (s === undefined) return yield* new CheckoutSessionNotFound()
      const refusal = CheckoutSession.whyNotOpen(s, now)
      if (refusal !== undefined) return yield* closed(refusal)
      const customer = yield* customers.findByPhone(s.environment, Phone.lookupKey(phone))
      if (customer === undefined) return yield* new PayerNotFound()
      const merchant = yield* merchantOf(s.merchantId)
      return yield* approvals.issue(
        { kind: "checkout", id: s.id },
        customer,
        `a payment of ${display(s.amount)} to ${merchant.name}`
      )
    }, tx.withTransaction)

    /** The hosted page, step two: the code, then the payment. A wrong code still counts its attempt. */
    const pay = Telemetry.fn("Checkout.pay")(function* (
      sessionId: string,
      challengeId: ChallengeId,
      code: string
    ) {
      const verified = yield* tx.withTransaction(
        Effect.gen(function* () {
          // The session's lock queues its guesses, so its caps hold under concurrent requests.
          const s = yield* sessions.lockById(sessionId)
          if (s === undefined) return yield* new CheckoutSessionNotFound()
          return yield* approvals.verify({ kind: "checkout", id: s.id }, challengeId, code)
        })
      )
      if (Either.isLeft(verified)) return yield* verified.left
      return yield* settle(sessionId, verified.right.customerId)
    })

    /** Expires open sessions 24 hours after creation; an unpaid session leaves nothing behind. */
    const expireDue = Work.sweep(tx, sessions.claimExpiring, (s, now) =>
      sessions.update(CheckoutSession.expire(s, now))
    )

    const sweep = Telemetry.fn("Checkout.sweep")((batch: number = Work.Batch) => expireDue(batch))

    const expiryJob = Work.job("checkout-expiry", expireDue, sessions.nextExpiryAt)

    return {
      create,
      get,
      cancel,
      forPayment,
      settle,
      requestPayment,
      pay,
      sweep,
      expiryJob
    } as const
  })
}) {}
