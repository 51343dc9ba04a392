/**
 * JSON Schemas placed by hand inside the OpenAPI document (webhook bodies, optional request bodies),
 * where `#/$defs/...` would point at the document's root and not resolve: every definition inlined.
 */
import { JSONSchema, type Schema } from "effect"

/**
 * Replaces each `$ref` into `$defs` by the definition itself, and an `allOf` of one schema (how a
 * reference carries annotations) by that schema merged with its siblings: the same constraints, simpler.
 */
const inline = (node: unknown, defs: { readonly [name: string]: unknown }): unknown => {
  if (Array.isArray(node)) return node.map((item) => inline(item, defs))
  if (typeof node !== "object" || node === null) return node
  const { allOf, ...others } = node as { readonly allOf?: ReadonlyArray<unknown> }
  if (Array.isArray(allOf) && allOf.length === 1 && typeof allOf[0] === "object")
    return inline({ ...(allOf[0] as object), ...others }, defs)
  const { $ref, ...rest } = node as { readonly $ref?: unknown }
  if (typeof $ref === "string" && $ref.startsWith("#/$defs/")) {
    const name = $ref.slice("#/$defs/".length)
    if (!(name in defs)) throw new Error(`Unresolved ${$ref} in an inlined schema`)
    return inline({ ...(defs[name] as object), ...rest }, defs)
  }
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, inline(value, defs)]))
}

/** The JSON Schema 2020-12 of `schema` with no `$schema` and no `$defs`: it can sit anywhere. */
export const standalone = <A, I, R>(schema: Schema.Schema<A, I, R>): unknown => {
  const { $schema: _dialect, $defs, ...rest } = JSONSchema.make(schema, { target: "jsonSchema2020-12" })
  return inline(rest, $defs ?? {})
}
