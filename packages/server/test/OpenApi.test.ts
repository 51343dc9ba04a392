/**
 * The published OpenAPI document is the contract: its `webhooks` map names every event of the catalogue,
 * and each webhook's request schema accepts the envelopes the server really records.
 */
import { EventType } from "@laari/core"
import { Ajv2020 } from "ajv/dist/2020.js"
import formats from "ajv-formats"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as F from "./support/Fixtures.js"
import * as TestServer from "./support/TestServer.js"

let server: TestServer.TestServer
let document: any

beforeAll(async () => {
  server = await TestServer.start()
  const res = await server.request("GET", "/openapi.json")
  expect(res.status).toBe(200)
  document = res.body
}, 60_000)

afterAll(() => server?.close())

/** A validator for one event's delivery body, as the document publishes it. */
const validator = (type: string) => {
  const ajv = new Ajv2020({ strict: true, allErrors: true })
  // ajv-formats is CommonJS: under NodeNext its default import is the module, the plugin is `.default`.
  formats.default(ajv)
  return ajv.compile(document.webhooks[type].post.requestBody.content["application/json"].schema)
}

describe("GET /openapi.json", () => {
  it("is OpenAPI 3.1 at API version 2026-07-01", () => {
    expect(document.openapi).toMatch(/^3\.1\./)
    expect(document.info.version).toBe("2026-07-01")
  })

  it("has one webhook per event type of the catalogue, each a POST of a JSON envelope", () => {
    expect(Object.keys(document.webhooks).sort()).toEqual([...EventType.Types].sort())
    for (const type of EventType.Types) {
      const post = document.webhooks[type].post
      expect(post.summary).toContain(type)
      expect(Object.keys(post.responses)).toEqual(["2XX"])
      expect(post.responses["2XX"].description).toEqual(expect.any(String))
      expect(JSON.stringify(post.requestBody)).not.toContain("$ref")
      expect(post.requestBody.content["application/json"].schema.properties.type.enum).toEqual([type])
    }
  })

  it("each webhook's schema accepts the envelopes the server records, and refuses a wrong one", async () => {
    const m = await F.merchant(server)
    const created = await server.request("POST", "/mandates", { key: m.test, body: F.mandateBody() })
    expect(created.status).toBe(201)
    const id = created.body.id
    const charge = (amount: number) =>
      server.request("POST", `/mandates/${id}/charges`, {
        key: m.test,
        body: { amount, reference: F.unique("c") }
      })
    expect((await charge(1000)).status).toBe(201)
    expect((await charge(60_000)).status).toBe(422)
    expect((await server.request("POST", `/mandates/${id}/revoke`, { key: m.test })).status).toBe(200)

    const recorded = await F.events(server, m.id)
    const types = new Set(recorded.map((e) => e.type))
    expect(types).toEqual(
      new Set(["mandate.activated", "mandate.charge.succeeded", "mandate.charge.failed", "mandate.revoked"])
    )
    for (const envelope of recorded) {
      const validate = validator(envelope.type)
      expect(validate(envelope), `${envelope.type}: ${JSON.stringify(validate.errors)}`).toBe(true)
      // Two-sided: the same envelope with a wrong field, or under another event's type, is refused.
      expect(validate({ ...envelope, created: "yesterday" })).toBe(false)
      expect(validate({ ...envelope, data: { object: { ...envelope.data.object, currency: "USD" } } })).toBe(
        false
      )
      const other = envelope.type === "mandate.revoked" ? "mandate.activated" : "mandate.revoked"
      expect(validate({ ...envelope, type: other })).toBe(false)
    }
  })
})
