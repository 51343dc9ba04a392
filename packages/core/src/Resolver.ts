/**
 * The resolver: every pending movement ends. It claims movements due a look (`SKIP LOCKED`, so any number
 * of processes share the work), moves each one's next look later in the same short transaction, and then,
 * outside any transaction, asks the core (`GET /transfers/{id}`): a known answer settles it; a core that
 * never took it gets the same transfer again; and past `cancelAfter` it cancels, whose answer is final.
 * Settling goes to the movement's cause, in its own transaction, once.
 */
import { DateTime, Effect } from "effect"
import { Billing } from "./billing/Billing.js"
import * as Counters from "./kernel/Counters.js"
import type { ServiceUnavailable } from "./kernel/Errors.js"
import * as Work from "./kernel/Work.js"
import { CheckoutPayments } from "./billing/CheckoutPayments.js"
import { MandateCharges } from "./mandates/MandateCharges.js"
import { QrPayments } from "./qr/QrPayments.js"
import { Refunds } from "./refunds/Refunds.js"
import * as Movement from "./wallet/Movement.js"
import { RemoteLedger, remoteOf } from "./wallet/RemoteLedger.js"
import { MovementsStore } from "./wallet/WalletStore.js"
import { Transactor } from "./kernel/Transactor.js"

/** How many pending movements one process looks at side by side. */
export const Concurrency = 16

/** What each look did. */
export const Looks = Counters.counter({
  name: "laari_wallet_resolver_looks_total",
  description:
    "Looks at pending wallet movements by what they did: settled (the core knew), resent (it never took it), cancelled (past the cancel time), waiting (no answer yet)",
  label: "outcome",
  values: ["settled", "resent", "cancelled", "waiting"]
})

export class Resolver extends Effect.Service<Resolver>()("laari/Resolver", {
  effect: Effect.gen(function* () {
    const tx = yield* Transactor
    const charges = yield* MandateCharges
    const billing = yield* Billing
    const qrPayments = yield* QrPayments
    const checkoutPayments = yield* CheckoutPayments
    const refunds = yield* Refunds
    const remote = remoteOf(
      yield* Effect.serviceOption(RemoteLedger),
      yield* Effect.serviceOption(MovementsStore)
    )

    /**
     * Settles `movement` through its cause. A charge is given the movement as claimed: what its
     * settlement locks besides the movement (the mandate) is named in it and never changes.
     */
    const settle = (movement: Movement.Movement, answer: Movement.Settling, by: Movement.SettledBy) => {
      switch (movement.cause) {
        case "mandate-charge":
          return Effect.asVoid(charges.settle(movement.id, answer, by, movement))
        case "invoice":
          return billing.settle(movement.id, answer, by)
        case "qr-payment":
          return Effect.asVoid(qrPayments.settle(movement.id, answer, by))
        case "checkout":
          return Effect.asVoid(checkoutPayments.settle(movement.id, answer, by))
        case "refund":
          return Effect.asVoid(refunds.settle(movement.id, answer, by))
        default:
          return Effect.dieMessage(`no settlement for a ${movement.cause} movement`)
      }
    }

    /** One look at a claimed movement, outside any transaction. */
    const look = (movement: Movement.Movement): Effect.Effect<void, ServiceUnavailable> =>
      Effect.gen(function* () {
        if (remote === undefined) return
        const { ledger } = remote
        const asked = yield* ledger.status(movement.id)
        const step = Movement.nextStep(movement, asked, yield* DateTime.now, ledger.cancelAfter)
        const answered =
          step._tag === "settle"
            ? { answer: step.answer as Movement.Answer, by: "status" as const, counted: "settled" as const }
            : step._tag === "resend"
              ? { answer: yield* ledger.send(movement), by: "resend" as const, counted: "resent" as const }
              : step._tag === "cancel"
                ? {
                    answer: yield* ledger.cancel(movement.id),
                    by: "cancel" as const,
                    counted: "cancelled" as const
                  }
                : undefined
        if (answered === undefined || answered.answer._tag === "unknown")
          return yield* Counters.count(Looks, "waiting")
        yield* settle(movement, answered.answer, answered.by)
        yield* Counters.count(Looks, answered.counted)
      })

    /** A batch: claimed and postponed in one transaction, then looked at side by side. */
    const round = (batch: number) =>
      Effect.gen(function* () {
        if (remote === undefined) return 0
        const { movements } = remote
        const claimed = yield* tx.withTransaction(
          Effect.gen(function* () {
            const now = yield* DateTime.now
            const due = yield* movements.claimDue(now, batch)
            yield* Effect.forEach(due, (m) => movements.update(Movement.postpone(m, now)), { discard: true })
            return due
          })
        )
        // One movement's trouble (its cause's database write failing) must not hold the others back.
        yield* Effect.forEach(
          claimed,
          (m) =>
            Effect.catchAll(look(m), (e) =>
              Effect.logWarning(`wallet resolver: movement ${m.id}: ${e.message}`)
            ),
          { concurrency: Concurrency, discard: true }
        )
        return claimed.length
      })

    /** Looks at every movement due, a batch at a time; returns how many it looked at. */
    const runDue = (batch: number = Work.Batch) => Work.inBatches(batch, round(batch))

    const nextDueAt = remote === undefined ? Effect.succeed(undefined) : remote.movements.nextDueAt

    const job = Work.job("wallet-resolver", runDue, nextDueAt)

    return { runDue, job } as const
  })
}) {}
