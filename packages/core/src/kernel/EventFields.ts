/**
 * What every webhook object's fields share: Unix seconds, laari amounts and the currency, annotated so the
 * published JSON Schema says what the integers mean.
 */
import { type DateTime, Schema } from "effect"
import * as Calendar from "./Calendar.js"
import * as Money from "./Money.js"

export const UnixSeconds = Schema.Int.annotations({
  identifier: "EventUnixSeconds",
  description: "Unix time, whole seconds"
})
export const Amount = Schema.NonNegativeInt.annotations({
  identifier: "EventLaari",
  description: "Laari (100 laari = 1 MVR)"
})
export const CurrencyCode = Money.CurrencyCode

// Overloaded so a timestamp that is never null stays a plain number in the object's type.
export function unix(t: DateTime.Utc): number
export function unix(t: DateTime.Utc | null): number | null
export function unix(t: DateTime.Utc | null): number | null {
  return t === null ? null : Calendar.unixSeconds(t)
}
