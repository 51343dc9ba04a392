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

/** The `currency` of every amount the API sends. */
export const CurrencyCode = Schema.Literal(Currency).annotations({
  description: "Always `MVR`: amounts are integer laari, 100 laari = 1 MVR"
})

/** `12550` -> `"125.50"`. */
export const formatMvr = (amount: number): string => {
  const sign = amount < 0 ? "-" : ""
  const abs = Math.abs(amount)
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, "0")}`
}

/**
 * `150000` -> `"MVR 1,500.00"`: an amount as a person reads it, thousands grouped. Pages and notices
 * both use this one, so a customer sees the same figure in the wallet's notice and on the page.
 * (`formatMvr` stays ungrouped: it is the machine form, e.g. in EMV payloads.)
 */
export const display = (amount: number): string =>
  `${Currency} ${formatMvr(amount).replace(/\B(?=(\d{3})+(?!\d))(?=\d*\.)/g, ",")}`

/**
 * Any charge, cap or price: a whole number of laari, at least the platform minimum. One message whatever
 * failed (`override`), so a refused field reads the rule rather than which check tripped.
 */
export const Chargeable = Schema.Number.pipe(
  Schema.int(),
  Schema.greaterThanOrEqualTo(MinAmount)
).annotations({
  title: "Chargeable",
  description: `Laari (100 laari = 1 MVR), at least ${MinAmount}`,
  message: () => ({ message: `must be a whole number of laari of at least ${MinAmount}`, override: true })
})

/** True when `n` is a whole number of laari at least the platform minimum. */
export const isChargeable: (n: number) => boolean = Schema.is(Chargeable)

/** A per-charge cap, a plan price or a checkout amount: whole laari from `MinAmount` to `MaxCap`. */
export const Amount = Schema.Number.pipe(Schema.int(), Schema.between(MinAmount, MaxCap)).annotations({
  title: "Amount",
  description: `Laari (100 laari = 1 MVR), from ${MinAmount} to ${MaxCap}`,
  message: () => ({
    message: `must be a whole number of laari from ${MinAmount} to ${MaxCap}`,
    override: true
  })
})

export const isAmount: (n: number) => boolean = Schema.is(Amount)
