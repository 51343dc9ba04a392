/**
 * Renewals where the money lives in the wallet provider's core. An attempt's movement is committed pending
 * in the transaction that starts the attempt (the invoice's `CHARGING` is what it holds, so it needs no hold
 * key), its call goes out after the commit, and the core's answer settles the attempt in a transaction of
 * its own: the outcome on the subscription, its events and notice, and the steps after it (a late
 * subscription's next cycles, whose movements are committed there and sent next). The resolver settles an
 * answer lost on the way with the same settlement. An attempt resumed after its lease lapsed (a worker
 * stopped, or the answer is still unknown) never makes a second movement: the cause's one stands.
 */
import { type DateTime, Effect, Either, Schema } from "effect"
import type { CryptoService } from "../kernel/Crypto.js"
import type { ServiceUnavailable } from "../kernel/Errors.js"
import * as Fees from "../kernel/Fees.js"
import { Laari } from "../kernel/Money.js"
import { type MerchantsStoreService, registeredMerchant } from "../directory/MerchantsStore.js"
import * as Movement from "../wallet/Movement.js"
import { guard, pending, type Remote, settleOnce } from "../wallet/RemoteLedger.js"
import type { InvoicesStoreService, SubscriptionsStoreService } from "./BillingStore.js"
import * as Invoice from "./Invoice.js"
import * as Renewal from "./Renewal.js"
import * as Subscription from "./Subscription.js"
import { type TransactorService } from "../kernel/Transactor.js"

/** How many renewal movements one worker sends side by side. */
export const SendConcurrency = 8

/** What an attempt's movement keeps of it: what settling checks it against. */
const Detail = Schema.Struct({
  subscriptionId: Schema.String,
  invoiceId: Schema.String,
  attemptCount: Schema.Number
})
type Detail = typeof Detail.Type
const detailOf = Schema.decodeUnknownSync(Detail)

/** The answer a settled movement holds; `undefined` while pending. */
const heldAnswer = (m: Movement.Movement): Movement.Settling | undefined =>
  m.status === "posted"
    ? { _tag: "posted", postedAt: m.postedAt }
    : m.status === "refused"
      ? { _tag: "refused", reason: m.reason }
      : m.status === "cancelled"
        ? { _tag: "cancelled" }
        : undefined

/** An attempt's outcome from its movement's answer: paid by the movement, or missed (a cancel is `executor-error`). */
export const outcomeOf = (movementId: string, answer: Movement.Settling): Subscription.Outcome => {
  const reason = Movement.refusalOf(answer)
  return reason === undefined ? Subscription.paid(movementId) : Subscription.missed(reason)
}

/** What starting an attempt in the core came to, in the attempt's transaction. */
export type Begun =
  /** Its movement committed pending here: send it once the transaction commits. */
  | { readonly _tag: "send"; readonly movement: Movement.Movement }
  /** Its movement is pending already: its first call's, or the resolver's, to settle. */
  | { readonly _tag: "held" }
  /**
   * The core could not say where the payer's wallet is, or its circuit breaker is open (the core failing):
   * no movement yet, nothing sent. The attempt stays `CHARGING` under the lease and is resumed once it
   * lapses, when it gets its movement.
   */
  | { readonly _tag: "later" }
  /** It ends here: the payer has no wallet in the core, or its movement was settled before. */
  | { readonly _tag: "settled"; readonly outcome: Subscription.Outcome }

/** The engine's steps the connector path runs, in the caller's transaction. */
export interface Engine {
  /** Under the subscription's lock: the attempt's outcome on it, and the steps after it. */
  readonly resume: (
    sub: Subscription.Subscription,
    invoice: Invoice.Invoice,
    outcome: Subscription.Outcome,
    now: DateTime.Utc
  ) => Effect.Effect<Renewal.Progress, ServiceUnavailable>
  /** Attempts charged in laari's own ledger, a transaction a batch (outcomes counted): what their steps began. */
  readonly chargeAll: (
    attempts: ReadonlyArray<Renewal.Attempt>
  ) => Effect.Effect<Renewal.Progress, ServiceUnavailable>
}

export const make = (
  remote: Remote,
  deps: {
    readonly tx: TransactorService
    readonly store: SubscriptionsStoreService
    readonly invoices: InvoicesStoreService
    readonly merchants: MerchantsStoreService
    readonly crypto: CryptoService
  }
) => {
  const { ledger, movements } = remote

  /**
   * An attempt of `invoice` (`CHARGING` under the subscription's lock) in the core: a fresh one's movement
   * committed pending; a resumed one keeps the movement its cause has, and gets one only if it has none
   * (an attempt an earlier version left `CHARGING`).
   */
  const begin = (
    sub: Subscription.Subscription,
    invoice: Invoice.Invoice,
    attempt: Renewal.Attempt,
    now: DateTime.Utc
  ): Effect.Effect<Begun, ServiceUnavailable> =>
    Effect.gen(function* () {
      const causeId = Invoice.transferId(invoice)
      if (!attempt.fresh) {
        const existing = yield* movements.byCause("invoice", causeId)
        if (existing !== undefined) {
          const answer = heldAnswer(existing)
          // Settled with the invoice still `CHARGING` cannot follow from a settlement (one transaction
          // writes both); were it so, the movement's answer is the attempt's outcome.
          return answer === undefined
            ? { _tag: "held" }
            : { _tag: "settled", outcome: outcomeOf(existing.id, answer) }
        }
      }
      // As a payment is refused at once while the breaker is open, so an attempt waits: no pending
      // movements piled up for a core that is failing.
      if (Either.isLeft(yield* Effect.either(guard(remote)))) {
        yield* Effect.logWarning(`renewal of ${sub.id} waits out its lease: the wallet core is failing`)
        return { _tag: "later" }
      }
      const asked = yield* Effect.either(ledger.payer({ id: sub.customerId, environment: sub.environment }))
      // Not the whole batch held back (other subscriptions, other environments) for one wallet not found.
      if (asked._tag === "Left") {
        yield* Effect.logWarning(`renewal of ${sub.id} waits out its lease: ${asked.left.message}`)
        return { _tag: "later" }
      }
      const payer = asked.right
      // No wallet in the core: a miss, as a transfer from no wallet is in laari's own ledger.
      if (payer === undefined) return { _tag: "settled", outcome: Subscription.missed("executor-error") }
      const merchant = yield* registeredMerchant(deps.merchants, sub.merchantId)
      const split = Fees.split(invoice.amount, merchant.feeBps)
      const movement = Movement.pending(
        {
          id: yield* deps.crypto.uuid,
          merchantId: sub.merchantId,
          environment: sub.environment,
          kind: "payment",
          cause: "invoice",
          causeId,
          holdKey: null,
          customerId: sub.customerId,
          from: payer.walletId,
          to: ledger.merchantWallet(sub.merchantId),
          feeTo: split.fee > 0 ? ledger.feeWallet : null,
          amount: Laari(invoice.amount),
          fee: split.fee,
          memo: `${merchant.name}: ${sub.planName} (${invoice.periodKey})`,
          detail: {
            subscriptionId: sub.id,
            invoiceId: invoice.id,
            attemptCount: invoice.attemptCount
          } satisfies Detail
        },
        now
      )
      yield* movements.insert(movement)
      return { _tag: "send", movement }
    })

  /**
   * Settles an attempt's movement with the core's answer, once, in its own transaction, and counts its
   * outcomes once committed (whoever settles counts: the first call or the resolver). Returns what the
   * steps after it began. A subscription cancelled while the movement was pending is still settled by it:
   * a posted movement is money that moved, so the invoice ends `PAID` (`Subscription.afterAttempt`).
   */
  const settle = (engine: Engine, movementId: string, answer: Movement.Settling, by: Movement.SettledBy) =>
    deps.tx
      .withTransaction(
        settleOnce(
          movements,
          movementId,
          answer,
          by,
          (pending, now) =>
            Effect.gen(function* () {
              const d = detailOf(pending.detail)
              const sub = yield* deps.store.lockById(d.subscriptionId)
              const invoice = sub === undefined ? undefined : yield* deps.invoices.latest(sub.id)
              if (
                sub === undefined ||
                invoice?.id !== d.invoiceId ||
                invoice.status !== "CHARGING" ||
                invoice.attemptCount !== d.attemptCount
              ) {
                // Only this settlement ends the attempt its movement carries, so this cannot be; were it
                // so, the movement stays settled as the core answered, the record reconciliation reads.
                yield* Effect.logError(
                  `renewal movement ${movementId} (${answer._tag}): invoice ${d.invoiceId} no longer waits for attempt ${d.attemptCount}`
                )
                return Renewal.progress()
              }
              return yield* engine.resume(sub, invoice, outcomeOf(pending.id, answer), now)
            }),
          () => Effect.succeed(Renewal.progress())
        )
      )
      .pipe(Effect.tap((p) => Renewal.count(p.outcomes)))

  /**
   * A movement's call and, on a known answer, its settlement (whose value, the progress it began, is the
   * outcome). An unknown answer is still in progress: the attempt stays `CHARGING` and its movement
   * pending, and the resolver settles it with the same settlement.
   */
  const send = (engine: Engine, m: Movement.Movement) => {
    const steps = pending(remote, m, (id, answer, by) =>
      Effect.map(settle(engine, id, answer, by), Effect.succeed)
    )
    return Effect.flatMap(
      Effect.either(steps.send),
      Either.match({ onLeft: () => Effect.succeed(Renewal.progress()), onRight: steps.settle })
    ).pipe(
      // The movement is committed pending: whatever failed here, the resolver settles it.
      Effect.catchAll((e) =>
        Effect.as(Effect.logWarning(`renewal movement ${m.id}: ${e.message}`), Renewal.progress())
      )
    )
  }

  /** Everything `first` left, to the end: attempts charged here, movements sent, and what each began. */
  const drain = (engine: Engine, first: Renewal.Progress) =>
    Effect.gen(function* () {
      let attempts: ReadonlyArray<Renewal.Attempt> = first.attempts
      let sends: ReadonlyArray<Movement.Movement> = first.sends
      while (attempts.length > 0 || sends.length > 0) {
        const next = yield* Effect.forEach(sends, (m) => send(engine, m), { concurrency: SendConcurrency })
        if (attempts.length > 0) next.push(yield* engine.chargeAll(attempts))
        attempts = next.flatMap((p) => p.attempts)
        sends = next.flatMap((p) => p.sends)
      }
    })

  return { handles: ledger.handles, begin, settle, drain } as const
}
