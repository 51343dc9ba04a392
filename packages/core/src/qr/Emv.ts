/**
 * EMVCo merchant-presented mode (MPM) QR payloads: the TLV codec and its CRC. Scheme-neutral; the national
 * scheme's choices live in `QrScheme`.
 *
 * A payload is a sequence of data objects `tag (2 digits) | length (2 digits) | value`. Some tags hold
 * templates, whose value is itself such a sequence: 26-51 (merchant account information), 62 (additional
 * data, whose sub-tags 50-99 are templates again), 64 (merchant information in an alternate language) and
 * 80-99 (unreserved). Every other value is a string.
 *
 * Lengths count characters, and a character is a Unicode code point. The CRC runs over the UTF-8 bytes.
 * That is the reading under which the EMVCo specification's own example verifies: its language template
 * `64200002ZH0104最佳运输0202北京` declares 20 for 20 characters (32 UTF-8 bytes), and its CRC `A13A` is the
 * CRC of the UTF-8 bytes. The published multi-byte examples (EMVCo's Chinese, KHQR's Khmer) cannot tell
 * code points from UTF-16 code units, as all their characters lie in the Basic Multilingual Plane; we count
 * code points, so an emoji is one character (a UTF-16 `length`, as in Java or JavaScript, would say two).
 */
import { Either, Option, Schema } from "effect"

declare class TextEncoder {
  encode(s: string): Uint8Array
}

/** A data object: a two-digit tag and either a string or, for a template, the data objects inside it. */
export interface Field {
  readonly tag: string
  readonly value: string | Fields
}
export type Fields = ReadonlyArray<Field>

/** The longest payload EMVCo allows, in characters. */
export const MaxPayloadLength = 512
/** A length field has two digits, and `00` is not a length EMVCo allows. */
export const MaxValueLength = 99

const tagPattern = /^\d{2}$/
const crcValuePattern = /^[0-9A-F]{4}$/
/** With the `u` flag a surrogate pair is one code point, so this finds only lone surrogates. */
const loneSurrogate = /[\uD800-\uDFFF]/u

const inRange = (tag: string, from: number, to: number): boolean => {
  const n = Number(tag)
  return n >= from && n <= to
}

/**
 * True when `tag` holds a template. `parent` is the path of the template the tag sits in (`undefined` at
 * the top level, `"62"` inside 62). Templates nest two levels at most: inside 62, the payment-system
 * specific templates 50-99.
 */
export const isTemplate = (tag: string, parent?: string): boolean =>
  parent === undefined
    ? inRange(tag, 26, 51) || tag === "62" || tag === "64" || inRange(tag, 80, 99)
    : parent === "62" && inRange(tag, 50, 99)

/** Merchant account information: 02-25 are primitive (card networks), 26-51 templates. */
export const isMerchantAccount = (tag: string): boolean => inRange(tag, 2, 51)

/** The tags every MPM payload carries, besides at least one merchant account information (02-51). */
export const mandatoryTags: ReadonlyArray<string> = ["00", "52", "53", "58", "59", "60", "63"]

/** Characters as EMV counts them: Unicode code points. */
export const length = (text: string): number => {
  let n = 0
  for (const _ of text) n++
  return n
}

// ---------------------------------------------------------------------------------------------------------
// CRC-16/CCITT-FALSE: polynomial 0x1021, initial value 0xFFFF, no reflection, no final xor.

const crcTable: ReadonlyArray<number> = Array.from({ length: 256 }, (_, byte) => {
  let c = byte << 8
  for (let bit = 0; bit < 8; bit++) c = c & 0x8000 ? ((c << 1) ^ 0x1021) & 0xffff : (c << 1) & 0xffff
  return c
})

/** CRC-16/CCITT-FALSE of the UTF-8 bytes of `text`, as four uppercase hex digits (`"123456789"` -> `29B1`). */
export const crc16 = (text: string): string => {
  let crc = 0xffff
  for (const byte of new TextEncoder().encode(text))
    crc = ((crc << 8) & 0xffff) ^ crcTable[((crc >> 8) ^ byte) & 0xff]!
  return crc.toString(16).toUpperCase().padStart(4, "0")
}

/**
 * True when `payload` ends with `6304` and four uppercase hex digits equal to the CRC of everything before
 * them (the CRC covers its own tag and length). Only the checksum: `decode` checks the rest.
 */
export const verifyCrc = (payload: string): boolean => {
  const tail = payload.slice(-8)
  return (
    // Stryker disable next-line ConditionalExpression: a shorter tail that starts with 6304 has fewer than four digits after it, which the pattern refuses
    tail.length === 8 &&
    tail.startsWith("6304") &&
    crcValuePattern.test(tail.slice(4)) &&
    crc16(payload.slice(0, -4)) === tail.slice(4)
  )
}

// ---------------------------------------------------------------------------------------------------------
// Encoding

export const EncodeFailure = Schema.Literal(
  "InvalidTag",
  "ReservedTag",
  "DuplicateTag",
  "EmptyValue",
  "ValueTooLong",
  "TemplateExpected",
  "PrimitiveExpected",
  "InvalidText",
  "PayloadTooLong"
)
export type EncodeFailure = typeof EncodeFailure.Type

/** Fields that cannot be written as a valid payload. `tag` is the path of the offending field (`"62.05"`). */
export class EncodeError extends Schema.TaggedError<EncodeError>()("EmvEncodeError", {
  reason: EncodeFailure,
  tag: Schema.optional(Schema.String),
  message: Schema.String
}) {}

/** `at` is the path of the enclosing template (`undefined` at the top level). */
const encodeLevel = (fields: Fields, at: string | undefined): Either.Either<string, EncodeError> => {
  const seen = new Set<string>()
  let out = ""
  for (const field of fields) {
    const path = at === undefined ? field.tag : `${at}.${field.tag}`
    const fail = (reason: EncodeFailure, message: string) =>
      Either.left(new EncodeError({ reason, tag: path, message }))
    if (!tagPattern.test(field.tag)) return fail("InvalidTag", `Tag "${field.tag}" is not two digits`)
    // The CRC is computed and appended by `encode`; a caller-supplied 63 would be a second, stale one.
    if (at === undefined && field.tag === "63")
      return fail("ReservedTag", "Tag 63 (CRC) is appended by encode")
    if (seen.has(field.tag)) return fail("DuplicateTag", `Tag ${path} appears twice`)
    seen.add(field.tag)
    let value: string
    if (isTemplate(field.tag, at)) {
      if (typeof field.value === "string")
        return fail("TemplateExpected", `Tag ${path} holds a template, not a string`)
      if (field.value.length === 0) return fail("EmptyValue", `Template ${path} is empty`)
      const inner = encodeLevel(field.value, path)
      if (Either.isLeft(inner)) return inner
      value = inner.right
    } else {
      if (typeof field.value !== "string")
        return fail("PrimitiveExpected", `Tag ${path} holds a string, not a template`)
      if (loneSurrogate.test(field.value))
        return fail("InvalidText", `Tag ${path} is not well-formed Unicode`)
      value = field.value
    }
    const n = length(value)
    if (n === 0) return fail("EmptyValue", `Tag ${path} is empty`)
    if (n > MaxValueLength)
      return fail("ValueTooLong", `Tag ${path} is ${n} characters; at most ${MaxValueLength} fit`)
    out += `${field.tag}${String(n).padStart(2, "0")}${value}`
  }
  return Either.right(out)
}

/**
 * Writes `fields` in the order given and appends the CRC (`6304` and its value). Adds nothing else: the
 * caller decides every field, including `00`. Fails on fields no decoder could read back.
 */
export const encode = (fields: Fields): Either.Either<string, EncodeError> =>
  Either.flatMap(encodeLevel(fields, undefined), (body) => {
    const withCrcTag = `${body}6304`
    const payload = `${withCrcTag}${crc16(withCrcTag)}`
    const n = length(payload)
    return n > MaxPayloadLength
      ? Either.left(
          new EncodeError({
            reason: "PayloadTooLong",
            message: `The payload is ${n} characters; at most ${MaxPayloadLength} are allowed`
          })
        )
      : Either.right(payload)
  })

// ---------------------------------------------------------------------------------------------------------
// Decoding

export const DecodeFailure = Schema.Literal(
  "PayloadTooLong",
  "InvalidText",
  "Truncated",
  "InvalidTag",
  "InvalidLength",
  "DuplicateTag",
  "PayloadFormatIndicator",
  "PointOfInitiation",
  "CrcPosition",
  "CrcFormat",
  "CrcMismatch",
  "MissingTag",
  "MissingMerchantAccount"
)
export type DecodeFailure = typeof DecodeFailure.Type

/** Why a payload is not a valid MPM payload. `tag` is the path of the offending field when there is one. */
export class DecodeError extends Schema.TaggedError<DecodeError>()("EmvDecodeError", {
  reason: DecodeFailure,
  tag: Schema.optional(Schema.String),
  message: Schema.String
}) {}

const fail = (reason: DecodeFailure, message: string, tag?: string): Either.Either<never, DecodeError> =>
  Either.left(new DecodeError({ reason, message, ...(tag === undefined ? {} : { tag }) }))

/** `at` is the path of the enclosing template (`undefined` at the top level). */
const decodeLevel = (text: string, at: string | undefined): Either.Either<Fields, DecodeError> => {
  const chars = Array.from(text)
  const fields: Array<Field> = []
  const seen = new Set<string>()
  let i = 0
  while (i < chars.length) {
    const pair = (n: number) => chars.slice(i + n, i + n + 2).join("")
    const where = at === undefined ? "" : ` inside ${at}`
    if (chars.length - i < 4)
      return fail(
        "Truncated",
        `The data ends${where} after character ${i} with an incomplete tag and length`,
        at
      )
    const tag = pair(0)
    const path = at === undefined ? tag : `${at}.${tag}`
    if (!tagPattern.test(tag))
      return fail("InvalidTag", `"${tag}" at character ${i}${where} is not a two-digit tag`, at)
    const len = pair(2)
    if (!tagPattern.test(len))
      return fail("InvalidLength", `Tag ${path} has length "${len}", not two digits`, path)
    const n = Number(len)
    if (n === 0) return fail("InvalidLength", `Tag ${path} has length 00; lengths run from 01 to 99`, path)
    const start = i + 4
    if (start + n > chars.length)
      return fail(
        "Truncated",
        `Tag ${path} declares ${n} characters but only ${chars.length - start} remain`,
        path
      )
    if (seen.has(tag)) return fail("DuplicateTag", `Tag ${path} appears twice`, path)
    seen.add(tag)
    const raw = chars.slice(start, start + n).join("")
    if (isTemplate(tag, at)) {
      const inner = decodeLevel(raw, path)
      if (Either.isLeft(inner)) return inner
      fields.push({ tag, value: inner.right })
    } else {
      fields.push({ tag, value: raw })
    }
    i = start + n
  }
  return Either.right(fields)
}

/**
 * Reads an MPM payload. Checks, in order: at most 512 characters of well-formed Unicode; the TLV structure
 * at every level (two-digit tags and lengths, no value running past its end, no tag twice at one level);
 * `00` first with `01`; `01`, when present, `11` or `12`; `63` last with four uppercase hex digits equal to
 * the CRC; the mandatory tags 00, 52, 53, 58, 59, 60, 63 and at least one merchant account (02-51).
 *
 * The verified CRC is dropped from the result, so `decode(encode(fields))` is `fields`.
 */
export const decode = (payload: string): Either.Either<Fields, DecodeError> => {
  const n = length(payload)
  if (n > MaxPayloadLength)
    return fail("PayloadTooLong", `The payload is ${n} characters; at most ${MaxPayloadLength} are allowed`)
  if (loneSurrogate.test(payload)) return fail("InvalidText", "The payload is not well-formed Unicode")
  return Either.flatMap(decodeLevel(payload, undefined), (fields) => {
    const first = fields[0]
    if (first === undefined) return fail("MissingTag", "The payload is empty")
    if (first.tag !== "00")
      return fail("PayloadFormatIndicator", `The payload starts with tag ${first.tag}, not 00`, "00")
    if (first.value !== "01")
      return fail(
        "PayloadFormatIndicator",
        `Tag 00 (payload format indicator) is "${first.value}", not "01"`,
        "00"
      )
    const poi = fields.find((f) => f.tag === "01")
    if (poi !== undefined && poi.value !== "11" && poi.value !== "12")
      return fail(
        "PointOfInitiation",
        `Tag 01 (point of initiation) is "${poi.value}", not "11" or "12"`,
        "01"
      )
    const last = fields[fields.length - 1]!
    const crcIndex = fields.findIndex((f) => f.tag === "63")
    if (crcIndex === -1) return fail("MissingTag", "Tag 63 (CRC) is missing", "63")
    if (last.tag !== "63")
      return fail("CrcPosition", `Tag 63 (CRC) is not the last field; ${last.tag} follows it`, "63")
    // Stryker disable next-line ConditionalExpression: a template's text ("[object Object]" and the like) is no four hex digits either
    if (typeof last.value !== "string" || !crcValuePattern.test(last.value))
      return fail("CrcFormat", "Tag 63 (CRC) must be four uppercase hexadecimal digits", "63")
    const expected = crc16(payload.slice(0, -4))
    if (expected !== last.value)
      return fail("CrcMismatch", `The CRC is ${last.value} but the payload's CRC is ${expected}`, "63")
    for (const tag of mandatoryTags)
      if (!fields.some((f) => f.tag === tag))
        return fail("MissingTag", `Mandatory tag ${tag} is missing`, tag)
    if (!fields.some((f) => isMerchantAccount(f.tag)))
      return fail("MissingMerchantAccount", "No merchant account information (tags 02 to 51)")
    return Either.right(fields.slice(0, -1))
  })
}

// ---------------------------------------------------------------------------------------------------------
// Reading decoded fields

/** The value of `tag` at this level. */
export const get = (fields: Fields, tag: string): Option.Option<string | Fields> =>
  Option.map(Option.fromNullable(fields.find((f) => f.tag === tag)), (f) => f.value)

/** The string value of `tag`, or of `subTag` inside the template `tag`; `None` if absent or not a string. */
export const getString = (fields: Fields, tag: string, subTag?: string): Option.Option<string> => {
  const value =
    subTag === undefined ? get(fields, tag) : Option.flatMap(getTemplate(fields, tag), (t) => get(t, subTag))
  return Option.filter(value, (v): v is string => typeof v === "string")
}

/** The fields inside the template `tag`; `None` if absent or not a template. */
export const getTemplate = (fields: Fields, tag: string): Option.Option<Fields> =>
  Option.filter(get(fields, tag), (v): v is Fields => typeof v !== "string")
