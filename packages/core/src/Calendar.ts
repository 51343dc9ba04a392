/**
 * All date arithmetic lives here, on the Temporal API. Reads are shown in Maldives time; mandate periods
 * count the customer's own calendar month in the customer's own zone.
 */
import { DateTime, Option } from "effect"
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

/** The calendar month `YYYY-MM` that `t` falls in, in `zone`. */
export const monthKey = (t: DateTime.Utc, zone: string): string =>
  toInstant(t).toZonedDateTimeISO(zone).toPlainDate().toPlainYearMonth().toString()

/** `2026-03-31T14:05:09+05:00`: Maldives time, whole seconds, numeric offset. */
export const formatMaldives = (t: DateTime.Utc): string =>
  toInstant(t)
    .toZonedDateTimeISO(MaldivesZone)
    .toString({ smallestUnit: "second", roundingMode: "trunc", timeZoneName: "never" })

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
