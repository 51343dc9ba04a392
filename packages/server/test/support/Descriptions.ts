/**
 * The fields of an OpenAPI document that carry no description, as a client's generator reads them: every
 * operation's parameters, request body and responses, and every webhook's payload, walked with `$ref`s
 * resolved. A property that is a `$ref` is described by the schema it names (generators drop a
 * `description` beside a `$ref`); one wrapped (`anyOf`, `allOf`) by the wrapper or by what it wraps.
 * Effect's stock descriptions (`a Universally Unique Identifier`, `a string at most 255 character(s) long`:
 * lower-case, `a`/`an` first) say what a validator checks, not what the field is, and do not count.
 * Each path is written as the walk reached it: `POST /checkout/sessions request price_data.interval`.
 */

type Json = any

const methods = ["get", "put", "post", "delete", "patch", "head", "options", "trace"] as const

const stock = /^an? /

const has = (text: unknown): boolean => typeof text === "string" && text.trim() !== "" && !stock.test(text)

export const missing = (document: Json): ReadonlyArray<string> => {
  const found: Array<string> = []
  const schemas: Record<string, Json> = document.components?.schemas ?? {}
  const named = (ref: string): Json => {
    const prefix = "#/components/schemas/"
    if (!ref.startsWith(prefix)) throw new Error(`Unexpected $ref ${ref}`)
    const schema = schemas[decodeURIComponent(ref.slice(prefix.length))]
    if (schema === undefined) throw new Error(`Unresolved $ref ${ref}`)
    return schema
  }
  const visited = new Set<string>()

  /** Whether `schema` describes itself, as a generator sees it. */
  const described = (schema: Json): boolean => {
    if (schema === null || typeof schema !== "object") return true
    if (typeof schema.$ref === "string") return described(named(schema.$ref))
    if (has(schema.description)) return true
    const wrapped: ReadonlyArray<Json> = schema.allOf ?? schema.anyOf ?? schema.oneOf ?? []
    // `X | null`: the one branch that is not `null` says what the field is.
    const branches = wrapped.filter((b) => b?.type !== "null")
    return branches.length > 0 && branches.every(described)
  }

  /** Every object property under `schema`, reached in `where` at the field `path`. */
  const walk = (schema: Json, where: string, path: string): void => {
    if (schema === null || typeof schema !== "object") return
    if (typeof schema.$ref === "string") {
      if (visited.has(schema.$ref)) return
      visited.add(schema.$ref)
      walk(named(schema.$ref), where, path)
      return
    }
    for (const key of ["allOf", "anyOf", "oneOf"] as const)
      for (const branch of schema[key] ?? []) walk(branch, where, path)
    if (schema.items !== undefined) walk(schema.items, where, `${path}[]`)
    if (typeof schema.additionalProperties === "object") walk(schema.additionalProperties, where, `${path}{}`)
    for (const [name, property] of Object.entries<Json>(schema.properties ?? {})) {
      const at = path === "" ? name : `${path}.${name}`
      if (!described(property)) found.push(`${where} ${at}`)
      walk(property, where, at)
    }
  }

  const operation = (where: string, op: Json) => {
    for (const parameter of op.parameters ?? [])
      if (!has(parameter.description) && !described(parameter.schema))
        found.push(`${where} ${parameter.in} parameter ${parameter.name}`)
    for (const [type, media] of Object.entries<Json>(op.requestBody?.content ?? {}))
      walk(media.schema, `${where} request${type === "application/json" ? "" : ` (${type})`}`, "")
    for (const [status, response] of Object.entries<Json>(op.responses ?? {}))
      for (const media of Object.values<Json>(response.content ?? {}))
        walk(media.schema, `${where} ${status}`, "")
  }

  for (const [path, item] of Object.entries<Json>(document.paths ?? {}))
    for (const method of methods)
      if (item[method] !== undefined) operation(`${method.toUpperCase()} ${path}`, item[method])
  for (const [name, item] of Object.entries<Json>(document.webhooks ?? {}))
    for (const method of methods) if (item[method] !== undefined) operation(`webhook ${name}`, item[method])
  return found
}
