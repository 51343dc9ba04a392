/**
 * Money is an integer number of laari (100 laari = 1 MVR). Nothing in laari ever holds a fraction.
 */
import { Brand, Schema } from "effect"

export type Laari = number & Brand.Brand<"Laari">

/** A non-negative whole number of laari. */
export const Laari = Brand.refined<Laari>(
  (n) => Number.isSafeInteger(n) && n >= 0,
  (n) => Brand.error(`Expected a whole, non-negative number of laari, got ${n}`)
)

export const LaariSchema = Schema.Int.pipe(Schema.nonNegative(), Schema.fromBrand(Laari))

/** The smallest amount of any charge, cap or price. */
export const MinAmount = 100
/** The largest per-charge cap and plan price. */
export const MaxCap = 500_000

export const Currency = "MVR" as const

/** `12550` -> `"125.50"`. */
export const formatMvr = (amount: number): string => {
  const sign = amount < 0 ? "-" : ""
  const abs = Math.abs(amount)
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, "0")}`
}

/** True when `n` is a whole number of laari at least the platform minimum. */
export const isChargeable = (n: number): boolean => Number.isSafeInteger(n) && n >= MinAmount
