/**
 * OAuth 2.0 over HTTP, on PGlite and (with DATABASE_URL) PostgreSQL: clients registered by the operator,
 * the client credentials grant and RFC 6749 section 5.2's error matrix, RFC 7009 revocation, RFC 8414
 * metadata, and access tokens working wherever a secret key does with exactly their scopes, until they
 * expire or are revoked.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Auth } from "@laari/core"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Fixtures from "../support/Fixtures.js"
import { serverBackends } from "../support/PostgresServer.js"
import * as TestServer from "../support/TestServer.js"

interface Client {
  readonly client_id: string
  readonly client_secret: string
  readonly scopes: ReadonlyArray<string>
}

for (const backend of serverBackends) {
  describe.skipIf(backend.skip)(`OAuth 2.0 on ${backend.name}`, { timeout: 120_000 }, () => {
    let server: TestServer.LocalTestServer
    let merchant: Fixtures.Merchant
    let client: Client

    beforeAll(async () => {
      server = await backend.start()
      merchant = await Fixtures.merchant(server)
      client = await register(merchant.id, { environment: "test", scopes: Auth.allScopes, name: "ERP" })
    }, 120_000)
    afterAll(() => server?.close())

    const register = async (merchantId: string, body: Record<string, unknown>): Promise<Client> => {
      const res = await server.ops("POST", `/ops/merchants/${merchantId}/oauth-clients`, body)
      if (res.status !== 201) throw new Error(`client: ${res.status} ${res.text}`)
      return res.body
    }

    const basic = (id: string, secret: string) =>
      `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString("base64")}`

    const form = (
      path: string,
      params: Record<string, string>,
      headers: Record<string, string> = {},
      raw?: string
    ) =>
      server.request("POST", path, {
        rawBody: raw ?? new URLSearchParams(params).toString(),
        headers: { "content-type": "application/x-www-form-urlencoded", ...headers }
      })

    const token = async (c: Client, scope?: string) => {
      const res = await form(
        "/oauth/token",
        { grant_type: "client_credentials", ...(scope === undefined ? {} : { scope }) },
        { authorization: basic(c.client_id, c.client_secret) }
      )
      if (res.status !== 200) throw new Error(`token: ${res.status} ${res.text}`)
      return res.body.access_token as string
    }

    describe("clients", () => {
      it("are registered, listed without their secrets and revoked by the operator only", async () => {
        expect(client.client_id).toMatch(/^lci_test_[0-9a-f]{24}$/)
        expect(client.client_secret).toMatch(/^lcs_test_[0-9a-f]{48}$/)
        const listed = await server.ops("GET", `/ops/merchants/${merchant.id}/oauth-clients`)
        expect(listed.status).toBe(200)
        expect(listed.body).toEqual([
          expect.objectContaining({
            client_id: client.client_id,
            name: "ERP",
            environment: "test",
            revokedAt: null
          })
        ])
        expect(listed.text).not.toContain(client.client_secret)
        // The secret is stored as a keyed hash, never as itself.
        const stored = await server.sql(
          Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT secret_hash FROM oauth_clients`)
        )
        expect(JSON.stringify(stored)).not.toContain(client.client_secret.slice(9))
        expect(
          (await server.request("GET", `/ops/merchants/${merchant.id}/oauth-clients`, { key: merchant.test }))
            .status
        ).toBe(401)
        expect(
          (
            await server.ops("POST", `/ops/merchants/${crypto.randomUUID()}/oauth-clients`, {
              environment: "test",
              scopes: ["qr:write"]
            })
          ).status
        ).toBe(404)
        // Nobody's clients or keys to list or issue either: the same 404 from every operator endpoint.
        const nobody = crypto.randomUUID()
        for (const [method, path, body] of [
          ["GET", `/ops/merchants/${nobody}/oauth-clients`, undefined],
          ["GET", `/ops/merchants/${nobody}/keys`, undefined],
          ["POST", `/ops/merchants/${nobody}/keys`, { environment: "test" }]
        ] as const) {
          const res = await server.ops(method, path, body)
          expect([res.status, res.body.message], path).toEqual([404, "Merchant not found"])
        }
        expect(
          (
            await server.ops("POST", `/ops/merchants/${merchant.id}/oauth-clients`, {
              environment: "test",
              scopes: []
            })
          ).status
        ).toBe(422)
        expect(
          (
            await server.ops("POST", `/ops/merchants/${merchant.id}/oauth-clients`, {
              environment: "test",
              scopes: ["everything"]
            })
          ).status
        ).toBe(422)
      })
    })

    describe("POST /oauth/token", () => {
      it("grants client credentials, by HTTP Basic or in the body, uncached", async () => {
        const byBasic = await form(
          "/oauth/token",
          { grant_type: "client_credentials" },
          { authorization: basic(client.client_id, client.client_secret) }
        )
        expect(byBasic.status).toBe(200)
        expect(byBasic.body).toEqual({
          access_token: expect.stringMatching(/^lat_test_[0-9a-f]{48}$/),
          token_type: "Bearer",
          expires_in: 3600,
          scope: Auth.allScopes.join(" ")
        })
        expect(byBasic.headers.get("cache-control")).toBe("no-store")
        expect(byBasic.headers.get("pragma")).toBe("no-cache")
        const inBody = await form("/oauth/token", {
          grant_type: "client_credentials",
          client_id: client.client_id,
          client_secret: client.client_secret,
          scope: "qr:write mandates:write"
        })
        expect(inBody.status).toBe(200)
        expect(inBody.body.scope).toBe("qr:write mandates:write")
        expect(inBody.body.access_token).not.toBe(byBasic.body.access_token)
      })

      const errorCases: ReadonlyArray<{
        readonly name: string
        readonly error: string
        readonly status: number
        readonly send: () => Promise<TestServer.Response>
      }> = [
        {
          name: "a JSON body",
          error: "invalid_request",
          status: 400,
          send: () => server.request("POST", "/oauth/token", { body: { grant_type: "client_credentials" } })
        },
        {
          name: "no grant_type",
          error: "invalid_request",
          status: 400,
          send: () => form("/oauth/token", {})
        },
        {
          name: "a parameter twice",
          error: "invalid_request",
          status: 400,
          send: () =>
            form("/oauth/token", {}, {}, "grant_type=client_credentials&grant_type=client_credentials")
        },
        {
          name: "credentials both in Basic and in the body",
          error: "invalid_request",
          status: 400,
          send: () =>
            form(
              "/oauth/token",
              {
                grant_type: "client_credentials",
                client_id: client.client_id,
                client_secret: client.client_secret
              },
              { authorization: basic(client.client_id, client.client_secret) }
            )
        },
        {
          name: "no client authentication",
          error: "invalid_client",
          status: 401,
          send: () => form("/oauth/token", { grant_type: "client_credentials" })
        },
        {
          name: "a wrong secret",
          error: "invalid_client",
          status: 401,
          send: () =>
            form(
              "/oauth/token",
              { grant_type: "client_credentials" },
              {
                authorization: basic(
                  client.client_id,
                  `${client.client_secret.slice(0, -1)}${client.client_secret.endsWith("0") ? "1" : "0"}`
                )
              }
            )
        },
        {
          name: "an unknown client",
          error: "invalid_client",
          status: 401,
          send: () =>
            form("/oauth/token", {
              grant_type: "client_credentials",
              client_id: "lci_test_000000000000000000000000",
              client_secret: client.client_secret
            })
        },
        {
          name: "a Bearer header instead of Basic",
          error: "invalid_client",
          status: 401,
          send: () =>
            form(
              "/oauth/token",
              { grant_type: "client_credentials" },
              { authorization: `Bearer ${merchant.test}` }
            )
        },
        {
          name: "the authorization code grant (laari issues no codes)",
          error: "invalid_grant",
          status: 400,
          send: () =>
            form(
              "/oauth/token",
              { grant_type: "authorization_code", code: "abc" },
              { authorization: basic(client.client_id, client.client_secret) }
            )
        },
        {
          name: "the refresh token grant (laari issues no refresh tokens)",
          error: "invalid_grant",
          status: 400,
          send: () =>
            form(
              "/oauth/token",
              { grant_type: "refresh_token", refresh_token: "abc" },
              { authorization: basic(client.client_id, client.client_secret) }
            )
        },
        {
          name: "the password grant",
          error: "unauthorized_client",
          status: 400,
          send: () =>
            form(
              "/oauth/token",
              { grant_type: "password", username: "a", password: "b" },
              { authorization: basic(client.client_id, client.client_secret) }
            )
        },
        {
          name: "a grant type laari does not know",
          error: "unsupported_grant_type",
          status: 400,
          send: () =>
            form(
              "/oauth/token",
              { grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer" },
              { authorization: basic(client.client_id, client.client_secret) }
            )
        },
        ...[
          ["a scope the client does not have", "payments:write"],
          ["an unknown scope", "mandates:read"],
          ["scopes not separated by single spaces", "qr:write  mandates:write"],
          ["an empty scope", ""]
        ].map(([name, scope]) => ({
          name: name!,
          error: "invalid_scope",
          status: 400,
          send: async () => {
            const narrow = await register(merchant.id, {
              environment: "test",
              scopes: ["qr:write", "mandates:write"]
            })
            return form(
              "/oauth/token",
              { grant_type: "client_credentials", scope: scope! },
              { authorization: basic(narrow.client_id, narrow.client_secret) }
            )
          }
        }))
      ]

      for (const c of errorCases)
        it(`answers ${c.error} (${c.status}) to ${c.name}`, async () => {
          const res = await c.send()
          expect(res.status).toBe(c.status)
          expect(res.body).toEqual({ error: c.error, error_description: expect.any(String) })
          expect(res.headers.get("cache-control")).toBe("no-store")
          if (c.status === 401) expect(res.headers.get("www-authenticate")).toMatch(/^Basic realm="laari"/)
          else expect(res.headers.get("www-authenticate")).toBeNull()
        })
    })

    describe("access tokens", () => {
      it("work on every merchant endpoint exactly as a secret key with the same scopes", async () => {
        const document = (await server.request("GET", "/openapi.json")).body as {
          paths: Record<string, Record<string, unknown>>
        }
        const operations = Object.entries(document.paths).flatMap(([path, item]) =>
          Object.keys(item)
            .filter((m) => ["get", "post", "put", "patch", "delete"].includes(m))
            .map((method) => ({
              method: method.toUpperCase(),
              path: path.replace(/\{[^}]+\}/g, crypto.randomUUID())
            }))
        )
        expect(operations.length).toBeGreaterThan(30)
        for (const scope of Auth.allScopes) {
          const key = await merchant.key("test", [scope])
          const access = await token(client, scope)
          const statuses: Array<number> = []
          for (const op of operations) {
            const body = op.method === "GET" || op.method === "DELETE" ? undefined : {}
            const byKey = await server.request(op.method, op.path, { key, body })
            const byToken = await server.request(op.method, op.path, { key: access, body })
            expect(`${scope} ${op.method} ${op.path}: ${byToken.status}`).toBe(
              `${scope} ${op.method} ${op.path}: ${byKey.status}`
            )
            statuses.push(byToken.status)
          }
          // Each scope opens some endpoints and not others.
          expect(statuses).toContain(403)
          expect(statuses.some((s) => s !== 403 && s !== 401)).toBe(true)
        }
      })

      it("act for their client's merchant and environment only", async () => {
        const other = await Fixtures.merchant(server)
        const theirs = await server.request("POST", "/mandates", {
          key: other.test,
          body: Fixtures.mandateBody()
        })
        expect(theirs.status).toBe(201)
        const access = await token(client, "mandates:write")
        expect((await server.request("GET", `/mandates/${theirs.body.id}`, { key: access })).status).toBe(404)
        const mine = await server.request("POST", "/mandates", { key: access, body: Fixtures.mandateBody() })
        expect(mine.status).toBe(201)
        expect(
          (await server.request("GET", `/mandates/${mine.body.id}`, { key: merchant.test })).status
        ).toBe(200)
        expect(
          (await server.request("GET", `/mandates/${mine.body.id}`, { key: merchant.live })).status
        ).toBe(404)
        const live = await register(merchant.id, { environment: "live", scopes: ["mandates:write"] })
        const liveToken = await token(live)
        expect(liveToken).toMatch(/^lat_live_/)
        expect((await server.request("GET", `/mandates/${mine.body.id}`, { key: liveToken })).status).toBe(
          404
        )
      })

      it("expire after expires_in seconds", async () => {
        const access = await token(client, "qr:write")
        expect((await server.request("GET", "/qr-codes", { key: access })).status).toBe(200)
        expect((await server.ops("POST", "/ops/clock/advance", { by_seconds: 3_599 })).status).toBe(200)
        expect((await server.request("GET", "/qr-codes", { key: access })).status).toBe(200)
        expect((await server.ops("POST", "/ops/clock/advance", { by_seconds: 1 })).status).toBe(200)
        const expired = await server.request("GET", "/qr-codes", { key: access })
        expect(expired.status).toBe(401)
      })

      it("are revoked by their client (RFC 7009), and with their client", async () => {
        const access = await token(client, "qr:write")
        const kept = await token(client, "qr:write")
        const other = await register(merchant.id, { environment: "test", scopes: ["qr:write"] })
        // Another client cannot revoke it, and is answered 200 all the same.
        const foreign = await form(
          "/oauth/revoke",
          { token: access },
          { authorization: basic(other.client_id, other.client_secret) }
        )
        expect(foreign.status).toBe(200)
        expect((await server.request("GET", "/qr-codes", { key: access })).status).toBe(200)
        const revoked = await form(
          "/oauth/revoke",
          { token: access, token_type_hint: "access_token" },
          { authorization: basic(client.client_id, client.client_secret) }
        )
        expect(revoked.status).toBe(200)
        expect((await server.request("GET", "/qr-codes", { key: access })).status).toBe(401)
        expect((await server.request("GET", "/qr-codes", { key: kept })).status).toBe(200)
        // Unknown tokens are answered 200; revoking needs an authenticated client and a token.
        expect(
          (
            await form(
              "/oauth/revoke",
              { token: "nope" },
              { authorization: basic(client.client_id, client.client_secret) }
            )
          ).status
        ).toBe(200)
        expect((await form("/oauth/revoke", { token: kept })).status).toBe(401)
        expect(
          (await form("/oauth/revoke", {}, { authorization: basic(client.client_id, client.client_secret) }))
            .body
        ).toEqual({
          error: "invalid_request",
          error_description: expect.any(String)
        })
        // Revoking the client ends its tokens and its grants.
        const theirs = await token(other)
        const done = await server.ops(
          "POST",
          `/ops/merchants/${merchant.id}/oauth-clients/${other.client_id}/revoke`
        )
        expect(done.status).toBe(200)
        expect(done.body.revokedAt).not.toBeNull()
        expect((await server.request("GET", "/qr-codes", { key: theirs })).status).toBe(401)
        const refused = await form(
          "/oauth/token",
          { grant_type: "client_credentials" },
          { authorization: basic(other.client_id, other.client_secret) }
        )
        expect(refused.body.error).toBe("invalid_client")
        expect(
          (await server.ops("POST", `/ops/merchants/${merchant.id}/oauth-clients/lci_test_unknown/revoke`))
            .status
        ).toBe(404)
      })
    })

    it("publishes the authorization server's metadata (RFC 8414), outside /openapi.json", async () => {
      const res = await server.request("GET", "/.well-known/oauth-authorization-server")
      expect(res.status).toBe(200)
      expect(res.body).toMatchObject({
        issuer: "http://laari.test",
        token_endpoint: "http://laari.test/oauth/token",
        revocation_endpoint: "http://laari.test/oauth/revoke",
        grant_types_supported: ["client_credentials"],
        token_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post"],
        scopes_supported: Auth.allScopes
      })
      const document = await server.request("GET", "/openapi.json")
      expect(document.text).not.toContain("/oauth/")
      expect(document.text).not.toContain("oauth-authorization-server")
    })
  })
}
