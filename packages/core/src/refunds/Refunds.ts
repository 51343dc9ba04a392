/**
 * The refund service. With the built-in ledger (or a host's ledger in laari's database) a refund is one
 * transaction: lock the payment, decide with `Refund.decide`, move the money back and record the refund,
 * the payment's `amountRefunded` and `refund.created`. With the wallet provider's core across the network
 * it is two: the first commits the refund's reversal pending, counted against what remains of the payment
 * and holding its reference; the call goes out; the second records the refund exactly as the built-in
 * path does, or nothing when the core refused. The resolver makes the same settlement when the answer
 * was lost.
 */
import { DateTime, Effect, Either, Schema } from "effect"
import { Audit, change } from "../audit/Audit.js"
import { Crypto } from "../kernel/Crypto.js"
import { PaymentOutcomeUnknown, type ServiceUnavailable } from "../kernel/Errors.js"
import * as Outbox from "../kernel/Outbox.js"
import type { Environment, Tenant } from "../kernel/Ids.js"
import { display, Laari } from "../kernel/Money.js"
import { Notifications } from "../kernel/Notifications.js"
import * as Refund from "./Refund.js"
import * as RefundMovements from "./RefundMovements.js"
import { MerchantsStore, registeredMerchant } from "../directory/MerchantsStore.js"
import { RefundsStore, type RefundFilter } from "./RefundsStore.js"
import { findOrFail } from "../kernel/Storage.js"
import * as Telemetry from "../kernel/Telemetry.js"
import * as Movement from "../wallet/Movement.js"
import {
  guard,
  RemoteLedger,
  remoteOf,
  pending,
  sendThenSettle,
  settleOnce,
  tenantMovement,
  remoteFor
} from "../wallet/RemoteLedger.js"
import { Wallet } from "../wallet/Wallet.js"
import { MovementsStore } from "../wallet/WalletStore.js"
import { Transactor } from "../kernel/Transactor.js"

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

/** A refusal the wallet provider's core gave (or the payer it lacks), saying why in its own words. */
const refusedBy = (r: Refund.Refusal): RefundRefused => new RefundRefused(r)

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

/** A refund's first step: made there (the built-in ledger), or its reversal pending in the core. */
export type Step =
  | { readonly _tag: "settled"; readonly refund: Refund.Refund }
  | { readonly _tag: "pending"; readonly movement: Movement.Movement }

export class Refunds extends Effect.Service<Refunds>()("laari/Refunds", {
  effect: Effect.gen(function* () {
    const tx = yield* Transactor
    const store = yield* RefundsStore
    const merchants = yield* MerchantsStore
    const wallet = yield* Wallet
    const emit = yield* Outbox.emitter
    const notifications = yield* Notifications
    const crypto = yield* Crypto
    const audit = yield* Audit
    const remote = remoteOf(
      yield* Effect.serviceOption(RemoteLedger),
      yield* Effect.serviceOption(MovementsStore)
    )
    const find = findOrFail(store.find, () => new RefundNotFound())

    /** The core's ports when this environment's money lives there. */
    const remoteIn = (environment: Environment) => remoteFor(remote, environment)

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

    const withDescription = (text: string, refund: Refund.Refund) =>
      `${text}${refund.description === null ? "" : `: ${refund.description}`}`

    /**
     * A refund made, in the caller's transaction with the payment locked: its row, then `move` (the
     * built-in ledger's transfer; nothing once the core posted it), the payment's `amountRefunded`,
     * `refund.created` and the customer's notice. Both ledgers' refunds end here.
     */
    const record = <E>(
      payment: Refund.Payment,
      refund: Refund.Refund,
      merchantName: string,
      now: DateTime.Utc,
      move: Effect.Effect<unknown, E>
    ) =>
      Effect.gen(function* () {
        yield* store
          .insert(refund)
          .pipe(Effect.catchTag("DuplicateReference", () => Effect.fail(new RefundReferenceTaken())))
        yield* move
        yield* store.setRefunded(payment.source, Refund.apply(payment, refund.amount).amountRefunded)
        yield* emit("refund.created", refund, Refund.refundObject(refund), now)
        yield* notifications.send({
          id: yield* crypto.uuid,
          customerId: payment.customerId,
          environment: refund.environment,
          kind: "refund",
          title: `${merchantName} refunded ${display(refund.amount)}`,
          body: `${withDescription(`${merchantName} refunded ${display(refund.amount)} to your wallet`, refund)}.`,
          data: {
            refund_id: refund.id,
            amount: refund.amount,
            ...Refund.sourceFields(payment.source),
            merchant_name: merchantName
          },
          createdAt: now
        })
        return refund
      })

    /**
     * The first step, one transaction. The payment's lock first: refunds of one payment are decided one
     * after the other, each against what the previous one left (and, through the core, what those still
     * pending hold). With the built-in ledger the money moves and the refund is recorded here; with the
     * core, its reversal is committed pending, for `finish`.
     */
    const begin = (tenant: Tenant, request: RefundRequest, id: Refund.RefundId) =>
      tx.withTransaction(
        Effect.gen(function* () {
          const source = yield* resolve(tenant, request.source)
          const payment = yield* store.lockPayment(tenant, source)
          if (payment === undefined) return yield* PaymentNotFound.of(source.kind)
          const away = remoteIn(tenant.environment)
          const decided =
            away === undefined
              ? Refund.decide(payment, request.amount)
              : Refund.decideCountingPending(
                  payment,
                  (yield* away.movements.held(Refund.holdKey(payment.source))).amount,
                  request.amount
                )
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
          const memo = withDescription(`Refund from ${merchant.name}`, refund)
          // Money out: recorded with the refund's decision, and undone with it when it is refused.
          yield* audit.note(
            change(
              tenant,
              "refund.create",
              { type: "refund", id },
              {
                amount,
                payment_kind: payment.source.kind,
                payment_id: payment.source.id,
                reason: refund.reason,
                reference: refund.reference
              }
            )
          )
          if (away !== undefined) {
            // Its row is written once posted: until then the pending movement holds the reference.
            if (
              refund.reference !== null &&
              (yield* RefundMovements.referenceTaken(away, store, tenant, refund.reference))
            )
              return yield* new RefundReferenceTaken()
            const payer = yield* away.ledger.payer({
              id: payment.customerId,
              environment: tenant.environment
            })
            if (payer === undefined) return yield* refusedBy(Refund.noWalletRefusal)
            const movement = RefundMovements.pending(away, yield* crypto.uuid, refund, payer, memo, now)
            yield* away.movements.insert(movement)
            return { _tag: "pending", movement } satisfies Step
          }
          const made = yield* record(
            payment,
            refund,
            merchant.name,
            now,
            wallet
              .reverse({
                id: Refund.transferId(id),
                environment: tenant.environment,
                payer: payment.customerId,
                merchant: tenant.merchantId,
                amount,
                memo
              })
              .pipe(
                Effect.catchTag("InsufficientMerchantBalance", () =>
                  Effect.fail(RefundRefused.of("INSUFFICIENT_MERCHANT_BALANCE"))
                )
              )
          )
          return { _tag: "settled", refund: made } satisfies Step
        })
      )

    /** What a settled refund movement came to; a pending one is still unknown. */
    const outcomeOf = (m: Movement.Movement) =>
      Effect.gen(function* () {
        if (m.status === "pending") return yield* PaymentOutcomeUnknown.forPayment()
        if (m.status === "posted") {
          const tenant = { merchantId: m.merchantId, environment: m.environment }
          const refund = yield* store.find(tenant, { _tag: "ById", id: m.causeId })
          if (refund === undefined) return yield* Effect.dieMessage(`refund ${m.causeId} lost`)
          return Either.right<Refund.Refund>(refund)
        }
        return Either.left(refusedBy(Refund.walletRefusal(m.reason ?? "executor-error")))
      })

    /** A pending refund's settlement by the core's answer, in the settling transaction. */
    const settleFirst =
      (answer: Movement.Settling) =>
      (
        current: Movement.Movement,
        now: DateTime.Utc
      ): Effect.Effect<Either.Either<Refund.Refund, RefundRefused>, ServiceUnavailable> =>
        Effect.gen(function* () {
          const reason = Movement.refusalOf(answer)
          // Nothing moved: the movement no longer pending frees what it held of the payment and its reference.
          if (reason !== undefined) return Either.left(refusedBy(Refund.walletRefusal(reason)))
          // Posted: the money is back with the payer, so the refund is recorded whatever came meanwhile.
          // Nothing can stand in its way: its amount was counted pending against what remains of the
          // payment, which only refunds change, and its reference was held from its decision on.
          const refund = RefundMovements.refundOf(current)
          const tenant = { merchantId: current.merchantId, environment: current.environment }
          const payment = yield* store.lockPayment(tenant, refund.source)
          if (payment === undefined) return yield* Effect.dieMessage(`payment ${refund.source.id} lost`)
          const merchant = yield* registeredMerchant(merchants, current.merchantId)
          const made = yield* record(payment, refund, merchant.name, now, Effect.void).pipe(
            Effect.catchTag("RefundReferenceTaken", () =>
              Effect.dieMessage(`refund ${refund.id}: its reference was taken while it was pending`)
            )
          )
          return Either.right(made)
        })

    /**
     * Settles a refund's movement with the core's answer, once: the refund recorded when posted, nothing
     * otherwise. A movement someone settled first (the request and the resolver may both hold an answer)
     * answers what it came to.
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
    const finish = Telemetry.fn("Refunds.finish")((movement: Movement.Movement) =>
      sendThenSettle(steps(movement))
    )

    /**
     * `POST /refunds`' first step under a new refund id. The core's circuit open refuses at once, nothing
     * committed and nothing sent.
     */
    const start = Telemetry.fn("Refunds.create")(function* (tenant: Tenant, request: RefundRequest) {
      const away = remoteIn(tenant.environment)
      yield* guard(away)
      return yield* begin(tenant, request, Refund.RefundId.make(yield* crypto.uuid))
    }, Telemetry.withTenant)

    /** `POST /refunds` whole: both steps; an answer lost on the way is `PaymentOutcomeUnknown`. */
    const create = (tenant: Tenant, request: RefundRequest) =>
      Effect.flatMap(start(tenant, request), (step) =>
        step._tag === "settled" ? Effect.succeed(step.refund) : finish(step.movement)
      )

    /** A refund's outcome by its movement, for a retry of a request whose answer was unknown. */
    const outcome = Telemetry.fn("Refunds.outcome")(function* (tenant: Tenant, movementId: string) {
      if (remote === undefined) return yield* Effect.dieMessage("no wallet connector")
      const movement = yield* tx.withTransaction(tenantMovement(remote.movements, tenant, movementId))
      if (movement.cause !== "refund") return yield* Effect.dieMessage(`movement ${movementId} is no refund`)
      return yield* yield* outcomeOf(movement)
    })

    const get = Telemetry.fn("Refunds.get")(
      (tenant: Tenant, idOrReference: string) => find(tenant, idOrReference),
      Telemetry.withTenant
    )

    const list = Telemetry.fn("Refunds.list")(
      (tenant: Tenant, filter: RefundFilter) => store.list(tenant, filter),
      Telemetry.withTenant
    )

    return { create, start, finish, steps, settle, outcome, get, list } as const
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
