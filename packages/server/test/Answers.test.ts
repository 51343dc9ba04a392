/**
 * The table of error answers (`Http/Answers`): it holds every error schema the two APIs list, an error's
 * schemas are found by its tag, and the schemas sharing a tag accept disjoint codes, so no order decides
 * an answer.
 */
import type * as HttpApi from "@effect/platform/HttpApi"
import { Errors, Mandates } from "@laari/core"
import { SchemaAST } from "effect"
import { describe, expect, it } from "vitest"
import { Api } from "../src/Api.js"
import * as Answers from "../src/Http/Answers.js"
import * as Problem from "../src/Http/Problem.js"
import * as Problems from "../src/Http/Problems.js"
import { OpsDocumentApi } from "../src/Routes.js"

const members = (ast: SchemaAST.AST): ReadonlyArray<SchemaAST.AST> =>
  SchemaAST.isUnion(ast) ? ast.types.flatMap(members) : [ast]

const identifier = (ast: SchemaAST.AST) => String(ast.annotations[SchemaAST.IdentifierAnnotationId])

/** The identifiers of the error schemas of this module's kind that `api` lists anywhere. */
const listed = (api: HttpApi.HttpApi.Any): ReadonlySet<string> => {
  const { groups, errorSchema } = api as unknown as HttpApi.HttpApi.AnyWithProps
  const asts = [errorSchema.ast]
  for (const group of Object.values(groups)) {
    asts.push(group.errorSchema.ast)
    for (const endpoint of Object.values(group.endpoints)) asts.push(endpoint.errorSchema.ast)
  }
  return new Set(
    asts
      .flatMap(members)
      .filter((ast) => Problem.tagsOf({ ast } as never).length > 0)
      .map(identifier)
  )
}

/** The codes a schema's body may carry. */
const codesOf = (ast: SchemaAST.AST): ReadonlyArray<string> => {
  if (!SchemaAST.isTransformation(ast) || !SchemaAST.isTypeLiteral(ast.from)) return []
  const code = ast.from.propertySignatures.find((p) => p.name === "code")
  return code === undefined
    ? []
    : members(code.type).flatMap((t) => (SchemaAST.isLiteral(t) ? [String(t.literal)] : []))
}

describe("Answers", () => {
  const inTable = new Set(Answers.table.map((schema) => identifier(schema.ast)))

  it("holds every error schema the merchant and operator APIs list, each once", () => {
    const all = new Set([...listed(Api), ...listed(OpsDocumentApi)])
    expect(all.size).toBeGreaterThan(40)
    expect([...all].filter((id) => !inTable.has(id))).toEqual([])
    expect(inTable.size).toBe(Answers.table.length)
  })

  it("gives the schemas that share a tag disjoint codes", () => {
    for (const [tag, entries] of Answers.byTag) {
      const schemas = Answers.table.filter((schema) => Problem.tagsOf(schema).includes(tag))
      expect(schemas.length).toBe(entries.length)
      const codes = schemas.flatMap((schema) => codesOf(schema.ast))
      expect(codes.length, tag).toBeGreaterThan(0)
      expect(new Set(codes).size, tag).toBe(codes.length)
    }
  })

  it("answers an error by its tag, and its code where the tag has several statuses", () => {
    expect(Answers.answer(Mandates.ChargeRefused.of("INSUFFICIENT_FUNDS"))?.status).toBe(402)
    expect(Answers.answer(Mandates.ChargeRefused.of("MANDATE_EXPIRED"))?.status).toBe(409)
    expect(Answers.answer(Mandates.ChargeRefused.of("SERVICE_UNAVAILABLE"))).toEqual({
      status: 503,
      body: { message: Mandates.ChargeRefused.of("SERVICE_UNAVAILABLE").message, code: "SERVICE_UNAVAILABLE" }
    })
    expect(Answers.answer(Errors.OutcomeUnknown.of(new Error("lost")))?.body).toMatchObject({
      code: "OUTCOME_UNKNOWN"
    })
    expect(Answers.answer(new Problems.NotFound())).toEqual({
      status: 404,
      body: { message: "Not found", code: "NOT_FOUND" }
    })
  })

  it("names a domain field as the wire does, and leaves a field the client sent as sent", () => {
    const domain = Errors.InvalidRequest.field("perChargeCap", "must be at most periodCap")
    expect(Answers.answer(domain)?.body).toEqual({
      message: "per_charge_cap: must be at most period_cap",
      code: "VALIDATION_FAILED",
      errors: [{ field: "per_charge_cap", message: "must be at most period_cap" }]
    })
    const sent = Problems.Undecodable.fromIssues([{ field: "periodCap", message: "is unexpected" }])
    expect(Answers.answer(sent)?.body).toMatchObject({
      errors: [{ field: "periodCap", message: "is unexpected" }]
    })
  })

  it("answers nothing for an error outside the table", () => {
    expect(Answers.answer(new Error("boom"))).toBeUndefined()
    expect(Answers.answer({ _tag: "Unknown" })).toBeUndefined()
    expect(() => Answers.respond("boom")).toThrow()
  })
})
