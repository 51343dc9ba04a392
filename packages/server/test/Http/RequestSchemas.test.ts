/**
 * The request schemas are built from core's field schemas, so the published document carries the rules
 * of the API's fields: integers with their bounds, texts with their lengths, enums. Bounds are the API's
 * numbers, written out here on purpose: a changed constant in core must fail this test.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as F from "../support/Fixtures.js"
import * as TestServer from "../support/TestServer.js"

let server: TestServer.TestServer
let document: any

beforeAll(async () => {
  server = await TestServer.start()
  const res = await server.request("GET", "/openapi.json")
  expect(res.status).toBe(200)
  document = res.body
}, 60_000)

afterAll(() => server?.close())

/** The JSON body schema of `POST path`. */
const body = (path: string) => {
  const schema = document.paths[path].post.requestBody.content["application/json"].schema
  expect(schema.type).toBe("object")
  return schema
}

/** A property's schema; an optional field that may be `null` is `anyOf [schema, null]`. */
const field = (schema: any, name: string) => {
  const p = schema.properties[name]
  expect(p, name).toBeDefined()
  if (p.anyOf === undefined) return p
  const [nonNull, ...rest] = p.anyOf.filter((s: any) => s.type !== "null")
  expect(rest, name).toEqual([])
  return nonNull
}

const amount = { type: "integer", minimum: 100, maximum: 500_000 }
const text255 = { type: "string", maxLength: 255 }

describe("request bodies in /openapi.json", () => {
  it("POST /mandates: per_charge_cap 100 to 500000, texts at most 255, period MONTH", () => {
    const s = body("/mandates")
    expect(s.required).toEqual(expect.arrayContaining(["reference", "title", "per_charge_cap"]))
    expect(field(s, "per_charge_cap")).toMatchObject(amount)
    expect(field(s, "period_cap")).toMatchObject({ type: "integer", minimum: 100 })
    for (const name of ["reference", "title", "description"])
      expect(field(s, name), name).toMatchObject(text255)
    expect(field(s, "period")).toMatchObject({ enum: ["MONTH"] })
    expect(s.additionalProperties).toBe(false)
  })

  it("POST /mandates/{id}/charges: amount an integer 100 to 500000, texts at most 255", () => {
    const s = body("/mandates/{id}/charges")
    expect(s.required).toEqual(["amount"])
    expect(field(s, "amount")).toMatchObject(amount)
    for (const name of ["reference", "description"]) expect(field(s, name), name).toMatchObject(text255)
  })

  it("POST /qr-codes: amount from 100, expires_in_minutes 1 to 15, type STATIC or DYNAMIC, texts at most 255", () => {
    const s = body("/qr-codes")
    expect(field(s, "amount")).toMatchObject({ type: "integer", minimum: 100 })
    expect(field(s, "expires_in_minutes")).toMatchObject({ type: "integer", minimum: 1, maximum: 15 })
    expect(field(s, "type").enum).toEqual(["STATIC", "DYNAMIC"])
    for (const name of ["reference", "title", "description"])
      expect(field(s, name), name).toMatchObject(text255)
  })

  it("POST /checkout/sessions: one body per mode, price_data per 4.3, texts at most 255", () => {
    const [payment, subscription] =
      document.paths["/checkout/sessions"].post.requestBody.content["application/json"].schema.oneOf
    expect(field(payment, "mode").enum).toEqual(["PAYMENT"])
    expect(field(subscription, "mode").enum).toEqual(["SUBSCRIPTION"])
    for (const s of [payment, subscription]) {
      expect(s.type).toBe("object")
      expect(field(s, "amount")).toMatchObject(amount)
      for (const name of ["reference", "title", "description"])
        expect(field(s, name), name).toMatchObject(text255)
    }
    expect(field(payment, "price_data")).toMatchObject({ type: "null", description: expect.any(String) })
    const price = field(subscription, "price_data")
    expect(price.additionalProperties).toBe(false)
    expect(field(price, "name")).toMatchObject({ type: "string", maxLength: 120 })
    expect(field(price, "amount")).toMatchObject(amount)
    expect(field(price, "interval").enum).toEqual(["WEEK", "MONTH"])
    expect(field(price, "interval_count")).toMatchObject({ type: "integer", minimum: 1, maximum: 52 })
  })
})

describe("the server decodes by the same schemas", () => {
  it("takes a published bound and refuses one past it with 422 naming the field and the rule", async () => {
    const m = await F.merchant(server)
    const create = (overrides: Record<string, unknown>) =>
      server.request("POST", "/mandates", { key: m.test, body: F.mandateBody(overrides) })
    expect((await create({ per_charge_cap: 500_000, title: "t".repeat(255) })).status).toBe(201)
    expect((await create({ per_charge_cap: 100 })).status).toBe(201)
    for (const [overrides, error] of [
      [
        { per_charge_cap: 500_001 },
        { field: "per_charge_cap", message: "must be a whole number of laari from 100 to 500000" }
      ],
      [
        { per_charge_cap: 99 },
        { field: "per_charge_cap", message: "must be a whole number of laari from 100 to 500000" }
      ],
      [
        { per_charge_cap: 150.5 },
        { field: "per_charge_cap", message: "must be a whole number of laari from 100 to 500000" }
      ],
      [{ title: "t".repeat(256) }, { field: "title", message: "must be at most 255 characters" }]
    ] as const) {
      const res = await create(overrides)
      expect(res.status, JSON.stringify(overrides)).toBe(422)
      expect(res.body.errors, JSON.stringify(overrides)).toEqual([error])
    }
  })
})
