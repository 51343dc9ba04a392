/**
 * The contract test's generator is two-sided on the real document: every value `valid` makes for a
 * request body or parameter, Ajv accepts; every value `invalidObject`/`invalidParameter` makes, Ajv
 * refuses. Otherwise the contract test would send "valid" requests that are not, or "invalid" ones
 * that are.
 */
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Contract from "../support/Contract.js"
import * as SA from "../support/SchemaArbitrary.js"
import * as TestServer from "../support/TestServer.js"

let server: TestServer.TestServer
let document: Contract.Document

beforeAll(async () => {
  server = await TestServer.start()
  document = await Contract.fetchDocument(server)
}, 60_000)

afterAll(() => server?.close())

describe("SchemaArbitrary on /openapi.json", () => {
  it("makes request bodies and parameters the schemas accept, and ones they refuse", () => {
    const resolve = SA.resolver(document.components)
    const validator = Contract.validators(document)
    let checked = 0
    for (const op of Contract.operations(document)) {
      const schemas = [
        ...(op.body === undefined ? [] : [{ schema: op.body, object: true }]),
        ...op.parameters.map((p) => ({ schema: p.schema, object: false }))
      ]
      for (const { schema, object } of schemas) {
        const validate = validator(schema)
        fc.assert(
          fc.property(SA.valid(resolve, schema), (value) => {
            expect(validate(value), `${op.method} ${op.path} ${JSON.stringify(value)}`).toBe(true)
          }),
          { numRuns: 40, seed: 1 }
        )
        const invalid = object ? SA.invalidObject(resolve, schema) : SA.invalidParameter(resolve, schema)
        if (invalid !== undefined)
          fc.assert(
            fc.property(invalid, ({ value, broke }) => {
              expect(validate(value), `${op.method} ${op.path} ${broke}: ${JSON.stringify(value)}`).toBe(
                false
              )
            }),
            { numRuns: 40, seed: 1 }
          )
        checked++
      }
    }
    expect(checked).toBeGreaterThan(40)
  })
})
