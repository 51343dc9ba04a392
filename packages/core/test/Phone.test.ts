/**
 * One Maldivian number however it is typed: every spelling of a valid number is its E.164 form, and
 * anything else (letters, a wrong length, another country's code) is no number at all.
 */
import { describe, expect, it } from "@effect/vitest"
import { Either, Option, Schema } from "effect"
import fc from "fast-check"
import * as Phone from "../src/kernel/Phone.js"

const subscriber = fc
  .tuple(fc.integer({ min: 2, max: 9 }), fc.stringMatching(/^\d{6}$/))
  .map(([first, rest]) => `${first}${rest}`)

/** `text` with spaces or hyphens put between some of its characters, as people write numbers. */
const spaced = (text: string) =>
  fc
    .array(fc.constantFrom("", "", " ", "-"), { minLength: text.length, maxLength: text.length })
    .map((gaps) => [...text].map((c, i) => (i === 0 ? c : `${gaps[i]}${c}`)).join(""))

const budget = { numRuns: 300, interruptAfterTimeLimit: 20_000 }

describe("Phone.normalize", () => {
  it.each([
    ["7771234", "+9607771234"],
    ["9607771234", "+9607771234"],
    ["+960 777 1234", "+9607771234"],
    ["00960 7771234", "+9607771234"],
    ["+960 7771234", "+9607771234"],
    ["+960-777-1234", "+9607771234"],
    [" (960) 777.1234 ", "+9607771234"],
    ["3301234", "+9603301234"]
  ])("%s is %s", (typed, e164) => {
    expect(Phone.normalize(typed)).toEqual(Option.some(e164))
  })

  it.each([
    "",
    "777123",
    "77712345",
    "+9617771234",
    "+1 7771234",
    "0771234",
    "1771234",
    "777 12a4",
    "+960",
    "sandbox-1"
  ])("%s is no Maldivian number", (typed) => {
    expect(Phone.normalize(typed)).toEqual(Option.none())
  })

  it("every spelling of a valid number is its E.164 form", () => {
    const spelling = fc
      .tuple(subscriber, fc.constantFrom("", "960", "+960", "00960", "+960 ", "00960 "))
      .chain(([number, prefix]) => spaced(`${prefix}${number}`).map((typed) => ({ number, typed })))
    fc.assert(
      fc.property(spelling, ({ number, typed }) => {
        expect(Phone.normalize(typed)).toEqual(Option.some(`+960${number}`))
      }),
      budget
    )
  })

  it("refuses a wrong length, another country's code, a letter, or a first digit of 0 or 1", () => {
    const wrongLength = fc
      .tuple(
        fc.constantFrom("+960", "00960"),
        fc.integer({ min: 1, max: 15 }).filter((n) => n !== 7)
      )
      .chain(([prefix, n]) =>
        fc.stringMatching(new RegExp(`^[2-9]\\d{${n - 1}}$`)).map((d) => `${prefix}${d}`)
      )
    const foreign = fc
      .tuple(
        fc.integer({ min: 1, max: 999 }).filter((cc) => cc !== 960),
        fc.constantFrom("+", "00"),
        subscriber
      )
      .map(([cc, plus, number]) => `${plus}${cc}${number}`)
    const lettered = fc
      .tuple(subscriber, fc.integer({ min: 0, max: 6 }), fc.stringMatching(/^[a-zA-Z]$/))
      .map(([number, at, letter]) => `${number.slice(0, at)}${letter}${number.slice(at + 1)}`)
    const trunk = fc
      .tuple(fc.constantFrom("0", "1"), fc.stringMatching(/^\d{6}$/))
      .map(([a, b]) => `${a}${b}`)
    fc.assert(
      fc.property(fc.oneof(wrongLength, foreign, lettered, trunk), (typed) => {
        expect(Phone.normalize(typed)).toEqual(Option.none())
      }),
      budget
    )
  })

  it("the request field decodes any spelling to E.164 and refuses the rest, saying what it takes", () => {
    const decode = Schema.decodeUnknownEither(Phone.Phone)
    expect(decode("00960 777 1234")).toEqual(Either.right("+9607771234"))
    const refused = decode("+44 7771234")
    expect(Either.isLeft(refused) && refused.left.message).toContain(Phone.Message)
  })

  it("a lookup compares E.164 for a number, and keeps other text as it is", () => {
    expect(Phone.lookupKey("777 1234")).toBe("+9607771234")
    expect(Phone.lookupKey(" +960 sandbox-1 ")).toBe("+960 sandbox-1")
  })
})
