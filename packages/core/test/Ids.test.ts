import { describe, expect, it } from "@effect/vitest"
import { Either, ParseResult, Schema } from "effect"
import fc from "fast-check"
import * as Ids from "../src/kernel/Ids.js"

describe("Ids", () => {
  it("a UUID, in either case, is looked up as an id (lowercase); anything else as a reference", () => {
    fc.assert(
      fc.property(fc.uuid(), fc.boolean(), (uuid, upper) => {
        const given = upper ? uuid.toUpperCase() : uuid
        expect(Ids.isUuid(given)).toBe(true)
        expect(Ids.lookup(given)).toEqual({ _tag: "ById", id: uuid.toLowerCase() })
      })
    )
    for (const reference of [
      "gym-1",
      "",
      "3f2504e0-4f89-11d3-9a0c-0305e82c330",
      "3f2504e04f8911d39a0c0305e82c3301"
    ]) {
      expect(Ids.isUuid(reference)).toBe(false)
      expect(Ids.lookup(reference)).toEqual({ _tag: "ByReference", reference })
    }
  })

  it("a branded id refuses anything but a UUID, saying so", () => {
    const decoded = Schema.decodeUnknownEither(Ids.MerchantId)("merchant-1")
    expect(
      Either.isLeft(decoded) && ParseResult.ArrayFormatter.formatErrorSync(decoded.left).map((i) => i.message)
    ).toEqual(["must be a UUID"])
    expect(Schema.decodeUnknownSync(Ids.MerchantId)("3f2504e0-4f89-11d3-9a0c-0305e82c3301")).toBe(
      "3f2504e0-4f89-11d3-9a0c-0305e82c3301"
    )
  })
})
