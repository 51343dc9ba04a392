import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import fc from "fast-check"
import * as Ids from "../src/kernel/Ids.js"
import * as Merchant from "../src/directory/Merchant.js"

const id = Ids.MerchantId.make("6f1c3a52-8a0b-4f47-9b8e-7e3f1f0b9c11")
const payer = Ids.CustomerId.make("0b7e2f4c-1d3a-4e5b-8c9d-aa11bb22cc33")

const fieldsOf = (input: Merchant.Input) =>
  Either.match(Merchant.open(input, id, payer), {
    onLeft: (e) => e.errors.map((p) => p.field),
    onRight: () => []
  })

describe("Merchant.open", () => {
  it("fills in the defaults and makes the sandbox payer a test customer of its own", () => {
    expect(Either.getOrThrow(Merchant.open({ name: "Island Grocer" }, id, payer))).toEqual({
      merchant: {
        id,
        name: "Island Grocer",
        city: "Male",
        mcc: "5999",
        feeBps: 100,
        features: { mandatesLive: false, subscriptionsLive: false },
        sandboxPayer: payer
      },
      sandboxPayer: {
        id: payer,
        environment: "test",
        phone: `+960 sandbox-${id}`,
        name: "Island Grocer sandbox payer"
      }
    })
  })

  it("keeps what is given", () => {
    const { merchant } = Either.getOrThrow(
      Merchant.open(
        { name: "Cafe", city: "Hulhumale", mcc: "5814", feeBps: 0, features: { subscriptionsLive: true } },
        id,
        payer
      )
    )
    expect(merchant).toMatchObject({
      city: "Hulhumale",
      mcc: "5814",
      feeBps: 0,
      features: { mandatesLive: false, subscriptionsLive: true }
    })
  })

  it.each([
    [{ name: "" }, ["name"]],
    [{ name: "x".repeat(256) }, ["name"]],
    [{ name: "x".repeat(255), city: "" }, ["city"]],
    [{ name: "A", mcc: "581" }, ["mcc"]],
    [{ name: "A", mcc: "58140" }, ["mcc"]],
    [{ name: "A", feeBps: -1 }, ["fee_bps"]],
    [{ name: "A", feeBps: 10_001 }, ["fee_bps"]],
    [{ name: "A", feeBps: 1.5 }, ["fee_bps"]],
    [{ name: "A", outlets: ["Front", ""] }, ["outlets[1].name"]],
    [{ name: "", mcc: "1", feeBps: 20_000 }, ["name", "mcc", "fee_bps"]]
  ] as const)("refuses %j naming %j", (input, fields) => {
    expect(fieldsOf(input)).toEqual(fields)
  })

  it("accepts every fee from 0 to 10000 basis points and every four-digit mcc", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10_000 }), fc.stringMatching(/^\d{4}$/), (feeBps, mcc) =>
        Either.isRight(Merchant.open({ name: "A", feeBps, mcc }, id, payer))
      )
    )
  })
})

describe("Merchant.withFeatures", () => {
  const { merchant } = Either.getOrThrow(Merchant.open({ name: "Gated" }, id, payer))

  it("changes the gates named and keeps the others", () => {
    const on = Merchant.withFeatures(merchant, { mandatesLive: true })
    expect(on.features).toEqual({ mandatesLive: true, subscriptionsLive: false })
    expect(Merchant.withFeatures(on, { subscriptionsLive: true, mandatesLive: undefined }).features).toEqual({
      mandatesLive: true,
      subscriptionsLive: true
    })
    expect(Merchant.withFeatures(on, {})).toEqual(on)
  })
})

describe("Merchant.outletName", () => {
  it("takes 1 to 255 characters", () => {
    expect(Merchant.outletName("Airport")).toEqual(Either.right("Airport"))
    expect(Either.isLeft(Merchant.outletName(""))).toBe(true)
    expect(Either.isLeft(Merchant.outletName("x".repeat(256)))).toBe(true)
  })
})

describe("Merchant.problems", () => {
  it("names each field wrong and says what it must be", () => {
    expect(
      Merchant.problems({ name: "", city: "x".repeat(256), mcc: "59", feeBps: 10_001, outlets: ["A", ""] })
    ).toEqual([
      { field: "name", message: "must be 1 to 255 characters" },
      { field: "city", message: "must be 1 to 255 characters" },
      { field: "mcc", message: "must be four digits" },
      { field: "fee_bps", message: "must be an integer from 0 to 10000" },
      { field: "outlets[1].name", message: "must be 1 to 255 characters" }
    ])
    expect(Merchant.outletName("")).toEqual(
      Either.left(
        expect.objectContaining({ errors: [{ field: "name", message: "must be 1 to 255 characters" }] })
      )
    )
  })
})
