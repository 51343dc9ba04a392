/**
 * Every field a client's generator reads carries a description, in both published documents (the API's
 * `/openapi.json` and the operator API's `/ops/openapi.json`, built as the service serves them): the walk
 * of `support/Descriptions.ts`, `$ref`s resolved, Effect's stock descriptions not counted. Every request
 * and response field, parameter and webhook payload field: the first without one is named.
 */
import { OpenApi } from "@effect/platform"
import { describe, expect, it } from "vitest"
import { Api } from "../../src/Api.js"
import { OpsDocumentApi } from "../../src/Routes.js"
import { WalletConnectorApi } from "../../src/WalletConnector/Api.js"
import { missing } from "../support/Descriptions.js"

const documents = {
  "/openapi.json": OpenApi.fromApi(Api),
  "/ops/openapi.json": OpenApi.fromApi(OpsDocumentApi),
  "/wallet-connector/openapi.json": OpenApi.fromApi(WalletConnectorApi)
}

describe("the OpenAPI documents' descriptions", () => {
  for (const [name, document] of Object.entries(documents)) {
    it(`${name}: every parameter, request, response and webhook field has a description`, () => {
      expect(missing(document)).toEqual([])
    })
  }

  it("the walk finds a field without a description, through a $ref and under an array", () => {
    const document = {
      paths: {
        "/x": {
          post: {
            requestBody: { content: { "application/json": { schema: { $ref: "#/components/schemas/A" } } } },
            responses: {}
          }
        }
      },
      components: {
        schemas: {
          A: {
            type: "object",
            properties: {
              described: { type: "string", description: "Said" },
              list: { type: "array", description: "Items", items: { $ref: "#/components/schemas/B" } },
              // A description beside a $ref is dropped by generators: B has none of its own.
              beside: { $ref: "#/components/schemas/B", description: "Ignored" },
              // Effect's own words for a filter say what is checked, not what the field is.
              stock: { type: "string", format: "uuid", description: "a Universally Unique Identifier" },
              nullable: { anyOf: [{ type: "string", description: "an integer" }, { type: "null" }] }
            }
          },
          B: { type: "object", properties: { bare: { type: "string" } } }
        }
      }
    }
    expect(missing(document)).toEqual([
      "POST /x request list[].bare",
      "POST /x request beside",
      "POST /x request stock",
      "POST /x request nullable"
    ])
  })
})
