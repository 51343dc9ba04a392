/**
 * The published document as a test reads it: its operations, and an Ajv (draft 2020-12) validator for
 * each documented response, with `#/components/schemas` references resolved.
 */
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js"
import formats from "ajv-formats"
import type { JsonSchema } from "./SchemaArbitrary.js"
import type { TestServer } from "./TestServer.js"

export interface Parameter {
  readonly name: string
  readonly in: "path" | "query" | "header"
  readonly required: boolean
  readonly schema: JsonSchema
}

export interface Operation {
  readonly method: string
  readonly path: string
  readonly parameters: ReadonlyArray<Parameter>
  readonly body: JsonSchema | undefined
  readonly bodyRequired: boolean
  readonly security: ReadonlyArray<string>
  readonly responses: Record<string, { readonly content?: Record<string, { readonly schema: JsonSchema }> }>
}

export type Document = { readonly [key: string]: any }

export const fetchDocument = async (server: TestServer, path = "/openapi.json"): Promise<Document> => {
  const res = await server.request("GET", path)
  if (res.status !== 200) throw new Error(`GET ${path}: ${res.status}`)
  return res.body
}

export const operations = (document: Document): ReadonlyArray<Operation> =>
  Object.entries<Record<string, any>>(document.paths).flatMap(([path, item]) =>
    Object.entries<any>(item).map(([method, op]) => ({
      method: method.toUpperCase(),
      path,
      parameters: op.parameters ?? [],
      body: op.requestBody?.content?.["application/json"]?.schema,
      bodyRequired: op.requestBody?.required === true,
      security: (op.security ?? []).flatMap((s: Record<string, unknown>) => Object.keys(s)),
      responses: op.responses
    }))
  )

const DocumentId = "https://laari.test/openapi.json"

/**
 * Points component references at `$defs`, relative within the components (registered with Ajv under
 * `DocumentId`) or absolute from a response schema compiled on its own.
 */
const repoint = (schema: unknown, base: string): unknown =>
  JSON.parse(JSON.stringify(schema).replaceAll('"#/components/schemas/', `"${base}#/$defs/`))

/** Validators of response bodies, compiled once per schema. */
export const validators = (document: Document) => {
  // Strict, so a schema Ajv does not understand fails the test instead of accepting everything; but not
  // `strictTypes`, which refuses valid JSON Schema: an `allOf` member with a bound and no `type` of its own.
  const ajv = new Ajv2020({ strict: true, strictTypes: false, allErrors: true, validateFormats: true })
  // ajv-formats is CommonJS: under NodeNext its default import is the module, the plugin is `.default`.
  formats.default(ajv)
  ajv.addSchema({ $id: DocumentId, $defs: repoint(document.components?.schemas ?? {}, "") })
  const cache = new Map<string, ValidateFunction>()
  return (schema: JsonSchema): ValidateFunction => {
    const key = JSON.stringify(schema)
    let validate = cache.get(key)
    if (validate === undefined) {
      validate = ajv.compile(repoint(schema, DocumentId) as object)
      cache.set(key, validate)
    }
    return validate
  }
}
