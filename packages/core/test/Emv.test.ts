import { describe, expect, it } from "@effect/vitest"
import { Either, Option } from "effect"
import fc from "fast-check"
import * as Emv from "../src/qr/Emv.js"
import { promptPayWithoutMandatoryTags, published } from "./fixtures/emv-published.js"

const tag2 = (n: number) => String(n).padStart(2, "0")

/** Characters from the scripts a payload meets: ASCII, Thaana, Thai, CJK, emoji (outside the BMP). */
const char = fc
  .oneof(
    fc.integer({ min: 0x20, max: 0x7e }),
    fc.integer({ min: 0x0780, max: 0x07b1 }),
    fc.integer({ min: 0x0e01, max: 0x0e5b }),
    fc.integer({ min: 0x4e00, max: 0x9fff }),
    fc.integer({ min: 0x1f300, max: 0x1faff })
  )
  .map((cp) => String.fromCodePoint(cp))

const text = (maxLength: number) =>
  fc.oneof(
    fc.array(char, { minLength: 1, maxLength }).map((cs) => cs.join("")),
    fc.string({ unit: "binary", minLength: 1, maxLength })
  )

/** A field for `tag` at `parent`: a template when EMV says so, with a few sub-fields of bounded length. */
const fieldFor = (tag: string, parent?: string): fc.Arbitrary<Emv.Field> => {
  if (!Emv.isTemplate(tag, parent))
    return text(parent === undefined ? 30 : parent.includes(".") ? 8 : 20).map((value) => ({ tag, value }))
  const path = parent === undefined ? tag : `${parent}.${tag}`
  const maxFields = parent === undefined ? 3 : 2
  return fc
    .uniqueArray(fc.integer({ min: 0, max: 99 }).map(tag2), { minLength: 1, maxLength: maxFields })
    .chain((tags) => fc.tuple(...tags.map((t) => fieldFor(t, path))))
    .map((value) => ({ tag, value }))
}

const optionalTags = ["54", "55", "56", "57", "61", "62", "64", "65", "70", "79", "80", "85", "99"]

/** Valid MPM field sets (no CRC): 00 first, the mandatory tags, merchant accounts, optional fields, shuffled. */
const fieldSets: fc.Arbitrary<Emv.Fields> = fc
  .record({
    poi: fc.option(fc.constantFrom("11", "12"), { nil: undefined }),
    accounts: fc.uniqueArray(fc.integer({ min: 2, max: 51 }).map(tag2), { minLength: 1, maxLength: 2 }),
    optional: fc.uniqueArray(fc.constantFrom(...optionalTags), { maxLength: 4 })
  })
  .chain(({ poi, accounts, optional }) =>
    fc
      .tuple(...[...accounts, "52", "53", "58", "59", "60", ...optional].map((t) => fieldFor(t)))
      .chain((rest) =>
        fc.shuffledSubarray(poi === undefined ? rest : [{ tag: "01", value: poi }, ...rest], {
          minLength: rest.length + (poi === undefined ? 0 : 1)
        })
      )
      .map((rest): Emv.Fields => [{ tag: "00", value: "01" }, ...rest])
  )
  .filter((fields) => Either.isRight(Emv.encode(fields)))

const encoded = (fields: Emv.Fields): string => Either.getOrThrow(Emv.encode(fields))

/** `body` followed by `6304` and its correct CRC. */
const withCrc = (body: string): string => `${body}6304${Emv.crc16(`${body}6304`)}`

const reasonOf = (payload: string) => {
  const result = Emv.decode(payload)
  return Either.isLeft(result) ? result.left.reason : "decoded"
}

/** The mandatory fields around a merchant account, for hand-made payloads. */
const minimal = "00020101021126120008mv.laari5204581253034625802MV5904Shop6004Male"

const utf8Width = (c: string) => {
  const cp = c.codePointAt(0)!
  return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4
}

describe("Emv.crc16", () => {
  it("is CRC-16/CCITT-FALSE: the catalogue check value of 123456789 is 29B1", () => {
    expect(Emv.crc16("123456789")).toBe("29B1")
  })

  it("of nothing is the initial value FFFF", () => {
    expect(Emv.crc16("")).toBe("FFFF")
  })

  it("keeps leading zeros: four digits always", () => {
    const khqr = published.find((p) => p.payload.endsWith("0CC8"))!.payload
    expect(Emv.crc16(khqr.slice(0, -4))).toBe("0CC8")
  })

  it("runs over UTF-8 bytes: the EMVCo example's CRC A13A covers its Chinese characters as UTF-8", () => {
    const emvco = published[0]!.payload
    expect(emvco.endsWith("A13A")).toBe(true)
    expect(Emv.crc16(emvco.slice(0, -4))).toBe("A13A")
  })
})

describe("Emv.length", () => {
  it("counts code points: CJK, Khmer and emoji characters are one each", () => {
    expect(Emv.length("最佳运输")).toBe(4)
    expect(Emv.length("ចន ស្មីន")).toBe(8)
    expect(Emv.length("😀")).toBe(1)
    expect(Emv.length("a😀b")).toBe(3)
  })
})

describe("Emv published payloads of other schemes", () => {
  for (const p of published) {
    it(`decodes and verifies ${p.name} (${p.scheme})`, () => {
      expect(Emv.verifyCrc(p.payload)).toBe(true)
      const fields = Either.getOrThrow(Emv.decode(p.payload))
      for (const [tag, subTag, value] of p.expect)
        expect(Emv.getString(fields, tag, subTag)).toEqual(Option.some(value))
      // Writing the decoded fields again gives back the very same string.
      expect(encoded(fields)).toBe(p.payload)
    })
  }

  it("includes multi-byte UTF-8 whose lengths count characters, not bytes", () => {
    const fields = Either.getOrThrow(Emv.decode(published[0]!.payload))
    const language = Option.getOrThrow(Emv.getTemplate(fields, "64"))
    expect(language).toEqual([
      { tag: "00", value: "ZH" },
      { tag: "01", value: "最佳运输" },
      { tag: "02", value: "北京" }
    ])
    expect(published[0]!.payload).toContain("64200002ZH0104最佳运输0202北京")
  })

  it("rejects PromptPay's published format, whose CRC is right, for lacking EMV's mandatory tags", () => {
    expect(Emv.verifyCrc(promptPayWithoutMandatoryTags)).toBe(true)
    const result = Emv.decode(promptPayWithoutMandatoryTags)
    expect(Either.isLeft(result) && result.left.reason).toBe("MissingTag")
    expect(Either.isLeft(result) && result.left.tag).toBe("52")
  })
})

describe("Emv.encode", () => {
  it("writes fields in order and appends 6304 with the CRC", () => {
    const payload = encoded([
      { tag: "00", value: "01" },
      { tag: "26", value: [{ tag: "00", value: "mv.laari" }] },
      { tag: "59", value: "Shop" }
    ])
    expect(payload).toBe(withCrc("00020126120008mv.laari5904Shop"))
  })

  it("counts an emoji as one character in the length", () => {
    const payload = encoded([{ tag: "80", value: [{ tag: "00", value: "😀" }] }])
    expect(payload.startsWith("80050001😀6304")).toBe(true)
  })

  const encodeFailure = (fields: Emv.Fields) => {
    const result = Emv.encode(fields)
    return Either.isLeft(result) ? result.left.reason : "encoded"
  }

  it("refuses fields no decoder could read back", () => {
    expect(encodeFailure([{ tag: "5", value: "x" }])).toBe("InvalidTag")
    expect(encodeFailure([{ tag: "63", value: "ABCD" }])).toBe("ReservedTag")
    expect(
      encodeFailure([
        { tag: "59", value: "a" },
        { tag: "59", value: "b" }
      ])
    ).toBe("DuplicateTag")
    expect(
      encodeFailure([
        {
          tag: "26",
          value: [
            { tag: "01", value: "a" },
            { tag: "01", value: "b" }
          ]
        }
      ])
    ).toBe("DuplicateTag")
    expect(encodeFailure([{ tag: "59", value: "" }])).toBe("EmptyValue")
    expect(encodeFailure([{ tag: "62", value: [] }])).toBe("EmptyValue")
    expect(encodeFailure([{ tag: "59", value: "x".repeat(100) }])).toBe("ValueTooLong")
    expect(encodeFailure([{ tag: "59", value: "x".repeat(99) }])).toBe("encoded")
    expect(encodeFailure([{ tag: "26", value: "plain" }])).toBe("TemplateExpected")
    expect(encodeFailure([{ tag: "59", value: [{ tag: "00", value: "x" }] }])).toBe("PrimitiveExpected")
    expect(encodeFailure([{ tag: "59", value: "a\uD800b" }])).toBe("InvalidText")
    const six = Array.from({ length: 6 }, (_, k) => ({ tag: tag2(65 + k), value: "x".repeat(90) }))
    expect(encodeFailure(six)).toBe("PayloadTooLong")
  })

  it("reports the path of a bad field inside a template", () => {
    const result = Emv.encode([{ tag: "62", value: [{ tag: "05", value: "" }] }])
    expect(Either.isLeft(result) && result.left.tag).toBe("62.05")
  })
})

describe("Emv.decode properties", () => {
  it("decode(encode(fields)) is fields, nested templates and UTF-8 included", () => {
    fc.assert(
      fc.property(fieldSets, (fields) => {
        expect(Either.getOrThrow(Emv.decode(encoded(fields)))).toEqual(fields)
      }),
      { numRuns: 300 }
    )
  })

  it("every encoded payload verifies its CRC and fits 512 characters", () => {
    fc.assert(
      fc.property(fieldSets, (fields) => {
        const payload = encoded(fields)
        expect(Emv.verifyCrc(payload)).toBe(true)
        expect(Emv.length(payload)).toBeLessThanOrEqual(512)
      }),
      { numRuns: 300 }
    )
  })

  // CRC-16 catches every error burst of up to 16 bits. Swapping one character for another of the same
  // UTF-8 width up to two bytes is such a burst, and covers every tag, length, CRC digit and ASCII value.
  // (A swap between characters of different widths, or of three-byte characters, escapes the CRC with a
  // chance of 1 in 65536, which no 16-bit checksum can promise away.)
  it("detects any single-character change that CRC-16 can guarantee to catch", () => {
    fc.assert(
      fc.property(fieldSets, fc.nat(), fc.nat(), (fields, at, pick) => {
        const chars = Array.from(encoded(fields))
        const candidates = chars.flatMap((c, i) => (utf8Width(c) <= 2 ? [i] : []))
        const i = candidates[at % candidates.length]!
        const original = chars[i]!
        const [from, size] = utf8Width(original) === 1 ? [0, 0x80] : [0x80, 0x800 - 0x80]
        let cp = from + (pick % size)
        if (cp === original.codePointAt(0)) cp = from + ((cp - from + 1) % size)
        chars[i] = String.fromCodePoint(cp)
        expect(Either.isLeft(Emv.decode(chars.join("")))).toBe(true)
      }),
      { numRuns: 1000 }
    )
  })
})

describe("Emv.decode rejects", () => {
  const good = withCrc(minimal)

  it("accepts the hand-made minimal payload the cases below start from", () => {
    expect(reasonOf(good)).toBe("decoded")
  })

  it("a wrong CRC", () => {
    expect(reasonOf(`${good.slice(0, -1)}${good.endsWith("0") ? "1" : "0"}`)).toBe("CrcMismatch")
    expect(reasonOf(good.replace("Shop", "Shoq"))).toBe("CrcMismatch")
  })

  it("a CRC that is not four uppercase hex digits", () => {
    expect(reasonOf(`${good.slice(0, -4)}${good.slice(-4).toLowerCase().replace(/\d/g, "a")}`)).toBe(
      "CrcFormat"
    )
    expect(reasonOf(`${minimal}6303ABC`)).toBe("CrcFormat")
  })

  it("63 anywhere but last", () => {
    const crcFirst = `${minimal.slice(0, 12)}6304ABCD${minimal.slice(12)}`
    expect(reasonOf(crcFirst)).toBe("CrcPosition")
  })

  it("a missing 63", () => {
    expect(reasonOf(minimal)).toBe("MissingTag")
  })

  it("a value running past the end", () => {
    expect(reasonOf(`${minimal}5930Short6304ABCD`)).toBe("Truncated")
  })

  it("a header cut short", () => {
    expect(reasonOf(`${good}6`)).toBe("Truncated")
    expect(reasonOf(`${good}620`)).toBe("Truncated")
  })

  it("a value running past the end of its template", () => {
    expect(reasonOf(withCrc("00020101021126080009mv.laari5204581253034625802MV5904Shop6004Male"))).toBe(
      "Truncated"
    )
  })

  it("a tag that is not two digits", () => {
    expect(reasonOf(withCrc(`${minimal}A102xy`))).toBe("InvalidTag")
    expect(
      reasonOf(withCrc("00020101021126120008mv.laari5204581253034625802MV5904Shop6004Male62060X02ab"))
    ).toBe("InvalidTag")
  })

  it("a length that is not two digits, or zero", () => {
    expect(reasonOf(withCrc(`${minimal}61X4abcd`))).toBe("InvalidLength")
    expect(reasonOf(withCrc(`${minimal}6100`))).toBe("InvalidLength")
  })

  it("a tag twice at one level, but not the same sub-tag in two templates", () => {
    expect(reasonOf(withCrc(`${minimal}5904Shop`))).toBe("DuplicateTag")
    expect(reasonOf(withCrc(`${minimal}62140503abc0503def`))).toBe("DuplicateTag")
    expect(reasonOf(withCrc(`${minimal}62070503abc64070503abc`))).toBe("decoded")
  })

  it("each missing mandatory tag", () => {
    for (const [tag, field] of [
      ["52", "52045812"],
      ["53", "5303462"],
      ["58", "5802MV"],
      ["59", "5904Shop"],
      ["60", "6004Male"]
    ] as const) {
      const result = Emv.decode(withCrc(minimal.replace(field, "")))
      expect(Either.isLeft(result) && [result.left.reason, result.left.tag]).toEqual(["MissingTag", tag])
    }
  })

  it("a payload without merchant account information", () => {
    expect(reasonOf(withCrc(minimal.replace("26120008mv.laari", "")))).toBe("MissingMerchantAccount")
  })

  it("a primitive merchant account (02-25) counts as one", () => {
    expect(reasonOf(withCrc(minimal.replace("26120008mv.laari", "040841112222")))).toBe("decoded")
  })

  it("00 anywhere but first, or other than 01", () => {
    expect(reasonOf(withCrc(`${minimal.slice(6)}000201`))).toBe("PayloadFormatIndicator")
    expect(reasonOf(withCrc(minimal.replace("000201", "000202")))).toBe("PayloadFormatIndicator")
    expect(reasonOf(withCrc(minimal.slice(6)))).toBe("PayloadFormatIndicator")
  })

  it("a point of initiation other than 11 or 12", () => {
    expect(reasonOf(withCrc(minimal.replace("010211", "010213")))).toBe("PointOfInitiation")
  })

  it("more than 512 characters", () => {
    const long = withCrc(
      `${minimal}${Array.from({ length: 6 }, (_, k) => `${65 + k}80${"x".repeat(80)}`).join("")}`
    )
    expect(Emv.length(long)).toBeGreaterThan(512)
    expect(reasonOf(long)).toBe("PayloadTooLong")
  })

  it("text that is not well-formed Unicode", () => {
    expect(reasonOf(withCrc(minimal.replace("Shop", "Sh\uDC00p")))).toBe("InvalidText")
  })

  it("with a clear message naming the field", () => {
    const result = Emv.decode(`${minimal}5930Short6304ABCD`)
    expect(Either.isLeft(result) && result.left.message).toBe(
      "Tag 59 declares 30 characters but only 13 remain"
    )
  })
})

describe("Emv.verifyCrc", () => {
  it("needs 6304 and the right four digits at the end", () => {
    const good = withCrc(minimal)
    expect(Emv.verifyCrc(good)).toBe(true)
    expect(Emv.verifyCrc(good.slice(0, -1))).toBe(false)
    expect(Emv.verifyCrc(good.replace("Shop", "Shoq"))).toBe(false)
    const emvco = published[0]!.payload
    expect(Emv.verifyCrc(emvco)).toBe(true)
    expect(Emv.verifyCrc(emvco.replace(/A13A$/, "a13a"))).toBe(false)
    expect(Emv.verifyCrc("")).toBe(false)
  })
})

describe("Emv readers", () => {
  const fields = Either.getOrThrow(Emv.decode(withCrc(`${minimal}62070503abc`)))

  it("read strings, sub-tags and templates", () => {
    expect(Emv.getString(fields, "59")).toEqual(Option.some("Shop"))
    expect(Emv.getString(fields, "62", "05")).toEqual(Option.some("abc"))
    expect(Emv.getTemplate(fields, "26")).toEqual(Option.some([{ tag: "00", value: "mv.laari" }]))
    expect(Emv.get(fields, "53")).toEqual(Option.some("462"))
  })

  it("answer None for absent tags and for the wrong kind", () => {
    expect(Emv.getString(fields, "54")).toEqual(Option.none())
    expect(Emv.getString(fields, "62")).toEqual(Option.none())
    expect(Emv.getTemplate(fields, "59")).toEqual(Option.none())
    expect(Emv.getString(fields, "62", "07")).toEqual(Option.none())
  })
})
