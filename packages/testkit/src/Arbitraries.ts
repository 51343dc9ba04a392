/**
 * fast-check arbitraries for laari's domain: amounts, mandate terms and caps, time zones, instants and
 * sequences of charges interleaved with clock moves.
 */
import { Ids, type Mandate, Money } from "@laari/core"
import { DateTime } from "effect"
import fc from "fast-check"

/** Any whole, non-negative number of laari (up to 1,000,000 MVR). */
export const laari: fc.Arbitrary<number> = fc.integer({ min: 0, max: 100_000_000 })

/** A chargeable amount within the platform's limits: `MinAmount` to `MaxCap`. */
export const amount: fc.Arbitrary<number> = fc.integer({ min: Money.MinAmount, max: Money.MaxCap })

/** Amounts no charge accepts: below the minimum, negative, or fractional (`99`, `150.5`). */
export const invalidAmount: fc.Arbitrary<number> = fc.oneof(
  fc.integer({ min: -Money.MaxCap, max: Money.MinAmount - 1 }),
  fc.integer({ min: Money.MinAmount, max: Money.MaxCap - 1 }).map((n) => n + 0.5)
)

export interface Caps {
  readonly perChargeCap: number
  /** `null`: no period accounting. */
  readonly periodCap: number | null
}

/** Valid caps: a per-charge cap in range and, maybe, a period cap of at least it. */
export const caps: fc.Arbitrary<Caps> = amount.chain((perChargeCap) =>
  fc.record({
    perChargeCap: fc.constant(perChargeCap),
    periodCap: fc.option(fc.integer({ min: perChargeCap, max: perChargeCap * 20 }), { nil: null })
  })
)

/** Zones with unusual offsets and both hemispheres' daylight saving, around every month boundary. */
export const TimeZones = [
  "Indian/Maldives",
  "Pacific/Kiritimati",
  "Pacific/Pago_Pago",
  "Asia/Kathmandu",
  "America/St_Johns",
  "Europe/London",
  "Australia/Lord_Howe",
  "America/Santiago",
  "UTC"
] as const

export const timeZone: fc.Arbitrary<string> = fc.constantFrom(...TimeZones)

export const MinInstant = Date.UTC(2024, 0, 1)
export const MaxInstant = Date.UTC(2031, 0, 1) - 1

/** An instant in 2024-2030, to the millisecond. */
export const instant: fc.Arbitrary<DateTime.Utc> = fc
  .integer({ min: MinInstant, max: MaxInstant })
  .map((ms) => DateTime.unsafeMake(ms))

/** Merchant text: non-blank, at most `maxLength`, never a UUID (a UUID `{id}` is looked up as an id). */
export const text = (maxLength = 255): fc.Arbitrary<string> =>
  fc.string({ minLength: 1, maxLength }).filter((s) => s.trim().length > 0 && !Ids.isUuid(s))

/** Terms that pass `Mandate.validateTerms` at `now` (whole-second `expiresAt`, at most 365 days out). */
export const terms = (now: DateTime.Utc): fc.Arbitrary<Mandate.Terms> =>
  fc
    .record({
      reference: text(),
      title: text(),
      description: fc.option(fc.string({ maxLength: 255 }), { nil: null }),
      caps,
      expiresInSeconds: fc.option(fc.integer({ min: 1, max: 365 * 86_400 }), { nil: null }),
      returnUrl: fc.option(fc.webUrl(), { nil: null })
    })
    .map(
      ({ caps, expiresInSeconds, ...rest }): Mandate.Terms => ({
        ...rest,
        perChargeCap: caps.perChargeCap,
        periodCap: caps.periodCap,
        period: caps.periodCap === null ? null : "MONTH",
        expiresAt:
          expiresInSeconds === null
            ? null
            : DateTime.unsafeMake(
                Math.floor(DateTime.toEpochMillis(now) / 1000) * 1000 + expiresInSeconds * 1000
              )
      })
    )

/** One step of a charging history: a charge attempt, or the clock moving forward. */
export type Step =
  | { readonly _tag: "Charge"; readonly amount: number }
  | { readonly _tag: "Advance"; readonly millis: number }

const minute = 60_000
const day = 86_400_000

/** A clock move: minutes, hours, days (across month boundaries), now and then most of a year. */
export const advance: fc.Arbitrary<Step> = fc
  .oneof(
    { arbitrary: fc.integer({ min: 1, max: 60 * minute }), weight: 4 },
    { arbitrary: fc.integer({ min: 60 * minute, max: 45 * day }), weight: 4 },
    { arbitrary: fc.integer({ min: 45 * day, max: 300 * day }), weight: 1 }
  )
  .map((millis) => ({ _tag: "Advance", millis }))

/** A charge attempt of mostly valid amounts around `perChargeCap`, sometimes an invalid one. */
export const charge = (perChargeCap: number): fc.Arbitrary<Step> =>
  fc
    .oneof(
      { arbitrary: fc.integer({ min: Money.MinAmount, max: perChargeCap }), weight: 8 },
      { arbitrary: fc.integer({ min: perChargeCap + 1, max: perChargeCap * 2 }), weight: 1 },
      { arbitrary: invalidAmount, weight: 1 }
    )
    .map((amount) => ({ _tag: "Charge", amount }))

/** Charges interleaved with clock moves. */
export const steps = (perChargeCap: number, maxLength = 40): fc.Arbitrary<ReadonlyArray<Step>> =>
  fc.array(fc.oneof({ arbitrary: charge(perChargeCap), weight: 3 }, { arbitrary: advance, weight: 1 }), {
    maxLength,
    size: "max"
  })

/** Caps with a charging history that fits them. */
export const chargeSequence: fc.Arbitrary<{ readonly caps: Caps; readonly steps: ReadonlyArray<Step> }> =
  caps.chain((caps) => fc.record({ caps: fc.constant(caps), steps: steps(caps.perChargeCap) }))
