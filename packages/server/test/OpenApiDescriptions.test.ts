/**
 * Every field a client's generator reads carries a description, in both published documents (the API's
 * `/openapi.json` and the operator API's `/ops/openapi.json`, built as the service serves them): the walk
 * of `support/Descriptions.ts`, `$ref`s resolved. Held here: every error body's `code` and `errors`, every
 * `currency`, and the request fields of `POST /checkout/sessions`; the other fields still without one
 * are counted, and the count may only fall.
 */
import { OpenApi } from "@effect/platform"
import { describe, expect, it } from "vitest"
import { Api } from "../src/Api.js"
import { OpsDocumentApi } from "../src/Routes.js"
import { missing } from "./support/Descriptions.js"

const documents = {
  "/openapi.json": OpenApi.fromApi(Api),
  "/ops/openapi.json": OpenApi.fromApi(OpsDocumentApi)
}

/** Fields still without a description; lower these as they get one (never raise them). */
const stillUndescribed = { "/openapi.json": 323, "/ops/openapi.json": 162 }

describe("the OpenAPI documents' descriptions", () => {
  for (const [name, document] of Object.entries(documents)) {
    const found = missing(document)

    it(`${name}: error bodies, currencies and the checkout request describe every field`, () => {
      const held = found.filter(
        (path) =>
          / [45]\d\d (code|errors|errors\[\]\.field|errors\[\]\.message)$/.test(path) ||
          /(^|[ .\]])currency$/.test(path) ||
          path.startsWith("POST /checkout/sessions request")
      )
      expect(held).toEqual([])
    })

    it(`${name}: no more fields without a description than before`, () => {
      expect(found.length, found.slice(0, 20).join("\n")).toBeLessThanOrEqual(
        stillUndescribed[name as keyof typeof stillUndescribed]
      )
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
              beside: { $ref: "#/components/schemas/B", description: "Ignored" }
            }
          },
          B: { type: "object", properties: { bare: { type: "string" } } }
        }
      }
    }
    expect(missing(document)).toEqual(["POST /x request list[].bare", "POST /x request beside"])
  })
})
