/**
 * Mandate charges. With the built-in ledger (or a host's ledger in laari's database) a charge is one
 * transaction: lock the mandate, authorize against the caps, move the money, record the charge and its
 * events. With the wallet provider's core across the network it is two: the first commits the charge's
 * movement pending with its transfer id and counts it in the caps, the call goes out, and the second
 * settles it (the charge and `mandate.charge.succeeded`, or the cap released and `.failed`), the same
 * settlement the resolver makes when the answer was lost.
 */
import { DateTime, Effect, Either, Schema } from "effect"
import * as Calendar from "../kernel/Calendar.js"
import { Crypto } from "../kernel/Crypto.js"
import * as Counters from "../kernel/Counters.js"
import { PaymentOutcomeUnknown, type ServiceUnavailable } from "../kernel/Errors.js"
import type * as EventType from "../kernel/EventType.js"
import * as Fees from "../kernel/Fees.js"
import type { CustomerId, Environment, Tenant } from "../kernel/Ids.js"
import { Laari } from "../kernel/Money.js"
import { Notifications } from "../kernel/Notifications.js"
import * as Outbox from "../kernel/Outbox.js"
import { findOrFail } from "../kernel/Storage.js"
import * as Telemetry from "../kernel/Telemetry.js"
import { MerchantsStore, registeredMerchant } from "../directory/MerchantsStore.js"
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
import { type RefusalReason, Wallet } from "../wallet/Wallet.js"
import * as Mandate from "./Mandate.js"
import * as MandateEvents from "./MandateEvents.js"
import * as MandateNotices from "./MandateNotices.js"
import { ChargesStore, MandatesStore } from "./MandatesStore.js"
import { MovementsStore } from "../wallet/WalletStore.js"
import { Transactor } from "../kernel/Transactor.js"

export class MandateNotFound extends Schema.TaggedError<MandateNotFound>()("MandateNotFound", {
  message: Schema.optionalWith(Schema.String, { default: () => "Mandate not found" })
}) {}

/** A refused charge: moves no money, holds nothing, schedules nothing. */
export class ChargeRefused extends Schema.TaggedError<ChargeRefused>()("ChargeRefused", {
  code: Mandate.RefusalCode,
  message: Schema.String
}) {
  static of(code: Mandate.RefusalCode): ChargeRefused {
    return new ChargeRefused({ code, message: Mandate.refusalMessages[code] })
  }
}

export interface ChargeRequest {
  readonly amount: number
  readonly description?: string | undefined
  readonly reference?: string | undefined
}

/** `POST /mandates/{id}/charges` once settled: `succeeded`, or the refusal's code. */
export const Charges = Counters.counter({
  name: "laari_mandate_charges_total",
  description: "Mandate charges by outcome: succeeded, or the refusal code",
  label: "outcome",
  values: ["succeeded", ...Mandate.RefusalCode.literals]
})

/** Wallet refusals as the spec's charge codes. */
export const refusalCode = (reason: RefusalReason): Mandate.RefusalCode => {
  switch (reason) {
    case "insufficient-balance":
      return "INSUFFICIENT_FUNDS"
    case "wallet-limit":
      return "WALLET_LIMIT_EXCEEDED"
    case "wallet-frozen":
    case "blocked-by-rules":
    case "executor-error":
      return "MANDATE_CHARGE_FAILED"
  }
}

/** What a charge's movement keeps of it while pending: what settling writes. */
const Detail = Schema.Struct({
  mandateId: Schema.String,
  description: Schema.String,
  reference: Schema.String,
  periodKey: Schema.String,
  periodCharged: Schema.Number
})
type Detail = typeof Detail.Type
const detailOf = Schema.decodeUnknownSync(Detail)

/** A settlement's outcome, and whether this one settled it (so it is counted once). */
interface Settled {
  readonly outcome: Either.Either<Mandate.Charge, ChargeRefused>
  readonly first: boolean
}

/** A charge's first step: settled there (the built-in ledger), or its movement pending in the core. */
export type Step =
  | { readonly _tag: "settled"; readonly outcome: Either.Either<Mandate.Charge, ChargeRefused> }
  | { readonly _tag: "pending"; readonly movement: Movement.Movement }

export class MandateCharges extends Effect.Service<MandateCharges>()("laari/MandateCharges", {
  effect: Effect.gen(function* () {
    const tx = yield* Transactor
    const store = yield* MandatesStore
    const charges = yield* ChargesStore
    const merchants = yield* MerchantsStore
    const wallet = yield* Wallet
    const record = yield* Outbox.emitter
    const notifications = yield* Notifications
    const crypto = yield* Crypto
    const remote = remoteOf(
      yield* Effect.serviceOption(RemoteLedger),
      yield* Effect.serviceOption(MovementsStore)
    )

    /** The core's ports when this environment's money lives there. */
    const remoteIn = (environment: Environment) => remoteFor(remote, environment)

    const emit = (type: EventType.Type, m: Mandate.Mandate, object: Outbox.EventObject, now: DateTime.Utc) =>
      record(type, m, object, now)
    const notify = (
      customerId: CustomerId,
      m: Mandate.Mandate,
      n: MandateNotices.Notice,
      now: DateTime.Utc
    ) =>
      Effect.flatMap(crypto.uuid, (id) =>
        notifications.send({ id, customerId, environment: m.environment, createdAt: now, ...n })
      )
    const find = findOrFail(store.find, () => new MandateNotFound())

    /** A refusal's event, and the customer's notice when the wallet refused. */
    const refused = (
      m: Mandate.Mandate,
      charge: { readonly amount: number; readonly reference: string; readonly description: string },
      code: Mandate.RefusalCode,
      now: DateTime.Utc,
      customerNotice?: { readonly customerId: CustomerId; readonly merchantName: string }
    ) =>
      Effect.gen(function* () {
        if (customerNotice !== undefined)
          yield* notify(
            customerNotice.customerId,
            m,
            MandateNotices.chargeRefused(customerNotice.merchantName, m, {
              amount: Laari(charge.amount),
              description: charge.description,
              code
            }),
            now
          )
        yield* emit(
          "mandate.charge.failed",
          m,
          MandateEvents.chargeFailedObject({
            mandate: m,
            ...charge,
            code,
            message: Mandate.refusalMessages[code],
            now
          }),
          now
        )
        return ChargeRefused.of(code)
      })

    /** A charge that went through: its row, its event, the customer's notice. */
    const succeeded = (m: Mandate.Mandate, charge: Mandate.Charge, merchantName: string, now: DateTime.Utc) =>
      Effect.gen(function* () {
        yield* charges.insert(charge)
        yield* emit("mandate.charge.succeeded", m, MandateEvents.chargeObject(charge), now)
        yield* notify(charge.customerId, m, MandateNotices.charged(merchantName, m, charge), now)
        return charge
      })

    /**
     * The first step, one transaction: lock the mandate, authorize against the caps; a refusal commits
     * only its event. With the built-in ledger the money moves and the charge is recorded here too; with
     * the core, the charge's movement is committed pending and counted in the caps, for `finish`.
     */
    const begin = (tenant: Tenant, idOrReference: string, request: ChargeRequest, chargeId: string) =>
      tx.withTransaction(
        Effect.gen(function* () {
          const now = yield* DateTime.now
          const m = yield* find(tenant, idOrReference, true)
          const away = remoteIn(m.environment)
          const reference = request.reference ?? m.reference
          const description = request.description ?? m.title
          const charge = { amount: request.amount, reference, description }
          const remotePayer =
            m.customerId === null || away === undefined
              ? undefined
              : yield* away.ledger.payer({ id: m.customerId, environment: m.environment })
          const payer =
            m.customerId === null
              ? undefined
              : away !== undefined
                ? remotePayer
                : yield* wallet.payer(m.customerId)
          const settledAs = (outcome: Either.Either<Mandate.Charge, ChargeRefused>): Step => ({
            _tag: "settled",
            outcome
          })
          const decision = Mandate.authorizeCharge(
            m,
            request.amount,
            now,
            payer?.timeZone ?? Calendar.MaldivesZone
          )
          if (Either.isLeft(decision)) {
            // Past `expiresAt`: record the expiry the sweep would have made.
            if (decision.left === "MANDATE_EXPIRED" && m.status !== "EXPIRED")
              yield* store.update(Mandate.expire(m, now))
            return settledAs(Either.left(yield* refused(m, charge, decision.left, now)))
          }
          const customerId = m.customerId!
          if (payer === undefined)
            return settledAs(Either.left(yield* refused(m, charge, "MANDATE_CHARGE_FAILED", now)))
          const merchant = yield* registeredMerchant(merchants, m.merchantId)
          const amount = Laari(request.amount)
          const split = Fees.split(amount, merchant.feeBps)
          const auth = Either.getOrThrow(decision)
          const memo = `${merchant.name}: ${description}`
          if (away !== undefined) {
            const movement = Movement.pending(
              {
                id: yield* crypto.uuid,
                merchantId: m.merchantId,
                environment: m.environment,
                kind: "payment",
                cause: "mandate-charge",
                causeId: chargeId,
                holdKey: null,
                customerId,
                from: remotePayer!.walletId,
                to: away.ledger.merchantWallet(m.merchantId),
                feeTo: split.fee > 0 ? away.ledger.feeWallet : null,
                amount,
                fee: split.fee,
                memo,
                detail: {
                  mandateId: m.id,
                  description,
                  reference,
                  periodKey: auth.periodKey,
                  periodCharged: auth.periodCharged
                } satisfies Detail
              },
              now
            )
            yield* away.movements.insert(movement)
            // Counted while pending: a concurrent charge sees it in the cap.
            yield* store.update(Mandate.recordCharge(m, auth))
            return { _tag: "pending", movement } satisfies Step
          }
          const transfer = yield* wallet
            .transfer({
              id: `mandate-charge:${chargeId}`,
              fresh: true,
              environment: m.environment,
              payer: customerId,
              merchant: m.merchantId,
              amount,
              fee: split.fee,
              memo
            })
            .pipe(
              Effect.map(Either.right),
              Effect.catchTag("TransferRefused", (refusal) => Effect.succeed(Either.left(refusal)))
            )
          if (Either.isLeft(transfer))
            return settledAs(
              Either.left(
                yield* refused(m, charge, refusalCode(transfer.left.reason), now, {
                  customerId,
                  merchantName: merchant.name
                })
              )
            )
          yield* store.update(Mandate.recordCharge(m, auth))
          const done = yield* succeeded(
            m,
            {
              id: chargeId,
              mandateId: m.id,
              merchantId: m.merchantId,
              environment: m.environment,
              customerId,
              amount,
              description,
              reference,
              fee: transfer.right.fee,
              netAmount: transfer.right.netAmount,
              amountRefunded: 0,
              periodKey: auth.periodKey,
              periodCharged: auth.periodCharged,
              createdAt: now
            },
            merchant.name,
            now
          )
          return settledAs(Either.right(done))
        })
      )

    /** What a settled movement of a charge came to; a pending one is still unknown. */
    const outcomeOf = (movement: Movement.Movement) =>
      Effect.gen(function* () {
        if (movement.status === "pending") return yield* PaymentOutcomeUnknown.forPayment()
        if (movement.status === "posted") {
          const charge = yield* charges.find(movement, movement.causeId)
          if (charge === undefined) return yield* Effect.dieMessage(`charge ${movement.causeId} lost`)
          return Either.right(charge)
        }
        return Either.left(ChargeRefused.of(refusalCode(movement.reason ?? "executor-error")))
      })

    /**
     * Settles a charge's movement with the core's answer, once: the charge, its event and notice when
     * posted; the cap released, the refusal's event and notice otherwise. A movement someone settled
     * first (the request and the resolver may both hold an answer) answers what it came to. `committed`,
     * the movement as its caller holds it (the request, the resolver's claim), names the mandate to lock.
     */
    const settle = (
      movementId: string,
      answer: Movement.Settling,
      by: Movement.SettledBy,
      committed?: Movement.Movement
    ) =>
      tx
        .withTransaction(
          Effect.gen(function* () {
            if (remote === undefined) return yield* Effect.dieMessage("no wallet connector")
            // The mandate's lock goes with the movement's, in one round trip where the store can.
            if (committed !== undefined && store.lockByIdAhead !== undefined)
              yield* store.lockByIdAhead(detailOf(committed.detail).mandateId)
            return yield* settleOnce(
              remote.movements,
              movementId,
              answer,
              by,
              settleFirst(answer),
              (settled) => Effect.map(outcomeOf(settled), (outcome): Settled => ({ outcome, first: false }))
            )
          })
        )
        .pipe(
          // Counted once, by whoever settled it (before the commit of a request that stores its answer with it).
          Effect.tap(({ outcome, first }) =>
            first
              ? Counters.count(Charges, Either.isRight(outcome) ? "succeeded" : outcome.left.code)
              : Effect.void
          ),
          Effect.map(({ outcome }) => outcome)
        )

    /** A pending charge's settlement by the core's answer, in the settling transaction. */
    const settleFirst =
      (answer: Movement.Settling) =>
      (current: Movement.Movement, now: DateTime.Utc): Effect.Effect<Settled, ServiceUnavailable> =>
        Effect.gen(function* () {
          const d = detailOf(current.detail)
          const m = yield* store.lockById(d.mandateId)
          if (m === undefined) return yield* Effect.dieMessage(`mandate ${d.mandateId} lost`)
          const merchant = yield* registeredMerchant(merchants, m.merchantId)
          const reason = Movement.refusalOf(answer)
          if (reason === undefined) {
            const charge = yield* succeeded(
              m,
              {
                id: current.causeId,
                mandateId: m.id,
                merchantId: m.merchantId,
                environment: m.environment,
                customerId: current.customerId,
                amount: current.amount,
                description: d.description,
                reference: d.reference,
                fee: current.fee,
                netAmount: Laari(current.amount - current.fee),
                amountRefunded: 0,
                periodKey: d.periodKey,
                periodCharged: d.periodCharged,
                createdAt: current.createdAt
              },
              merchant.name,
              now
            )
            return { outcome: Either.right(charge), first: true }
          }
          yield* store.update(Mandate.releaseCharge(m, d.periodKey, current.amount))
          const refusal = yield* refused(
            m,
            { amount: current.amount, reference: d.reference, description: d.description },
            refusalCode(reason),
            now,
            // A cancel is laari's, not the wallet's refusal: the customer is told of what the wallet said.
            answer._tag === "refused"
              ? { customerId: current.customerId, merchantName: merchant.name }
              : undefined
          )
          return { outcome: Either.left(refusal), first: true }
        })

    /** The second step, in two: the call, then the settlement; no answer leaves it pending for the resolver. */
    const steps = (movement: Movement.Movement) => pending(remote, movement, settle)

    /** The second step whole. */
    const finish = Telemetry.fn("MandateCharges.finish")((movement: Movement.Movement) =>
      sendThenSettle(steps(movement))
    )

    const countSettled = (step: Step) =>
      step._tag === "settled"
        ? Counters.count(Charges, Either.isRight(step.outcome) ? "succeeded" : step.outcome.left.code)
        : Effect.void

    /**
     * The first step under a new charge id. The core's circuit open refuses at once, nothing committed
     * and nothing sent. Counted when settled here (a rolled-back charge neither happened nor was refused).
     */
    // Named as the command it is: a charge's span is `Mandates.charge`, whichever ledger it moves money in.
    const start = Telemetry.fn("Mandates.charge")(
      function* (tenant: Tenant, idOrReference: string, request: ChargeRequest) {
        const away = remoteIn(tenant.environment)
        yield* guard(away)
        const step = yield* begin(tenant, idOrReference, request, yield* crypto.uuid)
        yield* countSettled(step)
        return step
      },
      // A mandate not found fails the transaction rather than refusing inside it; it is a refusal all the same.
      Effect.tapError((e) =>
        e._tag === "MandateNotFound" ? Counters.count(Charges, "MANDATE_NOT_FOUND") : Effect.void
      ),
      Telemetry.withTenant
    )

    /** `POST /mandates/{id}/charges` whole: both steps; an answer lost on the way is `PaymentOutcomeUnknown`. */
    const charge = (tenant: Tenant, idOrReference: string, request: ChargeRequest) =>
      Effect.flatMap(start(tenant, idOrReference, request), (step) =>
        step._tag === "settled" ? step.outcome : finish(step.movement)
      )

    /** A charge's outcome by its movement, for a retry of a request whose answer was unknown. */
    const outcome = Telemetry.fn("MandateCharges.outcome")(function* (tenant: Tenant, movementId: string) {
      if (remote === undefined) return yield* Effect.dieMessage("no wallet connector")
      const movement = yield* tx.withTransaction(tenantMovement(remote.movements, tenant, movementId))
      return yield* yield* outcomeOf(movement)
    })

    return {
      charge,
      start,
      finish,
      steps,
      settle,
      outcome
    } as const
  })
}) {}
