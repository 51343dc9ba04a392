/**
 * The renewal engine: opens each cycle, charges it, retries misses on the schedule, and ends
 * subscriptions, all by itself. Decisions are `Subscription.next` and
 * `Subscription.afterAttempt`; this module only loads, applies and writes.
 *
 * Claims use `FOR UPDATE SKIP LOCKED` and a short lease, so any number of workers can run side by side.
 * Where the wallet's transfers join the transaction (a ledger in the same database), a claimed batch is
 * advanced, charged and written in one transaction, each row once, so a renewal costs a few statements
 * per hundred subscriptions and a crash leaves nothing half-done. Otherwise a claimed batch is advanced
 * in one transaction and its attempts charged in the next: an attempt commits `CHARGING` before its
 * transfer. Either way the transfer's id is the invoice's id and attempt number, so an attempt left
 * `CHARGING` (by a crash, or by an earlier version) is resolved by repeating it, never by moving money
 * twice. The `(subscription, period key)` constraint makes a cycle chargeable once. Where the money lives
 * in the wallet provider's core, an attempt commits its movement pending with `CHARGING`, and the core's
 * answer settles it in a transaction of its own (`RenewalMovements`).
 */
import { DateTime, Effect, Either } from "effect"
import type { ServiceUnavailable } from "../kernel/Errors.js"
import * as Calendar from "../kernel/Calendar.js"
import { Crypto } from "../kernel/Crypto.js"
import * as Fees from "../kernel/Fees.js"
import * as Invoice from "./Invoice.js"
import { display, Laari } from "../kernel/Money.js"
import { Notifications } from "../kernel/Notifications.js"
import { InvoicesStore, SubscriptionsStore } from "./BillingStore.js"
import { MerchantsStore, registeredMerchant } from "../directory/MerchantsStore.js"
import * as Subscription from "./Subscription.js"
import { Subscriptions } from "./Subscriptions.js"
import { Wallet } from "../wallet/Wallet.js"
import type * as Movement from "../wallet/Movement.js"
import { RemoteLedger, remoteOf } from "../wallet/RemoteLedger.js"
import { type Attempt, type Progress, type Renewal, type Warning, renewal, touch } from "./Renewal.js"
import * as Renewals from "./Renewal.js"
import * as RenewalMovements from "./RenewalMovements.js"
import * as Work from "../kernel/Work.js"
import * as Telemetry from "../kernel/Telemetry.js"
import { MovementsStore } from "../wallet/WalletStore.js"
import { Transactor } from "../kernel/Transactor.js"

/** How long a claim keeps other workers off a subscription; a crashed worker's claim lapses after it. */
export const LeaseSeconds = 60
/** A safety net: no subscription needs more steps than this in one go. */
const MaxStepsPerSubscription = 64

/** Claim transactions a worker runs side by side (each claims a batch; `SKIP LOCKED` keeps them apart). */
export const RenewalConcurrency = 2

export { type RenewalOutcome, Renewals } from "./Renewal.js"

const defect = (what: string) => Effect.dieMessage(`renewal engine: ${what}`)

export class Billing extends Effect.Service<Billing>()("laari/Billing", {
  effect: Effect.gen(function* () {
    const tx = yield* Transactor
    const store = yield* SubscriptionsStore
    const invoices = yield* InvoicesStore
    const merchants = yield* MerchantsStore
    const wallet = yield* Wallet
    const notifications = yield* Notifications
    const crypto = yield* Crypto
    const { announce } = yield* Subscriptions
    const remote = remoteOf(
      yield* Effect.serviceOption(RemoteLedger),
      yield* Effect.serviceOption(MovementsStore)
    )
    const core =
      remote === undefined
        ? undefined
        : RenewalMovements.make(remote, { tx, store, invoices, merchants, crypto })
    /** Whether this subscription's money lives in the core. */
    const inCore = (sub: Subscription.Subscription) => core?.handles(sub.environment) === true

    const lease = (now: DateTime.Utc) => DateTime.add(now, { seconds: LeaseSeconds })

    const notify = (
      sub: Subscription.Subscription,
      kind: "balance_warning" | "payment_failed",
      title: string,
      body: string,
      data: Record<string, unknown>,
      now: DateTime.Utc
    ) =>
      Effect.flatMap(crypto.uuid, (id) =>
        notifications.send({
          id,
          customerId: sub.customerId,
          environment: sub.environment,
          kind,
          title,
          body,
          data,
          createdAt: now
        })
      )

    /** A transition's rows into the batch, and its events out. */
    const apply = (r: Renewal, change: Subscription.Change, now: DateTime.Utc) => {
      if (change.invoice !== undefined) touch(r, change.invoice)
      r.sub = change.subscription
      return announce(change, now, r.latest)
    }

    /**
     * Takes every step `next` has for the subscription at `now`, up to an attempt: its
     * transfer comes in a later transaction, after the attempt has committed `CHARGING`.
     */
    const advance = (r: Renewal, now: DateTime.Utc, warnings: Array<Warning>) =>
      Effect.gen(function* () {
        for (;;) {
          if (r.steps++ >= MaxStepsPerSubscription)
            return yield* defect(`subscription ${r.sub.id} did not settle: ${r.trail.slice(-6).join(", ")}`)
          const next = Subscription.next(r.sub, r.latest, now)
          r.trail.push(next._tag)
          switch (next._tag) {
            case "Nothing":
              return undefined
            case "OpenNextPeriod": {
              const id = Invoice.InvoiceId.make(yield* crypto.uuid)
              const opened = Subscription.openNextPeriod(r.sub, r.latest, now, id)
              if (Either.isLeft(opened)) return yield* defect("next said to open a period that cannot open")
              touch(r, opened.right.invoice, true)
              r.sub = opened.right.subscription
              break
            }
            case "EndAtPeriodEnd": {
              const ended = Subscription.endAtPeriodEnd(r.sub, now)
              if (Either.isLeft(ended))
                return yield* defect("next said to end a subscription that is not due")
              yield* apply(r, ended.right, now)
              break
            }
            case "VoidInvoice": {
              const voided = Invoice.void(next.invoice, now)
              if (Either.isLeft(voided))
                return yield* defect("next said to void an invoice that is not pending")
              yield* apply(r, { subscription: r.sub, invoice: voided.right, events: [] }, now)
              break
            }
            case "WarnBalance":
              warnings.push({ sub: r.sub, step: next })
              r.sub = Subscription.markBalanceWarned(r.sub, next.periodIndex)
              break
            case "Attempt": {
              const started = Invoice.startAttempt(next.invoice, now)
              if (Either.isLeft(started))
                return yield* defect("next said to attempt an invoice that is not due")
              touch(r, started.right)
              return {
                subscriptionId: r.sub.id,
                invoiceId: started.right.id,
                attemptCount: started.right.attemptCount,
                fresh: true,
                steps: r.steps
              }
            }
            case "ResumeAttempt":
              return {
                subscriptionId: r.sub.id,
                invoiceId: next.invoice.id,
                attemptCount: next.invoice.attemptCount,
                fresh: false,
                steps: r.steps
              }
          }
        }
      })

    /** Locks these payers' wallets in one go, where the wallet can (`prepare`); else each transfer locks its own. */
    const lockPayers = (customerIds: ReadonlyArray<Subscription.Subscription["customerId"]>) =>
      wallet.prepare === undefined ? Effect.void : wallet.prepare(customerIds)

    /**
     * The balance warnings the batch's steps took, each payer's wallet read once the lot is locked. Where
     * the money lives in the wallet provider's core none is given: the connector protocol reads no
     * balance, and laari's own wallet rows there are not the customer's money.
     */
    const warn = (taken: ReadonlyArray<Warning>, now: DateTime.Utc) =>
      Effect.gen(function* () {
        const warnings = taken.filter((w) => !inCore(w.sub))
        if (warnings.length === 0) return
        yield* lockPayers(warnings.map((w) => w.sub.customerId))
        for (const { sub, step } of warnings) {
          const payer = yield* wallet.payer(sub.customerId)
          if (payer !== undefined && payer.balance < step.amount)
            yield* notify(
              sub,
              "balance_warning",
              `Top up for ${sub.planName}`,
              `${sub.planName} renews at ${Calendar.formatMaldives(step.renewsAt)} for ${display(step.amount)}, and your balance of ${display(payer.balance)} will not cover it.`,
              {
                subscription_id: sub.id,
                amount: step.amount,
                renews_at: Calendar.unixSeconds(step.renewsAt),
                plan_name: sub.planName
              },
              now
            )
        }
      })

    /**
     * An attempt where the money lives in the core, in its transaction: its movement committed pending
     * (into `progress.sends`, sent once this commits) or left to the one pending; one that ends here (no
     * wallet in the core) is recorded and the steps after it taken. Whether an attempt is in flight.
     */
    const begin = (
      r: Renewal,
      attempt: Attempt,
      now: DateTime.Utc,
      warnings: Array<Warning>,
      progress: Progress
    ): Effect.Effect<boolean, ServiceUnavailable> =>
      Effect.gen(function* () {
        for (let current: Attempt | undefined = attempt; current !== undefined; ) {
          const invoice = r.latest
          if (core === undefined || invoice?.id !== current.invoiceId || invoice.status !== "CHARGING")
            return yield* defect(`subscription ${r.sub.id} lost its attempt`)
          const begun = yield* core.begin(r.sub, invoice, current, now)
          if (begun._tag === "send") progress.sends.push(begun.movement)
          if (begun._tag !== "settled") return true
          const merchant = yield* registeredMerchant(merchants, r.sub.merchantId)
          progress.outcomes.push(yield* record(r, invoice, begun.outcome, merchant, now))
          current = yield* advance(r, now, warnings)
        }
        return false
      })

    /**
     * Advances each subscription, takes the warnings, and writes each one's rows once: leased while an
     * attempt is in flight, else due when `next` next has work. Returns the attempts to make here, and
     * the movements to send to the core.
     */
    const settle = (batch: ReadonlyArray<Renewal>, now: DateTime.Utc) =>
      Effect.gen(function* () {
        const warnings: Array<Warning> = []
        const progress = Renewals.progress()
        for (const r of batch) {
          const attempt = yield* advance(r, now, warnings)
          let inFlight = attempt !== undefined
          if (attempt !== undefined && inCore(r.sub))
            inFlight = yield* begin(r, attempt, now, warnings, progress)
          else if (attempt !== undefined) progress.attempts.push(attempt)
          yield* write(r, inFlight ? lease(now) : undefined)
        }
        yield* warn(warnings, now)
        return progress
      })

    /** A renewal's rows, each once: leased `until` while an attempt is in flight, else due when `next` next has work. */
    const write = (r: Renewal, until: DateTime.Utc | undefined) =>
      Effect.gen(function* () {
        for (const { invoice, isNew } of r.invoices.values())
          yield* isNew ? invoices.insert(invoice) : invoices.update(invoice)
        yield* store.update(r.sub, until ?? Subscription.nextDueAt(r.sub, r.latest) ?? null)
      })

    /** The latest invoice of each subscription, by subscription id. */
    const latestBySubscription = (ids: ReadonlyArray<string>) =>
      Effect.map(
        invoices.latestOf(ids),
        (found) => new Map(found.map((i) => [i.subscriptionId as string, i]))
      )

    /** Up to `batch` subscriptions due at `now`, locked, each with its latest invoice. */
    const claimDue = (now: DateTime.Utc, batch: number) =>
      Effect.gen(function* () {
        const due = yield* store.claimDue(now, batch)
        const latest = yield* latestBySubscription(due.map((s) => s.id))
        return due.map((s) => renewal(s, latest.get(s.id)))
      })

    /** A claim: up to `batch` due subscriptions, advanced to their attempts, in one transaction. */
    const claim = (batch: number) =>
      tx.withTransaction(
        Effect.gen(function* () {
          const now = yield* DateTime.now
          const renewals = yield* claimDue(now, batch)
          const progress = yield* settle(renewals, now)
          return { claimed: renewals.length, progress }
        })
      )

    /**
     * The transfers of `attempts`, their outcomes, and every step after them, in one transaction under
     * the subscriptions' locks and their payers' (taken in one go where the wallet can). An attempt
     * another worker resolved first is left alone. Returns the attempts the steps after them began, and
     * the outcomes, counted by `chargeAll` once the transaction has committed.
     */
    const chargeBatch = (attempts: ReadonlyArray<Attempt>) =>
      tx.withTransaction(
        Effect.gen(function* () {
          const now = yield* DateTime.now
          const byId = new Map(attempts.map((a) => [a.subscriptionId, a]))
          const subs = yield* store.lockMany([...byId.keys()])
          const latest = yield* latestBySubscription(subs.map((s) => s.id))
          const batch: Array<readonly [Renewal, Attempt, Invoice.Invoice]> = []
          for (const sub of subs) {
            const attempt = byId.get(sub.id)!
            const invoice = latest.get(sub.id)
            if (
              invoice?.id === attempt.invoiceId &&
              invoice.status === "CHARGING" &&
              invoice.attemptCount === attempt.attemptCount
            )
              batch.push([renewal(sub, invoice, attempt.steps), attempt, invoice])
          }
          yield* lockPayers(batch.map(([r]) => r.sub.customerId))
          const outcomes: Array<Renewals.RenewalOutcome> = []
          for (const [r, attempt, invoice] of batch) outcomes.push(yield* charge(r, attempt, invoice, now))
          const next = yield* settle(
            batch.map(([r]) => r),
            now
          )
          return { ...next, outcomes: [...outcomes, ...next.outcomes] }
        })
      )

    const chargeAll = (attempts: ReadonlyArray<Attempt>) =>
      Effect.tap(chargeBatch(attempts), (p) => Renewals.count(p.outcomes))

    /**
     * Where the wallet's transfers join the transaction (`joinsTransaction`): a claim and its attempts in
     * one transaction. Each subscription is advanced to its attempt, the payers of the attempts and the
     * warnings are locked in one go, each attempt is charged and its subscription advanced again (a late
     * one may have more cycles), and each row is written once, at the end. A crash rolls all of it back,
     * so no attempt is ever left `CHARGING`, and the rows are not written twice as two transactions do.
     */
    const claimAndCharge = (batch: number) =>
      tx.withTransaction(
        Effect.gen(function* () {
          const now = yield* DateTime.now
          const renewals = yield* claimDue(now, batch)
          const warnings: Array<Warning> = []
          const progress = Renewals.progress()
          // Attempts in the core are not charged in this transaction: in flight after it, leased.
          const leased = new Set<Renewal>()
          let attempts: Array<readonly [Renewal, Attempt]> = []
          for (const r of renewals) {
            const attempt = yield* advance(r, now, warnings)
            if (attempt === undefined) continue
            if (!inCore(r.sub)) attempts.push([r, attempt])
            else if (yield* begin(r, attempt, now, warnings, progress)) leased.add(r)
          }
          yield* lockPayers([
            ...attempts.map(([r]) => r.sub.customerId),
            ...warnings.map((w) => w.sub.customerId)
          ])
          // Warned as a claim on its own would: before the batch's charges.
          yield* warn(warnings.splice(0), now)
          const outcomes = progress.outcomes
          while (attempts.length > 0) {
            const next: Array<readonly [Renewal, Attempt]> = []
            for (const [r, attempt] of attempts) {
              const invoice = r.latest
              if (invoice?.id !== attempt.invoiceId || invoice.status !== "CHARGING")
                return yield* defect(`subscription ${r.sub.id} lost its attempt`)
              outcomes.push(yield* charge(r, attempt, invoice, now))
              const again = yield* advance(r, now, warnings)
              if (again !== undefined) next.push([r, again])
            }
            if (next.length > 0) yield* lockPayers(next.map(([r]) => r.sub.customerId))
            attempts = next
          }
          for (const r of renewals) yield* write(r, leased.has(r) ? lease(now) : undefined)
          yield* warn(warnings, now)
          return { claimed: renewals.length, progress }
        })
      )

    /** One attempt's transfer and its outcome, into the batch; returns the outcome as counted. */
    const charge = (r: Renewal, attempt: Attempt, invoice: Invoice.Invoice, now: DateTime.Utc) =>
      Effect.gen(function* () {
        const sub = r.sub
        const merchant = yield* registeredMerchant(merchants, sub.merchantId)
        const split = Fees.split(invoice.amount, merchant.feeBps)
        const outcome: Subscription.Outcome = yield* wallet
          .transfer({
            id: Invoice.transferId(invoice),
            environment: sub.environment,
            payer: sub.customerId,
            merchant: sub.merchantId,
            amount: Laari(invoice.amount),
            fee: split.fee,
            memo: `${merchant.name}: ${sub.planName} (${invoice.periodKey})`,
            // Begun in this run and still `CHARGING` under the lock: no transfer can have this id yet.
            fresh: attempt.fresh
          })
          .pipe(
            Effect.map((receipt) => Subscription.paid(receipt.id)),
            Effect.catchTag("TransferRefused", (e) => Effect.succeed(Subscription.missed(e.reason)))
          )
        return yield* record(r, invoice, outcome, merchant, now)
      })

    /** How an attempt ended, into the batch: the invoice, its events, the notice of a miss; the outcome as counted. */
    const record = (
      r: Renewal,
      invoice: Invoice.Invoice,
      outcome: Subscription.Outcome,
      merchant: { readonly name: string },
      now: DateTime.Utc
    ) =>
      Effect.gen(function* () {
        const sub = r.sub
        const change = Subscription.afterAttempt(sub, invoice, outcome, now)
        if (Either.isLeft(change))
          return yield* defect("an attempt ended on an invoice that was not charging")
        yield* apply(r, change.right, now)
        const after = change.right.invoice
        // A notice on every missed attempt, the fourth included (its cancellation notice follows).
        if (outcome._tag === "Missed" && after !== undefined && sub.status !== "CANCELLED")
          yield* notify(
            sub,
            "payment_failed",
            `${merchant.name} could not take ${display(invoice.amount)}`,
            `The payment for ${sub.planName} could not be taken (${after.failureReason}).${after.nextRetryAt === null ? "" : ` We will try again at ${Calendar.formatMaldives(after.nextRetryAt)}.`}`,
            {
              subscription_id: sub.id,
              invoice_id: invoice.id,
              attempt_count: after.attemptCount,
              failure_reason: after.failureReason,
              amount: invoice.amount,
              merchant_name: merchant.name,
              plan_name: sub.planName
            },
            now
          )
        return Renewals.outcome(outcome, after)
      })

    /** One claim and its attempts to the end (a late subscription may need several rounds). */
    const round = (batch: number) =>
      Effect.gen(function* () {
        const { claimed, progress } = yield* wallet.joinsTransaction === true
          ? claimAndCharge(batch)
          : claim(batch)
        yield* Renewals.count(progress.outcomes)
        yield* drain({ ...progress, outcomes: [] })
        return claimed
      })

    /** A transaction's leftovers to the end: attempts charged here, movements sent to the core. */
    const drain = (progress: Progress) =>
      core !== undefined
        ? core.drain(engine, progress)
        : Effect.gen(function* () {
            let pending: ReadonlyArray<Attempt> = progress.attempts
            while (pending.length > 0) pending = (yield* chargeAll(pending)).attempts
          })

    /** An attempt's outcome from the core, on its subscription (locked), and the steps after it. */
    const resume = (
      sub: Subscription.Subscription,
      invoice: Invoice.Invoice,
      outcome: Subscription.Outcome,
      now: DateTime.Utc
    ) =>
      Effect.gen(function* () {
        const r = renewal(sub, invoice)
        const merchant = yield* registeredMerchant(merchants, sub.merchantId)
        const settled = yield* record(r, invoice, outcome, merchant, now)
        const next = yield* settle([r], now)
        return { ...next, outcomes: [settled, ...next.outcomes] }
      })

    const engine: RenewalMovements.Engine = { resume, chargeAll }

    /** The core's answer to a renewal's movement (the resolver's), settled once, and what it began sent. */
    const settleMovement = (movementId: string, answer: Movement.Settling, by: Movement.SettledBy) =>
      core === undefined
        ? Effect.dieMessage("no wallet connector")
        : Effect.flatMap(core.settle(engine, movementId, answer, by), (p) => core.drain(engine, p))

    /**
     * Claims due subscriptions in batches and renews them; returns how many it claimed. `concurrency`
     * claims run side by side, each over its own batch.
     */
    const renewDue = (batch: number, concurrency: number) =>
      Effect.map(
        Effect.all(
          Array.from({ length: concurrency }, () => Work.inBatches(batch, round(batch))),
          { concurrency }
        ),
        (totals) => totals.reduce((a, b) => a + b, 0)
      )

    const runDue = Telemetry.fn("Billing.runDue")(
      (batch: number = Work.Batch, concurrency: number = RenewalConcurrency) => renewDue(batch, concurrency)
    )

    const renewalJob = Work.job("renewals", (batch) => renewDue(batch, RenewalConcurrency), store.nextDueAt)

    return { runDue, renewalJob, settle: settleMovement } as const
  })
}) {}
