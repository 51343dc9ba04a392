/**
 * fast-check values from the JSON Schemas of the published document: values a schema accepts (`valid`),
 * and values that break exactly one of its constraints (`invalid`). The contract test drives the server
 * with them, so requests say only what the document says, not what the server happens to know.
 */
import fc from "fast-check"

export type JsonSchema = { readonly [key: string]: any }

/**
 * Resolves `#/components/schemas/...` references against the document's components, and an `allOf` of
 * one schema (how a reference carries its own description) into that schema with the description.
 */
export type Resolver = (schema: JsonSchema) => JsonSchema

export const resolver =
  (components: { readonly schemas?: Record<string, JsonSchema> } = {}): Resolver =>
  (schema) => {
    let s = schema
    for (let depth = 0; depth < 20; depth++) {
      if (typeof s.$ref === "string") {
        const name = s.$ref.replace("#/components/schemas/", "")
        const target = components.schemas?.[name]
        if (target === undefined) throw new Error(`Unresolved ${s.$ref}`)
        const { $ref: _, ...rest } = s
        s = { ...target, ...rest }
      } else if (Array.isArray(s.allOf) && s.allOf.length === 1) {
        const { allOf, ...rest } = s
        s = { ...allOf[0], ...rest }
      } else break
    }
    return s
  }

/** The types a schema allows: `type` as a string or a list; none when it does not say. */
const typesOf = (s: JsonSchema): ReadonlyArray<string> =>
  Array.isArray(s.type) ? s.type : typeof s.type === "string" ? [s.type] : []

const offsets = ["+05:00", "+00:00", "-04:00", "Z"] as const

/** An RFC 3339 date-time in whole seconds, over a few years around now. */
const dateTime = fc
  .tuple(fc.integer({ min: Date.UTC(2025, 0, 1), max: Date.UTC(2028, 0, 1) }), fc.constantFrom(...offsets))
  .map(([ms, offset]) => {
    const base = new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(".000Z", "")
    return `${base}${offset}`
  })

const stringOf = (s: JsonSchema): fc.Arbitrary<string> => {
  if (s.format === "uuid") return fc.uuid()
  if (s.format === "date-time") return dateTime
  if (s.format === "uri") return fc.webUrl()
  const minLength = s.minLength ?? 0
  const maxLength = s.maxLength ?? 64
  if (typeof s.pattern === "string")
    return fc
      .stringMatching(new RegExp(s.pattern))
      .filter((v) => v.length >= minLength && v.length <= maxLength)
  // Mostly short, sometimes right at the limit, so the bounds themselves are exercised.
  return fc.oneof(
    {
      weight: 4,
      arbitrary: fc.string({ minLength, maxLength: Math.min(maxLength, Math.max(minLength, 24)) })
    },
    { weight: 1, arbitrary: fc.string({ minLength: maxLength, maxLength }) }
  )
}

const integerOf = (s: JsonSchema): fc.Arbitrary<number> => {
  const min = s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : -1_000_000)
  const max = s.maximum ?? (s.exclusiveMaximum !== undefined ? s.exclusiveMaximum - 1 : 1_000_000_000)
  return fc.oneof(
    { weight: 4, arbitrary: fc.integer({ min, max }) },
    { weight: 1, arbitrary: fc.constantFrom(min, max) }
  )
}

/** Values `schema` accepts. */
export const valid = (resolve: Resolver, schema: JsonSchema, depth = 0): fc.Arbitrary<unknown> => {
  const s = resolve(schema)
  if ("const" in s) return fc.constant(s.const)
  if (Array.isArray(s.enum)) return fc.constantFrom(...s.enum)
  const alternatives = s.anyOf ?? s.oneOf
  if (Array.isArray(alternatives))
    return fc.oneof(...alternatives.map((a: JsonSchema) => valid(resolve, a, depth)))
  const types = typesOf(s)
  if (types.length > 1) return fc.oneof(...types.map((type) => valid(resolve, { ...s, type }, depth)))
  switch (types[0]) {
    case "null":
      return fc.constant(null)
    case "boolean":
      return fc.boolean()
    case "integer":
      return integerOf(s)
    case "number":
      return fc.oneof(integerOf(s), fc.double({ min: s.minimum ?? -1e6, max: s.maximum ?? 1e9, noNaN: true }))
    case "string":
      return stringOf(s)
    case "array":
      return depth > 4
        ? fc.constant([])
        : fc.array(valid(resolve, s.items ?? {}, depth + 1), {
            minLength: s.minItems ?? 0,
            maxLength: Math.min(s.maxItems ?? 3, 3)
          })
    case "object": {
      const properties: Record<string, JsonSchema> = s.properties ?? {}
      const required: ReadonlyArray<string> = s.required ?? []
      const record = Object.fromEntries(
        Object.entries(properties).map(([k, v]) => [k, valid(resolve, v, depth + 1)])
      )
      return fc.record(record, { requiredKeys: required.filter((k) => k in properties) as Array<string> })
    }
    default:
      return fc.jsonValue({ maxDepth: 2 })
  }
}

/** A value with one constraint of `schema` broken, and which constraint it was. */
export interface Broken {
  readonly value: unknown
  readonly broke: string
}

/** Values of the wrong JSON type for `s`, each with the type it has. */
const wrongTypes = (s: JsonSchema): ReadonlyArray<Broken> => {
  const allowed = typesOf(s)
  const samples: ReadonlyArray<readonly [string, unknown]> = [
    ["string", "x"],
    ["integer", 7],
    ["number", 1.5],
    ["boolean", true],
    ["null", null],
    ["array", [1]],
    ["object", { a: 1 }]
  ]
  if (allowed.length === 0 || s.enum !== undefined || s.anyOf !== undefined) return []
  return samples
    .filter(([type]) => !allowed.includes(type) && !(type === "integer" && allowed.includes("number")))
    .map(([type, value]) => ({ value, broke: `type ${type} for ${allowed.join("|")}` }))
}

/** One broken constraint of a scalar schema, as fast-check values. */
const brokenScalar = (resolve: Resolver, schema: JsonSchema): fc.Arbitrary<Broken> | undefined => {
  const s = resolve(schema)
  const options: Array<fc.Arbitrary<Broken>> = []
  const alternatives: ReadonlyArray<JsonSchema> = (s.anyOf ?? []).map(resolve)
  const scalar = alternatives.find((a) => !typesOf(a).includes("null")) ?? s
  const nullable = alternatives.some((a) => typesOf(a).includes("null")) || typesOf(s).includes("null")
  if (Array.isArray(scalar.enum)) options.push(fc.constant({ value: "NOT_A_MEMBER", broke: "enum" }))
  if (typeof scalar.maximum === "number")
    options.push(fc.constant({ value: scalar.maximum + 1, broke: "maximum" }))
  if (typeof scalar.minimum === "number")
    options.push(fc.constant({ value: scalar.minimum - 1, broke: "minimum" }))
  if (typesOf(scalar).includes("integer")) options.push(fc.constant({ value: 100.5, broke: "integer" }))
  if (typeof scalar.maxLength === "number")
    options.push(fc.constant({ value: "x".repeat(scalar.maxLength + 1), broke: "maxLength" }))
  if (typeof scalar.minLength === "number" && scalar.minLength > 0)
    options.push(fc.constant({ value: "", broke: "minLength" }))
  if (scalar.format === "uuid") options.push(fc.constant({ value: "not-a-uuid", broke: "format uuid" }))
  if (scalar.format === "date-time")
    options.push(fc.constant({ value: "tomorrow", broke: "format date-time" }))
  for (const broken of wrongTypes(scalar))
    if (!(broken.value === null && nullable)) options.push(fc.constant(broken))
  return options.length === 0 ? undefined : fc.oneof(...options)
}

/**
 * An object `schema` would accept but for one thing: a required property missing, one property's
 * constraint broken, or an unknown property where `additionalProperties` is false.
 */
export const invalidObject = (resolve: Resolver, schema: JsonSchema): fc.Arbitrary<Broken> | undefined => {
  const s = resolve(schema)
  if (!typesOf(s).includes("object")) return brokenScalar(resolve, s)
  const properties: Record<string, JsonSchema> = s.properties ?? {}
  const required: ReadonlyArray<string> = s.required ?? []
  const base = valid(resolve, s) as fc.Arbitrary<Record<string, unknown>>
  const options: Array<fc.Arbitrary<Broken>> = []
  for (const key of required)
    options.push(
      base.map((v) => {
        const { [key]: _, ...rest } = v
        return { value: rest, broke: `required ${key}` }
      })
    )
  for (const [key, property] of Object.entries(properties)) {
    const broken = brokenScalar(resolve, property)
    if (broken !== undefined)
      options.push(
        fc
          .tuple(base, broken)
          .map(([v, b]) => ({ value: { ...v, [key]: b.value }, broke: `${key}: ${b.broke}` }))
      )
  }
  if (s.additionalProperties === false)
    options.push(base.map((v) => ({ value: { ...v, zz_unknown: 1 }, broke: "additionalProperties" })))
  options.push(fc.constant({ value: [], broke: "type array for object" }))
  return fc.oneof(...options)
}

/** A value that breaks one constraint of a single (query, path or header) parameter's schema. */
export const invalidParameter = (resolve: Resolver, schema: JsonSchema): fc.Arbitrary<Broken> | undefined =>
  brokenScalar(resolve, schema)
