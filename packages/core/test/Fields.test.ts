/**
 * How a failed decode is worded (`summarize`) and which field a misspelt key meant (`closestField`), on
 * issues written here as the decoder lists them, so each rule is seen on its own.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Fields from "../src/kernel/Fields.js"

const issue = (message: string, path: ReadonlyArray<string> = ["x"], _tag = "Type"): Fields.Issue => ({
  _tag,
  path,
  message
})
const say = (...issues: ReadonlyArray<Fields.Issue>) => Fields.summarize(issues)

describe("Fields.closestField", () => {
  it("a name of fewer than four letters allows one slip, a longer one two", () => {
    expect(Fields.closestField("xbz", ["xyz"])).toBe("xyz")
    expect(Fields.closestField("abz", ["xyz"])).toBeUndefined()
    expect(Fields.closestField("abxy", ["abcd"])).toBe("abcd")
    expect(Fields.closestField("axyz", ["abcd"])).toBeUndefined()
  })

  it("a name as many letters longer or shorter as the slips allowed is still near", () => {
    expect(Fields.closestField("tit", ["title"])).toBe("title")
    expect(Fields.closestField("titlexy", ["title"])).toBe("title")
    expect(Fields.closestField("ti", ["title"])).toBeUndefined()
  })

  it("every letter counts, the last one too", () => {
    expect(Fields.closestField("tixlzz", ["title"])).toBeUndefined()
    expect(Fields.closestField("titlzz", ["title"])).toBe("title")
  })

  it("the nearest wins, and of equally near ones the first", () => {
    expect(Fields.closestField("titl", ["titles", "title"])).toBe("title")
    expect(Fields.closestField("titl", ["title", "titles"])).toBe("title")
    expect(Fields.closestField("titlx", ["title", "titlf"])).toBe("title")
    expect(Fields.closestField("titlx", ["titlf", "title"])).toBe("titlf")
  })
})

describe("Fields.summarize", () => {
  it("two literals are one or the other; one null alone is that literal", () => {
    expect(say(issue('Expected "A", actual "x"'), issue('Expected "B", actual "x"'))).toEqual([
      { field: "x", message: "must be A or B" }
    ])
    // Nothing but the absent alternatives: they are what it must be.
    expect(say(issue("Expected null, actual 5"))).toEqual([{ field: "x", message: "must be null" }])
  })

  it("a number literal is said as written", () => {
    expect(say(issue("Expected 1.50, actual 2"))).toEqual([{ field: "x", message: "must be 1.50" }])
  })

  it("a literal beside another kind of alternative: the other one says why", () => {
    expect(say(issue('Expected "A", actual 5'), issue("Expected string, actual 5"))).toEqual([
      { field: "x", message: "must be a string" }
    ])
  })

  it("an unknown field names the fields listed after `expected:`, or none", () => {
    const unexpected = (message: string) => issue(message, ["zzzz"], "Unexpected")
    expect(say(unexpected('is unexpected, expected: "alpha" | "beta"'))).toEqual([
      { field: "zzzz", message: "is not a field; the fields are alpha, beta" }
    ])
    expect(say(unexpected('"zzzy" is unexpected, expected: "alpha"'))).toEqual([
      { field: "zzzz", message: "is not a field; the fields are alpha" }
    ])
    expect(say(unexpected(' expected: "alpha"'))).toEqual([
      { field: "zzzz", message: "is not a field; the fields are alpha" }
    ])
    expect(say(unexpected("is unexpected"))).toEqual([{ field: "zzzz", message: "is not a field" }])
    // A listed name that is no JSON string is shown as listed.
    expect(say(unexpected('is unexpected, expected: "a\\x"'))).toEqual([
      { field: "zzzz", message: 'is not a field; the fields are "a\\x"' }
    ])
  })

  it("a field whose nested field failed is left to the nested one, at any depth", () => {
    expect(
      say(issue("Expected string, actual 5", ["a", "b"]), issue("Expected string, actual 5", ["a", "b", "c"]))
    ).toEqual([{ field: "a.b.c", message: "must be a string" }])
  })
})
