/**
 * A model-based test of one subscription driven only by the pure decisions (`Subscription.next`,
 * `afterAttempt`, `nextDueAt` and the transitions), the way the renewal engine will drive them, against a
 * small reference model written separately: its own calendar on plain `Date`, its own event loop over
 * the renewal, retry and warning moments, its own wallet.
 */
import { describe, expect, it } from "@effect/vitest"
import { DateTime, Either } from "effect"
import fc from "fast-check"
import * as Calendar from "../src/kernel/Calendar.js"
import * as CheckoutSession from "../src/billing/CheckoutSession.js"
import type { CustomerId, MerchantId } from "../src/kernel/Ids.js"
import * as Invoice from "../src/billing/Invoice.js"
import type { Laari } from "../src/kernel/Money.js"
import * as Subscription from "../src/billing/Subscription.js"
import * as Wallet from "../src/wallet/Wallet.js"

const HourMs = 3_600_000
const DayMs = 24 * HourMs
const utc = (ms: number) => DateTime.unsafeMake(ms)
const epoch = (t: DateTime.Utc) => DateTime.toEpochMillis(t)
const epochOrNull = (t: DateTime.Utc | null) => (t === null ? null : epoch(t))
const ok = <A, E>(e: Either.Either<A, E>): A => Either.getOrThrow(e)

type Initiator = "PAYER" | "MERCHANT" | "OPS"
type Crash = "none" | "before-transfer" | "after-transfer"

interface WalletState {
  balance: number
  frozen: boolean
  limit: number | null
}

interface Plan {
  readonly anchorMs: number
  readonly interval: Calendar.Interval
  readonly count: number
  readonly amount: number
  readonly wallet: WalletState
}

// -------------------------------------------------------------------------------------------------
// The reference model
// -------------------------------------------------------------------------------------------------

/** Maldives wall clock = UTC wall clock of `t + 5 h`; month starts clamp to the month's last day. */
const modelPeriodStart = (plan: Plan, n: number): number => {
  if (plan.interval === "WEEK") return plan.anchorMs + 7 * plan.count * n * DayMs
  const local = new Date(plan.anchorMs + 5 * HourMs)
  const months = local.getUTCFullYear() * 12 + local.getUTCMonth() + n * plan.count
  const year = Math.floor(months / 12)
  const month = months % 12
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate()
  const clamped = new Date(local)
  clamped.setUTCFullYear(year, month, Math.min(local.getUTCDate(), lastDay))
  return clamped.getTime() - 5 * HourMs
}

interface ModelInvoice {
  periodIndex: number
  status: Invoice.Status
  attempts: number
  reason: string | null
  paidAt: number | null
  nextRetryAt: number | null
}

interface Model {
  readonly plan: Plan
  now: number
  status: Subscription.Status
  initiator: string | null
  cancelledAt: number | null
  flag: boolean
  n: number
  warnedFor: number | null
  invoices: Array<ModelInvoice>
  /** The open cycle's schedule; `inFlight` once an attempt started and its outcome is not recorded. */
  open: { nextAt: number; lastAt: number; inFlight: { moved: boolean } | null } | null
  wallet: WalletState
  crash: Crash
  events: Array<string>
  warnings: Array<{ periodIndex: number; at: number }>
}

const retryHours = [12, 24, 48]

const modelRefusal = (m: Model): string | null =>
  m.wallet.frozen
    ? "wallet-frozen"
    : m.wallet.limit !== null && m.plan.amount > m.wallet.limit
      ? "blocked-by-rules"
      : m.wallet.balance < m.plan.amount
        ? "insufficient-balance"
        : null

/** Records the outcome of the open cycle's latest attempt. */
const modelSettle = (m: Model, refusal: string | null) => {
  const inv = m.invoices[m.invoices.length - 1]!
  const open = m.open!
  open.inFlight = null
  if (refusal === null) {
    Object.assign(inv, { status: "PAID", paidAt: m.now, reason: null, nextRetryAt: null })
    m.events.push("invoice.paid")
    if (m.status === "PAST_DUE") m.status = "ACTIVE"
    m.open = null
    return
  }
  inv.reason = refusal
  inv.nextRetryAt = null
  if (m.status === "CANCELLED") {
    inv.status = inv.attempts >= 4 ? "FAILED" : "VOID"
    m.open = null
  } else if (inv.attempts >= 4) {
    inv.status = "FAILED"
    m.open = null
    Object.assign(m, { status: "CANCELLED", initiator: "DUNNING", cancelledAt: m.now })
    m.events.push("invoice.payment_failed", "subscription.canceled")
  } else {
    open.nextAt = open.lastAt + retryHours[inv.attempts - 1]! * HourMs
    inv.status = "PENDING"
    inv.nextRetryAt = open.nextAt
    m.events.push("invoice.payment_failed")
    if (m.status === "ACTIVE") {
      m.status = "PAST_DUE"
      m.events.push("subscription.past_due")
    }
  }
}

/**
 * Runs everything due up to `now + ms`, in time order. Where an attempt crashes the engine is down for the
 * rest of the way: the clock still reaches the target, and the attempt is resolved at the next advance.
 */
const modelAdvance = (m: Model, ms: number) => {
  const target = m.now + ms
  for (;;) {
    if (m.open !== null) {
      if (m.open.inFlight !== null) {
        // The engine repeats the in-flight transfer: money that moved is not moved again.
        const refusal = m.open.inFlight.moved ? null : modelRefusal(m)
        if (!m.open.inFlight.moved && refusal === null) m.wallet.balance -= m.plan.amount
        modelSettle(m, refusal)
        continue
      }
      if (m.open.nextAt > target) break
      m.now = Math.max(m.now, m.open.nextAt)
      m.open.lastAt = m.now
      m.invoices[m.invoices.length - 1]!.attempts++
      m.invoices[m.invoices.length - 1]!.status = "CHARGING"
      m.invoices[m.invoices.length - 1]!.nextRetryAt = null
      if (m.crash === "before-transfer") {
        m.crash = "none"
        m.open.inFlight = { moved: false }
        break
      }
      const refusal = modelRefusal(m)
      if (refusal === null) m.wallet.balance -= m.plan.amount
      if (m.crash === "after-transfer") {
        m.crash = "none"
        m.open.inFlight = { moved: refusal === null }
        break
      }
      modelSettle(m, refusal)
      continue
    }
    if (m.status !== "ACTIVE") break
    const end = modelPeriodStart(m.plan, m.n + 1)
    if (!m.flag && m.warnedFor !== m.n + 1 && m.now < end) {
      const warnAt = end - 24 * HourMs
      if (warnAt > target) break
      m.now = Math.max(m.now, warnAt)
      if (m.wallet.balance < m.plan.amount) m.warnings.push({ periodIndex: m.n + 1, at: m.now })
      m.warnedFor = m.n + 1
      continue
    }
    if (end > target) break
    m.now = Math.max(m.now, end)
    if (m.flag) {
      Object.assign(m, { status: "CANCELLED", initiator: "MERCHANT", cancelledAt: m.now })
      m.events.push("subscription.canceled")
      break
    }
    m.n++
    m.invoices.push({
      periodIndex: m.n,
      status: "PENDING",
      attempts: 0,
      reason: null,
      paidAt: null,
      nextRetryAt: null
    })
    m.open = { nextAt: m.now, lastAt: m.now, inFlight: null }
  }
  m.now = target
}

/** The model's next moment of work, by its own reckoning; `undefined`: none ever. */
const modelNextDue = (m: Model): number | undefined => {
  if (m.open !== null) return m.open.inFlight !== null ? m.now : m.open.nextAt
  if (m.status !== "ACTIVE") return undefined
  const end = modelPeriodStart(m.plan, m.n + 1)
  return !m.flag && m.warnedFor !== m.n + 1 && m.now < end ? end - 24 * HourMs : end
}

// -------------------------------------------------------------------------------------------------
// The real system: the pure decisions, an engine loop and a simulated wallet
// -------------------------------------------------------------------------------------------------

interface Real {
  readonly anchor: DateTime.Utc
  now: number
  sub: Subscription.Subscription
  invoices: Array<Invoice.Invoice>
  wallet: WalletState
  crash: Crash
  /** Transfers that moved money, by transfer id. */
  transfers: Map<string, { at: number; amount: number; seq: number }>
  started: Array<{ transferId: string; seq: number }>
  events: Array<string>
  warnings: Array<{ periodIndex: number; at: number }>
  seq: number
  cancelSeq: number | null
  /** The period the subscription was set to end with, and when that was. */
  flagged: { periodIndex: number; seq: number } | null
  nextId: number
}

const customer = "c7a0b1f2-1111-4c5e-8a57-0b3fe4d0a111" as CustomerId
const uuid = (k: number) => `00000000-0000-4000-8000-${String(k).padStart(12, "0")}`

const account = (w: WalletState): Wallet.PayerAccount => ({
  customerId: customer,
  environment: "test",
  balance: w.balance as Laari,
  limit: w.limit as Laari | null,
  frozen: w.frozen,
  blockedByRules: false,
  timeZone: Calendar.MaldivesZone
})

/** The wallet port's contract: idempotent on the transfer id, a refusal moves nothing. */
const transfer = (r: Real, id: string, amount: number): Subscription.Outcome => {
  if (r.transfers.has(id)) return Subscription.paid(`payment:${id}`)
  const refusal = Wallet.decideTransfer(account(r.wallet), amount)
  if (refusal !== undefined) return Subscription.missed(refusal)
  r.wallet.balance -= amount
  r.transfers.set(id, { at: r.now, amount, seq: r.seq++ })
  return Subscription.paid(`payment:${id}`)
}

const apply = (r: Real, change: Subscription.Change) => {
  r.sub = change.subscription
  if (change.invoice !== undefined) {
    const k = r.invoices.findIndex((i) => i.id === change.invoice!.id)
    if (k === -1) r.invoices.push(change.invoice)
    else r.invoices[k] = change.invoice
  }
  r.events.push(...change.events)
}

/** The renewal engine at `r.now`: asks `next` until it says `Nothing`; stops where an attempt crashes. */
const runEngine = (r: Real): "quiet" | "crashed" => {
  for (let guard = 0; guard < 50; guard++) {
    const latest = r.invoices[r.invoices.length - 1]
    const now = utc(r.now)
    const step = Subscription.next(r.sub, latest, now)
    switch (step._tag) {
      case "Nothing":
        return "quiet"
      case "OpenNextPeriod":
        apply(r, ok(Subscription.openNextPeriod(r.sub, latest, now, uuid(r.nextId++) as Invoice.InvoiceId)))
        break
      case "EndAtPeriodEnd":
        apply(r, ok(Subscription.endAtPeriodEnd(r.sub, now)))
        break
      case "WarnBalance":
        if (r.wallet.balance < step.amount) r.warnings.push({ periodIndex: step.periodIndex, at: r.now })
        r.sub = Subscription.markBalanceWarned(r.sub, step.periodIndex)
        break
      case "VoidInvoice":
        apply(r, { subscription: r.sub, invoice: ok(Invoice.void(step.invoice, now)), events: [] })
        break
      case "Attempt": {
        const charging = ok(Invoice.startAttempt(step.invoice, now))
        apply(r, { subscription: r.sub, invoice: charging, events: [] })
        r.started.push({ transferId: Invoice.transferId(charging), seq: r.seq++ })
        if (r.crash === "before-transfer") {
          r.crash = "none"
          return "crashed"
        }
        const outcome = transfer(r, Invoice.transferId(charging), charging.amount)
        if (r.crash === "after-transfer") {
          r.crash = "none"
          return "crashed"
        }
        apply(r, ok(Subscription.afterAttempt(r.sub, charging, outcome, now)))
        break
      }
      case "ResumeAttempt": {
        const outcome = transfer(r, Invoice.transferId(step.invoice), step.invoice.amount)
        apply(r, ok(Subscription.afterAttempt(r.sub, step.invoice, outcome, now)))
        break
      }
    }
  }
  throw new Error("the engine did not settle")
}

/**
 * The controllable clock: stops at every moment `nextDueAt` names on the way to the target. A crashed
 * engine is down until the next advance, which starts by resolving what it left in flight.
 */
const realAdvance = (r: Real, ms: number) => {
  const target = r.now + ms
  for (let guard = 0; guard < 1000; guard++) {
    if (runEngine(r) === "crashed") {
      r.now = target
      return
    }
    const due = Subscription.nextDueAt(r.sub, r.invoices[r.invoices.length - 1])
    if (due === undefined || epoch(due) > target) break
    if (epoch(due) <= r.now) throw new Error(`nextDueAt ${DateTime.formatIso(due)} but nothing to do`)
    r.now = epoch(due)
  }
  r.now = target
  runEngine(r)
}

// -------------------------------------------------------------------------------------------------
// Commands
// -------------------------------------------------------------------------------------------------

type Cmd = fc.Command<Model, Real>

class Advance implements Cmd {
  constructor(readonly ms: number) {}
  check = () => true
  run(m: Model, r: Real) {
    modelAdvance(m, this.ms)
    realAdvance(r, this.ms)
    compare(m, r)
  }
  toString = () => `Advance(${(this.ms / DayMs).toFixed(2)} d)`
}

/**
 * Moves the clock to near the model's next moment of work (a little before or after it), so a wallet
 * change or a cancellation can land in between.
 */
class AdvanceNearNext implements Cmd {
  constructor(readonly offsetMs: number) {}
  check = () => true
  run(m: Model, r: Real) {
    const due = modelNextDue(m)
    new Advance(Math.max(0, (due ?? m.now) - m.now + this.offsetMs)).run(m, r)
  }
  toString = () => `AdvanceNearNext(${(this.offsetMs / HourMs).toFixed(2)} h)`
}

class SetWallet implements Cmd {
  constructor(readonly wallet: WalletState) {}
  check = () => true
  run(m: Model, r: Real) {
    m.wallet = { ...this.wallet }
    r.wallet = { ...this.wallet }
    compare(m, r)
  }
  toString = () => `SetWallet(${JSON.stringify(this.wallet)})`
}

class CancelNow implements Cmd {
  constructor(readonly by: Initiator) {}
  check = () => true
  run(m: Model, r: Real) {
    const result = Subscription.cancelNow(r.sub, this.by, utc(r.now), r.invoices[r.invoices.length - 1])
    if (m.status === "CANCELLED") expect(result).toEqual(Either.left("already-cancelled"))
    else {
      Object.assign(m, { status: "CANCELLED", initiator: this.by, cancelledAt: m.now, flag: false })
      m.events.push("subscription.canceled")
      if (m.open !== null && m.open.inFlight === null) {
        Object.assign(m.invoices[m.invoices.length - 1]!, { status: "VOID", nextRetryAt: null })
        m.open = null
      }
      apply(r, ok(result))
      r.cancelSeq = r.seq++
    }
    compare(m, r)
  }
  toString = () => `CancelNow(${this.by})`
}

class CancelAtPeriodEnd implements Cmd {
  check = () => true
  run(m: Model, r: Real) {
    const result = Subscription.cancelAtPeriodEnd(r.sub)
    if (m.status === "CANCELLED") expect(result).toEqual(Either.left("already-cancelled"))
    else if (m.status === "PAST_DUE") expect(result).toEqual(Either.left("not-active"))
    else {
      m.flag = true
      r.sub = ok(result)
      r.flagged ??= { periodIndex: r.sub.currentPeriodIndex, seq: r.seq++ }
    }
    compare(m, r)
  }
  toString = () => "CancelAtPeriodEnd"
}

class CrashNextAttempt implements Cmd {
  constructor(readonly when: Exclude<Crash, "none">) {}
  check = () => true
  run(m: Model, r: Real) {
    m.crash = this.when
    r.crash = this.when
  }
  toString = () => `CrashNextAttempt(${this.when})`
}

// -------------------------------------------------------------------------------------------------
// What must agree, and what must always hold
// -------------------------------------------------------------------------------------------------

const compare = (m: Model, r: Real) => {
  const s = r.sub
  expect(r.now).toBe(m.now)
  expect({
    status: s.status,
    initiator: s.cancellationInitiator,
    cancelledAt: epochOrNull(s.cancelledAt),
    cancelAtPeriodEnd: s.cancelAtPeriodEnd,
    n: s.currentPeriodIndex,
    start: epoch(s.currentPeriodStart),
    end: epoch(s.currentPeriodEnd),
    nextBillingAt: epochOrNull(s.nextBillingAt),
    balanceWarnedFor: s.balanceWarnedFor
  }).toEqual({
    status: m.status,
    initiator: m.initiator,
    cancelledAt: m.cancelledAt,
    cancelAtPeriodEnd: m.flag,
    n: m.n,
    start: modelPeriodStart(m.plan, m.n),
    end: modelPeriodStart(m.plan, m.n + 1),
    nextBillingAt: m.status === "CANCELLED" ? null : modelPeriodStart(m.plan, m.n + 1),
    balanceWarnedFor: m.warnedFor
  })
  expect(
    r.invoices.map((i) => ({
      periodIndex: i.periodIndex,
      status: i.status,
      attempts: i.attemptCount,
      reason: i.failureReason,
      paidAt: epochOrNull(i.paidAt),
      nextRetryAt: epochOrNull(i.nextRetryAt)
    }))
  ).toEqual(m.invoices)
  expect(r.events).toEqual(m.events)
  expect(r.warnings).toEqual(m.warnings)
  expect(r.wallet.balance).toBe(m.wallet.balance)
  invariants(r)
}

const invariants = (r: Real) => {
  const s = r.sub
  expect(s.billingCycleAnchor).toEqual(r.anchor)
  expect(s.pastDueSince !== null).toBe(s.status === "PAST_DUE")
  expect(s.nextBillingAt === null).toBe(s.status === "CANCELLED")
  // One invoice per cycle, so at most one PAID per period key; cycles in order; only the last one open.
  const keys = r.invoices.map((i) => i.periodKey)
  expect(new Set(keys).size).toBe(keys.length)
  expect(r.invoices.map((i) => i.periodIndex)).toEqual(r.invoices.map((_, k) => k))
  for (const i of r.invoices.slice(0, -1)) expect(Invoice.isOpen(i)).toBe(false)
  for (const i of r.invoices) {
    expect(i.attemptCount).toBeLessThanOrEqual(Invoice.MaxAttempts)
    expect(i.periodKey).toBe(Calendar.periodKey(i.periodStart))
  }
  // Every renewal paid is exactly one transfer that moved money, and no transfer moved money twice.
  // (or the one attempt in flight, after a crash).
  for (const i of r.invoices.slice(1))
    if (i.status === "PAID") expect(r.transfers.has(Invoice.transferId(i))).toBe(true)
  for (const id of r.transfers.keys()) {
    const i = r.invoices.find((inv) => Invoice.transferId(inv) === id)
    expect(i?.status === "PAID" || i?.status === "CHARGING").toBe(true)
  }
  for (const [id, t] of r.transfers) {
    // No attempt starts after a cancellation; a transfer after it only finishes an attempt begun before.
    if (r.cancelSeq !== null && t.seq > r.cancelSeq)
      expect(r.started.some((a) => a.transferId === id && a.seq < r.cancelSeq!)).toBe(true)
    // Nothing is charged for a period after the one the subscription was set to end with (that period's
    // own cycle may still be collected, late, if its attempt was in flight when the flag was set).
    if (r.flagged !== null && t.seq > r.flagged.seq)
      expect(r.invoices.find((i) => Invoice.transferId(i) === id)!.periodIndex).toBeLessThanOrEqual(
        r.flagged.periodIndex
      )
  }
  if (r.cancelSeq !== null) for (const a of r.started) expect(a.seq).toBeLessThan(r.cancelSeq)
}

// -------------------------------------------------------------------------------------------------

const wallet = (amount: number): fc.Arbitrary<WalletState> =>
  fc.record({
    balance: fc.oneof(
      fc.integer({ min: 0, max: 4 * amount }),
      fc.constantFrom(0, amount - 1, amount, 2 * amount),
      fc.constant(1000 * amount)
    ),
    frozen: fc.constantFrom(false, false, false, true),
    limit: fc.option(fc.constantFrom(amount - 1, amount, 10 * amount), { nil: null, freq: 4 })
  })

const MaldivesOffset = 5 * HourMs
const daysIn = (year: number, month0: number) => new Date(Date.UTC(year, month0 + 1, 0)).getUTCDate()

const plan: fc.Arbitrary<Plan> = fc
  .record({
    anchorMs: fc.oneof(
      fc.integer({ min: Date.UTC(2024, 0, 1), max: Date.UTC(2032, 0, 1) }),
      fc
        .record({
          year: fc.integer({ min: 2024, max: 2031 }),
          month0: fc.integer({ min: 0, max: 11 }),
          day: fc.integer({ min: 28, max: 31 }),
          time: fc.integer({ min: 0, max: DayMs - 1 })
        })
        .map(
          ({ year, month0, day, time }) =>
            Date.UTC(year, month0, Math.min(day, daysIn(year, month0))) + time - MaldivesOffset
        )
    ),
    span: fc.oneof(
      fc.record({
        interval: fc.constant("WEEK" as const),
        count: fc.oneof(fc.integer({ min: 1, max: 4 }), fc.integer({ min: 1, max: 52 }))
      }),
      fc.record({
        interval: fc.constant("MONTH" as const),
        count: fc.oneof(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 12 }))
      })
    ),
    amount: fc.integer({ min: 100, max: 500_000 })
  })
  .chain(({ anchorMs, span, amount }) =>
    wallet(amount).map((w) => ({ anchorMs, interval: span.interval, count: span.count, amount, wallet: w }))
  )

/** Mostly the clock moving and the wallet changing; an ending or a crash now and then. */
const commands = (amount: number) =>
  fc.commands(
    [
      fc.oneof(
        {
          weight: 12,
          arbitrary: fc
            .oneof(
              fc.integer({ min: 0, max: 40 * DayMs }),
              fc.constantFrom(12 * HourMs, 24 * HourMs, 36 * HourMs, 7 * DayMs),
              fc.integer({ min: 0, max: 6 * HourMs })
            )
            .map((ms): Cmd => new Advance(ms))
        },
        {
          weight: 12,
          arbitrary: fc
            .oneof(
              fc.constantFrom(0, -1, -24 * HourMs),
              fc.integer({ min: 0, max: 13 * HourMs }),
              fc.integer({ min: -30 * HourMs, max: 0 })
            )
            .map((ms): Cmd => new AdvanceNearNext(ms))
        },
        { weight: 8, arbitrary: wallet(amount).map((w): Cmd => new SetWallet(w)) },
        {
          weight: 1,
          arbitrary: fc
            .constantFrom<Initiator>("PAYER", "MERCHANT", "OPS")
            .map((by): Cmd => new CancelNow(by))
        },
        { weight: 1, arbitrary: fc.constant<Cmd>(new CancelAtPeriodEnd()) },
        {
          weight: 2,
          arbitrary: fc
            .constantFrom("before-transfer", "after-transfer" as const)
            .map((w): Cmd => new CrashNextAttempt(w))
        }
      )
    ],
    { maxCommands: 80, size: "+1" }
  )

const setup = (p: Plan): { model: Model; real: Real } => {
  const anchor = utc(p.anchorMs)
  const session = CheckoutSession.open(
    {
      id: uuid(9_000) as CheckoutSession.CheckoutSessionId,
      merchantId: uuid(9_001) as MerchantId,
      environment: "test",
      terms: {
        mode: "SUBSCRIPTION",
        reference: "plan-1",
        title: "Plan",
        description: null,
        returnUrl: null,
        amount: p.amount,
        price: { name: "Plan", amount: p.amount, interval: p.interval, intervalCount: p.count }
      }
    },
    DateTime.add(anchor, { minutes: -3 })
  )
  const a = ok(
    Subscription.activate(session, customer, anchor, {
      subscriptionId: uuid(9_002) as Subscription.SubscriptionId,
      invoiceId: uuid(0) as Invoice.InvoiceId,
      paymentId: "payment:checkout"
    })
  )
  const real: Real = {
    anchor,
    now: p.anchorMs,
    sub: a.subscription,
    invoices: [a.invoice],
    wallet: { ...p.wallet },
    crash: "none",
    transfers: new Map(),
    started: [],
    events: [...a.events],
    warnings: [],
    seq: 0,
    cancelSeq: null,
    flagged: null,
    nextId: 1
  }
  const model: Model = {
    plan: p,
    now: p.anchorMs,
    status: "ACTIVE",
    initiator: null,
    cancelledAt: null,
    flag: false,
    n: 0,
    warnedFor: null,
    invoices: [
      { periodIndex: 0, status: "PAID", attempts: 1, reason: null, paidAt: p.anchorMs, nextRetryAt: null }
    ],
    open: null,
    wallet: { ...p.wallet },
    crash: "none",
    events: ["subscription.activated", "invoice.paid", "checkout.session.completed"],
    warnings: []
  }
  return { model, real }
}

describe("one subscription under the renewal engine, against a reference model", () => {
  it("agrees on status, invoices, events, warnings and money under any clock, wallet and cancellations", () => {
    fc.assert(
      fc.property(
        plan.chain((p) => fc.tuple(fc.constant(p), commands(p.amount))),
        ([p, cmds]) => {
          fc.modelRun(() => setup(p), cmds)
        }
      ),
      { numRuns: 400 }
    )
  }, 120_000)

  it("a year of a well-funded monthly plan: twelve renewals, each paid at its first attempt", () => {
    const p: Plan = {
      anchorMs: Date.UTC(2026, 0, 31, 5),
      interval: "MONTH",
      count: 1,
      amount: 25_000,
      wallet: { balance: 1_000_000, frozen: false, limit: null }
    }
    const { model, real } = setup(p)
    new Advance(366 * DayMs).run(model, real)
    expect(real.invoices.map((i) => [i.periodKey, i.status, i.attemptCount])).toEqual(
      [
        "2026-01-31",
        "2026-02-28",
        "2026-03-31",
        "2026-04-30",
        "2026-05-31",
        "2026-06-30",
        "2026-07-31",
        "2026-08-31",
        "2026-09-30",
        "2026-10-31",
        "2026-11-30",
        "2026-12-31",
        "2027-01-31"
      ].map((k) => [k, "PAID", 1])
    )
    expect(real.wallet.balance).toBe(1_000_000 - 12 * 25_000)
    expect(real.warnings).toEqual([])
  })

  it("an empty wallet: warned a day before, four attempts, cancelled by dunning", () => {
    const p: Plan = {
      anchorMs: Date.UTC(2026, 2, 1, 3),
      interval: "WEEK",
      count: 1,
      amount: 10_000,
      wallet: { balance: 0, frozen: false, limit: null }
    }
    const { model, real } = setup(p)
    new Advance(30 * DayMs).run(model, real)
    expect(real.warnings).toEqual([{ periodIndex: 1, at: p.anchorMs + 6 * DayMs }])
    expect(real.invoices.map((i) => [i.status, i.attemptCount])).toEqual([
      ["PAID", 1],
      ["FAILED", 4]
    ])
    expect(real.sub).toMatchObject({ status: "CANCELLED", cancellationInitiator: "DUNNING" })
    expect(epochOrNull(real.sub.cancelledAt)).toBe(p.anchorMs + 7 * DayMs + 84 * HourMs)
    expect(real.events.slice(3)).toEqual([
      "invoice.payment_failed",
      "subscription.past_due",
      "invoice.payment_failed",
      "invoice.payment_failed",
      "invoice.payment_failed",
      "subscription.canceled"
    ])
  })

  it("an attempt in flight when the payer cancels: money that moved is kept as PAID, never moved twice", () => {
    const p: Plan = {
      anchorMs: Date.UTC(2026, 2, 1, 3),
      interval: "WEEK",
      count: 1,
      amount: 10_000,
      wallet: { balance: 15_000, frozen: false, limit: null }
    }
    const { model, real } = setup(p)
    new CrashNextAttempt("after-transfer").run(model, real)
    new Advance(10 * DayMs).run(model, real)
    // The process died after the transfer, at the renewal on day 7: the invoice is left CHARGING.
    expect(real.now).toBe(p.anchorMs + 10 * DayMs)
    expect(real.invoices[1]).toMatchObject({ status: "CHARGING", attemptCount: 1 })
    expect(real.invoices[1]!.lastAttemptAt).toEqual(utc(p.anchorMs + 7 * DayMs))
    new CancelNow("PAYER").run(model, real)
    expect(real.invoices[1]!.status).toBe("CHARGING")
    new Advance(DayMs).run(model, real)
    expect(real.invoices[1]).toMatchObject({ status: "PAID", attemptCount: 1 })
    expect(real.sub).toMatchObject({ status: "CANCELLED", cancellationInitiator: "PAYER" })
    expect(real.wallet.balance).toBe(5_000)
    expect(real.events.slice(3)).toEqual(["subscription.canceled", "invoice.paid"])
  })

  it("an attempt that never reached the wallet, then a cancel: resolved as a miss and voided", () => {
    const p: Plan = {
      anchorMs: Date.UTC(2026, 2, 1, 3),
      interval: "MONTH",
      count: 1,
      amount: 10_000,
      wallet: { balance: 15_000, frozen: false, limit: null }
    }
    const { model, real } = setup(p)
    new CrashNextAttempt("before-transfer").run(model, real)
    new Advance(40 * DayMs).run(model, real)
    new SetWallet({ balance: 0, frozen: false, limit: null }).run(model, real)
    new CancelNow("MERCHANT").run(model, real)
    new Advance(DayMs).run(model, real)
    expect(real.invoices[1]).toMatchObject({
      status: "VOID",
      attemptCount: 1,
      failureReason: "insufficient-balance"
    })
    expect(real.transfers.size).toBe(0)
    expect(real.events.slice(3)).toEqual(["subscription.canceled"])
  })

  it("after an outage the engine catches up one period at a time, each from the anchor, none twice", () => {
    const p: Plan = {
      anchorMs: Date.UTC(2026, 0, 30, 20),
      interval: "WEEK",
      count: 1,
      amount: 10_000,
      wallet: { balance: 1_000_000, frozen: false, limit: null }
    }
    const { model, real } = setup(p)
    new CrashNextAttempt("before-transfer").run(model, real)
    // Down from the first renewal (day 7) until day 30.
    new Advance(30 * DayMs).run(model, real)
    expect(real.invoices.map((i) => i.status)).toEqual(["PAID", "CHARGING"])
    new Advance(0).run(model, real)
    expect(real.invoices.map((i) => [i.periodKey, i.status, i.attemptCount])).toEqual([
      ["2026-01-31", "PAID", 1],
      ["2026-02-07", "PAID", 1],
      ["2026-02-14", "PAID", 1],
      ["2026-02-21", "PAID", 1],
      ["2026-02-28", "PAID", 1]
    ])
    expect(real.sub.currentPeriodEnd).toEqual(utc(p.anchorMs + 35 * DayMs))
    expect(real.transfers.size).toBe(4)
  })
})
