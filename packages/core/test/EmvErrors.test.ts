/**
 * Every refusal of the EMV codec, exactly: its reason, the tag it names and its message, at the edges
 * of each rule (the longest value and payload that fit, the first that does not).
 */
import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import * as Emv from "../src/qr/Emv.js"

const withCrc = (body: string) => `${body}6304${Emv.crc16(`${body}6304`)}`

const refusal = <E extends { readonly reason: string; readonly message: string; readonly tag?: string }>(
  result: Either.Either<unknown, E>
) => {
  if (Either.isRight(result)) throw new Error(`expected a refusal, got ${JSON.stringify(result.right)}`)
  const { reason, message, tag } = result.left
  return tag === undefined ? { reason, message } : { reason, message, tag }
}

const decodeFails = (payload: string) => refusal(Emv.decode(payload))
const encodeFails = (fields: Emv.Fields) => refusal(Emv.encode(fields))

describe("Emv.decode refusals", () => {
  it.each([
    ["", { reason: "MissingTag", message: "The payload is empty" }],
    ["\uD800", { reason: "InvalidText", message: "The payload is not well-formed Unicode" }],
    [
      "000",
      { reason: "Truncated", message: "The data ends after character 0 with an incomplete tag and length" }
    ],
    // Four characters are a whole tag and length, however wrong.
    [
      "0000",
      { reason: "InvalidLength", message: "Tag 00 has length 00; lengths run from 01 to 99", tag: "00" }
    ],
    [
      "2603000",
      {
        reason: "Truncated",
        message: "The data ends inside 26 after character 0 with an incomplete tag and length",
        tag: "26"
      }
    ],
    ["AB01x", { reason: "InvalidTag", message: '"AB" at character 0 is not a two-digit tag' }],
    [
      "2605AB01x",
      { reason: "InvalidTag", message: '"AB" at character 0 inside 26 is not a two-digit tag', tag: "26" }
    ],
    ["00AB", { reason: "InvalidLength", message: 'Tag 00 has length "AB", not two digits', tag: "00" }],
    [
      "26040105",
      { reason: "Truncated", message: "Tag 26.01 declares 5 characters but only 0 remain", tag: "26.01" }
    ],
    ["0005ab", { reason: "Truncated", message: "Tag 00 declares 5 characters but only 2 remain", tag: "00" }],
    ["000201000201", { reason: "DuplicateTag", message: "Tag 00 appears twice", tag: "00" }],
    ["26100001a0001a", { reason: "DuplicateTag", message: "Tag 26.00 appears twice", tag: "26.00" }],
    [
      "010211",
      { reason: "PayloadFormatIndicator", message: "The payload starts with tag 01, not 00", tag: "00" }
    ],
    [
      "000202",
      {
        reason: "PayloadFormatIndicator",
        message: 'Tag 00 (payload format indicator) is "02", not "01"',
        tag: "00"
      }
    ],
    [
      "000201010213",
      {
        reason: "PointOfInitiation",
        message: 'Tag 01 (point of initiation) is "13", not "11" or "12"',
        tag: "01"
      }
    ],
    ["00020152041234", { reason: "MissingTag", message: "Tag 63 (CRC) is missing", tag: "63" }],
    [
      "0002016304ABCD52041234",
      { reason: "CrcPosition", message: "Tag 63 (CRC) is not the last field; 52 follows it", tag: "63" }
    ],
    [
      "0002016304abcd",
      { reason: "CrcFormat", message: "Tag 63 (CRC) must be four uppercase hexadecimal digits", tag: "63" }
    ],
    [
      "0002016304ABCD",
      {
        reason: "CrcMismatch",
        message: `The CRC is ABCD but the payload's CRC is ${Emv.crc16("0002016304")}`,
        tag: "63"
      }
    ],
    [withCrc("000201"), { reason: "MissingTag", message: "Mandatory tag 52 is missing", tag: "52" }],
    [
      withCrc("00020152041234530346258 02MV5903ABC6004Male".replace(" ", "")),
      { reason: "MissingMerchantAccount", message: "No merchant account information (tags 02 to 51)" }
    ]
  ])("%j", (payload, expected) => {
    expect(decodeFails(payload)).toEqual(expected)
  })

  it("refuses a payload over 512 characters, naming its length, and reads one of exactly 512", () => {
    expect(decodeFails("0".repeat(513))).toEqual({
      reason: "PayloadTooLong",
      message: "The payload is 513 characters; at most 512 are allowed"
    })
    expect(decodeFails("0".repeat(512)).reason).not.toBe("PayloadTooLong")
  })
})

describe("Emv.encode refusals", () => {
  it.each([
    [[{ tag: "A1", value: "x" }], { reason: "InvalidTag", message: 'Tag "A1" is not two digits', tag: "A1" }],
    [
      [{ tag: "63", value: "x" }],
      { reason: "ReservedTag", message: "Tag 63 (CRC) is appended by encode", tag: "63" }
    ],
    [
      [
        { tag: "00", value: "01" },
        { tag: "00", value: "01" }
      ],
      { reason: "DuplicateTag", message: "Tag 00 appears twice", tag: "00" }
    ],
    [
      [{ tag: "26", value: "x" }],
      { reason: "TemplateExpected", message: "Tag 26 holds a template, not a string", tag: "26" }
    ],
    [[{ tag: "26", value: [] }], { reason: "EmptyValue", message: "Template 26 is empty", tag: "26" }],
    [
      [{ tag: "52", value: [{ tag: "00", value: "x" }] }],
      { reason: "PrimitiveExpected", message: "Tag 52 holds a string, not a template", tag: "52" }
    ],
    [
      [{ tag: "59", value: "\uD800" }],
      { reason: "InvalidText", message: "Tag 59 is not well-formed Unicode", tag: "59" }
    ],
    [[{ tag: "59", value: "" }], { reason: "EmptyValue", message: "Tag 59 is empty", tag: "59" }],
    [
      [{ tag: "62", value: [{ tag: "05", value: "" }] }],
      { reason: "EmptyValue", message: "Tag 62.05 is empty", tag: "62.05" }
    ],
    [
      [{ tag: "59", value: "x".repeat(100) }],
      { reason: "ValueTooLong", message: "Tag 59 is 100 characters; at most 99 fit", tag: "59" }
    ]
  ] as ReadonlyArray<[Emv.Fields, object]>)("%j", (fields, expected) => {
    expect(encodeFails(fields)).toEqual(expected)
  })

  it("takes 63 inside a template (only the top level's is the CRC) and a value of exactly 99 characters", () => {
    expect(Either.isRight(Emv.encode([{ tag: "26", value: [{ tag: "63", value: "x" }] }]))).toBe(true)
    expect(Either.isRight(Emv.encode([{ tag: "59", value: "x".repeat(99) }]))).toBe(true)
  })

  it("refuses a payload over 512 characters and writes one of exactly 512", () => {
    // 4 values of 99 (+4 each) = 412, the CRC 8: 420; a last value of n adds n + 4.
    const fields = (last: number): Emv.Fields => [
      ...["10", "11", "12", "13"].map((tag) => ({ tag, value: "x".repeat(99) })),
      { tag: "14", value: "x".repeat(last) }
    ]
    expect(Emv.encode(fields(88)).pipe(Either.map((p) => p.length))).toEqual(Either.right(512))
    expect(encodeFails(fields(89))).toEqual({
      reason: "PayloadTooLong",
      message: "The payload is 513 characters; at most 512 are allowed"
    })
  })
})

describe("Emv.isTemplate and verifyCrc at their edges", () => {
  it("knows the templates of the top level and of tag 62", () => {
    for (const tag of ["26", "51", "62", "64", "80", "99"]) expect(Emv.isTemplate(tag), tag).toBe(true)
    for (const tag of ["25", "52", "63", "65", "79"]) expect(Emv.isTemplate(tag), tag).toBe(false)
    expect(Emv.isTemplate("50", "62")).toBe(true)
    expect(Emv.isTemplate("99", "62")).toBe(true)
    expect(Emv.isTemplate("49", "62")).toBe(false)
    expect(Emv.isTemplate("50", "26")).toBe(false)
    expect(Emv.isTemplate("26", "62")).toBe(false)
  })

  it("accepts only a trailing 6304 with the right uppercase CRC", () => {
    const good = withCrc("000201")
    expect(Emv.verifyCrc(good)).toBe(true)
    expect(Emv.verifyCrc(good.slice(-7))).toBe(false)
    expect(Emv.verifyCrc(`${good.slice(0, -8)}6305${good.slice(-4)}`)).toBe(false)
    expect(Emv.verifyCrc(`${good.slice(0, -4)}${good.slice(-4).toLowerCase()}`)).toBe(
      good.slice(-4) === good.slice(-4).toLowerCase()
    )
    expect(Emv.verifyCrc(`${good.slice(0, -4)}ZZZZ`)).toBe(false)
    // A checksum that matches but sits under another tag or length is not the CRC field.
    const under6305 = `0002016305${Emv.crc16("0002016305")}`
    expect(Emv.verifyCrc(under6305)).toBe(false)
  })
})

describe("Emv.DecodeError", () => {
  it("has no tag at all when it names none", () => {
    const error = Either.getLeft(Emv.decode("")).pipe((o) => (o._tag === "Some" ? o.value : undefined))
    expect(error).toMatchObject({ reason: "MissingTag" })
    expect(Object.keys(error!)).not.toContain("tag")
  })
})
