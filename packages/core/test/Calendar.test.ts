import { describe, expect, it } from "@effect/vitest"
import { DateTime, Option } from "effect"
import fc from "fast-check"
import * as Calendar from "../src/kernel/Calendar.js"

const instant = fc
  .integer({ min: Date.UTC(2024, 0, 1), max: Date.UTC(2031, 0, 1) - 1 })
  .map((ms) => DateTime.unsafeMake(ms))
const zones = [
  "Indian/Maldives",
  "Pacific/Kiritimati",
  "Pacific/Pago_Pago",
  "Asia/Kathmandu",
  "America/St_Johns",
  "Europe/London",
  "Australia/Lord_Howe",
  "UTC"
]

/** The month of `t` in `zone` by `Intl`, independent of Temporal. */
const intlMonth = (t: DateTime.Utc, zone: string): string => {
  const parts = new Intl.DateTimeFormat("en-US", {
    timeZone: zone,
    year: "numeric",
    month: "2-digit"
  }).formatToParts(new Date(DateTime.toEpochMillis(t)))
  return `${parts.find((p) => p.type === "year")!.value}-${parts.find((p) => p.type === "month")!.value}`
}

describe("formatMaldives", () => {
  it("is Maldives time with +05:00 and whole seconds (truncated)", () => {
    expect(Calendar.formatMaldives(DateTime.unsafeMake("2026-03-31T09:05:09.999Z"))).toBe(
      "2026-03-31T14:05:09+05:00"
    )
    expect(Calendar.formatMaldives(DateTime.unsafeMake("2026-12-31T19:00:00Z"))).toBe(
      "2027-01-01T00:00:00+05:00"
    )
  })

  it("for any instant: the same instant to the second, always +05:00", () => {
    fc.assert(
      fc.property(instant, (t) => {
        const text = Calendar.formatMaldives(t)
        expect(text).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+05:00$/)
        expect(Date.parse(text)).toBe(Math.floor(DateTime.toEpochMillis(t) / 1000) * 1000)
      })
    )
  })
})

/** Period `n`'s start by Temporal in `zone`: the rule of `periodStart`, as its general branch has it. */
const temporalStart = (
  a: DateTime.Utc,
  interval: Calendar.Interval,
  count: number,
  n: number,
  zone: string
) => {
  const local = Calendar.toInstant(a).toZonedDateTimeISO(zone)
  if (interval === "WEEK") return local.add({ days: 7 * count * n }).toInstant().epochMilliseconds
  const month = local
    .toPlainDate()
    .toPlainYearMonth()
    .add({ months: n * count })
  const day = Math.min(local.day, month.daysInMonth)
  return local.with({ year: month.year, month: month.month, day }).toInstant().epochMilliseconds
}

describe("Maldives time without Temporal (the fast path)", () => {
  // What Temporal says, for the fast path to equal: the same functions' general branch.
  const temporal = (t: DateTime.Utc, zone: string) => {
    const zoned = Calendar.toInstant(t).toZonedDateTimeISO(zone)
    return {
      month: zoned.toPlainDate().toPlainYearMonth().toString(),
      text: zoned.toString({ smallestUnit: "second", roundingMode: "trunc", timeZoneName: "never" })
    }
  }
  const anyInstant = fc
    .integer({ min: Date.UTC(1900, 0, 1), max: Date.UTC(10001, 0, 1) })
    .map((ms) => DateTime.unsafeMake(ms))
  // Month and year ends, the fast path's edges (1970 and year 10000), and a millisecond either side.
  const edges = [
    "1969-12-31T18:59:59.999Z",
    "1969-12-31T19:00:00.000Z",
    "1970-01-01T00:00:00.000Z",
    "2026-03-31T18:59:59.999Z",
    "2026-03-31T19:00:00.000Z",
    "2028-02-28T19:00:00.000Z",
    "9999-12-31T18:59:59.999Z",
    "9999-12-31T19:00:00.000Z"
  ].map((iso) => DateTime.unsafeMake(iso))

  it("monthKey and formatMaldives equal Temporal's answers, at the edges and for any instant 1900-10000", () => {
    const same = (t: DateTime.Utc) => {
      const expected = temporal(t, Calendar.MaldivesZone)
      expect(Calendar.monthKey(t, Calendar.MaldivesZone)).toBe(expected.month)
      expect(Calendar.formatMaldives(t)).toBe(expected.text)
    }
    edges.forEach(same)
    fc.assert(fc.property(anyInstant, same), { numRuns: 2000 })
  })

  const spans = fc.oneof(
    fc.record({ interval: fc.constant("WEEK" as const), count: fc.integer({ min: 1, max: 52 }) }),
    fc.record({ interval: fc.constant("MONTH" as const), count: fc.integer({ min: 1, max: 12 }) })
  )

  it("periodStart, periodKey and estimatePeriod equal Temporal's answers, inside the fast path's years and across its edges", () => {
    const same = (a: DateTime.Utc, interval: Calendar.Interval, count: number, n: number) => {
      const start = Calendar.periodStart(a, interval, count, n)
      expect(DateTime.toEpochMillis(start)).toBe(temporalStart(a, interval, count, n, Calendar.MaldivesZone))
      const zoned = Calendar.toInstant(start).toZonedDateTimeISO(Calendar.MaldivesZone)
      expect(Calendar.periodKey(start)).toBe(zoned.toPlainDate().toString())
      const local = Calendar.toInstant(a).toZonedDateTimeISO(Calendar.MaldivesZone)
      expect(Calendar.estimatePeriod(a, interval, count, start)).toBe(
        interval === "WEEK"
          ? Math.floor((zoned.epochMilliseconds - local.epochMilliseconds) / (7 * count * 86_400_000))
          : Math.floor(((zoned.year - local.year) * 12 + (zoned.month - local.month)) / count)
      )
    }
    // Anchors at the fast path's edges, with periods that leave it (before 1970, into year 10000).
    for (const a of edges)
      for (const n of [-13, -1, 0, 1, 12, 53])
        for (const [interval, count] of [
          ["WEEK", 1],
          ["MONTH", 1],
          ["MONTH", 12]
        ] as const)
          same(a, interval, count, n)
    // A start in year 75, which `Date.UTC` would read as 1975.
    same(DateTime.unsafeMake("2026-03-31T10:00:00Z"), "MONTH", 1, -(2026 - 75) * 12)
    const nearNow = fc
      .integer({ min: Date.UTC(1965, 0, 1), max: Date.UTC(2100, 0, 1) })
      .map((ms) => DateTime.unsafeMake(ms))
    fc.assert(
      fc.property(
        fc.oneof(anyInstant, nearNow),
        spans,
        fc.integer({ min: -200, max: 200 }),
        (a, { interval, count }, n) => same(a, interval, count, n)
      ),
      { numRuns: 4000 }
    )
  })

  it("and differ from another zone's answers: the comparison can fail", () => {
    // Kathmandu is +05:45: 18:30Z on 31 March is 23:30 in the Maldives, 00:15 on 1 April in Kathmandu.
    const t = DateTime.unsafeMake("2026-03-31T18:30:00Z")
    expect(Calendar.monthKey(t, Calendar.MaldivesZone)).toBe("2026-03")
    expect(temporal(t, "Asia/Kathmandu").month).toBe("2026-04")
    expect(Calendar.formatMaldives(t)).not.toBe(temporal(t, "Asia/Kathmandu").text)
    // 30 January 23:30 in the Maldives is 31 January 00:15 in Kathmandu: clamped to February, they part.
    const a = DateTime.unsafeMake("2026-01-30T18:30:00Z")
    expect(DateTime.toEpochMillis(Calendar.periodStart(a, "MONTH", 1, 1))).not.toBe(
      temporalStart(a, "MONTH", 1, 1, "Asia/Kathmandu")
    )
  })
})

describe("the fast path on its own (Calendar.MaldivesFast)", () => {
  const Offset = 5 * 3600_000
  const until = Date.UTC(10000, 0, 1) - Offset
  const fast = Calendar.MaldivesFast

  it("holds from 1970 to the end of year 9999 in Maldives time, and only there", () => {
    for (const ms of [0, 1, until - 1]) {
      expect(fast.clock(DateTime.unsafeMake(ms))?.getTime()).toBe(ms + Offset)
      expect(fast.instant(ms + Offset)).toEqual(DateTime.unsafeMake(ms))
    }
    for (const ms of [-1, until, until + 1]) {
      expect(fast.clock(DateTime.unsafeMake(ms))).toBeUndefined()
      expect(fast.instant(ms + Offset)).toBeUndefined()
    }
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(1900, 0, 1), max: Date.UTC(10001, 0, 1) }), (ms) => {
        const inside = ms >= 0 && ms < until
        expect(fast.clock(DateTime.unsafeMake(ms)) !== undefined).toBe(inside)
        expect(fast.instant(ms + Offset) !== undefined).toBe(inside)
      }),
      { numRuns: 1000 }
    )
  })

  it("answers a period start wherever anchor and start are inside, with Temporal's answer; nowhere else", () => {
    const check = (a: DateTime.Utc, interval: Calendar.Interval, count: number, n: number) => {
      const expected = temporalStart(a, interval, count, n, Calendar.MaldivesZone)
      const inside =
        DateTime.toEpochMillis(a) >= 0 &&
        DateTime.toEpochMillis(a) < until &&
        expected >= 0 &&
        expected < until
      const got = fast.periodStart(a, interval, count, n)
      expect(got === undefined ? undefined : DateTime.toEpochMillis(got)).toBe(inside ? expected : undefined)
    }
    // Starts in the first and last months of the range, and just outside it.
    const anchor = DateTime.unsafeMake("2026-03-31T10:00:00Z")
    for (const n of [-(2026 - 1970) * 12 - 2, -(2026 - 1970) * 12 - 3, -(2026 - 1970) * 12 + 1])
      check(anchor, "MONTH", 1, n)
    for (const n of [(9999 - 2026) * 12 + 8, (9999 - 2026) * 12 + 9, (9999 - 2026) * 12 + 10])
      check(anchor, "MONTH", 1, n)
    // Year 75, which `Date.UTC` would read as 1975; the first instant; a week before and after it.
    check(anchor, "MONTH", 1, -(2026 - 75) * 12)
    check(DateTime.unsafeMake(0), "WEEK", 1, 0)
    check(DateTime.unsafeMake(7 * 86_400_000), "WEEK", 1, -1)
    check(DateTime.unsafeMake(0), "WEEK", 1, -1)
    check(DateTime.unsafeMake(until - 1), "WEEK", 1, 0)
    check(DateTime.unsafeMake(until - 1), "WEEK", 1, 1)
    fc.assert(
      fc.property(
        fc.integer({ min: Date.UTC(1965, 0, 1), max: Date.UTC(2100, 0, 1) }),
        fc.constantFrom("WEEK" as const, "MONTH" as const),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: -100, max: 100 }),
        (ms, interval, count, n) => check(DateTime.unsafeMake(ms), interval, count, n)
      ),
      { numRuns: 2000 }
    )
  })
})

describe("parseOffsetDateTime", () => {
  it.each([
    ["2026-03-31T14:05:09+05:00", "2026-03-31T09:05:09.000Z"],
    ["2026-03-31T14:05:09-11:00", "2026-04-01T01:05:09.000Z"],
    ["2026-03-31T14:05:09+00:00", "2026-03-31T14:05:09.000Z"],
    ["2024-02-29T10:00:00+05:45", "2024-02-29T04:15:00.000Z"]
  ])("accepts %s", (text, utc) => {
    const parsed = Calendar.parseOffsetDateTime(text)
    expect(Option.map(parsed, DateTime.formatIso)).toEqual(Option.some(utc))
  })

  it.each([
    "2026-03-31T14:05:09Z",
    "2026-03-31T14:05:09.5+05:00",
    "2026-03-31T14:05:09.000+05:00",
    "2026-02-30T10:00:00+05:00",
    "2026-02-29T10:00:00+05:00",
    "2026-04-31T10:00:00+05:00",
    "2026-13-01T10:00:00+05:00",
    "2026-03-31T24:00:00+05:00",
    "2026-03-31T23:60:00+05:00",
    "2026-03-31T14:05:09+24:00",
    "2026-03-31T14:05+05:00",
    "2026-03-31 14:05:09+05:00",
    "2026-03-31T14:05:09",
    "2026-03-31T14:05:09+0500",
    "2026-03-31",
    ""
  ])("rejects %j", (text) => {
    expect(Option.isNone(Calendar.parseOffsetDateTime(text))).toBe(true)
  })

  it("reads back everything formatMaldives writes", () => {
    fc.assert(
      fc.property(instant, (t) => {
        const parsed = Calendar.parseOffsetDateTime(Calendar.formatMaldives(t))
        expect(Option.map(parsed, DateTime.toEpochMillis)).toEqual(
          Option.some(Math.floor(DateTime.toEpochMillis(t) / 1000) * 1000)
        )
      })
    )
  })
})

describe("zones and months", () => {
  it("Indian/Maldives is a zone; Asia/Male is not", () => {
    expect(Calendar.MaldivesZone).toBe("Indian/Maldives")
    expect(Calendar.isTimeZone("Indian/Maldives")).toBe(true)
    expect(Calendar.isTimeZone("Asia/Male")).toBe(false)
    expect(Calendar.isTimeZone("Mars/Olympus_Mons")).toBe(false)
    expect(Calendar.isTimeZone("")).toBe(false)
    for (const zone of zones) expect(Calendar.isTimeZone(zone)).toBe(true)
  })

  it("monthKey is the month in the given zone", () => {
    // 12:00Z on 31 March: already April in Kiritimati (UTC+14), still March in Pago Pago (UTC-11).
    const t = DateTime.unsafeMake("2026-03-31T12:00:00Z")
    expect(Calendar.monthKey(t, "Pacific/Kiritimati")).toBe("2026-04")
    expect(Calendar.monthKey(t, "Pacific/Pago_Pago")).toBe("2026-03")
    expect(Calendar.monthKey(t, "Indian/Maldives")).toBe("2026-03")
    expect(Calendar.monthKey(DateTime.unsafeMake("2026-03-31T19:00:00Z"), "Indian/Maldives")).toBe("2026-04")
  })

  it("monthKey agrees with Intl in every zone", () => {
    fc.assert(
      fc.property(
        instant,
        fc.constantFrom(...zones),
        (t, zone) => Calendar.monthKey(t, zone) === intlMonth(t, zone)
      )
    )
  })
})

describe("arithmetic", () => {
  it("unixSeconds floors to whole seconds", () => {
    expect(Calendar.unixSeconds(DateTime.unsafeMake("2026-03-31T09:05:09.999Z"))).toBe(1_774_947_909)
    expect(Calendar.unixSeconds(DateTime.unsafeMake(0))).toBe(0)
  })

  it("addHours, addDays and addMinutes move in exact UTC time", () => {
    const t = DateTime.unsafeMake("2026-03-29T00:30:00Z")
    expect(DateTime.formatIso(Calendar.addHours(t, 24))).toBe("2026-03-30T00:30:00.000Z")
    expect(DateTime.formatIso(Calendar.addDays(t, 365))).toBe("2027-03-29T00:30:00.000Z")
    expect(DateTime.formatIso(Calendar.addMinutes(t, 5))).toBe("2026-03-29T00:35:00.000Z")
  })
})

// -------------------------------------------------------------------------------------------------
// Billing periods
// -------------------------------------------------------------------------------------------------

const HourMs = 3_600_000
const DayMs = 86_400_000
/** Maldives time is UTC+05:00 all year: its wall clock is the UTC wall clock of `t + 5 h`. */
const MaldivesOffsetMs = 5 * HourMs
const daysInMonth = (year: number, month0: number) => new Date(Date.UTC(year, month0 + 1, 0)).getUTCDate()
const wallClock = (ms: number) => new Date(ms + MaldivesOffsetMs)

/**
 * An oracle for period starts written from the rule (the anchor plus n periods, the anchor's day clamped
 * to the month's length) with plain `Date` arithmetic on the Maldives wall clock, independent of Temporal
 * and of the previous period.
 */
const oracleStart = (anchorMs: number, interval: Calendar.Interval, count: number, n: number): number => {
  if (interval === "WEEK") return anchorMs + 7 * count * n * DayMs
  const l = wallClock(anchorMs)
  const months = l.getUTCFullYear() * 12 + l.getUTCMonth() + n * count
  const year = Math.floor(months / 12)
  const month0 = months - year * 12
  const day = Math.min(l.getUTCDate(), daysInMonth(year, month0))
  const msOfDay = anchorMs + MaldivesOffsetMs - Date.UTC(l.getUTCFullYear(), l.getUTCMonth(), l.getUTCDate())
  return Date.UTC(year, month0, day) + msOfDay - MaldivesOffsetMs
}

const msOfDay = fc.integer({ min: 0, max: DayMs - 1 })
/** Anchors at any millisecond, weighted towards month ends, 29 February of leap years and midnight edges. */
const anchorMs = fc.oneof(
  fc.integer({ min: Date.UTC(2020, 0, 1), max: Date.UTC(2040, 0, 1) }),
  fc
    .record({
      year: fc.integer({ min: 2020, max: 2040 }),
      month0: fc.integer({ min: 0, max: 11 }),
      day: fc.integer({ min: 28, max: 31 }),
      time: fc.oneof(msOfDay, fc.constantFrom(0, DayMs - 1, 19 * HourMs, 19 * HourMs - 1))
    })
    .map(
      ({ year, month0, day, time }) =>
        Date.UTC(year, month0, Math.min(day, daysInMonth(year, month0))) + time - MaldivesOffsetMs
    ),
  fc
    .record({ year: fc.constantFrom(2024, 2028, 2032, 2036), time: msOfDay })
    .map(({ year, time }) => Date.UTC(year, 1, 29) + time - MaldivesOffsetMs)
)
const span = fc.oneof(
  fc.record({ interval: fc.constant("WEEK" as const), count: fc.integer({ min: 1, max: 52 }) }),
  fc.record({ interval: fc.constant("MONTH" as const), count: fc.integer({ min: 1, max: 12 }) })
)
const index = fc.integer({ min: 0, max: 60 })
const utc = (ms: number) => DateTime.unsafeMake(ms)
const epoch = DateTime.toEpochMillis
const runs = { numRuns: 2000 }

describe("billing periods: properties", () => {
  it("every period start is the anchor-derived wall-clock rule, never the previous period's", () => {
    fc.assert(
      fc.property(anchorMs, span, index, (a, { interval, count }, n) => {
        expect(epoch(Calendar.periodStart(utc(a), interval, count, n))).toBe(
          oracleStart(a, interval, count, n)
        )
      }),
      runs
    )
  })

  it("period 0 starts at the anchor; periods are contiguous, half-open and non-empty", () => {
    fc.assert(
      fc.property(anchorMs, span, index, (a, { interval, count }, n) => {
        const anchor = utc(a)
        expect(Calendar.periodStart(anchor, interval, count, 0)).toEqual(anchor)
        const p = Calendar.period(anchor, interval, count, n)
        const q = Calendar.period(anchor, interval, count, n + 1)
        expect(p.n).toBe(n)
        expect(p.start).toEqual(Calendar.periodStart(anchor, interval, count, n))
        expect(p.end).toEqual(q.start)
        expect(epoch(p.start)).toBeLessThan(epoch(p.end))
      }),
      runs
    )
  })

  it("MONTH: every period starts on min(anchor day, days in month) at the anchor's Maldives time of day", () => {
    fc.assert(
      fc.property(anchorMs, fc.integer({ min: 1, max: 12 }), index, (a, count, n) => {
        const l = wallClock(a)
        const s = wallClock(epoch(Calendar.periodStart(utc(a), "MONTH", count, n)))
        const months = l.getUTCMonth() + n * count
        expect(s.getUTCFullYear()).toBe(l.getUTCFullYear() + Math.floor(months / 12))
        expect(s.getUTCMonth()).toBe(months % 12)
        expect(s.getUTCDate()).toBe(
          Math.min(l.getUTCDate(), daysInMonth(s.getUTCFullYear(), s.getUTCMonth()))
        )
        expect(s.toISOString().slice(11)).toBe(l.toISOString().slice(11))
      }),
      runs
    )
  })

  it("WEEK: every period is exactly 7 x k days", () => {
    fc.assert(
      fc.property(anchorMs, fc.integer({ min: 1, max: 52 }), index, (a, count, n) => {
        const p = Calendar.period(utc(a), "WEEK", count, n)
        expect(epoch(p.end) - epoch(p.start)).toBe(7 * count * DayMs)
      }),
      runs
    )
  })

  it("period keys are the Maldives date of the start, unique and strictly increasing", () => {
    fc.assert(
      fc.property(anchorMs, span, fc.integer({ min: 2, max: 40 }), (a, { interval, count }, periods) => {
        const keys = Array.from({ length: periods }, (_, n) =>
          Calendar.periodKey(Calendar.periodStart(utc(a), interval, count, n))
        )
        for (const [n, key] of keys.entries()) {
          expect(key).toBe(
            wallClock(oracleStart(a, interval, count, n))
              .toISOString()
              .slice(0, 10)
          )
          if (n > 0) expect(key > keys[n - 1]!).toBe(true)
        }
        expect(new Set(keys).size).toBe(periods)
      }),
      { numRuns: 1000 }
    )
  })

  it("periodAt finds the period containing an instant, at both of its edges", () => {
    fc.assert(
      fc.property(
        anchorMs,
        span,
        index,
        fc.double({ min: 0, max: 1, noNaN: true }),
        (a, { interval, count }, n, f) => {
          const anchor = utc(a)
          const p = Calendar.period(anchor, interval, count, n)
          const inside = epoch(p.start) + Math.floor(f * (epoch(p.end) - epoch(p.start) - 1))
          expect(Calendar.periodAt(anchor, interval, count, p.start)).toBe(n)
          expect(Calendar.periodAt(anchor, interval, count, utc(epoch(p.end) - 1))).toBe(n)
          expect(Calendar.periodAt(anchor, interval, count, utc(inside))).toBe(n)
          expect(Calendar.periodAt(anchor, interval, count, p.end)).toBe(n + 1)
        }
      ),
      runs
    )
  })

  it("periodAt starts from an estimate exact for weeks and at most one too high for months", () => {
    fc.assert(
      fc.property(
        anchorMs,
        span,
        fc.integer({ min: 0, max: 3 * 365 * DayMs }),
        (a, { interval, count }, later) => {
          const anchor = utc(a)
          const t = utc(a + later)
          const over =
            Calendar.estimatePeriod(anchor, interval, count, t) -
            Calendar.periodAt(anchor, interval, count, t)
          if (interval === "WEEK") expect(over).toBe(0)
          else expect([0, 1]).toContain(over)
        }
      ),
      runs
    )
    // The day of the month before the anchor's: one too high; on it, exact.
    const anchor = DateTime.unsafeMake("2026-01-31T10:00:00+05:00")
    const feb27 = DateTime.unsafeMake("2026-02-27T10:00:00+05:00")
    expect(Calendar.estimatePeriod(anchor, "MONTH", 1, feb27)).toBe(1)
    expect(Calendar.periodAt(anchor, "MONTH", 1, feb27)).toBe(0)
    const march = DateTime.unsafeMake("2027-03-31T10:00:00+05:00")
    expect(Calendar.estimatePeriod(anchor, "MONTH", 2, march)).toBe(7)
    expect(Calendar.estimatePeriod(anchor, "WEEK", 2, DateTime.unsafeMake("2026-03-01T10:00:00+05:00"))).toBe(
      2
    )
  })

  it("periodAt of any later instant names a period that contains it", () => {
    fc.assert(
      fc.property(
        anchorMs,
        span,
        fc.integer({ min: 0, max: 3 * 365 * DayMs }),
        (a, { interval, count }, later) => {
          const anchor = utc(a)
          const t = utc(a + later)
          const n = Calendar.periodAt(anchor, interval, count, t)
          expect(n).toBeGreaterThanOrEqual(0)
          const p = Calendar.period(anchor, interval, count, n)
          expect(epoch(p.start)).toBeLessThanOrEqual(epoch(t))
          expect(epoch(t)).toBeLessThan(epoch(p.end))
        }
      ),
      runs
    )
  })
})

describe("billing periods: examples", () => {
  /** Period starts in Maldives time. */
  const starts = (anchor: string, interval: Calendar.Interval, count: number, ns: ReadonlyArray<number>) =>
    ns.map((n) =>
      Calendar.formatMaldives(Calendar.periodStart(DateTime.unsafeMake(anchor), interval, count, n))
    )

  it("a 31 January anchor bills on the last day of shorter months and returns to the 31st", () => {
    expect(starts("2026-01-31T10:00:00+05:00", "MONTH", 1, [0, 1, 2, 3, 4, 5, 6, 7, 11, 12, 13])).toEqual([
      "2026-01-31T10:00:00+05:00",
      "2026-02-28T10:00:00+05:00",
      "2026-03-31T10:00:00+05:00",
      "2026-04-30T10:00:00+05:00",
      "2026-05-31T10:00:00+05:00",
      "2026-06-30T10:00:00+05:00",
      "2026-07-31T10:00:00+05:00",
      "2026-08-31T10:00:00+05:00",
      "2026-12-31T10:00:00+05:00",
      "2027-01-31T10:00:00+05:00",
      "2027-02-28T10:00:00+05:00"
    ])
    // 2028 is a leap year: the 29th.
    expect(starts("2027-12-31T10:00:00+05:00", "MONTH", 1, [2])).toEqual(["2028-02-29T10:00:00+05:00"])
  })

  it("a 29 February anchor bills on 28 February of common years and 29 February again in 2032", () => {
    expect(starts("2028-02-29T23:59:59.999+05:00", "MONTH", 12, [0, 1, 2, 3, 4])).toEqual([
      "2028-02-29T23:59:59+05:00",
      "2029-02-28T23:59:59+05:00",
      "2030-02-28T23:59:59+05:00",
      "2031-02-28T23:59:59+05:00",
      "2032-02-29T23:59:59+05:00"
    ])
    expect(starts("2028-02-29T00:00:00+05:00", "MONTH", 1, [1, 12, 48])).toEqual([
      "2028-03-29T00:00:00+05:00",
      "2029-02-28T00:00:00+05:00",
      "2032-02-29T00:00:00+05:00"
    ])
  })

  it("counts months of k: a quarterly plan anchored on 30 November", () => {
    expect(starts("2025-11-30T08:15:00+05:00", "MONTH", 3, [0, 1, 2, 3])).toEqual([
      "2025-11-30T08:15:00+05:00",
      "2026-02-28T08:15:00+05:00",
      "2026-05-30T08:15:00+05:00",
      "2026-08-30T08:15:00+05:00"
    ])
  })

  it("the day is the Maldives day: 20:00Z on 31 January is already 1 February in Malé", () => {
    const anchor = "2026-01-31T20:00:00Z"
    expect(starts(anchor, "MONTH", 1, [0, 1, 2])).toEqual([
      "2026-02-01T01:00:00+05:00",
      "2026-03-01T01:00:00+05:00",
      "2026-04-01T01:00:00+05:00"
    ])
    expect(Calendar.periodKey(DateTime.unsafeMake(anchor))).toBe("2026-02-01")
  })

  it("weeks: every 2 weeks from a Sunday evening, keys in Maldives dates", () => {
    const anchor = DateTime.unsafeMake("2026-03-01T18:30:00+05:00")
    const p = Calendar.period(anchor, "WEEK", 2, 3)
    expect([Calendar.formatMaldives(p.start), Calendar.formatMaldives(p.end)]).toEqual([
      "2026-04-12T18:30:00+05:00",
      "2026-04-26T18:30:00+05:00"
    ])
    expect(Calendar.periodKey(p.start)).toBe("2026-04-12")
  })

  it("periodAt at the edges, and before the anchor", () => {
    const anchor = DateTime.unsafeMake("2026-01-31T10:00:00+05:00")
    const at = (iso: string) => Calendar.periodAt(anchor, "MONTH", 1, DateTime.unsafeMake(iso))
    expect(at("2026-01-31T10:00:00+05:00")).toBe(0)
    expect(at("2026-02-28T09:59:59.999+05:00")).toBe(0)
    expect(at("2026-02-28T10:00:00+05:00")).toBe(1)
    expect(at("2026-03-31T09:59:59.999+05:00")).toBe(1)
    expect(at("2026-03-31T10:00:00+05:00")).toBe(2)
    expect(at("2026-01-31T09:59:59.999+05:00")).toBe(-1)
  })

  it("spans run from one week to one year", () => {
    const valid = (interval: Calendar.Interval, count: number) => Calendar.isValidSpan(interval, count)
    expect([1, 2, 26, 52].map((k) => valid("WEEK", k))).toEqual([true, true, true, true])
    expect([0, -1, 53, 1.5, Number.NaN].map((k) => valid("WEEK", k))).toEqual([
      false,
      false,
      false,
      false,
      false
    ])
    expect([1, 3, 6, 12].map((k) => valid("MONTH", k))).toEqual([true, true, true, true])
    expect([0, 13, 24, 2.5].map((k) => valid("MONTH", k))).toEqual([false, false, false, false])
    expect(Calendar.MaxIntervalCount).toEqual({ WEEK: 52, MONTH: 12 })
  })

  it("a count or index that is not a positive whole number is a defect", () => {
    const anchor = DateTime.unsafeMake("2026-01-31T10:00:00+05:00")
    expect(() => Calendar.periodStart(anchor, "MONTH", 0, 1)).toThrow(RangeError)
    expect(() => Calendar.periodStart(anchor, "WEEK", 1.5, 1)).toThrow(RangeError)
    expect(() => Calendar.periodStart(anchor, "WEEK", 1, 0.5)).toThrow(RangeError)
    expect(() => Calendar.periodAt(anchor, "MONTH", 0, anchor)).toThrow(RangeError)
  })
})

describe("a period index or count that is not whole is a defect, named", () => {
  it("throws with the value it got", () => {
    const anchor = DateTime.unsafeMake("2026-01-31T10:00:00+05:00")
    expect(() => Calendar.periodStart(anchor, "MONTH", 0, 0)).toThrow(
      "interval count must be a positive whole number, got 0"
    )
    expect(() => Calendar.periodStart(anchor, "MONTH", 1.5, 0)).toThrow(
      "interval count must be a positive whole number, got 1.5"
    )
    expect(() => Calendar.periodStart(anchor, "WEEK", 1, 0.5)).toThrow(
      "period index must be a whole number, got 0.5"
    )
    expect(() => Calendar.periodStart(anchor, "WEEK", 1, -1)).not.toThrow()
  })
})
