/**
 * Reconciliation of one Maldives day: laari's movements against the wallet provider's statement of that
 * day (`GET /transfers?posted_on=`), what moved in the core. A break is a transfer the two sides do not
 * agree on, with each side's figures, so an operator can see which side to correct without looking up
 * either. Pure: the server reads both sides and stores the result.
 */
import { DateTime, Either, Option, Schema } from "effect"
import { Temporal } from "temporal-polyfill"
import * as Calendar from "../kernel/Calendar.js"
import * as Balance from "./Balance.js"
import type { StatementItem } from "./Connector.js"
import type { Status } from "./Movement.js"

/**
 * - `missing_in_core`: laari holds it posted on the day, the core's statement of the day lacks it;
 * - `missing_in_laari`: the core lists it, laari has no movement of that id;
 * - `amount_mismatch`: both hold it posted, with another amount or fee;
 * - `status_mismatch`: the core posted it, laari holds it pending, refused or cancelled.
 */
export const Kind = Schema.Literal(
  "missing_in_core",
  "missing_in_laari",
  "amount_mismatch",
  "status_mismatch"
)
export type Kind = typeof Kind.Type
export const Kinds: ReadonlyArray<Kind> = Kind.literals

/** laari's side of a transfer: its movement's figures (a `Movement.Movement` is one). */
export interface Held {
  readonly id: string
  readonly status: Status
  readonly amount: number
  readonly fee: number
  readonly postedAt: DateTime.Utc | null
}

/** The core's side: a line of its statement, the fee `0` where it took none. */
export interface Line {
  readonly id: string
  readonly amount: number
  readonly fee: number
  readonly postedAt: DateTime.Utc
}

/** One side's figures of a transfer. A statement lists only posted transfers, so the core's are `posted`. */
export interface Figures {
  readonly amount: number
  readonly fee: number
  readonly status: Status
}

export interface Break {
  readonly transferId: string
  readonly kind: Kind
  /** `null` where laari has no movement of the id. */
  readonly laari: Figures | null
  /** `null` where the core's statement of the day lacks it. */
  readonly core: Figures | null
}

export interface Totals {
  readonly count: number
  readonly amount: number
  readonly fee: number
}

export interface Result {
  readonly date: string
  /** laari's movements posted on the day (by the `posted_at` laari holds). */
  readonly laari: Totals
  /** The statement's lines. */
  readonly core: Totals
  /** By transfer id. */
  readonly breaks: ReadonlyArray<Break>
}

/** Where a run is: claimed and under way, or done with its result, or stopped by a failure. */
export const RunStatus = Schema.Literal("running", "clean", "breaks", "failed")
export type RunStatus = typeof RunStatus.Type

/** A stored run of a day; the totals are `null` until it is done, and stay so when it failed. */
export interface Run {
  readonly date: string
  readonly status: RunStatus
  readonly startedAt: DateTime.Utc
  readonly finishedAt: DateTime.Utc | null
  readonly laari: Totals | null
  readonly core: Totals | null
  readonly breakCount: number
  readonly error: string | null
}

export interface RunWithBreaks {
  readonly run: Run
  readonly breaks: ReadonlyArray<Break>
}

// ---------------------------------------------------------------------------------------------------------
// Days

/** The Maldives day `date` (`YYYY-MM-DD`, a real date): `[from, to)`; `Left` with why not. */
export const day = (date: string): Either.Either<Balance.Day, string> => Balance.day(date)

/** The Maldives date `t` falls on. */
export const dateOf = (t: DateTime.Utc): string => Calendar.formatMaldives(t).slice(0, 10)

const within = (d: Balance.Day, t: DateTime.Utc): boolean =>
  DateTime.greaterThanOrEqualTo(t, d.from) && DateTime.lessThan(t, d.to)

/** How long after a day ends its daily run starts: late postings of the last minutes have landed. */
export const SettleAfterHours = 1

/**
 * The day the daily run reconciles at `now`: the one before the Maldives day that `SettleAfterHours` ago
 * fell on. From 01:00 on the 3rd that is the 2nd; until then still the 1st, which ran the day before.
 */
export const dueDate = (now: DateTime.Utc): string =>
  Temporal.PlainDate.from(dateOf(DateTime.subtract(now, { hours: SettleAfterHours })))
    .subtract({ days: 1 })
    .toString()

/** A run that started this long ago and never finished was left by a process that stopped: another may take it. */
export const StaleAfterMinutes = 15

/** A daily run that failed is tried again this long after, while its day is still the one due. */
export const RetryFailedAfterMinutes = 60

// ---------------------------------------------------------------------------------------------------------
// The statement

/** A decoded statement line as the model reads it: ids compared in lower case, a missing fee as 0. */
export const lineOf = (item: StatementItem): Line => ({
  id: item.id.toLowerCase(),
  amount: item.amount,
  fee: item.fee?.amount ?? 0,
  // Decoded with `PostedAt`, which parses.
  postedAt: Option.getOrThrow(Calendar.parseOffsetDateTime(item.posted_at))
})

/**
 * What makes a statement no statement of `d`, for the run to fail on rather than report breaks that are
 * the statement's mistakes: an id listed twice (its money would count twice), a line posted on another day.
 */
export const statementFaults = (d: Balance.Day, lines: ReadonlyArray<Line>): ReadonlyArray<string> => {
  const seen = new Set<string>()
  const faults: Array<string> = []
  for (const line of lines) {
    if (seen.has(line.id)) faults.push(`transfer ${line.id} is listed more than once`)
    seen.add(line.id)
    if (!within(d, line.postedAt))
      faults.push(
        `transfer ${line.id} is listed with posted_at ${Calendar.formatMaldives(line.postedAt)}, not on ${d.date}`
      )
  }
  return faults
}

// ---------------------------------------------------------------------------------------------------------
// The comparison

const totals = (items: ReadonlyArray<{ readonly amount: number; readonly fee: number }>): Totals =>
  items.reduce<Totals>((t, i) => ({ count: t.count + 1, amount: t.amount + i.amount, fee: t.fee + i.fee }), {
    count: 0,
    amount: 0,
    fee: 0
  })

const figures = (f: { readonly amount: number; readonly fee: number }, status: Status): Figures => ({
  amount: f.amount,
  fee: f.fee,
  status
})

/**
 * The breaks of day `d` between `held` (laari's movements posted on the day, and any movement of any status
 * whose id the statement lists) and `lines` (the statement of the day, without faults). A movement neither
 * posted on the day nor listed is no concern of this day and is left out; one transfer is one break at most,
 * a status mismatch before an amount's.
 */
export const compute = (d: Balance.Day, held: ReadonlyArray<Held>, lines: ReadonlyArray<Line>): Result => {
  // One movement an id: a movement read both as posted on the day and as listed counts once.
  const ours = new Map(held.map((m) => [m.id.toLowerCase(), m]))
  const listed = new Set(lines.map((l) => l.id))
  const postedOnDay = [...ours].filter(
    ([, m]) => m.status === "posted" && m.postedAt !== null && within(d, m.postedAt)
  )
  const breaks: Array<Break> = []
  for (const line of lines) {
    const m = ours.get(line.id)
    const core = figures(line, "posted")
    if (m === undefined) breaks.push({ transferId: line.id, kind: "missing_in_laari", laari: null, core })
    else if (m.status !== "posted")
      breaks.push({ transferId: line.id, kind: "status_mismatch", laari: figures(m, m.status), core })
    else if (m.amount !== line.amount || m.fee !== line.fee)
      breaks.push({ transferId: line.id, kind: "amount_mismatch", laari: figures(m, m.status), core })
  }
  for (const [id, m] of postedOnDay)
    if (!listed.has(id))
      breaks.push({ transferId: id, kind: "missing_in_core", laari: figures(m, m.status), core: null })
  // Stryker disable next-line EqualityOperator,ConditionalExpression: ids are unique among breaks, and sort only asks whether a result is below 0
  breaks.sort((a, b) => (a.transferId < b.transferId ? -1 : a.transferId > b.transferId ? 1 : 0))
  return { date: d.date, laari: totals(postedOnDay.map(([, m]) => m)), core: totals(lines), breaks }
}

/** A finished run's status: clean when the sides agree. */
export const statusOf = (result: Result): "clean" | "breaks" =>
  result.breaks.length === 0 ? "clean" : "breaks"

/** How many breaks of each kind, every kind present. */
export const countByKind = (breaks: ReadonlyArray<{ readonly kind: Kind }>): Record<Kind, number> => {
  const counts = Object.fromEntries(Kinds.map((k) => [k, 0])) as Record<Kind, number>
  for (const b of breaks) counts[b.kind] += 1
  return counts
}

// ---------------------------------------------------------------------------------------------------------
// Refusals

/** No wallet provider's core is configured: money moves in laari's own ledger, which has nothing to reconcile. */
export class ConnectorOff extends Schema.TaggedError<ConnectorOff>()("ReconciliationConnectorOff", {
  message: Schema.String
}) {
  static readonly instance = new ConnectorOff({
    message:
      "The wallet connector is off: money moves in laari's own ledger and there is no wallet provider's core to reconcile against. Set LAARI_WALLET_URL and LAARI_WALLET_TOKEN to turn it on"
  })
}

/** Another run of the day is under way (in this process or another): one at a time per day. */
export class RunInProgress extends Schema.TaggedError<RunInProgress>()("ReconciliationRunInProgress", {
  message: Schema.String
}) {
  static of(date: string): RunInProgress {
    return new RunInProgress({
      message: `A reconciliation of ${date} is already running; read it with GET /ops/reconciliation/runs/${date} once it is done`
    })
  }
}
