/**
 * Every `401` of a bearer credential carries an RFC 6750 challenge (RFC 9110 11.6.1),
 * a `403` for a scope names it with `error="insufficient_scope"`, and a refused access token is told
 * apart from a refused key. The OAuth token endpoint keeps its own `Basic` challenge; the dashboard's
 * sign-in page, a form and not an HTTP scheme, has none.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as F from "../support/Fixtures.js"
import * as TestServer from "../support/TestServer.js"

let server: TestServer.LocalTestServer
let merchant: F.Merchant

beforeAll(async () => {
  server = await TestServer.start()
  merchant = await F.merchant(server)
}, 60_000)

afterAll(() => server?.close())

const challenge = (res: TestServer.Response) => res.headers.get("www-authenticate")
const fakeToken = `lat_test_${"0".repeat(48)}`

describe("401 answers", () => {
  it("without a credential: a bare Bearer challenge, no error code (RFC 6750 3.1)", async () => {
    for (const path of ["/mandates", "/ops/merchants", "/metrics", "/graphql?query=%7B__typename%7D"]) {
      const res = await server.request("GET", path)
      expect(res.status, path).toBe(401)
      expect(challenge(res), path).toBe('Bearer realm="laari"')
    }
  })

  it("with a refused credential: error=invalid_token, on the API, /ops, /metrics and /graphql", async () => {
    const wrong = `${merchant.test.slice(0, -1)}${merchant.test.endsWith("a") ? "b" : "a"}`
    for (const path of ["/mandates", "/ops/merchants", "/metrics", "/graphql?query=%7B__typename%7D"]) {
      const res = await server.request("GET", path, { key: wrong })
      expect(res.status, path).toBe(401)
      expect(challenge(res), path).toBe('Bearer realm="laari", error="invalid_token"')
    }
  })

  it("tell an access token from a key", async () => {
    const key = await server.request("GET", "/mandates", { key: `sk_test_${"0".repeat(48)}` })
    expect(key.body.message).toMatch(/^Invalid API key: no key of any account is this one/)
    for (const path of ["/mandates", "/graphql?query=%7B__typename%7D"]) {
      const token = await server.request("GET", path, { key: fakeToken })
      expect(token.status, path).toBe(401)
      expect(token.body.message, path).toMatch(/^Invalid access token: it has expired or was revoked/)
      expect(challenge(token), path).toBe('Bearer realm="laari", error="invalid_token"')
    }
  })

  it("leave the OAuth token endpoint's Basic challenge as it is", async () => {
    const res = await server.request("POST", "/oauth/token", {
      rawBody: "grant_type=client_credentials",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        authorization: `Basic ${Buffer.from("nobody:nothing").toString("base64")}`
      }
    })
    expect(res.status).toBe(401)
    expect(challenge(res)).toMatch(/^Basic /)
  })

  it("give the dashboard's sign-in page no HTTP challenge", async () => {
    const page = await server.request("GET", "/dashboard")
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page.text)?.[1] ?? ""
    const cookie = page.headers.get("set-cookie")?.split(";")[0] ?? ""
    const res = await server.request("POST", "/dashboard/sign-in", {
      rawBody: new URLSearchParams({
        _csrf: csrf,
        email: "nobody@example.mv",
        password: "not the password"
      }).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded", cookie }
    })
    expect(res.status).toBe(401)
    expect(res.headers.get("content-type")).toMatch(/^text\/html/)
    expect(challenge(res)).toBeNull()
  })
})

describe("403 for a scope", () => {
  it("names the scope in an insufficient_scope challenge", async () => {
    const qrOnly = await merchant.key("test", ["qr:write"])
    const res = await server.request("POST", "/mandates", { key: qrOnly, body: F.mandateBody() })
    expect(res.status).toBe(403)
    expect(challenge(res)).toBe('Bearer realm="laari", error="insufficient_scope", scope="mandates:write"')
  })

  it("and only then: a 403 that is not about a scope has no challenge", async () => {
    // A live mandate before the feature is enabled is refused for the merchant, not the key.
    const res = await server.request("POST", "/mandates", { key: merchant.live, body: F.mandateBody() })
    expect(res.status).toBe(403)
    expect(challenge(res)).toBeNull()
  })
})
