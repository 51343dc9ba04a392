/**
 * The sandbox's pay helpers take an `Idempotency-Key` as every other keyed POST does: a retry after a
 * lost answer replays the payment instead of refusing it as already paid, and the same key with another
 * body is refused. The OpenAPI document says so.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as F from "../support/Fixtures.js"
import { startQuickest } from "../support/PostgresServer.js"
import type * as TestServer from "../support/TestServer.js"

describe("the sandbox's pay helpers with an Idempotency-Key", () => {
  let server: TestServer.TestServer
  beforeAll(async () => {
    server = await startQuickest()
  }, 120_000)
  afterAll(async () => {
    await server?.close()
  })

  const balance = async (key: string) =>
    (await server.request("GET", "/test-helpers/payer", { key })).body.balance as number

  it("pay a QR code once: a retry replays the payment; another body under the key is refused", async () => {
    const m = await F.merchant(server)
    const code = await server.request("POST", "/qr-codes", {
      key: m.test,
      body: { outlet_id: m.outletId, type: "DYNAMIC", amount: 3_000, reference: F.unique("qr") }
    })
    expect(code.status).toBe(201)
    const before = await balance(m.test)
    const key = F.unique("pay")
    const pay = (body: Record<string, unknown>) =>
      server.request("POST", "/test-helpers/qr-codes/pay", {
        key: m.test,
        body,
        headers: { "idempotency-key": key }
      })
    const paid = await pay({ payload: code.body.payload })
    expect(paid.status).toBe(201)
    expect(paid.headers.get("idempotent-replay")).toBeNull()
    const retry = await pay({ payload: code.body.payload })
    expect(retry.status).toBe(201)
    expect(retry.headers.get("idempotent-replay")).toBe("true")
    expect(retry.text).toBe(paid.text)
    expect(await balance(m.test)).toBe(before - 3_000)
    const other = await pay({ payload: code.body.payload, amount: 3_000 })
    expect(other.status).toBe(422)
    expect(other.body.code).toBe("IDEMPOTENCY_KEY_REUSED")
    // Without the key, a second attempt is what it always was: the code is paid.
    const again = await server.request("POST", "/test-helpers/qr-codes/pay", {
      key: m.test,
      body: { payload: code.body.payload }
    })
    expect(again.status).toBe(409)
  })

  it("pay a checkout session once: a retry replays the settlement", async () => {
    const m = await F.merchant(server)
    const session = await server.request("POST", "/checkout/sessions", {
      key: m.test,
      body: { mode: "PAYMENT", title: "Fish curry", amount: 12_550, reference: F.unique("order") }
    })
    expect(session.status).toBe(200)
    const before = await balance(m.test)
    const key = F.unique("pay")
    const pay = () =>
      server.request("POST", `/test-helpers/checkout/sessions/${session.body.id}/pay`, {
        key: m.test,
        headers: { "idempotency-key": key }
      })
    const paid = await pay()
    expect(paid.status).toBe(200)
    expect(paid.body.session.status).toBe("COMPLETE")
    const retry = await pay()
    expect(retry.status).toBe(200)
    expect(retry.headers.get("idempotent-replay")).toBe("true")
    expect(retry.text).toBe(paid.text)
    expect(await balance(m.test)).toBe(before - 12_550)
    const unkeyed = await server.request("POST", `/test-helpers/checkout/sessions/${session.body.id}/pay`, {
      key: m.test
    })
    expect(unkeyed.status).toBe(409)
  })

  it("are documented with the header, as the other keyed endpoints are", async () => {
    const document = (await server.request("GET", "/openapi.json")).body
    const header = (path: string) =>
      document.paths[path].post.parameters.find(
        (p: { in: string; name: string }) => p.in === "header" && p.name === "idempotency-key"
      )
    const charge = header("/mandates/{id}/charges")
    expect(charge).toBeDefined()
    expect(header("/test-helpers/qr-codes/pay")).toEqual(charge)
    expect(header("/test-helpers/checkout/sessions/{id}/pay")).toEqual(charge)
  })
})
