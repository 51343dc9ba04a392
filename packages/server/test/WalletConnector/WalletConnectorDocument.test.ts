/**
 * The wallet connector's OpenAPI document: the checked-in `docs/wallet-connector.openapi.json` is byte for
 * byte what the code generates (`pnpm generate:wallet-connector` rewrites it), and the service serves the
 * same document at `GET /wallet-connector/openapi.json`, outside the merchants' `/openapi.json`.
 */
import { readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DocumentPath, documentText } from "../../src/WalletConnector/Document.js"
import * as TestServer from "../support/TestServer.js"

const root = join(dirname(fileURLToPath(import.meta.url)), "../../../..")
const checkedIn = readFileSync(join(root, DocumentPath), "utf8")

let server: TestServer.TestServer

beforeAll(async () => {
  server = await TestServer.start()
}, 60_000)

afterAll(async () => {
  await server?.close()
})

describe("the wallet connector's OpenAPI document", () => {
  it(`${DocumentPath} is what the code generates (pnpm generate:wallet-connector)`, () => {
    expect(checkedIn).toBe(documentText())
  })

  it("is served at GET /wallet-connector/openapi.json, the same document", async () => {
    const res = await server.request("GET", "/wallet-connector/openapi.json")
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toMatch(/^application\/json/)
    expect(res.body).toEqual(JSON.parse(checkedIn))
  })

  it("describes the protocol: its title and version, every call, the bearer token and Request-Id", () => {
    const doc = JSON.parse(checkedIn)
    expect(doc.openapi).toMatch(/^3\.1\./)
    expect(doc.info).toMatchObject({ title: "laari wallet connector", version: "1" })
    const operations = Object.entries<Record<string, any>>(doc.paths).flatMap(([path, item]) =>
      Object.entries<any>(item).map(([method, op]) => ({ at: `${method.toUpperCase()} ${path}`, op }))
    )
    expect(operations.map((o) => o.at).sort()).toEqual([
      "GET /transfers",
      "GET /transfers/{id}",
      "GET /wallets",
      "GET /wallets/{wallet_id}",
      "POST /transfers",
      "POST /transfers/{id}/cancel"
    ])
    expect(doc.components.securitySchemes).toEqual({
      bearer: expect.objectContaining({ type: "http", scheme: "bearer" })
    })
    for (const { at, op } of operations) {
      expect(op.security ?? doc.security, at).toEqual([{ bearer: [] }])
      expect(
        op.parameters.filter((p: any) => p.in === "header").map((p: any) => [p.name, p.required]),
        at
      ).toEqual([["Request-Id", true]])
      for (const [status, response] of Object.entries<any>(op.responses))
        expect(Object.keys(response.headers ?? {}), `${at} ${status}`).toContain("Request-Id")
      expect(Object.keys(op.responses), at).toEqual(expect.arrayContaining(["200", "400", "401"]))
    }
    const answers = (at: string) => Object.keys(operations.find((o) => o.at === at)?.op.responses).sort()
    expect(answers("POST /transfers")).toEqual(["200", "201", "400", "401", "409", "422"])
    expect(answers("GET /transfers/{id}")).toEqual(["200", "400", "401", "404"])
    expect(answers("GET /wallets")).toEqual(["200", "400", "401", "404"])
  })

  it("is not part of the merchants' document", async () => {
    const merchants = await server.request("GET", "/openapi.json")
    expect(Object.keys(merchants.body.paths).filter((p) => p.startsWith("/wallets"))).toEqual([])
    expect(Object.keys(merchants.body.paths)).not.toContain("/transfers")
  })
})
