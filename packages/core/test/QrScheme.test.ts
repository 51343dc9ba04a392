import { describe, expect, it } from "@effect/vitest"
import { Either, Option } from "effect"
import fc from "fast-check"
import * as Emv from "../src/qr/Emv.js"
import * as QrScheme from "../src/qr/QrScheme.js"
import * as QrText from "../src/qr/QrText.js"
import { promptPayWithoutMandatoryTags, published } from "./fixtures/emv-published.js"

const merchantId = "3f2504e0-4f89-11d3-9a0c-0305e82c3301"
const qrid = "LQ0123456789ABCDEFGHJKMN"

const dynamicInput: QrScheme.BuildInput = {
  type: "DYNAMIC",
  qrid,
  merchant: {
    id: merchantId,
    name: "Bappa Café",
    city: "Malé",
    mcc: "5812",
    nameLocal: "ބައްޕަ ކެފޭ",
    cityLocal: "މާލެ"
  },
  outletId: 7,
  outletLabel: "Hulhumalé",
  amount: 12550
}

const staticInput: QrScheme.BuildInput = {
  type: "STATIC",
  qrid,
  merchant: {
    id: merchantId.toUpperCase(),
    name: "  Fresh   Mart\tPvt  ",
    city: "Hithadhoo, Addu City",
    mcc: "5411"
  },
  outletId: 42
}

const built = (input: QrScheme.BuildInput): string => Either.getOrThrow(QrScheme.build(input))

const buildFailure = (input: QrScheme.BuildInput) => {
  const result = QrScheme.build(input)
  return Either.isLeft(result) ? result.left.reason : "built"
}

const parseFailure = (payload: string) => {
  const result = QrScheme.parse(payload)
  return Either.isLeft(result)
    ? [result.left._tag, "reason" in result.left ? result.left.reason : null]
    : "parsed"
}

describe("QrScheme.build layout", () => {
  // Written out tag by tag from the profile; the CRC was computed by an independent implementation.
  it("lays out a dynamic code", () => {
    expect(built(dynamicInput)).toBe(
      [
        "000201",
        "010212",
        "2657",
        "0008mv.laari",
        `0136${merchantId}`,
        "02017",
        "52045812",
        "5303462",
        "5406125.50",
        "5802MV",
        "5910Bappa Cafe",
        "6004Male",
        "6241",
        "0309Hulhumale",
        `0524${qrid}`,
        "6429",
        "0002dv",
        "0111ބައްޕަ ކެފޭ",
        "0204މާލެ",
        "6304F016"
      ].join("")
    )
  })

  it("lays out a static code: no amount, no outlet label, no language template", () => {
    expect(built(staticInput)).toBe(
      [
        "000201",
        "010211",
        "2658",
        "0008mv.laari",
        `0136${merchantId}`,
        "020242",
        "52045411",
        "5303462",
        "5802MV",
        "5914Fresh Mart Pvt",
        "6015Hithadhoo, Addu",
        "6228",
        `0524${qrid}`,
        "63040ED6"
      ].join("")
    )
  })

  it("writes no language template for a local city without a local name", () => {
    const payload = built({ ...staticInput, merchant: { ...staticInput.merchant, cityLocal: "ހިތަދޫ" } })
    expect(Option.isNone(Emv.getTemplate(Either.getOrThrow(Emv.decode(payload)), "64"))).toBe(true)
  })
})

describe("QrScheme.build refuses input the profile cannot encode", () => {
  it("an amount on a static code, or none on a dynamic one", () => {
    expect(buildFailure({ ...staticInput, amount: 100 })).toBe("Amount")
    expect(buildFailure({ ...dynamicInput, amount: null })).toBe("Amount")
    expect(buildFailure({ ...dynamicInput, amount: undefined })).toBe("Amount")
  })

  it("an amount that is not a positive whole number of laari within 13 characters", () => {
    expect(buildFailure({ ...dynamicInput, amount: 0 })).toBe("Amount")
    expect(buildFailure({ ...dynamicInput, amount: 12.5 })).toBe("Amount")
    expect(buildFailure({ ...dynamicInput, amount: QrScheme.MaxAmount + 1 })).toBe("Amount")
    expect(built({ ...dynamicInput, amount: QrScheme.MaxAmount })).toContain("54139999999999.99")
  })

  it("a malformed qrid, merchant id, outlet id or MCC", () => {
    expect(buildFailure({ ...dynamicInput, qrid: "LQ123" })).toBe("Qrid")
    expect(buildFailure({ ...dynamicInput, merchant: { ...dynamicInput.merchant, id: "merchant-1" } })).toBe(
      "MerchantId"
    )
    expect(buildFailure({ ...dynamicInput, outletId: 0 })).toBe("OutletId")
    expect(buildFailure({ ...dynamicInput, outletId: 1.5 })).toBe("OutletId")
    expect(buildFailure({ ...dynamicInput, merchant: { ...dynamicInput.merchant, mcc: "581" } })).toBe(
      "MerchantCategory"
    )
  })
})

describe("QrScheme.build names what it refuses", () => {
  const refusal = (input: QrScheme.BuildInput) => {
    const result = QrScheme.build(input)
    return Either.isLeft(result) ? [result.left.reason, result.left.message] : "built"
  }

  it("in a message that says the rule and the value", () => {
    expect(refusal({ ...dynamicInput, qrid: "LQ123" })).toEqual([
      "Qrid",
      `qrid "LQ123" does not match ${QrScheme.qridFormat.source}`
    ])
    expect(refusal({ ...dynamicInput, merchant: { ...dynamicInput.merchant, id: "merchant-1" } })).toEqual([
      "MerchantId",
      'Merchant id "merchant-1" is not a UUID'
    ])
    expect(refusal({ ...dynamicInput, outletId: 0 })).toEqual([
      "OutletId",
      "Outlet id 0 is not a positive whole number"
    ])
    expect(refusal({ ...dynamicInput, merchant: { ...dynamicInput.merchant, mcc: "581" } })).toEqual([
      "MerchantCategory",
      'MCC "581" is not four digits'
    ])
    expect(refusal({ ...staticInput, amount: 100 })).toEqual(["Amount", "A static code carries no amount"])
    expect(refusal({ ...dynamicInput, amount: null })).toEqual([
      "Amount",
      "A dynamic code needs a whole amount from 1 to 999999999999 laari, got null"
    ])
  })

  it("no dynamic amount of 1 laari or more", () => {
    expect(built({ ...dynamicInput, amount: 1 })).toContain("54040.01")
  })

  it("cuts the outlet label to 25 characters without a trailing space", () => {
    const label = (outletLabel: string) =>
      Option.getOrNull(
        Emv.getString(Either.getOrThrow(QrScheme.fields({ ...dynamicInput, outletLabel })), "62", "03")
      )
    expect(label("Twenty Four Characters X Y")).toBe("Twenty Four Characters X")
    expect(label("B".repeat(30))).toBe("B".repeat(25))
    expect(label("  ")).toBeNull()
  })
})

const thaana = fc
  .array(
    fc.integer({ min: 0x0780, max: 0x07b1 }).map((cp) => String.fromCodePoint(cp)),
    { maxLength: 30 }
  )
  .map((cs) => cs.join(""))

const anyText = fc.oneof(
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.string({ unit: "grapheme", maxLength: 40 }),
  fc.string({ unit: "grapheme-ascii", maxLength: 40 }),
  thaana,
  fc.constantFrom("Café Ümlaut", "Ørsted Æble Straße", "މާލެ", "北京烤鸭", "   ")
)

const inputs: fc.Arbitrary<QrScheme.BuildInput> = fc
  .record({
    type: fc.constantFrom("STATIC" as const, "DYNAMIC" as const),
    bytes: fc.uint8Array({ minLength: QrScheme.QridBytes, maxLength: QrScheme.QridBytes }),
    id: fc.uuid(),
    name: anyText,
    city: anyText,
    mcc: fc.stringMatching(/^\d{4}$/),
    nameLocal: fc.option(thaana, { nil: undefined }),
    cityLocal: fc.option(thaana, { nil: undefined }),
    outletId: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
    outletLabel: fc.option(anyText, { nil: undefined }),
    amount: fc.integer({ min: 100, max: 1_000_000_000 })
  })
  .map((r) => ({
    type: r.type,
    qrid: QrScheme.makeQrid(r.bytes),
    merchant: {
      id: r.id,
      name: r.name,
      city: r.city,
      mcc: r.mcc,
      nameLocal: r.nameLocal,
      cityLocal: r.cityLocal
    },
    outletId: r.outletId,
    outletLabel: r.outletLabel,
    amount: r.type === "DYNAMIC" ? r.amount : null
  }))

const printable = (max: number) => new RegExp(`^[\\x20-\\x7E]{1,${max}}$`)

describe("QrScheme.parse(build(input))", () => {
  it("round-trips type, qrid, amount, merchant and outlet; texts within limits; at most 512 characters", () => {
    fc.assert(
      fc.property(inputs, (input) => {
        const payload = built(input)
        expect(Emv.length(payload)).toBeLessThanOrEqual(512)
        const parsed = Either.getOrThrow(QrScheme.parse(payload))
        const nameLocal =
          input.merchant.nameLocal == null ? null : QrText.localText(input.merchant.nameLocal, 25)
        const label =
          input.outletLabel == null ? "" : QrText.transliterate(input.outletLabel).slice(0, 25).trimEnd()
        expect(parsed).toEqual({
          type: input.type,
          qrid: input.qrid,
          amount: input.amount ?? null,
          merchant: {
            id: input.merchant.id.toLowerCase(),
            name: QrScheme.emvName(input.merchant.name),
            city: QrScheme.emvCity(input.merchant.city),
            mcc: input.merchant.mcc,
            nameLocal,
            cityLocal:
              nameLocal === null || input.merchant.cityLocal == null
                ? null
                : QrText.localText(input.merchant.cityLocal, 15)
          },
          outletId: input.outletId,
          outletLabel: label === "" ? null : label
        })
        expect(parsed.merchant.name).toMatch(printable(25))
        expect(parsed.merchant.city).toMatch(printable(15))
        expect(parsed.merchant.name).toBe(parsed.merchant.name.trim())
        expect(parsed.merchant.city).toBe(parsed.merchant.city.trim())
        expect(Emv.length(parsed.merchant.nameLocal ?? "")).toBeLessThanOrEqual(25)
        expect(Emv.length(parsed.merchant.cityLocal ?? "")).toBeLessThanOrEqual(15)
      }),
      { numRuns: 500 }
    )
  })

  it("carries every amount from 100 to 10^9 laari exactly", () => {
    fc.assert(
      fc.property(fc.integer({ min: 100, max: 1_000_000_000 }), (amount) => {
        const parsed = Either.getOrThrow(QrScheme.parse(built({ ...dynamicInput, amount })))
        expect(parsed.amount).toBe(amount)
      }),
      { numRuns: 1000 }
    )
    for (const amount of [100, 101, 109, 110, 129, 999, 1000, 1015, 12550, 99_999_999, 1_000_000_000])
      expect(Either.getOrThrow(QrScheme.parse(built({ ...dynamicInput, amount }))).amount).toBe(amount)
  })

  it("formats and parses back every amount from 1 to 10^6 laari, exhaustively", () => {
    const wrong: Array<number> = []
    for (let n = 1; n <= 1_000_000; n++) {
      const back = QrScheme.parseAmount(QrScheme.formatAmount(n))
      if (Option.isNone(back) || back.value !== n) wrong.push(n)
    }
    expect(wrong).toEqual([])
  })
})

describe("QrScheme.parseAmount", () => {
  it("reads digits, not floating point", () => {
    // 0.29 * 100, 1.15 * 100 and 4.35 * 100 are 28.999..., 114.999... and 434.999... in floating point.
    expect(QrScheme.parseAmount("0.29")).toEqual(Option.some(29))
    expect(QrScheme.parseAmount("1.15")).toEqual(Option.some(115))
    expect(QrScheme.parseAmount("4.35")).toEqual(Option.some(435))
    expect(QrScheme.parseAmount("125.5")).toEqual(Option.some(12550))
    expect(QrScheme.parseAmount("125")).toEqual(Option.some(12500))
    expect(QrScheme.parseAmount("9999999999.99")).toEqual(Option.some(999_999_999_999))
  })

  it("refuses anything else", () => {
    for (const text of [
      "",
      "0",
      "0.00",
      "-1.00",
      "1.005",
      "1e3",
      " 1.00",
      "1.00 ",
      "1,00",
      ".50",
      "1.",
      "12345678901.00"
    ])
      expect(QrScheme.parseAmount(text)).toEqual(Option.none())
  })
})

describe("QrScheme.parse rejects", () => {
  const base = Either.getOrThrow(QrScheme.fields(dynamicInput))
  const set = (fields: Emv.Fields, tag: string, value: string | Emv.Fields | null): Emv.Fields =>
    value === null
      ? fields.filter((f) => f.tag !== tag)
      : fields.map((f) => (f.tag === tag ? { tag, value } : f))
  const setSub = (fields: Emv.Fields, tag: string, subTag: string, value: string | null): Emv.Fields =>
    set(fields, tag, set(Option.getOrThrow(Emv.getTemplate(fields, tag)), subTag, value))
  const payloadOf = (fields: Emv.Fields) => Either.getOrThrow(Emv.encode(fields))

  it("nothing in the unmodified fields", () => {
    expect(parseFailure(payloadOf(base))).toBe("parsed")
  })

  it("every other scheme's valid payload as ForeignScheme", () => {
    for (const p of published) expect(parseFailure(p.payload)).toEqual(["ForeignScheme", null])
    const emvco = QrScheme.parse(published[0]!.payload)
    expect(Either.isLeft(emvco) && emvco.left._tag === "ForeignScheme" && emvco.left.identifiers).toEqual([
      "D15600000000",
      "D15600000001"
    ])
  })

  it("a template 26 with another identifier as ForeignScheme", () => {
    const result = QrScheme.parse(payloadOf(setSub(base, "26", "00", "mv.other")))
    expect(Either.isLeft(result) && result.left._tag === "ForeignScheme" && result.left.identifiers).toEqual([
      "mv.other"
    ])
  })

  it("our identifier in any letter case as ours", () => {
    expect(parseFailure(payloadOf(setSub(base, "26", "00", "MV.LAARI")))).toBe("parsed")
  })

  it("an invalid EMV payload as InvalidPayload, not ForeignScheme", () => {
    expect(parseFailure(promptPayWithoutMandatoryTags)).toEqual(["InvalidPayload", "MissingTag"])
    expect(parseFailure("hello")).toEqual(["InvalidPayload", "InvalidTag"])
    const ours = built(dynamicInput)
    expect(parseFailure(`${ours.slice(0, -4)}0000`)).toEqual(["InvalidPayload", "CrcMismatch"])
  })

  it("a code that breaks the profile", () => {
    const cases: ReadonlyArray<readonly [Emv.Fields, QrScheme.ProfileFailure]> = [
      [set(base, "01", null), "PointOfInitiation"],
      [set(base, "01", "11"), "Amount"],
      [set(base, "54", null), "Amount"],
      [set(base, "54", "12.345"), "Amount"],
      [set(base, "54", "0.00"), "Amount"],
      [set(base, "53", "840"), "Currency"],
      [set(base, "58", "SG"), "Country"],
      [set(base, "52", "58A2"), "MerchantCategory"],
      [setSub(base, "26", "01", "not-a-uuid"), "MerchantAccount"],
      [setSub(base, "26", "01", null), "MerchantAccount"],
      [setSub(base, "26", "02", "07"), "MerchantAccount"],
      [setSub(base, "26", "02", "99999999999999999"), "MerchantAccount"],
      [setSub(base, "62", "05", qrid.toLowerCase()), "Qrid"],
      [setSub(base, "62", "05", null), "Qrid"]
    ]
    for (const [fields, reason] of cases)
      expect(parseFailure(payloadOf(fields))).toEqual(["InvalidPayload", reason])
  })

  it("a code that breaks the profile, in a message that names the tag", () => {
    const messageOf = (fields: Emv.Fields) => {
      const result = QrScheme.parse(payloadOf(fields))
      return Either.isLeft(result) ? result.left.message : "parsed"
    }
    const cases: ReadonlyArray<readonly [Emv.Fields, string]> = [
      [set(base, "01", null), "Tag 01 must be 11 (static) or 12 (dynamic)"],
      [set(base, "01", "11"), "A static code carries no amount (tag 54)"],
      [set(base, "54", null), "A dynamic code carries its amount in tag 54"],
      [set(base, "54", "0.00"), 'Tag 54 "0.00" is not a positive amount in MVR'],
      [set(base, "53", "840"), "Tag 53 must be 462 (MVR)"],
      [set(base, "58", "SG"), "Tag 58 must be MV"],
      [set(base, "52", "58A2"), "Tag 52 must be four digits"],
      [setSub(base, "26", "01", "not-a-uuid"), "Tag 26.01 must be the merchant's UUID"],
      [setSub(base, "26", "02", "07"), "Tag 26.02 must be the outlet id, a positive whole number"],
      [
        setSub(base, "26", "02", "9999999999999999"),
        "Tag 26.02 must be the outlet id, a positive whole number"
      ],
      [setSub(base, "62", "05", null), "Tag 62.05 must be a qrid"]
    ]
    for (const [fields, message] of cases) expect(messageOf(fields)).toBe(message)
  })

  it("another scheme's code, naming its identifiers or none", () => {
    const foreign = (fields: Emv.Fields) => {
      const result = QrScheme.parse(payloadOf(fields))
      return Either.isLeft(result) && result.left._tag === "ForeignScheme"
        ? [result.left.identifiers, result.left.message]
        : "not foreign"
    }
    // A card network's primitive account (02) and the language template (64, whose 00 is no identifier).
    const withCard = (account: Emv.Fields | null) => [
      ...base.slice(0, 2),
      { tag: "02", value: "4000123456789012" },
      ...(account === null ? [] : [{ tag: "26", value: account }]),
      ...base.slice(3)
    ]
    expect(foreign(withCard(null))).toEqual([
      [],
      "Not a code of this scheme (merchant account identifiers: none)"
    ])
    expect(foreign(withCard([{ tag: "00", value: "mv.other" }]))).toEqual([
      ["mv.other"],
      "Not a code of this scheme (merchant account identifiers: mv.other)"
    ])
    expect(
      foreign([
        ...withCard([{ tag: "00", value: "mv.other" }]),
        { tag: "27", value: [{ tag: "00", value: "x.y" }] }
      ])
    ).toEqual([
      ["mv.other", "x.y"],
      "Not a code of this scheme (merchant account identifiers: mv.other, x.y)"
    ])
  })

  // CRC-16 catches every burst of up to 16 bits, so each of these single-character substitutions must be
  // rejected: every printable ASCII character in place of every ASCII position (tags, lengths, values,
  // CRC), and every Thaana letter in place of every Thaana position of the language template.
  it("every single-character substitution of a built payload, exhaustively", () => {
    const chars = Array.from(built(dynamicInput))
    const ascii = Array.from({ length: 0x7f - 0x20 }, (_, k) => String.fromCharCode(0x20 + k))
    const thaanaLetters = Array.from({ length: 0x07b2 - 0x0780 }, (_, k) => String.fromCharCode(0x0780 + k))
    let tried = 0
    const accepted: Array<string> = []
    chars.forEach((c, i) => {
      const pool = c <= "\x7f" ? ascii : thaanaLetters
      for (const r of pool) {
        if (r === c) continue
        const mutated = [...chars.slice(0, i), r, ...chars.slice(i + 1)].join("")
        tried++
        if (Either.isRight(QrScheme.parse(mutated))) accepted.push(mutated)
      }
    })
    expect(accepted).toEqual([])
    expect(tried).toBeGreaterThan(19_000)
  }, 120_000) // 19,000 parses: seconds on a quiet machine, far more on a busy one
})

describe("QrScheme text", () => {
  it("transliterates accents, special letters, typography and Thaana to ASCII", () => {
    expect(QrScheme.emvName("Café Ümlaut & Söhne")).toBe("Cafe Umlaut & Sohne")
    expect(QrScheme.emvName("Ørsted Æble Straße")).toBe("Orsted AEble Strasse")
    expect(QrScheme.emvName("“Joe’s” — Diner")).toBe(`"Joe's" - Diner`)
    expect(QrScheme.emvName("Ｆｕｌｌｗｉｄｔｈ")).toBe("Fullwidth")
    expect(QrScheme.emvName("Shop\u0000\nName")).toBe("Shop Name")
    expect(QrScheme.emvCity("ހުޅުމާލެ")).toBe("Hulhumaale")
    expect(QrScheme.emvName("ބައްޕަ")).toBe("Bappa")
    expect(QrScheme.emvName("ކެފޭ ހޮޓަލް")).toBe("Kefey Hotal")
    expect(QrScheme.emvName("އަލީ")).toBe("Alee")
  })

  it("romanizes alifu with sukun before no consonant as h, and a consonant's sukun as nothing", () => {
    expect(QrScheme.emvName("ބައް")).toBe("Bah")
    expect(QrScheme.emvName("ބައް ބަ")).toBe("Bah Ba")
    expect(QrScheme.emvName("ބަސްބަ")).toBe("Basba")
  })

  it("collapses the spaces left around a character it removes", () => {
    expect(QrScheme.emvName("Shop 北 Name")).toBe("Shop Name")
    expect(QrText.transliterate("a 北 b 京 c")).toBe("a b c")
  })

  it("cuts to 25 and 15 characters without a trailing space", () => {
    expect(QrScheme.emvName("A".repeat(30))).toBe("A".repeat(25))
    expect(QrScheme.emvName("Twenty Four Characters X Y")).toBe("Twenty Four Characters X")
    expect(QrScheme.emvCity("Hithadhoo, Addu City")).toBe("Hithadhoo, Addu")
  })

  it("falls back when nothing printable is left", () => {
    expect(QrScheme.emvName("北京烤鸭 🦆")).toBe("MERCHANT")
    expect(QrScheme.emvName("   ")).toBe("MERCHANT")
    expect(QrScheme.emvCity("")).toBe("MALE")
  })

  it("keeps local text whole up to the limit, never splitting a letter from its vowel sign", () => {
    expect(QrText.localText("  ބައްޕަ   ކެފޭ ", 25)).toBe("ބައްޕަ ކެފޭ")
    // 13 letter + vowel-sign pairs are 26 characters: the 13th pair does not fit whole, so it goes.
    expect(QrText.localText("ބަ".repeat(13), 25)).toBe("ބަ".repeat(12))
    expect(QrText.localText("\u0000 \n", 25)).toBeNull()
    expect(QrText.localText("😀", 25)).toBe("😀")
  })

  it("keeps local text clean: lone surrogates gone, control characters as spaces, no trailing space", () => {
    expect(QrText.localText("ބ\uD800ަ", 25)).toBe("ބަ")
    expect(QrText.localText("ބަ\u0000ކެ", 25)).toBe("ބަ ކެ")
    expect(QrText.localText("ބަ ކެ", 3)).toBe("ބަ")
    expect(QrText.localText("ބ".repeat(30), 25)).toBe("ބ".repeat(25))
    // Vowel signs alone, cut: no letter to keep them with, so nothing is left.
    expect(QrText.localText("\u07A6".repeat(26), 25)).toBeNull()
  })
})

describe("QrScheme qrid", () => {
  const bitsOf = (bytes: Uint8Array) => Array.from(bytes, (b) => b.toString(2).padStart(8, "0")).join("")
  const bitsOfQrid = (id: string) =>
    Array.from(id.slice(2), (c) =>
      "0123456789ABCDEFGHJKMNPQRSTVWXYZ".indexOf(c).toString(2).padStart(5, "0")
    ).join("")

  it("is LQ and 22 Crockford base32 characters", () => {
    expect(QrScheme.makeQrid(new Uint8Array(14))).toBe(`LQ${"0".repeat(22)}`)
    expect(QrScheme.makeQrid(new Uint8Array(14).fill(255))).toBe(`LQ${"Z".repeat(22)}`)
    expect(QrScheme.makeQrid(Uint8Array.from([0x08, ...new Array(13).fill(0)]))).toBe(`LQ1${"0".repeat(21)}`)
  })

  it("encodes exactly the first 110 random bits", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 14, maxLength: 32 }), (bytes) => {
        const id = QrScheme.makeQrid(bytes)
        expect(QrScheme.isQrid(id)).toBe(true)
        expect(bitsOfQrid(id)).toBe(bitsOf(bytes).slice(0, 110))
      })
    )
  })

  it("refuses fewer than 14 random bytes", () => {
    expect(() => QrScheme.makeQrid(new Uint8Array(13))).toThrow(RangeError)
    expect(() => QrScheme.makeQrid(new Uint8Array(13))).toThrow("makeQrid needs 14 random bytes, got 13")
  })

  it("isQrid accepts only the format", () => {
    expect(QrScheme.isQrid(qrid)).toBe(true)
    expect(QrScheme.qridFormat.test(qrid)).toBe(true)
    for (const bad of [
      qrid.toLowerCase(),
      `${qrid}0`,
      qrid.slice(0, -1),
      `LX${qrid.slice(2)}`,
      "LQ0123456789ABCDEFGHIJKL",
      "LQOOOOOOOOOOOOOOOOOOOOOO",
      "LQUUUUUUUUUUUUUUUUUUUUUU"
    ])
      expect(QrScheme.isQrid(bad)).toBe(false)
  })
})
