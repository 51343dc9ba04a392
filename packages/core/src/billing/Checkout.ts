/**
 * The checkout service: sessions a customer pays on the hosted page. Paying a `SUBSCRIPTION` session is
 * the customer's consent: the first payment creates the subscription, in the transaction that moves it
 * (the built-in ledger) or in the one that settles it (the wallet provider's core, `CheckoutPayments`).
 */
import { DateTime, Effect, Either, Schema } from "effect"
import * as Phone from "../kernel/Phone.js"
import { Approvals } from "../approvals/Approvals.js"
import * as CheckoutSession from "./CheckoutSession.js"
import { Crypto } from "../kernel/Crypto.js"
import { InvalidRequest } from "../kernel/Errors.js"
import * as Fees from "../kernel/Fees.js"
import { type ChallengeId, type CustomerId, type Tenant } from "../kernel/Ids.js"
import { display, Laari } from "../kernel/Money.js"
import { CheckoutSessionsStore } from "./BillingStore.js"
import { CheckoutPayments, declined, type Settlement, settling } from "./CheckoutPayments.js"
import { CustomersStore, MerchantsStore, registeredMerchant } from "../directory/MerchantsStore.js"
import { findOrFail } from "../kernel/Storage.js"
import type * as Movement from "../wallet/Movement.js"
import { guard } from "../wallet/RemoteLedger.js"
import { Wallet } from "../wallet/Wallet.js"
import * as Work from "../kernel/Work.js"
import * as Telemetry from "../kernel/Telemetry.js"
import { Transactor } from "../kernel/Transactor.js"

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

export { CheckoutPaymentDeclined } from "./CheckoutPayments.js"

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

/**
 * A test-mode payment the sandbox payer cannot cover: the developer reading it is told how to fund the
 * sandbox wallet, since no real customer is behind it.
 */
export const sandboxUnfunded = (amount: number): string =>
  `Insufficient funds: the sandbox payer's balance does not cover ${display(amount)}. Fund it with POST /test-helpers/payer {"balance": <laari>} (any sk_test_ secret key), then pay again.`

export const closed = (reason: CheckoutSession.Refusal) =>
  new CheckoutSessionClosed({ reason, message: closedMessages[reason] })

export type { Settlement } from "./CheckoutPayments.js"

/** A payment's first step: settled there (the built-in ledger), or its movement pending in the core. */
export type PayStep =
  | { readonly _tag: "settled"; readonly settlement: Settlement }
  | { readonly _tag: "pending"; readonly movement: Movement.Movement }

export class Checkout extends Effect.Service<Checkout>()("laari/Checkout", {
  effect: Effect.gen(function* () {
    const tx = yield* Transactor
    const sessions = yield* CheckoutSessionsStore
    const merchants = yield* MerchantsStore
    const customers = yield* CustomersStore
    const wallet = yield* Wallet
    const payments = yield* CheckoutPayments
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
        // A payment pending in the core may yet post: the session stays open for it until it settles.
        if (yield* payments.pendingOn(s)) return yield* settling()
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
     * The customer pays the session, the first step, one transaction: lock the session, check it is open
     * and holds no payment pending in the core (whose outcome is not known yet: never a second transfer).
     * With the built-in ledger the money moves and the session is paid here (`CheckoutPayments.paid`);
     * with the core, the payment's movement is committed pending, for `finish`, and the core's circuit
     * open refuses at once, nothing committed. Concurrent settlements queue on the session's lock; the
     * second finds it complete, or pending.
     */
    const start = Telemetry.fn("Checkout.settle")(function* (sessionId: string, customerId: CustomerId) {
      const now = yield* DateTime.now
      const s = yield* sessions.lockById(sessionId)
      if (s === undefined) return yield* new CheckoutSessionNotFound()
      // Pending first: such a session may yet complete, even once past its expiry.
      if (yield* payments.pendingOn(s)) return yield* settling()
      // Checked before any money moves; `complete` checks again when it writes.
      const refusal = CheckoutSession.whyNotOpen(s, now)
      if (refusal !== undefined) return yield* closed(refusal)
      const merchant = yield* merchantOf(s.merchantId)
      const away = payments.remoteFor(s.environment)
      if (away !== undefined) {
        yield* guard(away)
        return {
          _tag: "pending",
          movement: yield* payments.begin(s, customerId, merchant, now)
        } satisfies PayStep
      }
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
              declined(
                e.reason,
                e.reason === "insufficient-balance" &&
                  s.environment === "test" &&
                  customerId === merchant.sandboxPayer
                  ? sandboxUnfunded(s.amount)
                  : undefined
              )
            )
          )
        )
      const settlement = yield* Either.match(
        yield* payments.paid(s, customerId, receipt.id, merchant.name, now),
        { onLeft: (reason) => Effect.fail(closed(reason)), onRight: Effect.succeed }
      )
      return { _tag: "settled", settlement } satisfies PayStep
    }, tx.withTransaction)

    /**
     * The customer pays the session, whole: both steps; a core that did not answer is
     * `PaymentOutcomeUnknown`, the movement left pending for the resolver.
     */
    const settle = (sessionId: string, customerId: CustomerId) =>
      Effect.flatMap(start(sessionId, customerId), (step) =>
        step._tag === "settled" ? Effect.succeed(step.settlement) : payments.finish(step.movement)
      )

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

    /**
     * Expires open sessions 24 hours after creation; an unpaid session leaves nothing behind. One holding a
     * payment pending in the core is left open for it: posted, it completes the session; refused, a later
     * sweep expires it. Counted are the sessions expired, so a batch of pending ones ends the sweep rather
     * than claiming them again and again; they stay claimable first until they settle, which the resolver
     * sees to within its cancel time.
     */
    const expireDue = (size: number) =>
      Work.inBatches(
        size,
        tx.withTransaction(
          Effect.gen(function* () {
            const now = yield* DateTime.now
            const due = yield* sessions.claimExpiring(now, size)
            let expired = 0
            for (const s of due) {
              if (yield* payments.pendingOn(s)) continue
              yield* sessions.update(CheckoutSession.expire(s, now))
              expired++
            }
            return expired
          })
        )
      )

    const sweep = Telemetry.fn("Checkout.sweep")((batch: number = Work.Batch) => expireDue(batch))

    const expiryJob = Work.job("checkout-expiry", expireDue, sessions.nextExpiryAt)

    return {
      create,
      get,
      cancel,
      forPayment,
      start,
      settle,
      requestPayment,
      pay,
      sweep,
      expiryJob
    } as const
  }),
  // Its payments through the wallet provider's core, settled by the resolver too.
  dependencies: [CheckoutPayments.Default]
}) {}
