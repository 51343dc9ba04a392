/**
 * The published documents (the API's, the operator API's, the wallet connector's) are valid OpenAPI 3.1
 * by an independent validator (the official JSON Schemas of the specification,
 * `@seriousme/openapi-schema-validator`), not only by the library that wrote them, and they are stable:
 * two fetches give the same bytes.
 */
import { Validator } from "@seriousme/openapi-schema-validator"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as TestServer from "../support/TestServer.js"

let server: TestServer.TestServer

beforeAll(async () => {
  server = await TestServer.start()
}, 60_000)

afterAll(() => server?.close())

const validate = async (document: unknown) => {
  const validator = new Validator()
  const result = await validator.validate(structuredClone(document) as Parameters<Validator["validate"]>[0])
  return { ...result, version: validator.version }
}

describe.each(["/openapi.json", "/ops/openapi.json", "/wallet-connector/openapi.json"])("%s", (path) => {
  it("is valid OpenAPI 3.1, and the same bytes on every fetch", async () => {
    const first = await server.request("GET", path)
    const second = await server.request("GET", path)
    expect(first.status).toBe(200)
    expect(second.text).toBe(first.text)
    const result = await validate(first.body)
    expect(result.errors ?? [], JSON.stringify(result.errors)).toEqual([])
    expect(result).toMatchObject({ valid: true, version: "3.1" })
  })

  it("would be refused if it were broken", async () => {
    const { body } = await server.request("GET", path)
    const [first] = Object.keys(body.paths)
    const op = Object.values<any>(body.paths[first!])[0]
    const brokenResponses = { ...body, paths: { ...body.paths, [first!]: { get: { ...op, responses: 42 } } } }
    expect((await validate(brokenResponses)).valid).toBe(false)
    expect((await validate({ ...body, openapi: "3.1.0", info: { title: 7 } })).valid).toBe(false)
  })
})
