/**
 * The renewal engine: opens each cycle, charges it, retries misses on the schedule, and ends
 * subscriptions, all by itself (DESIGN section 6). Decisions are `Subscription.next` and
 * `Subscription.afterAttempt`; this module only loads, applies and writes.
 *
 * Claims use `FOR UPDATE SKIP LOCKED` and a short lease, so any number of workers can run side by side.
 * An attempt commits `CHARGING` before its transfer; the transfer's id is the invoice's id and attempt
 * number, so an attempt left `CHARGING` by a crash is resolved by repeating it, never by moving money
 * twice. The `(subscription, period key)` constraint makes a cycle chargeable once.
 */
import { DateTime, Effect, Either } from "effect"
import * as Calendar from "./Calendar.js"
import { Crypto } from "./Crypto.js"
import * as Fees from "./Fees.js"
import * as Invoice from "./Invoice.js"
import { formatMvr, Laari } from "./Money.js"
import { Notifications } from "./Notifications.js"
import { InvoicesStore, Merchants, registeredMerchant, SubscriptionsStore, Transactor } from "./Store.js"
import * as Subscription from "./Subscription.js"
import { Subscriptions } from "./Subscriptions.js"
import { Wallet } from "./Wallet.js"
import type * as Work from "./Work.js"

/** How long a claim keeps other workers off a subscription; a crashed worker's claim lapses after it. */
export const LeaseSeconds = 60
/** A safety net: no subscription needs more steps than this in one go. */
const MaxStepsPerSubscription = 64

/** Claimed subscriptions a worker processes at once: enough to keep a connection pool busy. */
export const RenewalConcurrency = 8

type Progress =
  | { readonly _tag: "Done" }
  | { readonly _tag: "Again"; readonly after: Subscription.Step["_tag"] }
  | { readonly _tag: "Charge"; readonly invoiceId: string }
const done: Progress = { _tag: "Done" }
const again = (after: Subscription.Step["_tag"]): Progress => ({ _tag: "Again", after })

const defect = (what: string) => Effect.dieMessage(`renewal engine: ${what}`)

export class Billing extends Effect.Service<Billing>()("laari/Billing", {
  effect: Effect.gen(function* () {
    const tx = yield* Transactor
    const store = yield* SubscriptionsStore
    const invoices = yield* InvoicesStore
    const merchants = yield* Merchants
    const wallet = yield* Wallet
    const notifications = yield* Notifications
    const crypto = yield* Crypto
    const { record } = yield* Subscriptions

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

    /** One decision for one subscription, in its own transaction under the subscription's lock. */
    const step = (subscriptionId: string) =>
      tx.withTransaction(
        Effect.gen(function* () {
          const now = yield* DateTime.now
          const sub = yield* store.lockById(subscriptionId)
          if (sub === undefined) return done
          const latest = yield* invoices.latest(sub.id)
          const next = Subscription.next(sub, latest, now)
          switch (next._tag) {
            case "Nothing":
              yield* store.update(sub, Subscription.nextDueAt(sub, latest) ?? null)
              return done
            case "OpenNextPeriod": {
              const opened = Subscription.openNextPeriod(
                sub,
                latest,
                now,
                Invoice.InvoiceId.make(yield* crypto.uuid)
              )
              if (Either.isLeft(opened)) return yield* defect("next said to open a period that cannot open")
              yield* invoices.insert(opened.right.invoice)
              yield* store.update(opened.right.subscription, now)
              return again("OpenNextPeriod")
            }
            case "EndAtPeriodEnd": {
              const ended = Subscription.endAtPeriodEnd(sub, now)
              if (Either.isLeft(ended))
                return yield* defect("next said to end a subscription that is not due")
              yield* record(ended.right, now, latest)
              return again("EndAtPeriodEnd")
            }
            case "VoidInvoice": {
              const voided = Invoice.void(next.invoice, now)
              if (Either.isLeft(voided))
                return yield* defect("next said to void an invoice that is not pending")
              yield* record({ subscription: sub, invoice: voided.right, events: [] }, now, latest)
              return again("VoidInvoice")
            }
            case "WarnBalance": {
              const payer = yield* wallet.payer(sub.customerId)
              if (payer !== undefined && payer.balance < next.amount)
                yield* notify(
                  sub,
                  "balance_warning",
                  `Top up for ${sub.planName}`,
                  `${sub.planName} renews at ${Calendar.formatMaldives(next.renewsAt)} for MVR ${formatMvr(next.amount)}, and your balance of MVR ${formatMvr(payer.balance)} will not cover it.`,
                  {
                    subscription_id: sub.id,
                    amount: next.amount,
                    renews_at: Calendar.unixSeconds(next.renewsAt)
                  },
                  now
                )
              yield* record(
                {
                  subscription: Subscription.markBalanceWarned(sub, next.periodIndex),
                  invoice: undefined,
                  events: []
                },
                now,
                latest
              )
              return again("WarnBalance")
            }
            case "Attempt": {
              const started = Invoice.startAttempt(next.invoice, now)
              if (Either.isLeft(started))
                return yield* defect("next said to attempt an invoice that is not due")
              yield* invoices.update(started.right)
              yield* store.update(sub, lease(now))
              return { _tag: "Charge", invoiceId: started.right.id } as const
            }
            case "ResumeAttempt":
              yield* store.update(sub, lease(now))
              return { _tag: "Charge", invoiceId: next.invoice.id } as const
          }
        })
      )

    /** The transfer of a `CHARGING` invoice and its outcome, in one transaction. */
    const charge = (subscriptionId: string, invoiceId: string) =>
      tx.withTransaction(
        Effect.gen(function* () {
          const now = yield* DateTime.now
          const sub = yield* store.lockById(subscriptionId)
          const invoice = sub === undefined ? undefined : yield* invoices.latest(sub.id)
          // Another worker resolved it first.
          if (
            sub === undefined ||
            invoice === undefined ||
            invoice.id !== invoiceId ||
            invoice.status !== "CHARGING"
          )
            return
          const merchant = yield* registeredMerchant(merchants, sub.merchantId)
          const split = Fees.split(invoice.amount, merchant.feeBps)
          const outcome = yield* wallet
            .transfer({
              id: Invoice.transferId(invoice),
              environment: sub.environment,
              payer: sub.customerId,
              merchant: sub.merchantId,
              amount: Laari(invoice.amount),
              fee: split.fee,
              memo: `${merchant.name}: ${sub.planName} (${invoice.periodKey})`
            })
            .pipe(
              Effect.map((receipt) => Subscription.paid(receipt.id)),
              Effect.catchTag("TransferRefused", (e) => Effect.succeed(Subscription.missed(e.reason)))
            )
          const change = Subscription.afterAttempt(sub, invoice, outcome, now)
          if (Either.isLeft(change))
            return yield* defect("an attempt ended on an invoice that was not charging")
          yield* record(change.right, now, invoice)
          const after = change.right.invoice
          // A notice on every missed attempt, the fourth included (its cancellation notice follows).
          if (outcome._tag === "Missed" && after !== undefined && sub.status !== "CANCELLED")
            yield* notify(
              sub,
              "payment_failed",
              `${merchant.name} could not take MVR ${formatMvr(invoice.amount)}`,
              `The payment for ${sub.planName} could not be taken (${after.failureReason}).${after.nextRetryAt === null ? "" : ` We will try again at ${Calendar.formatMaldives(after.nextRetryAt)}.`}`,
              {
                subscription_id: sub.id,
                invoice_id: invoice.id,
                attempt_count: after.attemptCount,
                failure_reason: after.failureReason
              },
              now
            )
        })
      )

    /** Every step a subscription has at the clock's now. */
    const process = (subscriptionId: string) =>
      Effect.gen(function* () {
        const trail: Array<string> = []
        for (let i = 0; i < MaxStepsPerSubscription; i++) {
          const progress = yield* step(subscriptionId)
          if (progress._tag === "Done") return
          trail.push(progress._tag === "Again" ? progress.after : "Charge")
          if (progress._tag === "Charge") yield* charge(subscriptionId, progress.invoiceId)
        }
        return yield* defect(`subscription ${subscriptionId} did not settle: ${trail.slice(-6).join(", ")}`)
      })

    /**
     * Claims due subscriptions in batches and processes each; returns how many it claimed. The claimed
     * subscriptions are leased to this worker, so up to `concurrency` of them are processed side by
     * side (a shared payer's wallet is locked by each charge in turn).
     */
    const runDue = (batch = 100, concurrency = RenewalConcurrency) =>
      Effect.gen(function* () {
        let total = 0
        for (;;) {
          const claimed = yield* tx.withTransaction(
            Effect.gen(function* () {
              const now = yield* DateTime.now
              const due = yield* store.claimDue(now, batch)
              yield* Effect.forEach(due, (s) => store.update(s, lease(now)), { discard: true })
              return due.map((s) => s.id)
            })
          )
          yield* Effect.forEach(claimed, process, { discard: true, concurrency })
          total += claimed.length
          if (claimed.length < batch) return total
        }
      })

    const renewalJob: Work.Job = { name: "renewals", runDue: runDue(), nextDueAt: store.nextDueAt }

    return { runDue, process, renewalJob } as const
  })
}) {}
