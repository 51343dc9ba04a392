/**
 * Answering errors outside HttpApi (`Http/Answers`): an endpoint's errors by the schemas the API, its group
 * and it list, the edge's by the common ones; across the whole API the schemas sharing a tag accept
 * disjoint codes, so no order decides an answer.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import { Errors, Mandates, Refunds } from "@laari/core"
import { SchemaAST } from "effect"
import { describe, expect, it } from "vitest"
import { Api } from "../../src/Api.js"
import * as Answers from "../../src/Http/Answers.js"
import * as Problem from "../../src/Http/Problem.js"
import * as Problems from "../../src/Http/Problems.js"
import * as MandatesProblems from "../../src/Mandates/Problems.js"
import { OpsDocumentApi } from "../../src/Routes.js"

const members = (ast: SchemaAST.AST): ReadonlyArray<SchemaAST.AST> =>
  SchemaAST.isUnion(ast) ? ast.types.flatMap(members) : [ast]

const identifier = (ast: SchemaAST.AST) => String(ast.annotations[SchemaAST.IdentifierAnnotationId])

/**
 * What every API lists before any `addError` (HttpApi's decode failure, which `Middleware` answers as
 * `Undecodable`), and `Never`, what an endpoint or group listing no error has.
 */
const platform = new Set(members(HttpApi.make("none").errorSchema.ast).map(String))
const ours = (ast: SchemaAST.AST) => !SchemaAST.isNeverKeyword(ast) && !platform.has(String(ast))

const withProps = (api: HttpApi.HttpApi.Any) => api as unknown as HttpApi.HttpApi.AnyWithProps

/** The answers of everything `api` lists. */
const whole = (api: HttpApi.HttpApi.Any) => Answers.of(Answers.listed(withProps(api)))

/** The codes a schema's body may carry. */
const codesOf = (ast: SchemaAST.AST): ReadonlyArray<string> => {
  if (!SchemaAST.isTransformation(ast) || !SchemaAST.isTypeLiteral(ast.from)) return []
  const code = ast.from.propertySignatures.find((p) => p.name === "code")
  return code === undefined
    ? []
    : members(code.type).flatMap((t) => (SchemaAST.isLiteral(t) ? [String(t.literal)] : []))
}

const endpointOf = (group: string, name: string) => {
  const api = withProps(Api)
  const g = api.groups[group]!
  return Answers.ofEndpoint(api, g, g.endpoints[name]!)
}

describe("Answers", () => {
  it("answers every error schema the merchant and operator APIs list, the edge's among them", () => {
    for (const api of [Api, OpsDocumentApi]) {
      const listed = new Set(
        Answers.listed(withProps(api)).flatMap((schema) => members(schema.ast).filter(ours).map(identifier))
      )
      const answered = new Set(whole(api).schemas.map((schema) => identifier(schema.ast)))
      expect([...listed].filter((id) => !answered.has(id))).toEqual([])
    }
    const answered = whole(Api).schemas
    expect(answered.length).toBeGreaterThan(40)
    expect(new Set(answered.map((schema) => identifier(schema.ast))).size).toBe(answered.length)
    const edge = Answers.edge.schemas.map((schema) => identifier(schema.ast))
    expect(edge.length).toBe(Problems.edge.length)
    expect(edge.filter((id) => !answered.some((schema) => identifier(schema.ast) === id))).toEqual([])
  })

  it("gives the schemas that share a tag disjoint codes, across the whole API", () => {
    const answers = whole(Api)
    for (const [tag, entries] of answers.byTag) {
      const schemas = answers.schemas.filter((schema) => Problem.tagsOf(schema).includes(tag))
      expect(schemas.length).toBe(entries.length)
      const codes = schemas.flatMap((schema) => codesOf(schema.ast))
      expect(codes.length, tag).toBeGreaterThan(0)
      expect(new Set(codes).size, tag).toBe(codes.length)
    }
  })

  it("answers an endpoint's error by the schemas it lists, and its code where the tag has several statuses", () => {
    const charge = endpointOf("mandates", "charge")
    expect(charge.answer(Mandates.ChargeRefused.of("INSUFFICIENT_FUNDS"))?.status).toBe(402)
    expect(charge.answer(Mandates.ChargeRefused.of("MANDATE_EXPIRED"))?.status).toBe(409)
    expect(charge.answer(Mandates.ChargeRefused.of("SERVICE_UNAVAILABLE"))).toEqual({
      status: 503,
      body: { message: Mandates.ChargeRefused.of("SERVICE_UNAVAILABLE").message, code: "SERVICE_UNAVAILABLE" }
    })
    // The group's and the API's errors are the endpoint's too.
    expect(charge.answer(Errors.OutcomeUnknown.of(new Error("lost")))?.body).toMatchObject({
      code: "OUTCOME_UNKNOWN"
    })
    expect(charge.answer(new Problems.NotFound())).toEqual({
      status: 404,
      body: { message: "Not found", code: "NOT_FOUND" }
    })
    expect(charge.schemas.map((schema) => identifier(schema.ast))).toContain(
      identifier(MandatesProblems.ChargeRefused.NotFound.ast)
    )
    // Another feature's error, which the endpoint does not list, is not its answer.
    expect(charge.answer(Refunds.RefundRefused.of("REFUND_AMOUNT_INVALID"))).toBeUndefined()
    expect(
      endpointOf("refunds", "create").answer(Mandates.ChargeRefused.of("INSUFFICIENT_FUNDS"))
    ).toBeUndefined()
  })

  it("names a domain field as the wire does, and leaves a field the client sent as sent", () => {
    const domain = Errors.InvalidRequest.field("perChargeCap", "must be at most periodCap")
    expect(Answers.edge.answer(domain)?.body).toEqual({
      message: "per_charge_cap: must be at most period_cap",
      code: "VALIDATION_FAILED",
      errors: [{ field: "per_charge_cap", message: "must be at most period_cap" }]
    })
    const sent = Problems.Undecodable.fromIssues([{ field: "periodCap", message: "is unexpected" }])
    expect(Answers.edge.answer(sent)?.body).toMatchObject({
      errors: [{ field: "periodCap", message: "is unexpected" }]
    })
  })

  it("answers nothing for an error outside its schemas", () => {
    expect(Answers.edge.answer(new Error("boom"))).toBeUndefined()
    expect(Answers.edge.answer({ _tag: "Unknown" })).toBeUndefined()
    expect(Answers.edge.answer(Mandates.ChargeRefused.of("INSUFFICIENT_FUNDS"))).toBeUndefined()
    expect(() => Answers.edge.respond("boom")).toThrow()
  })
})
