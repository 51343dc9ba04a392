/**
 * The national QR scheme profile: every tag, identifier and format our codes use, in one place.
 *
 * The Maldives has no published EMV MPM profile we can cite, so this profile is our decision. It follows
 * EMVCo MPM v1.1 and the conventions of the published national profiles (Pix, PayNow, KHQR, QRIS):
 *
 * | tag | content |
 * | --- | --- |
 * | 00 | `01` |
 * | 01 | `11` static, `12` dynamic |
 * | 26 | merchant account template: 00 `mv.laari` (our globally unique identifier, a reverse domain name as EMV allows), 01 merchant id (UUID, lowercase), 02 outlet id (decimal) |
 * | 52 | the merchant's MCC, four digits |
 * | 53 | `462` (MVR, ISO 4217 numeric) |
 * | 54 | dynamic only: the amount in MVR with two decimals (`12550` laari -> `125.50`) |
 * | 58 | `MV` |
 * | 59 | merchant name in printable ASCII, at most 25 characters, never empty (`MERCHANT`) |
 * | 60 | merchant city in printable ASCII, at most 15 characters, never empty (`MALE`) |
 * | 62 | 05 (reference label) the `qrid`; 03 (store label) the outlet label, when given |
 * | 64 | when a local name is given: 00 `dv`, 01 the name, 02 the city when given, in Thaana as UTF-8 |
 * | 63 | CRC-16/CCITT-FALSE, four uppercase hex digits |
 *
 * The outlet label goes in 62-03 "store label" rather than 62-07 "terminal label": EMV defines the store
 * label for the shop and the terminal label for a till inside it, and an outlet is a shop.
 */
import { Either, Option, Schema } from "effect"
import * as Emv from "./Emv.js"
import { isUuid } from "../kernel/Ids.js"
import { formatMvr } from "../kernel/Money.js"
import * as QrText from "./QrText.js"

export const Type = Schema.Literal("STATIC", "DYNAMIC").annotations({
  description:
    "`STATIC`: reusable, the customer enters the amount; `DYNAMIC`: for one payment of exactly `amount`, until `expiresAt`"
})
export type Type = typeof Type.Type

/** Our globally unique identifier in the merchant account template; compared case-insensitively, as Pix does. */
export const GloballyUniqueIdentifier = "mv.laari"

/** Every tag and sub-tag of the profile. */
export const Tags = {
  payloadFormat: "00",
  pointOfInitiation: "01",
  merchantAccount: "26",
  merchantAccountGuid: "00",
  merchantAccountMerchantId: "01",
  merchantAccountOutletId: "02",
  merchantCategory: "52",
  currency: "53",
  amount: "54",
  country: "58",
  merchantName: "59",
  merchantCity: "60",
  additionalData: "62",
  additionalDataOutletLabel: "03",
  additionalDataQrid: "05",
  language: "64",
  languagePreference: "00",
  languageName: "01",
  languageCity: "02"
} as const

export const PointOfInitiation: Readonly<Record<Type, string>> = { STATIC: "11", DYNAMIC: "12" }
export const CurrencyNumeric = "462"
export const CountryCode = "MV"
/** ISO 639-1 for Dhivehi, the language of the 64 template. */
export const LocalLanguage = "dv"

export const MaxNameLength = 25
export const MaxCityLength = 15
export const MaxLabelLength = 25
export const FallbackName = "MERCHANT"
export const FallbackCity = "MALE"

/** `54` holds at most 13 characters: ten integer digits, the point and two decimals. */
export const MaxAmount = 999_999_999_999

// ---------------------------------------------------------------------------------------------------------
// qrid

/**
 * `LQ` and 22 characters of Crockford base32 (digits and capitals without I, L, O, U): 110 random bits,
 * 24 characters, so it fits the 25 of the reference label. Unguessable, and unique by the database's
 * constraint (a collision among 2^110 values is never expected).
 */
export const qridFormat = /^LQ[0-9A-HJKMNP-TV-Z]{22}$/
export const QridPrefix = "LQ"
/** Random bytes `makeQrid` needs: 14 bytes, of which the first 110 bits are used. */
export const QridBytes = 14

const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

/**
 * A qrid from `randomBytes` (at least `QridBytes` of them), so core stays pure: the caller brings the
 * randomness. Fewer bytes are a programming error and throw.
 */
export const makeQrid = (randomBytes: Uint8Array): string => {
  if (randomBytes.length < QridBytes)
    throw new RangeError(`makeQrid needs ${QridBytes} random bytes, got ${randomBytes.length}`)
  let out = QridPrefix
  let acc = 0
  let bits = 0
  let next = 0
  for (let k = 0; k < 22; k++) {
    // Stryker disable next-line EqualityOperator: at exactly five bits left the next byte is only read sooner; the same bits come out
    if (bits < 5) {
      acc = (acc << 8) | randomBytes[next++]!
      bits += 8
    }
    bits -= 5
    out += crockford[(acc >> bits) & 31]
    acc &= (1 << bits) - 1
  }
  return out
}

export const isQrid = (s: string): boolean => qridFormat.test(s)

// ---------------------------------------------------------------------------------------------------------
// Text: EMV's basic character set for 59 and 60, UTF-8 for the language template (`QrText`).

const fit = (text: string, max: number, fallback: string): string =>
  QrText.transliterate(text).slice(0, max).trimEnd() || fallback

/** What tag 59 carries for a merchant name. */
export const emvName = (name: string): string => fit(name, MaxNameLength, FallbackName)
/** What tag 60 carries for a city. */
export const emvCity = (city: string): string => fit(city, MaxCityLength, FallbackCity)

// ---------------------------------------------------------------------------------------------------------
// Amounts

const amountPattern = /^(\d{1,10})(?:\.(\d{1,2}))?$/

/** `54` as written by us: `12550` -> `"125.50"`. */
export const formatAmount = (laari: number): string => formatMvr(laari)

/**
 * `54` back to laari, exactly, by reading the digits (no floating point): `"125.50"` -> `12550`,
 * `"125.5"` -> `12550`, `"125"` -> `12500`. `None` for anything else, or zero.
 */
export const parseAmount = (text: string): Option.Option<number> => {
  const m = amountPattern.exec(text)
  if (m === null) return Option.none()
  const laari = Number(m[1]) * 100 + Number((m[2] ?? "").padEnd(2, "0"))
  return laari > 0 ? Option.some(laari) : Option.none()
}

// ---------------------------------------------------------------------------------------------------------
// Building

export interface Merchant {
  /** The merchant's UUID. */
  readonly id: string
  readonly name: string
  readonly city: string
  /** ISO 18245 merchant category code, four digits. */
  readonly mcc: string
  /** The name in Thaana (or any script), for the language template. */
  readonly nameLocal?: string | null
  readonly cityLocal?: string | null
}

export interface BuildInput {
  readonly type: Type
  readonly qrid: string
  readonly merchant: Merchant
  readonly outletId: number
  readonly outletLabel?: string | null
  /** Laari; required for `DYNAMIC`, absent (or `null`) for `STATIC`. */
  readonly amount?: number | null
}

export const BuildFailure = Schema.Literal(
  "Qrid",
  "MerchantId",
  "OutletId",
  "MerchantCategory",
  "Amount",
  "Encoding"
)
export type BuildFailure = typeof BuildFailure.Type

/** Input the profile cannot encode. A programming error upstream: requests are validated before this. */
export class BuildError extends Schema.TaggedError<BuildError>()("QrBuildError", {
  reason: BuildFailure,
  message: Schema.String
}) {}

const outletIdPattern = /^[1-9]\d{0,15}$/
const mccPattern = /^\d{4}$/

/** The fields of a code, before the CRC. */
export const fields = (input: BuildInput): Either.Either<Emv.Fields, BuildError> => {
  const fail = (reason: BuildFailure, message: string) => Either.left(new BuildError({ reason, message }))
  const { merchant, type } = input
  if (!isQrid(input.qrid)) return fail("Qrid", `qrid "${input.qrid}" does not match ${qridFormat.source}`)
  if (!isUuid(merchant.id)) return fail("MerchantId", `Merchant id "${merchant.id}" is not a UUID`)
  if (!Number.isSafeInteger(input.outletId) || input.outletId < 1)
    return fail("OutletId", `Outlet id ${input.outletId} is not a positive whole number`)
  if (!mccPattern.test(merchant.mcc))
    return fail("MerchantCategory", `MCC "${merchant.mcc}" is not four digits`)
  const amount = input.amount ?? null
  if (type === "STATIC" && amount !== null) return fail("Amount", "A static code carries no amount")
  if (
    type === "DYNAMIC" &&
    // Stryker disable next-line ConditionalExpression: `Number.isSafeInteger(null)` is false; the `null` check only narrows the type
    (amount === null || !Number.isSafeInteger(amount) || amount < 1 || amount > MaxAmount)
  )
    return fail("Amount", `A dynamic code needs a whole amount from 1 to ${MaxAmount} laari, got ${amount}`)

  const out: Array<Emv.Field> = [
    { tag: Tags.payloadFormat, value: "01" },
    { tag: Tags.pointOfInitiation, value: PointOfInitiation[type] },
    {
      tag: Tags.merchantAccount,
      value: [
        { tag: Tags.merchantAccountGuid, value: GloballyUniqueIdentifier },
        { tag: Tags.merchantAccountMerchantId, value: merchant.id.toLowerCase() },
        { tag: Tags.merchantAccountOutletId, value: String(input.outletId) }
      ]
    },
    { tag: Tags.merchantCategory, value: merchant.mcc },
    { tag: Tags.currency, value: CurrencyNumeric }
  ]
  if (amount !== null) out.push({ tag: Tags.amount, value: formatAmount(amount) })
  out.push(
    { tag: Tags.country, value: CountryCode },
    { tag: Tags.merchantName, value: emvName(merchant.name) },
    { tag: Tags.merchantCity, value: emvCity(merchant.city) }
  )
  const label =
    input.outletLabel == null
      ? ""
      : QrText.transliterate(input.outletLabel).slice(0, MaxLabelLength).trimEnd()
  out.push({
    tag: Tags.additionalData,
    value: [
      ...(label.length > 0 ? [{ tag: Tags.additionalDataOutletLabel, value: label }] : []),
      { tag: Tags.additionalDataQrid, value: input.qrid }
    ]
  })
  const nameLocal = merchant.nameLocal == null ? null : QrText.localText(merchant.nameLocal, MaxNameLength)
  const cityLocal = merchant.cityLocal == null ? null : QrText.localText(merchant.cityLocal, MaxCityLength)
  // EMV makes the alternate-language name mandatory inside 64, so a city alone writes no template.
  if (nameLocal !== null)
    out.push({
      tag: Tags.language,
      value: [
        { tag: Tags.languagePreference, value: LocalLanguage },
        { tag: Tags.languageName, value: nameLocal },
        ...(cityLocal === null ? [] : [{ tag: Tags.languageCity, value: cityLocal }])
      ]
    })
  return Either.right(out)
}

/** The payload of a code: the string to render as a QR code. At most 512 characters. */
export const build = (input: BuildInput): Either.Either<string, BuildError> =>
  Either.flatMap(fields(input), (f) =>
    // Stryker disable next-line ArrowFunction,ObjectLiteral,StringLiteral: unreachable, as the profile's limits keep every value `fields` writes within 99 characters and the payload within 512 (the round-trip property holds it), so `encode` refuses nothing
    Either.mapLeft(Emv.encode(f), (e) => new BuildError({ reason: "Encoding", message: e.message }))
  )

// ---------------------------------------------------------------------------------------------------------
// Parsing

export interface Parsed {
  readonly type: Type
  readonly qrid: string
  /** Laari; `null` for a static code. */
  readonly amount: number | null
  readonly merchant: {
    readonly id: string
    readonly name: string
    readonly city: string
    readonly mcc: string
    readonly nameLocal: string | null
    readonly cityLocal: string | null
  }
  readonly outletId: number
  readonly outletLabel: string | null
}

/** A valid EMV payload of another scheme (answered as "no such code", not as a malformed one). */
export class ForeignScheme extends Schema.TaggedError<ForeignScheme>()("ForeignScheme", {
  /** The globally unique identifiers of the payload's merchant account templates. */
  identifiers: Schema.Array(Schema.String),
  message: Schema.String
}) {}

export const ProfileFailure = Schema.Literal(
  "PointOfInitiation",
  "MerchantAccount",
  "MerchantCategory",
  "Currency",
  "Country",
  "Amount",
  "Qrid"
)
export type ProfileFailure = typeof ProfileFailure.Type

/** Not a valid EMV payload, or one of ours that breaks the profile. */
export class InvalidPayload extends Schema.TaggedError<InvalidPayload>()("InvalidPayload", {
  reason: Schema.Union(Emv.DecodeFailure, ProfileFailure),
  message: Schema.String
}) {}

export type ParseError = ForeignScheme | InvalidPayload

const identifiers = (fields: Emv.Fields): ReadonlyArray<string> =>
  fields.flatMap((f) =>
    Emv.isMerchantAccount(f.tag) && typeof f.value !== "string"
      ? Option.toArray(Emv.getString(f.value, "00"))
      : []
  )

/** Reads a payload of our scheme, verifying the CRC, the EMV rules and this profile. */
export const parse = (payload: string): Either.Either<Parsed, ParseError> => {
  const decoded = Emv.decode(payload)
  if (Either.isLeft(decoded))
    return Either.left(new InvalidPayload({ reason: decoded.left.reason, message: decoded.left.message }))
  const f = decoded.right
  const guid = Emv.getString(f, Tags.merchantAccount, Tags.merchantAccountGuid)
  if (Option.isNone(guid) || guid.value.toLowerCase() !== GloballyUniqueIdentifier) {
    const ids = identifiers(f)
    return Either.left(
      new ForeignScheme({
        identifiers: ids,
        message: `Not a code of this scheme (merchant account identifiers: ${ids.join(", ") || "none"})`
      })
    )
  }
  const fail = (reason: ProfileFailure, message: string) =>
    Either.left(new InvalidPayload({ reason, message }))
  const text = (tag: string, subTag?: string) => Option.getOrNull(Emv.getString(f, tag, subTag))

  const poi = text(Tags.pointOfInitiation)
  const type: Type | null = poi === "11" ? "STATIC" : poi === "12" ? "DYNAMIC" : null
  if (type === null) return fail("PointOfInitiation", "Tag 01 must be 11 (static) or 12 (dynamic)")
  const merchantId = text(Tags.merchantAccount, Tags.merchantAccountMerchantId)
  // Stryker disable next-line ConditionalExpression: `isUuid(null)` is false; the `null` check only narrows the type
  if (merchantId === null || !isUuid(merchantId))
    return fail("MerchantAccount", "Tag 26.01 must be the merchant's UUID")
  const outletId = text(Tags.merchantAccount, Tags.merchantAccountOutletId)
  // Stryker disable next-line ConditionalExpression: the pattern refuses `null` (read as "null"); the `null` check only narrows the type
  if (outletId === null || !outletIdPattern.test(outletId) || !Number.isSafeInteger(Number(outletId)))
    return fail("MerchantAccount", "Tag 26.02 must be the outlet id, a positive whole number")
  const mcc = text(Tags.merchantCategory)
  // Stryker disable next-line ConditionalExpression: the pattern refuses `null` (read as "null"); the `null` check only narrows the type
  if (mcc === null || !mccPattern.test(mcc)) return fail("MerchantCategory", "Tag 52 must be four digits")
  if (text(Tags.currency) !== CurrencyNumeric)
    return fail("Currency", `Tag 53 must be ${CurrencyNumeric} (MVR)`)
  if (text(Tags.country) !== CountryCode) return fail("Country", `Tag 58 must be ${CountryCode}`)
  const qrid = text(Tags.additionalData, Tags.additionalDataQrid)
  // Stryker disable next-line ConditionalExpression: `isQrid(null)` is false; the `null` check only narrows the type
  if (qrid === null || !isQrid(qrid)) return fail("Qrid", "Tag 62.05 must be a qrid")
  const amountText = text(Tags.amount)
  let amount: number | null = null
  if (type === "STATIC") {
    if (amountText !== null) return fail("Amount", "A static code carries no amount (tag 54)")
  } else {
    if (amountText === null) return fail("Amount", "A dynamic code carries its amount in tag 54")
    const parsed = parseAmount(amountText)
    if (Option.isNone(parsed)) return fail("Amount", `Tag 54 "${amountText}" is not a positive amount in MVR`)
    amount = parsed.value
  }
  return Either.right({
    type,
    qrid,
    amount,
    merchant: {
      id: merchantId,
      // Stryker disable next-line StringLiteral: 59 is mandatory (`Emv.decode` refuses a payload without it); the fallback only narrows the type
      name: text(Tags.merchantName) ?? "",
      // Stryker disable next-line StringLiteral: 60 is mandatory (`Emv.decode` refuses a payload without it); the fallback only narrows the type
      city: text(Tags.merchantCity) ?? "",
      mcc,
      nameLocal: text(Tags.language, Tags.languageName),
      cityLocal: text(Tags.language, Tags.languageCity)
    },
    outletId: Number(outletId),
    outletLabel: text(Tags.additionalData, Tags.additionalDataOutletLabel)
  })
}
