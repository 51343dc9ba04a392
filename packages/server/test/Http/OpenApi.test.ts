/**
 * The published OpenAPI document is the contract: its `webhooks` map names every event of the catalogue,
 * and each webhook's request schema accepts the envelopes the server really records.
 */
import { EventType } from "@laari/core"
import { Ajv2020 } from "ajv/dist/2020.js"
import formats from "ajv-formats"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Contract from "../support/Contract.js"
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

type Operation = {
  readonly summary?: string
  readonly description?: string
  readonly tags?: ReadonlyArray<string>
  readonly parameters: ReadonlyArray<{
    name: string
    in: string
    schema: any
    required: boolean
    description?: string
  }>
  readonly requestBody?: any
  readonly security?: ReadonlyArray<unknown>
  readonly responses: Record<string, any>
}

const operations = (): ReadonlyArray<readonly [string, Operation]> =>
  Object.entries<Record<string, Operation>>(document.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => [`${method.toUpperCase()} ${path}`, op] as const)
  )

/** Follows a `$ref` into the document's components. */
const resolve = (schema: any): any =>
  typeof schema?.$ref === "string"
    ? resolve(document.components.schemas[schema.$ref.replace("#/components/schemas/", "")])
    : schema

/** The alternatives of a response schema: its `anyOf` members, or itself. */
const alternatives = (schema: any): ReadonlyArray<any> =>
  schema.anyOf === undefined ? [resolve(schema)] : schema.anyOf.flatMap(alternatives)

describe("the operations of /openapi.json", () => {
  it("each has a tag, a summary and a description", () => {
    expect(operations().length).toBeGreaterThan(25)
    for (const [name, op] of operations()) {
      expect(op.tags?.length, name).toBe(1)
      expect(op.summary, name).toEqual(expect.any(String))
      expect(op.description?.length ?? 0, name).toBeGreaterThan(20)
    }
  })

  it("documents every error body as { message, code, errors? } and never the platform's decode error", () => {
    expect(JSON.stringify(document)).not.toContain("HttpApiDecodeError")
    for (const [name, op] of operations())
      for (const [status, response] of Object.entries(op.responses)) {
        if (Number(status) < 400) continue
        const schema = response.content["application/json"].schema
        for (const body of alternatives(schema)) {
          expect(body.type, `${name} ${status}`).toBe("object")
          expect(body.required, `${name} ${status}`).toContain("message")
          expect(Object.keys(body.properties).every((k) => ["message", "code", "errors"].includes(k))).toBe(
            true
          )
          // Open to additive fields, as every response: clients ignore unknown fields.
          expect(body.additionalProperties, `${name} ${status}`).toBeUndefined()
        }
      }
  })

  it("gives every error body a required `code`, distinct between the alternatives of one status", () => {
    /** The values `code` may take in one error body: its `const`, or its `enum`. */
    const codes = (body: any): ReadonlyArray<string> => {
      const code = resolve(body.properties?.code)
      return code?.const !== undefined ? [code.const] : (code?.enum ?? [])
    }
    let unions = 0
    for (const [name, op] of operations())
      for (const [status, response] of Object.entries(op.responses)) {
        if (Number(status) < 400) continue
        const bodies = alternatives(response.content["application/json"].schema)
        const seen = new Map<string, number>()
        bodies.forEach((body, i) => {
          expect(body.required, `${name} ${status}`).toContain("code")
          const values = codes(body)
          expect(values.length, `${name} ${status}: ${JSON.stringify(body)}`).toBeGreaterThan(0)
          for (const value of values) {
            expect(value, `${name} ${status}`).toMatch(/^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*$/)
            // A code two alternatives share would not tell a client which of them it got.
            expect(seen.get(value) ?? i, `${name} ${status}: ${value} in two alternatives`).toBe(i)
            seen.set(value, i)
          }
        })
        if (bodies.length > 1) unions++
      }
    expect(unions).toBeGreaterThan(10)
  })

  it("lists 401 and 429 on key-authenticated operations, 413 everywhere, 400 and 415 on bodies, 422 where input is decoded", () => {
    for (const [name, op] of operations()) {
      const statuses = Object.keys(op.responses)
      expect(statuses, name).toContain("413")
      if (name.startsWith("POST")) expect(statuses, name).toEqual(expect.arrayContaining(["400", "415"]))
      if (op.parameters.length > 0 || op.requestBody !== undefined) expect(statuses, name).toContain("422")
      if ((op.security ?? []).length > 0)
        expect(statuses, name).toEqual(expect.arrayContaining(["401", "429", "503"]))
    }
  })

  it("documents Idempotency-Key (1 to 255 characters) on creates, charges, revokes and cancels", () => {
    const keyed = operations().filter(([, op]) => op.parameters.some((p) => p.name === "idempotency-key"))
    expect(keyed.map(([name]) => name)).toEqual(
      expect.arrayContaining(["POST /mandates", "POST /mandates/{id}/charges", "POST /mandates/{id}/revoke"])
    )
    for (const [name, op] of keyed) {
      const header = op.parameters.find((p) => p.name === "idempotency-key")!
      expect(header, name).toMatchObject({ in: "header", required: false })
      expect(header.schema, name).toMatchObject({ type: "string", minLength: 1, maxLength: 255 })
      expect(op.responses["409"], name).toBeDefined()
    }
  })

  it("describes limit and offset as bounded integers with defaults", () => {
    const listed = operations().filter(([, op]) => op.parameters.some((p) => p.name === "limit"))
    expect(listed.length).toBeGreaterThanOrEqual(3)
    for (const [name, op] of listed) {
      const limit = op.parameters.find((p) => p.name === "limit")!
      const offset = op.parameters.find((p) => p.name === "offset")
      const cursor = op.parameters.find((p) => p.name === "starting_after")
      expect(limit.schema, name).toMatchObject({ type: "integer", minimum: 1, maximum: 100, default: 25 })
      // Paged by offset, or (balance transactions) by a cursor: one of the two, never neither.
      expect((offset === undefined) !== (cursor === undefined), name).toBe(true)
      if (offset !== undefined)
        expect(offset.schema, name).toMatchObject({ type: "integer", minimum: 0, default: 0 })
      if (cursor !== undefined) expect(cursor.schema, name).toMatchObject({ type: "string" })
    }
  })

  it("gives every time in a read the date-time format", () => {
    const mandate = resolve(document.components.schemas.Mandate)
    for (const field of ["createdAt", "expiresAt", "setupExpiresAt"])
      expect(mandate.properties[field], field).toMatchObject({ type: "string", format: "date-time" })
    expect(mandate.properties.id).toMatchObject({ format: "uuid" })
  })
})

describe("what /openapi.json says besides its operations", () => {
  it("declares Request-Id on every response, Idempotent-Replay where a key is taken, RateLimit-* and Retry-After where limited", () => {
    for (const [name, op] of operations()) {
      const keyed = op.parameters.some((p) => p.name === "idempotency-key")
      const limited = op.responses["429"] !== undefined
      for (const [status, response] of Object.entries<any>(op.responses)) {
        const headers = Object.keys(response.headers ?? {})
        expect(headers, `${name} ${status}`).toContain("Request-Id")
        expect(headers.includes("Idempotent-Replay"), `${name} ${status}`).toBe(keyed)
        expect(headers.includes("RateLimit-Remaining"), `${name} ${status}`).toBe(limited)
        expect(headers.includes("Retry-After"), `${name} ${status}`).toBe(status === "429")
      }
    }
    expect(operations().some(([, op]) => op.parameters.some((p) => p.name === "idempotency-key"))).toBe(true)
  })

  it("has a servers entry, in both documents", async () => {
    expect(document.servers).toEqual([expect.objectContaining({ url: "/", "x-internal": false })])
    const ops = await Contract.fetchDocument(server, "/ops/openapi.json").catch(() => undefined)
    if (ops !== undefined)
      expect(ops.servers).toEqual([expect.objectContaining({ url: "/", "x-internal": true })])
  })

  it("gives each of the webhooks its own operationId", () => {
    const ids = Object.values<any>(document.webhooks).map((w) => w.post.operationId)
    expect(ids).toHaveLength(EventType.Types.length)
    expect(new Set(ids).size).toBe(ids.length)
    for (const id of ids) expect(id).toMatch(/^on[A-Z][A-Za-z]+$/)
  })

  it("leaves what the service sends open to new fields, and requests closed", () => {
    const refs = (schema: any): Array<any> =>
      schema.$ref !== undefined ? [document.components.schemas[schema.$ref.split("/").pop()]] : [schema]
    const sessionRead = document.components.schemas.CheckoutSession
    expect(sessionRead.additionalProperties).toBeUndefined()
    expect(sessionRead.required).toContain("id")
    for (const webhook of Object.values<any>(document.webhooks))
      expect(JSON.stringify(webhook)).not.toContain('"additionalProperties":false')
    for (const [name, op] of operations()) {
      for (const [status, response] of Object.entries<any>(op.responses))
        for (const schema of refs(response.content?.["application/json"]?.schema ?? {}))
          expect(JSON.stringify(schema), `${name} ${status}`).not.toContain('"additionalProperties":false')
      const body = op.requestBody?.content?.["application/json"]?.schema
      if (body !== undefined)
        for (const schema of refs(body).flatMap((s) => s.oneOf ?? [s]))
          expect(schema.additionalProperties, name).toBe(false)
    }
  })
})

describe("POST /checkout/sessions in /openapi.json", () => {
  const body = () =>
    resolve(document.paths["/checkout/sessions"].post.requestBody.content["application/json"].schema)
  const branch = (mode: string) =>
    body()
      .oneOf.map(resolve)
      .find((b: any) => {
        const m = resolve(b.properties.mode)
        return [m, ...(m.anyOf ?? []).map(resolve)].some(
          (s: any) => s.const === mode || s.enum?.includes(mode)
        )
      })

  it("is a oneOf of the two modes, each with its own required fields", () => {
    expect(document.paths["/checkout/sessions"].post.requestBody.required).toBe(true)
    expect(body().oneOf).toHaveLength(2)
    const payment = branch("PAYMENT")
    const subscription = branch("SUBSCRIPTION")
    expect(payment.required).toEqual(expect.arrayContaining(["title", "reference", "amount"]))
    // `mode` omitted is a payment, so only the subscription branch requires it; it never says PAYMENT.
    expect(payment.required).not.toContain("mode")
    expect(JSON.stringify(payment.properties.mode)).not.toContain("SUBSCRIPTION")
    expect(subscription.required).toEqual(
      expect.arrayContaining(["mode", "title", "reference", "price_data"])
    )
    expect(resolve(subscription.properties.mode).enum).toEqual(["SUBSCRIPTION"])
    const price = resolve(subscription.properties.price_data)
    expect(price.required).toEqual(expect.arrayContaining(["name", "amount", "interval"]))
    expect(price.required).not.toContain("interval_count")
  })

  it("accepts both examples and refuses what the server refuses for a missing field", () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true })
    formats.default(ajv)
    const valid = ajv.compile(body())
    for (const example of body().examples) expect(valid(example), JSON.stringify(example)).toBe(true)
    expect(valid({ title: "T", reference: "r" })).toBe(false)
    expect(valid({ title: "T", amount: 100 })).toBe(false)
    expect(valid({ mode: "SUBSCRIPTION", title: "T", reference: "r", amount: 100 })).toBe(false)
    expect(
      valid({ mode: "SUBSCRIPTION", title: "T", reference: "r", price_data: { name: "P", amount: 100 } })
    ).toBe(false)
    expect(valid({ mode: "PAYMENT", title: "T", reference: "r", amount: 100 })).toBe(true)
  })
})

describe("descriptions in /openapi.json", () => {
  /** A schema's description, looking through `$ref` and the `null` alternative of an optional field. */
  const described = (schema: any): boolean =>
    typeof schema?.description === "string" ||
    typeof resolve(schema)?.description === "string" ||
    (schema?.anyOf ?? []).some(described)

  it("describes every parameter and every field of every request body", () => {
    const missing: Array<string> = []
    for (const [name, op] of operations()) {
      for (const p of op.parameters)
        if (!described(p.schema) && !p.description) missing.push(`${name} ${p.name}`)
      const body = resolve(op.requestBody?.content["application/json"].schema)
      for (const [field, schema] of Object.entries<any>(body?.properties ?? {}))
        if (!described(schema)) missing.push(`${name} ${field}`)
    }
    expect(missing).toEqual([])
  })
})

describe("examples in /openapi.json", () => {
  it("gives the create bodies examples the schemas accept and the service carries out", async () => {
    const validator = Contract.validators(document)
    const m = await F.merchant(server)
    const examplesOf = (path: string) => {
      const schema = resolve(document.paths[path].post.requestBody.content["application/json"].schema)
      expect(schema.examples?.length, path).toBeGreaterThan(0)
      const validate = validator(document.paths[path].post.requestBody.content["application/json"].schema)
      for (const example of schema.examples)
        expect(validate(example), JSON.stringify(validate.errors)).toBe(true)
      return schema.examples as ReadonlyArray<Record<string, unknown>>
    }
    for (const example of examplesOf("/mandates"))
      expect((await server.request("POST", "/mandates", { key: m.test, body: example })).status).toBe(201)
    for (const example of examplesOf("/checkout/sessions"))
      expect(
        (await server.request("POST", "/checkout/sessions", { key: m.test, body: example })).status
      ).toBe(200)
    for (const example of examplesOf("/qr-codes")) {
      const body = { ...example, outlet_id: m.outletId }
      expect((await server.request("POST", "/qr-codes", { key: m.test, body })).status).toBe(201)
    }
    expect(examplesOf("/mandates/{id}/charges").length).toBe(1)
  })
})

describe("path parameters as long as the document allows", () => {
  it("reach their handler: a 255-character reference is the resource's own 404, with its code", async () => {
    const m = await F.merchant(server)
    const reference = "r".repeat(255)
    const charge = await server.request("POST", `/mandates/${reference}/charges`, {
      key: m.test,
      body: { amount: 100 }
    })
    expect(charge.status).toBe(404)
    expect(charge.body).toEqual({ message: "Mandate not found", code: "MANDATE_NOT_FOUND" })
    const read = await server.request("GET", `/subscriptions/${encodeURIComponent("é".repeat(255))}`, {
      key: m.test
    })
    expect(read.status).toBe(404)
    expect(read.body).toEqual({ message: "Subscription not found", code: "SUBSCRIPTION_NOT_FOUND" })
  })
})

describe("webhook endpoint descriptions in /openapi.json", () => {
  it("say the note is the merchant's own, never that a customer sees it", () => {
    const body = (path: string, method: string) => {
      const schema = document.paths[path][method].requestBody.content["application/json"].schema
      return schema.$ref === undefined ? schema : document.components.schemas[schema.$ref.split("/").pop()]
    }
    const description = (schema: any) => {
      const field = schema.properties.description
      return [field.description, ...(field.anyOf ?? []).map((s: any) => s.description)].join(" ")
    }
    for (const [path, method] of [
      ["/webhook-endpoints", "post"],
      ["/webhook-endpoints/{id}", "post"]
    ] as const) {
      const text = description(body(path, method))
      expect(text, `${method} ${path}`).not.toMatch(/Shown to the customer/)
      expect(text, `${method} ${path}`).toMatch(/merchant's own/)
    }
  })
})
