/**
 * All date arithmetic lives here, on the Temporal API. Reads are shown in Maldives time; mandate periods
 * count the customer's own calendar month in the customer's own zone; subscription billing periods derive
 * from the billing cycle anchor in Maldives time.
 */
import { DateTime, Option, Schema } from "effect"
import { Temporal } from "temporal-polyfill"

/** IANA zone of the Maldives (UTC+05:00, no daylight saving). `Asia/Male` is not a zone name. */
export const MaldivesZone = "Indian/Maldives"

export const toInstant = (t: DateTime.Utc): Temporal.Instant =>
  Temporal.Instant.fromEpochMilliseconds(DateTime.toEpochMillis(t))

export const fromInstant = (i: Temporal.Instant): DateTime.Utc => DateTime.unsafeMake(i.epochMilliseconds)

/** True when `zone` is an IANA time zone this runtime knows. */
export const isTimeZone = (zone: string): boolean => {
  try {
    Temporal.Now.instant().toZonedDateTimeISO(zone)
    return true
  } catch {
    return false
  }
}

/**
 * Maldives time as UTC shifted by five hours, where that is exact: the zone has kept +05:00 since 1960,
 * and from 1970 to the end of year 9999 the shifted clock reads as Temporal's would (a property test holds
 * the two equal). A charge reads its month and formats its time several times; Temporal's polyfill took a
 * twentieth of a charge's CPU doing so. Elsewhere, and in every other zone, Temporal answers.
 */
const MaldivesOffsetMs = 5 * 60 * 60 * 1000
/** The first instant of year 10000 in Maldives time (Temporal writes larger years with six digits). */
const MaldivesFastUntil = Date.UTC(10000, 0, 1) - MaldivesOffsetMs
const maldivesClock = (t: DateTime.Utc): Date | undefined => {
  const ms = DateTime.toEpochMillis(t)
  return ms >= 0 && ms < MaldivesFastUntil ? new Date(ms + MaldivesOffsetMs) : undefined
}

const DayMs = 86_400_000

/** The instant a Maldives wall-clock reading (ms, read as UTC) names, where the fast path holds. */
const fromMaldivesClock = (wallMs: number): DateTime.Utc | undefined => {
  const ms = wallMs - MaldivesOffsetMs
  return ms >= 0 && ms < MaldivesFastUntil ? DateTime.unsafeMake(ms) : undefined
}

// The fast path's years are 1970 to 9999: four digits, no padding.
const pad2 = (n: number): string => (n < 10 ? `0${n}` : String(n))

/** The calendar month `YYYY-MM` that `t` falls in, in `zone`. */
export const monthKey = (t: DateTime.Utc, zone: string): string => {
  // Stryker disable next-line ConditionalExpression: without the fast path Temporal answers, the same (slower).
  const clock = zone === MaldivesZone ? maldivesClock(t) : undefined
  // Stryker disable next-line ConditionalExpression: without the fast path Temporal answers, the same (slower).
  return clock !== undefined
    ? `${clock.getUTCFullYear()}-${pad2(clock.getUTCMonth() + 1)}`
    : toInstant(t).toZonedDateTimeISO(zone).toPlainDate().toPlainYearMonth().toString()
}

/** `2026-03-31T14:05:09+05:00`: Maldives time, whole seconds, numeric offset. */
export const formatMaldives = (t: DateTime.Utc): string => {
  const c = maldivesClock(t)
  // Stryker disable next-line ConditionalExpression: without the fast path Temporal answers, the same (slower).
  return c !== undefined
    ? `${c.getUTCFullYear()}-${pad2(c.getUTCMonth() + 1)}-${pad2(c.getUTCDate())}T${pad2(c.getUTCHours())}:${pad2(c.getUTCMinutes())}:${pad2(c.getUTCSeconds())}+05:00`
    : toInstant(t)
        .toZonedDateTimeISO(MaldivesZone)
        .toString({ smallestUnit: "second", roundingMode: "trunc", timeZoneName: "never" })
}

/**
 * The fast path's own answers, `undefined` where they do not hold: exported so that tests hold each to
 * its range as well as to Temporal's answers (the functions above give Temporal's either way).
 */
export const MaldivesFast = {
  clock: (t: DateTime.Utc): Date | undefined => maldivesClock(t),
  instant: (wallMs: number): DateTime.Utc | undefined => fromMaldivesClock(wallMs),
  periodStart: (
    anchor: DateTime.Utc,
    interval: Interval,
    count: number,
    n: number
  ): DateTime.Utc | undefined => fastPeriodStart(anchor, interval, count, n)
} as const

/** Unix seconds, for webhook objects. */
export const unixSeconds = (t: DateTime.Utc): number => Math.floor(DateTime.toEpochMillis(t) / 1000)

const offsetDateTime = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$/

/**
 * Parses an ISO 8601 date-time with a numeric UTC offset and no fractional seconds, as the spec asks of
 * `expires_at`. Anything else (a `Z`, fractions, an impossible date) is `None`.
 */
export const parseOffsetDateTime = (s: string): Option.Option<DateTime.Utc> => {
  if (!offsetDateTime.test(s)) return Option.none()
  try {
    return Option.some(fromInstant(Temporal.Instant.from(s)))
  } catch {
    return Option.none()
  }
}

export const addHours = (t: DateTime.Utc, hours: number): DateTime.Utc => DateTime.add(t, { hours })
export const addDays = (t: DateTime.Utc, days: number): DateTime.Utc => DateTime.add(t, { days })
export const addMinutes = (t: DateTime.Utc, minutes: number): DateTime.Utc => DateTime.add(t, { minutes })

// ---------------------------------------------------------------------------------------------------
// Billing periods: each derived from the anchor, never from the previous period
// ---------------------------------------------------------------------------------------------------

export const Interval = Schema.Literal("WEEK", "MONTH").annotations({
  description:
    "The unit of a billing cycle: `WEEK` or `MONTH` (in Maldives time, from the billing cycle anchor)"
})
export type Interval = typeof Interval.Type

/**
 * The largest `intervalCount` of each interval. The spec allows a span of one week to one year
 * (`WEEK` x 1 through `MONTH` x 12); 52 weeks are 364 days, 53 weeks are more than a year.
 */
export const MaxIntervalCount: { readonly [I in Interval]: number } = { WEEK: 52, MONTH: 12 }

/** Whether `interval` x `count` is a sellable span: `WEEK` x 1..52 or `MONTH` x 1..12. */
export const isValidSpan = (interval: Interval, count: number): boolean =>
  Number.isSafeInteger(count) && count >= 1 && count <= MaxIntervalCount[interval]

const inMaldives = (t: DateTime.Utc): Temporal.ZonedDateTime => toInstant(t).toZonedDateTimeISO(MaldivesZone)

/** The Maldives year and month (1-12) of `t`. */
const maldivesMonth = (t: DateTime.Utc): { readonly year: number; readonly month: number } => {
  const c = maldivesClock(t)
  // Stryker disable next-line ConditionalExpression: without the fast path Temporal answers, the same (slower).
  return c !== undefined ? { year: c.getUTCFullYear(), month: c.getUTCMonth() + 1 } : inMaldives(t)
}

/**
 * Where `periodAt` starts looking: the period of `t` from whole weeks or calendar months alone, which is
 * exact for weeks and at most one too high for months (on a day of the month before the anchor's, or
 * earlier in the day). `periodAt` settles it against the real boundaries.
 */
export const estimatePeriod = (
  anchor: DateTime.Utc,
  interval: Interval,
  count: number,
  t: DateTime.Utc
): number => {
  if (interval === "WEEK")
    return Math.floor((DateTime.toEpochMillis(t) - DateTime.toEpochMillis(anchor)) / (7 * count * DayMs))
  const a = maldivesMonth(anchor)
  const l = maldivesMonth(t)
  return Math.floor(((l.year - a.year) * 12 + (l.month - a.month)) / count)
}

/** A period index or count that is not a whole number is a defect of the caller, never a domain outcome. */
const checkArguments = (count: number, n: number): void => {
  if (!Number.isSafeInteger(count) || count < 1)
    throw new RangeError(`interval count must be a positive whole number, got ${count}`)
  if (!Number.isSafeInteger(n)) throw new RangeError(`period index must be a whole number, got ${n}`)
}

/**
 * `periodStart` on the shifted Maldives clock, where anchor and start both fall in the fast path's years
 * (a property test holds it equal to Temporal's answer); else `undefined`. A renewal computes several
 * period starts, and Temporal's polyfill took a fifth of a renewal's CPU doing so.
 */
const fastPeriodStart = (
  anchor: DateTime.Utc,
  interval: Interval,
  count: number,
  n: number
): DateTime.Utc | undefined => {
  const clock = maldivesClock(anchor)
  if (clock === undefined) return undefined
  const wall = clock.getTime()
  if (interval === "WEEK") return fromMaldivesClock(wall + 7 * count * n * DayMs)
  const months = clock.getUTCFullYear() * 12 + clock.getUTCMonth() + n * count
  const year = Math.floor(months / 12)
  // `Date.UTC` reads years 0-99 as 1900-1999; the fast path's years are 1970-9999 anyway.
  // Stryker disable next-line ConditionalExpression: a year past 9999 is past the range `fromMaldivesClock` refuses too
  if (!(year >= 1970 && year <= 9999)) return undefined
  const month0 = months - year * 12
  const day = Math.min(clock.getUTCDate(), new Date(Date.UTC(year, month0 + 1, 0)).getUTCDate())
  return fromMaldivesClock(Date.UTC(year, month0, day) + (wall % DayMs))
}

/**
 * The start of period `n` of a subscription anchored at `anchor`. Always computed from the anchor, never
 * from the previous period, so a 31st anchor bills on the 28th (29th) of February and on the 31st again in
 * March. `MONTH` x k: the anchor's Maldives month plus `n * k` months, on the anchor's day clamped to that
 * month's length, at the anchor's Maldives time of day. `WEEK` x k: the anchor plus `7 * k * n` days.
 * Negative `n` extends the same rule backwards.
 */
export const periodStart = (
  anchor: DateTime.Utc,
  interval: Interval,
  count: number,
  n: number
): DateTime.Utc => {
  checkArguments(count, n)
  const fast = fastPeriodStart(anchor, interval, count, n)
  // Stryker disable next-line ConditionalExpression: without the fast path Temporal answers, the same (slower).
  if (fast !== undefined) return fast
  const local = inMaldives(anchor)
  if (interval === "WEEK") return fromInstant(local.add({ days: 7 * count * n }).toInstant())
  const month = local
    .toPlainDate()
    .toPlainYearMonth()
    .add({ months: n * count })
  const day = Math.min(local.day, month.daysInMonth)
  return fromInstant(local.with({ year: month.year, month: month.month, day }).toInstant())
}

/** Billing period `n`: the half-open interval [start, end), where `end` is the start of period `n + 1`. */
export interface Period {
  readonly n: number
  readonly start: DateTime.Utc
  readonly end: DateTime.Utc
}

export const period = (anchor: DateTime.Utc, interval: Interval, count: number, n: number): Period => ({
  n,
  start: periodStart(anchor, interval, count, n),
  end: periodStart(anchor, interval, count, n + 1)
})

/** The stable key of the period starting at `start`: its Maldives date, `YYYY-MM-DD`. */
export const periodKey = (start: DateTime.Utc): string => {
  const c = maldivesClock(start)
  // Stryker disable next-line ConditionalExpression: without the fast path Temporal answers, the same (slower).
  return c !== undefined
    ? `${c.getUTCFullYear()}-${pad2(c.getUTCMonth() + 1)}-${pad2(c.getUTCDate())}`
    : inMaldives(start).toPlainDate().toString()
}

/**
 * The index of the period containing `t`: `periodAt(start(n)) = n` and `periodAt(start(n + 1) - 1 ms) = n`.
 * Period 0 starts at the anchor, so an instant before it gets a negative index.
 */
export const periodAt = (
  anchor: DateTime.Utc,
  interval: Interval,
  count: number,
  t: DateTime.Utc
): number => {
  checkArguments(count, 0)
  let n = estimatePeriod(anchor, interval, count, t)
  while (DateTime.greaterThan(periodStart(anchor, interval, count, n), t)) n--
  // Stryker disable next-line ConditionalExpression,UpdateOperator: a guard that never turns, as the estimate (whole weeks or months, floored) is never below the period
  while (DateTime.lessThanOrEqualTo(periodStart(anchor, interval, count, n + 1), t)) n++
  return n
}
