/**
 * The renewal engine's working state: one subscription as a batch carries it, the attempts in flight, and
 * what a transaction's steps leave for the next (`Billing`, and `RenewalMovements` where the money lives in
 * the wallet provider's core). The decisions are `Subscription`'s.
 */
import { Effect } from "effect"
import * as Counters from "../kernel/Counters.js"
import type * as Movement from "../wallet/Movement.js"
import type * as Invoice from "./Invoice.js"
import type * as Subscription from "./Subscription.js"

/**
 * Renewal attempts once committed: `paid`; `failed`, a retry is scheduled; `ended`, the last retry
 * missed and the subscription ends; `voided`, it was cancelled while the attempt ran.
 */
export const Renewals = Counters.counter({
  name: "laari_renewals_total",
  description: "Subscription renewal attempts by outcome: paid, failed (a retry follows), ended, voided",
  label: "outcome",
  values: ["paid", "failed", "ended", "voided"]
})

export type RenewalOutcome = (typeof Renewals.values)[number]

/** Counts a committed transaction's `outcomes`. */
export const count = (outcomes: ReadonlyArray<RenewalOutcome>) =>
  Effect.forEach(outcomes, (o) => Counters.count(Renewals, o), { discard: true })

/**
 * One subscription in a batch: where it stands, and the invoices its steps changed. Its rows are written
 * once, when the batch's decisions are all taken: in one transaction a row written twice would cost a
 * round trip (`WriteBehind` sends a second write of a row separately).
 */
export interface Renewal {
  sub: Subscription.Subscription
  latest: Invoice.Invoice | undefined
  /** By id, in the order first touched; `isNew` for an invoice opened here (inserted, not updated). */
  readonly invoices: Map<string, { invoice: Invoice.Invoice; readonly isNew: boolean }>
  steps: number
  readonly trail: Array<string>
}

/** A `CHARGING` invoice whose transfer comes next, in a later transaction; `fresh` when its attempt began in this run. */
export interface Attempt {
  readonly subscriptionId: string
  readonly invoiceId: string
  readonly attemptCount: number
  readonly fresh: boolean
  readonly steps: number
}

/** A balance check taken by `next`, made once the batch's decisions are taken. */
export interface Warning {
  readonly sub: Subscription.Subscription
  readonly step: Extract<Subscription.Step, { readonly _tag: "WarnBalance" }>
}

/**
 * What a transaction's steps left once it commits: attempts to charge in the built-in ledger, movements
 * committed pending to send to the core, and the outcomes settled there, to count.
 */
export interface Progress {
  readonly attempts: Array<Attempt>
  readonly sends: Array<Movement.Movement>
  readonly outcomes: Array<RenewalOutcome>
}

export const progress = (): Progress => ({ attempts: [], sends: [], outcomes: [] })

export const renewal = (
  sub: Subscription.Subscription,
  latest: Invoice.Invoice | undefined,
  steps = 0
): Renewal => ({
  sub,
  latest,
  invoices: new Map(),
  steps,
  trail: []
})

/** `invoice`, now the subscription's latest, to be written with the batch. */
export const touch = (r: Renewal, invoice: Invoice.Invoice, isNew = false) => {
  r.invoices.set(invoice.id, { invoice, isNew: r.invoices.get(invoice.id)?.isNew ?? isNew })
  r.latest = invoice
}

/** What an attempt came to, from its outcome and the invoice after it (`Subscription.afterAttempt`). */
export const outcome = (o: Subscription.Outcome, after: Invoice.Invoice | undefined): RenewalOutcome =>
  o._tag === "Paid"
    ? "paid"
    : after?.status === "VOID"
      ? "voided"
      : after?.status === "FAILED"
        ? "ended"
        : "failed"
