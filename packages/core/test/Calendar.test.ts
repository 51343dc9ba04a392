import { describe, expect, it } from "@effect/vitest"
import { DateTime, Option } from "effect"
import fc from "fast-check"
import * as Calendar from "../src/Calendar.js"

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
