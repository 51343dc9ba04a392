/**
 * A refusal names the rule a field broke. Effect words a failed filter from the filter's description
 * ("Expected <description>, actual ..."), and annotating a field with a description of what it is
 * replaces the filter's own: the `422` then repeats the field's documentation instead of saying what is
 * wrong. Every one of Effect's filters (`maxLength`, `UUID`, `between`, ...) in every request schema so
 * either keeps Effect's own description of its rule or carries a message of its own.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import { Option, SchemaAST as AST } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Api } from "../../src/Api.js"
import { OpsDocumentApi } from "../../src/Routes.js"
import * as F from "../support/Fixtures.js"
import * as TestServer from "../support/TestServer.js"

/** Effect's own descriptions of its filters: "a string at most 255 character(s) long", "an integer". */
const effectsOwn = /^an? [a-zA-Z]/

/** The filters of `ast` described by something other than their rule and given no message, by path. */
const undescribed = (ast: AST.AST, path: string, seen: Set<AST.AST>, found: Array<string>): void => {
  if (seen.has(ast)) return
  seen.add(ast)
  switch (ast._tag) {
    case "Refinement": {
      // Effect's own filters carry their schema id; a filter of ours words its refusal itself.
      const own = Option.isSome(AST.getSchemaIdAnnotation(ast))
      const description = Option.getOrUndefined(AST.getDescriptionAnnotation(ast))
      const message = Option.getOrUndefined(AST.getMessageAnnotation(ast))
      if (own && description !== undefined && message === undefined && !effectsOwn.test(description))
        found.push(`${path}: "${description}"`)
      undescribed(ast.from, path, seen, found)
      return
    }
    case "Transformation":
      undescribed(ast.from, path, seen, found)
      undescribed(ast.to, path, seen, found)
      return
    case "TypeLiteral":
      for (const p of ast.propertySignatures) undescribed(p.type, `${path}.${String(p.name)}`, seen, found)
      for (const i of ast.indexSignatures) undescribed(i.type, `${path}[]`, seen, found)
      return
    case "Union":
      for (const t of ast.types) undescribed(t, path, seen, found)
      return
    case "TupleType":
      for (const e of ast.elements) undescribed(e.type, `${path}[]`, seen, found)
      for (const r of ast.rest) undescribed(r.type, `${path}[]`, seen, found)
      return
    case "Suspend":
      undescribed(ast.f(), path, seen, found)
      return
    default:
      return
  }
}

const requestSchemas = (api: HttpApi.HttpApi.Any): Array<string> => {
  const found: Array<string> = []
  HttpApi.reflect(api as HttpApi.HttpApi.AnyWithProps, {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) => {
      const name = `${endpoint.method} ${endpoint.path}`
      const parts = {
        path: endpoint.pathSchema,
        query: endpoint.urlParamsSchema,
        headers: endpoint.headersSchema,
        body: endpoint.payloadSchema
      }
      for (const [part, schema] of Object.entries(parts))
        if (Option.isSome(schema)) undescribed(schema.value.ast, `${name} ${part}`, new Set(), found)
    }
  })
  return found
}

describe("the messages of request fields", () => {
  it("every filter of the API's requests says its rule when it fails", () => {
    expect(requestSchemas(Api)).toEqual([])
  })

  it("and of the operator API's", () => {
    expect(requestSchemas(OpsDocumentApi)).toEqual([])
  })
})

describe("refusals over HTTP name the rule broken, not the field's description", () => {
  let server: TestServer.LocalTestServer
  beforeAll(async () => {
    server = await TestServer.start()
  }, 120_000)
  afterAll(() => server?.close())

  const refusal = (field: string, message: string) => ({
    message: `${field}: ${message}`,
    code: "VALIDATION_FAILED",
    errors: [{ field, message }]
  })

  it("a 300-character Idempotency-Key: at most 255 characters", async () => {
    const m = await F.merchant(server)
    const res = await server.request("POST", "/mandates", {
      key: m.test,
      body: F.mandateBody(),
      headers: { "idempotency-key": "k".repeat(300) }
    })
    expect(res.status).toBe(422)
    expect(res.body).toEqual(refusal("idempotency-key", "must be at most 255 characters"))
  })

  it('charge_id "abc": must be a UUID, in a body and in a query', async () => {
    const m = await F.merchant(server)
    const created = await server.request("POST", "/refunds", { key: m.test, body: { charge_id: "abc" } })
    expect(created.status).toBe(422)
    expect(created.body).toEqual(refusal("charge_id", "must be a UUID"))
    const listed = await server.request("GET", "/refunds?charge_id=abc", { key: m.test })
    expect(listed.status).toBe(422)
    expect(listed.body).toEqual(refusal("charge_id", "must be a UUID"))
  })

  it("a 5,000-character starting_after: at most 255 characters", async () => {
    const m = await F.merchant(server)
    const res = await server.request("GET", `/balance-transactions?starting_after=${"a".repeat(5_000)}`, {
      key: m.test
    })
    expect(res.status).toBe(422)
    expect(res.body).toEqual(refusal("starting_after", "must be at most 255 characters"))
  })
})
