/**
 * The contract test (the published description is the contract). For every operation of
 * `/openapi.json`, requests generated from the document alone (valid ones, and ones breaking one
 * constraint at a time) go to a running server with seeded resources; every answer must be documented
 * for that operation: no 5xx, a documented status and content type, a body the documented schema
 * accepts (Ajv, draft 2020-12). Zero nonconformities is the bar; each one prints its reproduction.
 *
 * `CONTRACT_SEED` replays a run, `CONTRACT_RUNS` scales it (requests per operation).
 */
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Contract from "../support/Contract.js"
import * as F from "../support/Fixtures.js"
import { startQuickest } from "../support/PostgresServer.js"
import * as SA from "../support/SchemaArbitrary.js"
import * as TestServer from "../support/TestServer.js"

const Seed = Number(process.env.CONTRACT_SEED ?? 20260701)
const RunsPerOperation = Number(process.env.CONTRACT_RUNS ?? 130)
const InFlight = 16

let server: TestServer.TestServer
let document: Contract.Document
/** The operator API's own document (`/ops/openapi.json`), held to the same contract. */
let opsDocument: Contract.Document
let customerId: string
let m: F.Merchant
/** Ids and references of seeded resources, by kind, so `{id}` often names something real. */
const pools = {
  mandate: [] as Array<string>,
  qr: [] as Array<string>,
  png: [] as Array<string>,
  session: [] as Array<string>,
  subscription: [] as Array<string>
}

/** The kind of resource an operation's `{id}` names, from its path. */
const poolOf = (path: string): ReadonlyArray<string> =>
  path.startsWith("/ops/merchants")
    ? [m.id]
    : path.startsWith("/ops/customers")
      ? [customerId]
      : path.includes("mandates")
        ? pools.mandate
        : path.startsWith("/qr/")
          ? pools.png
          : path.includes("qr-codes")
            ? pools.qr
            : path.includes("checkout")
              ? pools.session
              : pools.subscription

beforeAll(async () => {
  // The contract is the HTTP layer's: PostgreSQL when there is one, spared a PGlite initdb.
  server = await startQuickest()
  document = await Contract.fetchDocument(server)
  opsDocument = await Contract.fetchDocument(server, "/ops/openapi.json")
  m = await F.merchant(server)
  const ok = (res: TestServer.Response, what: string) => {
    if (res.status >= 300) throw new Error(`seeding ${what}: ${res.status} ${res.text}`)
    return res.body
  }
  await server.ops("POST", `/ops/merchants/${m.id}/features`, {
    mandates_live: true,
    subscriptions_live: true
  })
  for (const key of [m.test, m.test, m.live]) {
    const mandate = ok(await server.request("POST", "/mandates", { key, body: F.mandateBody() }), "a mandate")
    pools.mandate.push(mandate.id, mandate.reference)
  }
  for (const body of [
    { outlet_id: m.outletId, reference: F.unique("qr") },
    { outlet_id: m.outletId, type: "DYNAMIC", amount: 5_000, reference: F.unique("qr") }
  ]) {
    const qr = ok(await server.request("POST", "/qr-codes", { key: m.test, body }), "a QR code")
    pools.qr.push(qr.id, qr.reference)
    pools.png.push(`${qr.id}.png`)
  }
  const sessions: Array<string> = []
  for (const key of [m.test, m.test, m.live]) {
    const session = ok(
      await server.request("POST", "/checkout/sessions", {
        key,
        body: {
          mode: "SUBSCRIPTION",
          reference: F.unique("cs"),
          title: "Plan",
          price_data: { name: "Gold", amount: 15_000, interval: "MONTH" }
        }
      }),
      "a checkout session"
    )
    pools.session.push(session.id, session.reference)
    sessions.push(session.id)
  }
  const paid = ok(
    await server.request("POST", `/test-helpers/checkout/sessions/${sessions[0]}/pay`, { key: m.test }),
    "a subscription"
  )
  pools.subscription.push(paid.subscription.id, paid.subscription.reference)
  customerId = (await F.customer(server)).id
}, 120_000)

afterAll(() => server?.close())

interface Sent {
  readonly method: string
  readonly path: string
  readonly headers: Record<string, string>
  readonly body: unknown
  /** The constraint this request breaks, if it is an invalid one. */
  readonly broke: string | undefined
}

const headerSafe = fc.stringMatching(/^[A-Za-z0-9_-]{1,40}$/)

/** Who calls: mostly the merchant's test secret key; sometimes another kind of key, none or a wrong one. */
const credentials = (security: ReadonlyArray<string>): fc.Arbitrary<Record<string, string>> =>
  security.length === 0
    ? fc.constant({})
    : security.includes("opsToken")
      ? fc
          .constantFrom(TestServer.OpsToken, TestServer.OpsToken, TestServer.OpsToken, "wrong", undefined)
          .map((t): Record<string, string> => (t === undefined ? {} : { authorization: `Bearer ${t}` }))
      : fc
          .oneof(
            { weight: 10, arbitrary: fc.constant(m.test) },
            { weight: 1, arbitrary: fc.constant(m.live) },
            { weight: 1, arbitrary: fc.constant(m.publishable) },
            { weight: 1, arbitrary: fc.constant("sk_test_wrong0000000000") },
            { weight: 1, arbitrary: fc.constant(undefined) }
          )
          .map((key): Record<string, string> => (key === undefined ? {} : { authorization: `Bearer ${key}` }))

/** A path parameter: a seeded id or reference of the kind, a random UUID, or a random text. */
const pathValue = (resolve: SA.Resolver, schema: SA.JsonSchema, path: string): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...poolOf(path)) },
    { weight: 1, arbitrary: fc.uuid() },
    { weight: 1, arbitrary: SA.valid(resolve, schema).map(String) }
  )

const request = (resolve: SA.Resolver, op: Contract.Operation): fc.Arbitrary<Sent> => {
  const path = fc.record(
    Object.fromEntries(
      op.parameters.filter((p) => p.in === "path").map((p) => [p.name, pathValue(resolve, p.schema, op.path)])
    )
  )
  const query = op.parameters.filter((p) => p.in === "query")
  const validQuery = fc.record(
    Object.fromEntries(query.map((p) => [p.name, fc.option(SA.valid(resolve, p.schema), { nil: undefined })]))
  )
  const keyed = op.parameters.some((p) => p.name === "idempotency-key")
  const validHeaders = keyed
    ? fc.option(headerSafe, { nil: undefined }).map((k) => (k === undefined ? {} : { "idempotency-key": k }))
    : fc.constant({})
  const validBody = op.body === undefined ? fc.constant(undefined) : SA.valid(resolve, op.body)

  type Parts = {
    query: Record<string, unknown>
    headers: Record<string, string>
    body: unknown
    broke?: string
  }
  const valid: fc.Arbitrary<Parts> = fc.record({ query: validQuery, headers: validHeaders, body: validBody })
  const breakers: Array<fc.Arbitrary<Parts>> = []
  const brokenBody = op.body === undefined ? undefined : SA.invalidObject(resolve, op.body)
  if (brokenBody !== undefined)
    breakers.push(
      fc.tuple(valid, brokenBody).map(([v, b]) => ({ ...v, body: b.value, broke: `body ${b.broke}` }))
    )
  for (const p of query) {
    const broken = SA.invalidParameter(resolve, p.schema)
    if (broken !== undefined)
      breakers.push(
        fc.tuple(valid, broken).map(([v, b]) => ({
          ...v,
          query: { ...v.query, [p.name]: b.value },
          broke: `query ${p.name}: ${b.broke}`
        }))
      )
  }
  if (keyed)
    breakers.push(
      valid.map((v) => ({ ...v, headers: { "idempotency-key": "k".repeat(256) }, broke: "header maxLength" }))
    )
  const parts = breakers.length === 0 ? valid : fc.oneof({ weight: 2, arbitrary: valid }, ...breakers)

  return fc.tuple(path, parts, credentials(op.security)).map(([params, p, auth]) => {
    const filled = op.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(params[name]!))
    const search = new URLSearchParams()
    for (const [k, v] of Object.entries(p.query)) if (v !== undefined && v !== null) search.set(k, String(v))
    const qs = search.toString()
    return {
      method: op.method,
      path: qs === "" ? filled : `${filled}?${qs}`,
      headers: {
        ...auth,
        ...p.headers,
        ...(p.body === undefined ? {} : { "content-type": "application/json" })
      },
      body: p.body,
      broke: p.broke
    }
  })
}

/** What is wrong with an answer to `op`, by the document; `undefined` when it conforms. */
const conformance = (
  validator: ReturnType<typeof Contract.validators>,
  op: Contract.Operation,
  status: number,
  contentTypeHeader: string | null,
  bytes: Uint8Array
): { readonly kind: string; readonly detail?: unknown } | undefined => {
  if (status >= 500) return { kind: "5xx" }
  const documented = op.responses[String(status)]
  if (documented === undefined) return { kind: "undocumented status" }
  const contentType = (contentTypeHeader ?? "").split(";")[0]!.trim()
  if (documented.content === undefined)
    return bytes.length > 0 ? { kind: "body where none is documented" } : undefined
  const media = documented.content[contentType]
  if (media === undefined) return { kind: `undocumented content type ${contentType}` }
  if (contentType !== "application/json") return undefined
  let body: unknown
  try {
    body = JSON.parse(new TextDecoder().decode(bytes))
  } catch {
    return { kind: "body is not JSON" }
  }
  const validate = validator(media.schema)
  return validate(body)
    ? undefined
    : { kind: "body does not match the schema", detail: validate.errors?.slice(0, 3) }
}

interface Nonconformity {
  readonly operation: string
  readonly kind: string
  readonly sent: Sent
  readonly status: number
  readonly response: string
  readonly detail?: unknown
}

describe("the contract: every answer is the one /openapi.json documents", () => {
  it("the check refuses what the document does not allow, and accepts what it does", () => {
    const validator = Contract.validators(document)
    const op = Contract.operations(document).find((o) => o.method === "GET" && o.path === "/mandates/{id}")!
    const json = (value: unknown) => new TextEncoder().encode(JSON.stringify(value))
    const ct = "application/json"
    const notFound = { message: "Mandate not found", code: "MANDATE_NOT_FOUND" }
    expect(conformance(validator, op, 404, ct, json(notFound))).toBeUndefined()
    // Every error body carries its `code`: one missing, or another error's, is refused.
    expect(conformance(validator, op, 404, ct, json({ message: "Mandate not found" }))?.kind).toMatch(
      /schema/
    )
    expect(conformance(validator, op, 404, ct, json({ ...notFound, code: "REFERENCE_TAKEN" }))?.kind).toMatch(
      /schema/
    )
    expect(conformance(validator, op, 500, ct, json(notFound))?.kind).toBe("5xx")
    expect(conformance(validator, op, 418, ct, json(notFound))?.kind).toBe("undocumented status")
    expect(conformance(validator, op, 404, "text/html", json(notFound))?.kind).toMatch(/content type/)
    // A field the document does not know is allowed (clients ignore it); one missing or
    // of the wrong type is not.
    expect(conformance(validator, op, 404, ct, json({ ...notFound, reason: "x" }))).toBeUndefined()
    expect(conformance(validator, op, 404, ct, json({ message: 404 }))?.kind).toMatch(/schema/)
    expect(conformance(validator, op, 404, ct, json({}))?.kind).toMatch(/schema/)
    expect(conformance(validator, op, 200, ct, json({ id: "not-a-uuid" }))?.kind).toMatch(/schema/)
  })

  it("answers thousands of generated requests, valid and invalid, with 0 nonconformities", async () => {
    console.log(`contract: seed ${Seed}, ${RunsPerOperation} requests per operation`)
    const documents = [document, opsDocument].map((doc) => ({
      resolve: SA.resolver(doc.components),
      validator: Contract.validators(doc),
      operations: Contract.operations(doc)
    }))
    const operations = documents.flatMap((d) => d.operations)
    expect(operations.length).toBeGreaterThan(35)

    const work = documents.flatMap(({ resolve, validator, operations }, d) =>
      operations.flatMap((op, i) =>
        fc
          .sample(request(resolve, op), { numRuns: RunsPerOperation, seed: Seed + 100 * d + i })
          .map((sent) => ({ op, sent, validator }))
      )
    )
    const problems: Array<Nonconformity> = []
    const statuses = new Map<string, number>()

    const check = async ({
      op,
      sent,
      validator
    }: {
      op: Contract.Operation
      sent: Sent
      validator: ReturnType<typeof Contract.validators>
    }) => {
      const operation = `${op.method} ${op.path}`
      const res = await fetch(`${server.baseUrl}${sent.path}`, {
        method: sent.method,
        headers: sent.headers,
        body: sent.body === undefined ? undefined : JSON.stringify(sent.body),
        signal: AbortSignal.timeout(15_000)
      })
      const bytes = new Uint8Array(await res.arrayBuffer())
      const text = new TextDecoder().decode(bytes)
      const key = `${operation} ${res.status}`
      statuses.set(key, (statuses.get(key) ?? 0) + 1)
      const found = conformance(validator, op, res.status, res.headers.get("content-type"), bytes)
      if (found !== undefined)
        problems.push({ operation, ...found, sent, status: res.status, response: text.slice(0, 500) })
    }

    const started = Date.now()
    const queue = [...work]
    await Promise.all(
      Array.from({ length: InFlight }, async () => {
        for (let next = queue.shift(); next !== undefined; next = queue.shift()) await check(next)
      })
    )
    const seconds = (Date.now() - started) / 1000
    console.log(
      `contract: ${work.length} requests over ${operations.length} operations in ${seconds.toFixed(1)} s, ${problems.length} nonconformities`
    )

    const byOperation = new Map<string, Array<string>>()
    for (const [k, n] of [...statuses].sort()) {
      const [method, path, status] = k.split(" ")
      const list = byOperation.get(`${method} ${path}`) ?? []
      list.push(`${status}x${n}`)
      byOperation.set(`${method} ${path}`, list)
    }
    console.log([...byOperation].map(([op, list]) => `${op}: ${list.join(" ")}`).join("\n"))

    if (problems.length > 0) {
      const counts = new Map<string, number>()
      for (const p of problems) {
        const k = `${p.operation} ${p.status} ${p.kind}`
        counts.set(k, (counts.get(k) ?? 0) + 1)
      }
      const lines = [...counts].map(([k, n]) => `${n}\t${k}`)
      const examples = [...new Map(problems.map((p) => [`${p.operation} ${p.status} ${p.kind}`, p])).values()]
        .slice(0, 15)
        .map((p) => JSON.stringify(p, null, 1))
      expect.fail(
        `${problems.length} nonconformities (seed ${Seed}):\n${lines.join("\n")}\n\n${examples.join("\n\n")}`
      )
    }
    // Both sides were exercised: successes and refusals on every operation.
    expect(work.length).toBeGreaterThanOrEqual(3_000)
    expect([...statuses.keys()].some((k) => k.endsWith(" 422"))).toBe(true)
    expect([...statuses.keys()].some((k) => / 20\d$/.test(k))).toBe(true)
  }, 300_000)
})
