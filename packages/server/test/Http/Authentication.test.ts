/**
 * Every refused credential says what was wrong and what to send: no `Authorization` header, another
 * scheme than `Bearer`, nothing after `Bearer`, an unknown key and a revoked one each have their own
 * words (the `code` stays `UNAUTHORIZED`); HTTP Basic with the key as the user name is the key, as Stripe
 * reads `curl -u sk_test_...:`. A publishable key on a secret-key endpoint is `403` before its body is
 * read, so a bad body does not hide that the key can never be used there.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as F from "../support/Fixtures.js"
import * as TestServer from "../support/TestServer.js"

let server: TestServer.LocalTestServer
let merchant: F.Merchant
beforeAll(async () => {
  server = await TestServer.start()
  merchant = await F.merchant(server)
}, 120_000)
afterAll(() => server?.close())

const get = (path: string, authorization?: string) =>
  server.request("GET", path, { headers: authorization === undefined ? {} : { authorization } })

const basic = (text: string) => `Basic ${Buffer.from(text).toString("base64")}`

const refused = (message: string | RegExp) => ({
  message: typeof message === "string" ? message : expect.stringMatching(message),
  code: "UNAUTHORIZED"
})

describe("401s that say what to send", () => {
  it("no header, another scheme, nothing after Bearer: each its own words, on REST and GraphQL", async () => {
    for (const path of ["/balance", "/graphql?query=%7B__typename%7D"]) {
      const none = await get(path)
      expect(none.status, path).toBe(401)
      expect(none.body, path).toEqual(
        refused("No API key: send your secret key in the header `Authorization: Bearer sk_test_...`")
      )
      for (const header of [merchant.test, `Token ${merchant.test}`]) {
        const scheme = await get(path, header)
        expect(scheme.status, `${path} ${header.slice(0, 6)}`).toBe(401)
        expect(scheme.body).toEqual(
          refused(/^The Authorization header must be `Bearer ` followed by your key/)
        )
      }
      const empty = await get(path, "Bearer")
      expect(empty.status).toBe(401)
      expect(empty.body).toEqual(refused("No key after `Bearer`: send `Authorization: Bearer sk_test_...`"))
    }
  })

  it("HTTP Basic with the key as the user name is the key (curl -u sk_test_...:); without one, says so", async () => {
    const ok = await get("/balance", basic(`${merchant.test}:`))
    expect(ok.status).toBe(200)
    expect(ok.body.environment).toBe("test")
    for (const header of [basic(":"), basic(":secret"), "Basic", "Basic !!!"]) {
      const res = await get("/balance", header)
      expect(res.status, header).toBe(401)
      expect(res.body, header).toEqual(refused(/^HTTP Basic takes the key as the user name/))
    }
    const unknown = await get("/balance", basic(`sk_test_${"0".repeat(48)}:`))
    expect(unknown.status).toBe(401)
    expect(unknown.body).toEqual(refused(/^Invalid API key: no key of any account is this one/))
  })

  it("an unknown key and a revoked one are told apart", async () => {
    const unknown = await get("/balance", `Bearer sk_test_${"0".repeat(48)}`)
    expect(unknown.status).toBe(401)
    expect(unknown.body).toEqual(refused(/^Invalid API key: no key of any account is this one/))

    const issued = await server.ops("POST", `/ops/merchants/${merchant.id}/keys`, {
      environment: "test",
      kind: "secret"
    })
    expect(issued.status).toBe(201)
    expect((await get("/balance", `Bearer ${issued.body.key}`)).status).toBe(200)
    const revoke = await server.ops("POST", `/ops/merchants/${merchant.id}/keys/${issued.body.id}/revoke`)
    expect(revoke.status).toBe(200)
    for (const path of ["/balance", "/graphql?query=%7B__typename%7D"]) {
      const revoked = await get(path, `Bearer ${issued.body.key}`)
      expect(revoked.status, path).toBe(401)
      expect(revoked.body, path).toEqual(
        refused("This API key was revoked: send another of the account's keys, or have a new one issued")
      )
    }
  })
})

describe("403 before the body", () => {
  it("a publishable key on a secret-key endpoint is 403 whatever its body; a secret key's bad body 422", async () => {
    for (const [path, body] of [
      ["/mandates", { reference: 1 }],
      ["/qr-codes", {}],
      ["/refunds", { charge_id: "abc" }],
      ["/test-helpers/payer", { balance: -1 }]
    ] as const) {
      const res = await server.request("POST", path, { key: merchant.publishable, body })
      expect(res.status, path).toBe(403)
      expect(res.body, path).toEqual({
        message: "A publishable key cannot use this endpoint; use a secret key",
        code: "FORBIDDEN"
      })
      expect((await server.request("POST", path, { key: merchant.test, body })).status, path).toBe(422)
    }
  })

  it("a key without the scope is 403 naming it, whatever its body", async () => {
    const qrOnly = await merchant.key("test", ["qr:write"])
    const res = await server.request("POST", "/mandates", { key: qrOnly, body: { reference: 1 } })
    expect(res.status).toBe(403)
    expect(res.body).toEqual({ message: "This key lacks the mandates:write scope", code: "FORBIDDEN" })
    expect(res.headers.get("www-authenticate")).toBe(
      'Bearer realm="laari", error="insufficient_scope", scope="mandates:write"'
    )
  })

  it("a publishable key where publishable keys may go still gets its 422", async () => {
    const res = await server.request("POST", "/checkout/sessions", { key: merchant.publishable, body: {} })
    expect(res.status).toBe(422)
  })
})
