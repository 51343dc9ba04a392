/**
 * A client generated from the document (openapi-typescript types, openapi-fetch) compiles against it and
 * drives a mandate from creation to a charge; the checked-in types match what the document generates
 * today, so a change to the contract shows up as a diff of the client.
 */
import { readFileSync } from "node:fs"
import createClient from "openapi-fetch"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { paths } from "../generated/laari-api.js"
import { GeneratedPath, generate } from "../support/ClientTypes.js"
import * as F from "../support/Fixtures.js"
import * as TestServer from "../support/TestServer.js"

let server: TestServer.TestServer

beforeAll(async () => {
  server = await TestServer.start()
}, 60_000)

afterAll(() => server?.close())

describe("a typed client generated from /openapi.json", () => {
  it("is the one checked in (run `pnpm generate:client` after changing the contract)", async () => {
    const document = await server.request("GET", "/openapi.json")
    expect(await generate(document.body)).toBe(readFileSync(GeneratedPath, "utf8"))
  })

  it("creates a mandate, charges it, and reads both back", async () => {
    const m = await F.merchant(server)
    const client = createClient<paths>({
      baseUrl: server.baseUrl,
      headers: { authorization: `Bearer ${m.test}` }
    })
    const reference = F.unique("typed")
    const created = await client.POST("/mandates", {
      body: {
        reference,
        title: "Weekly groceries",
        per_charge_cap: 50_000,
        period_cap: 200_000,
        period: "MONTH"
      },
      params: { header: { "idempotency-key": F.unique("key") } }
    })
    expect(created.response.status).toBe(201)
    // A sandbox mandate is active at once (no customer to approve it).
    expect(created.data).toMatchObject({ reference, status: "ACTIVE" })
    const id = created.data!.id

    const charged = await client.POST("/mandates/{id}/charges", {
      params: { path: { id } },
      body: { amount: 12_500, description: "Week 1" }
    })
    expect(charged.response.status, JSON.stringify(charged.error)).toBe(201)
    const charge = charged.data!
    expect(charge).toMatchObject({ mandateId: id, amount: 12_500, currency: "MVR", status: "SUCCEEDED" })
    expect(charge.fee + charge.netAmount).toBe(charge.amount)

    const read = await client.GET("/mandates/{id}", { params: { path: { id: reference } } })
    expect(read.data).toMatchObject({ id, periodCharged: 12_500, perChargeCap: 50_000 })

    // Errors are typed too: the refusal's documented body, with its code.
    const refused = await client.POST("/mandates/{id}/charges", {
      params: { path: { id } },
      body: { amount: 60_000 }
    })
    expect(refused.response.status).toBe(422)
    expect(refused.error).toEqual({
      message: "Amount exceeds the per charge cap",
      code: "PER_CHARGE_CAP_EXCEEDED"
    })
  })
})
