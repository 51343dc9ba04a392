/**
 * Answering an error outside HttpApi's own encoding, by the schemas that would answer it there: an
 * idempotent replay by its endpoint's (`ofEndpoint`: what the API, the group and the endpoint list), the
 * edge's refusals (the body checks of `Middleware`, `Edge`, `/metrics`, GraphQL) by the common ones
 * `Problems.edge` lists (`edge`). No table is written here: a feature's error is answered as soon as its
 * endpoint lists it (`addError`).
 *
 * Within one set of schemas an error's candidates are found by its `_tag`, and the schemas of one tag (a
 * refusal's, one per status) accept disjoint codes, so at most one answers it.
 */
import type * as HttpApi from "@effect/platform/HttpApi"
import type * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Option, Schema } from "effect"
import * as Problem from "./Problem.js"
import * as Problems from "./Problems.js"

/** The status and body an error is answered with. */
export interface Answer {
  readonly status: number
  readonly body: unknown
}

/** How the errors of one set of schemas are answered. */
export interface Answers {
  /** The schemas, each once, in the order they were listed. */
  readonly schemas: ReadonlyArray<Schema.Schema.AnyNoContext>
  /** The schemas by the tags of the errors they answer. */
  readonly byTag: ReadonlyMap<string, ReadonlyArray<Entry>>
  /**
   * The status and body an error is answered with: what HttpApi sends for it, computed by the same
   * schema; `undefined` for an error none of the schemas accepts.
   */
  readonly answer: (e: unknown) => Answer | undefined
  /** The response for an error of the schemas; one none of them accepts is a defect. */
  readonly respond: (e: unknown) => HttpServerResponse.HttpServerResponse
}

export interface Entry {
  readonly identifier: string
  readonly status: number
  readonly encode: (u: unknown) => Option.Option<unknown>
}

const entryOf = (schema: Schema.Schema.AnyNoContext): Entry => ({
  identifier: String(schema.ast.annotations.identifier),
  status: HttpApiSchema.getStatusError(schema),
  encode: Schema.encodeUnknownOption(schema)
})

const tagOf = (e: unknown): string | undefined =>
  typeof e === "object" && e !== null && "_tag" in e && typeof e._tag === "string" ? e._tag : undefined

/**
 * The answers of `declared`: error schemas or unions of them, as `addError` and a middleware's `failure`
 * take them. Split as HttpApi splits them (`HttpApiSchema.deunionize`), so a member carries the union's
 * annotations as it does there; only this API's schemas (`Problem`'s, which name their tags) answer.
 */
export const of = (declared: Iterable<Schema.Schema.All>): Answers => {
  const split = new Set<Schema.Schema.Any>()
  for (const schema of declared) HttpApiSchema.deunionize(split, schema as Schema.Schema.Any)
  // Error schemas need no service to encode: the API's `R` is for its middlewares.
  const schemas = Array.from(split, (schema) => schema as Schema.Schema.AnyNoContext).filter(
    (schema) => Problem.tagsOf(schema).length > 0
  )
  const byTag: ReadonlyMap<string, ReadonlyArray<Entry>> = new Map(
    Array.from(new Set(schemas.flatMap(Problem.tagsOf)), (tag) => [
      tag,
      schemas.filter((schema) => Problem.tagsOf(schema).includes(tag)).map(entryOf)
    ])
  )
  const answer = (e: unknown): Answer | undefined => {
    const tag = tagOf(e)
    const entries = tag === undefined ? undefined : byTag.get(tag)
    if (entries === undefined) return undefined
    const found = entries.flatMap((entry) =>
      Option.match(entry.encode(e), {
        onNone: () => [],
        onSome: (body) => [{ identifier: entry.identifier, status: entry.status, body }]
      })
    )
    // Two schemas answering one error would make its status depend on their order: a mistake in a
    // feature's `Problems`.
    if (found.length > 1)
      throw new Error(
        `Several error schemas accept ${String(e)}: ${found.map((f) => f.identifier).join(", ")}`
      )
    const [only] = found
    return only === undefined ? undefined : { status: only.status, body: only.body }
  }
  const respond = (e: unknown) => {
    const found = answer(e)
    if (found === undefined) throw new Error(`No error schema accepts ${String(e)}`)
    return HttpServerResponse.unsafeJson(found.body, { status: found.status })
  }
  return { schemas, byTag, answer, respond }
}

/** What an endpoint of `api`'s `group` can answer: the errors the API, the group and the endpoint list. */
export const ofEndpoint = (
  api: HttpApi.HttpApi.AnyWithProps,
  group: HttpApiGroup.HttpApiGroup.AnyWithProps,
  endpoint: HttpApiEndpoint.HttpApiEndpoint.AnyWithProps
): Answers => of([api.errorSchema, group.errorSchema, endpoint.errorSchema])

/** Every error schema `api` lists anywhere, as HttpApi's own encoding of its errors gathers them. */
export const listed = (api: HttpApi.HttpApi.AnyWithProps): ReadonlyArray<Schema.Schema.All> => [
  api.errorSchema,
  ...Object.values(api.groups).flatMap((group) => [
    ...Object.values(group.endpoints).map((endpoint) => endpoint.errorSchema),
    group.errorSchema
  ])
]

/** The answers of the refusals sent before or around any endpoint (`Problems.edge`). */
export const edge: Answers = of(Problems.edge)
