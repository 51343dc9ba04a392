/**
 * What both OpenAPI documents (`/openapi.json`, `/ops/openapi.json`) say that `OpenApi.fromApi` cannot:
 * the response headers every answer carries, where the service is, and schemas open to additive fields;
 * and what it says wrongly: HttpApi's own decode error, which the service never sends, is left out.
 * One `finish`, applied by each document's `OpenApi.Transform`, so the two never disagree.
 */

type Json = Record<string, unknown>

interface Operation {
  parameters?: ReadonlyArray<{ readonly in?: string; readonly name?: string }>
  responses?: Record<string, { headers?: Record<string, unknown>; content?: unknown }>
}

const header = (description: string, schema: Json = { type: "string" }) => ({ description, schema })

/** `Http/RequestId`: set on every response, the client's well-formed one kept. */
const RequestId = header("Names this request in the service's logs; quote it when reporting a problem")

/** `Http/Idempotent`: set on a response replayed for a repeated `Idempotency-Key`. */
const IdempotentReplay = header(
  "`true` when this response is the stored answer to an earlier request with the same `Idempotency-Key`",
  { type: "string", enum: ["true"] }
)

/** `Http/RateLimit`: on every answer to a limited request, `Retry-After` on the refusal as well. */
const RateLimitHeaders = {
  "RateLimit-Limit": header("Requests the bucket holds", { type: "integer", minimum: 0 }),
  "RateLimit-Remaining": header("Requests left now", { type: "integer", minimum: 0 }),
  "RateLimit-Reset": header("Seconds until the bucket is full again", { type: "integer", minimum: 0 })
}
const RetryAfter = header("Seconds to wait before retrying", { type: "integer", minimum: 0 })

const Methods = ["get", "put", "post", "delete", "patch", "head", "options", "trace"]

const isObject = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)

/** Every `additionalProperties: false` under `node` removed; references are left as they are. */
const open = (node: unknown): unknown => {
  if (Array.isArray(node)) return node.map(open)
  if (!isObject(node)) return node
  return Object.fromEntries(
    Object.entries(node)
      .filter(([key, value]) => !(key === "additionalProperties" && value === false))
      .map(([key, value]) => [key, open(value)])
  )
}

const ComponentRef = "#/components/schemas/"

/** The components `node` references, and those they reference in turn. */
const reachable = (node: unknown, components: Json, found = new Set<string>()): Set<string> => {
  const visit = (n: unknown): void => {
    if (Array.isArray(n)) n.forEach(visit)
    else if (isObject(n)) {
      const ref = n.$ref
      if (typeof ref === "string" && ref.startsWith(ComponentRef)) {
        const name = ref.slice(ComponentRef.length)
        if (!found.has(name)) {
          found.add(name)
          visit(components[name])
        }
      }
      Object.values(n).forEach(visit)
    }
  }
  visit(node)
  return found
}

/**
 * What the service sends opened to additive fields: every `additionalProperties: false` removed from
 * responses and webhook bodies (and the components only they use). The spec tells clients to ignore
 * fields they do not know, and an additive change keeps the version, so a client built from the document
 * must not refuse a new field. `required` and each field's type stay: a missing or mistyped field is
 * still wrong. Requests stay closed: the server refuses a key it does not know, and says so.
 */
const openResponses = (doc: Json): void => {
  const components = ((doc.components as Json | undefined)?.schemas ?? {}) as Json
  const requests: Array<unknown> = []
  for (const item of Object.values((doc.paths ?? {}) as Record<string, Record<string, Json>>))
    for (const op of Object.values(item)) {
      if (!isObject(op)) continue
      requests.push(op.parameters, op.requestBody)
      if (isObject(op.responses)) op.responses = open(op.responses)
    }
  if (isObject(doc.webhooks)) doc.webhooks = open(doc.webhooks)
  const closed = reachable(requests, components)
  for (const name of Object.keys(components)) if (!closed.has(name)) components[name] = open(components[name])
}

/** The response headers of one operation, from what its parameters and statuses say it does. */
const withHeaders = (op: Operation): void => {
  const idempotent = (op.parameters ?? []).some(
    (p) => p.in === "header" && p.name?.toLowerCase() === "idempotency-key"
  )
  const limited = op.responses?.["429"] !== undefined
  for (const [status, response] of Object.entries(op.responses ?? {})) {
    response.headers = {
      ...response.headers,
      "Request-Id": RequestId,
      ...(idempotent ? { "Idempotent-Replay": IdempotentReplay } : {}),
      ...(limited ? RateLimitHeaders : {}),
      ...(status === "429" ? { "Retry-After": RetryAfter } : {})
    }
  }
}

const DecodeErrorRef = "#/components/schemas/HttpApiDecodeError"

interface SchemaNode {
  readonly $ref?: string
  readonly anyOf?: ReadonlyArray<SchemaNode>
}

/** The parts of the document `dropDecodeError` reads. */
interface DecodeErrorDocument {
  readonly paths: Record<
    string,
    Record<string, { responses?: Record<string, { content?: Record<string, { schema: SchemaNode }> }> }>
  >
  readonly components: { readonly schemas: Record<string, unknown> }
}

/** A response's schema without the platform's decode error: the schema left, or none. */
const withoutDecodeError = (schema: SchemaNode): SchemaNode | undefined => {
  if (schema.$ref === DecodeErrorRef) return undefined
  if (schema.anyOf === undefined) return schema
  const rest = schema.anyOf.filter((s) => s.$ref !== DecodeErrorRef)
  return rest.length === 1 ? rest[0] : { ...schema, anyOf: rest }
}

/**
 * HttpApi lists its own decode error as a `400` of every operation, but the service never sends it:
 * `Http/Middleware` answers a request that does not decode with `422` `InvalidRequest`, documented on
 * the groups (the operator API's too). This removes the platform's entry, so the document lists only bodies that are sent.
 */
const dropDecodeError = (spec: Record<string, unknown>): Record<string, unknown> => {
  const doc = structuredClone(spec) as unknown as DecodeErrorDocument
  for (const item of Object.values(doc.paths)) {
    for (const op of Object.values(item)) {
      const content = op.responses?.["400"]?.content?.["application/json"]
      if (content === undefined) continue
      const schema = withoutDecodeError(content.schema)
      if (schema !== undefined) content.schema = schema
      else delete op.responses?.["400"]
    }
  }
  for (const name of ["HttpApiDecodeError", "Issue", "PropertyKey"]) delete doc.components.schemas[name]
  if (JSON.stringify(doc).includes(DecodeErrorRef)) throw new Error(`${DecodeErrorRef} is still referenced`)
  return doc as unknown as Record<string, unknown>
}

/**
 * The post-processing shared by both documents; `spec` is not modified. `internal`: the operator API,
 * not for merchants (OpenAPI `x-internal`, what the OWASP ruleset asks every server to say).
 */
export const finish =
  (options: { readonly internal: boolean }) =>
  (spec: Json): Json => {
    const doc = dropDecodeError(spec) as Json
    openResponses(doc)
    for (const item of Object.values((doc.paths ?? {}) as Record<string, Record<string, Operation>>))
      for (const [method, op] of Object.entries(item)) if (Methods.includes(method)) withHeaders(op)
    // The documents are served by the service they describe: the relative URL is the origin they came from.
    doc.servers = [
      {
        url: "/",
        description: "This laari service, in production or local: the origin serving this document",
        "x-internal": options.internal
      }
    ]
    return doc
  }
