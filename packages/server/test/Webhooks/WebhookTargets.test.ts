/**
 * Where webhook endpoints may point with the defaults: test endpoints follow the live
 * rules, https on a public address, because every merchant has test keys and a local target is an SSRF
 * into the deployment's network. Refused at registration, and again at delivery for an endpoint whose
 * target is private by the time it is sent to (its log shows no answer). `LAARI_WEBHOOK_ALLOW_PRIVATE`
 * lifts the rules; the other suites run with it, to deliver to their local receivers.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { ConfigProvider, Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Config from "../../src/Platform/Config.js"
import * as F from "../support/Fixtures.js"
import { serverBackends } from "../support/PostgresServer.js"
import * as R from "../support/Receiver.js"
import type * as TestServer from "../support/TestServer.js"

const refused = [
  "http://127.0.0.1:9/hook",
  "http://example.com/hook",
  "https://127.0.0.1/hook",
  "https://10.1.2.3/hook",
  "https://169.254.169.254/latest/meta-data",
  "https://[::1]/hook",
  "https://[fd00::1]/hook",
  "https://[fe80::1]/hook",
  "https://localhost/hook",
  "https://localhost./hook",
  "https://api.localhost./hook",
  "https://[::7f00:1]/hook",
  "https://[::ffff:7f00:1]/hook",
  "https://[::ffff:0:7f00:1]/hook",
  "https://[2002:7f00:1::]/hook",
  "https://[2002:a9fe:a9fe::]/hook",
  "https://[64:ff9b::7f00:1]/hook",
  "https://2130706433/hook",
  "https://0x7f.1/hook",
  "https://user:pass@example.com/hook",
  "ftp://example.com/hook",
  "not a url"
]

it("LAARI_WEBHOOK_ALLOW_PRIVATE is off unless set", async () => {
  const config = await Effect.runPromise(
    Config.fromEnv.pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map())))
  )
  expect(config.webhookAllowPrivate).toBe(false)
})

for (const backend of serverBackends) {
  describe.skipIf(backend.skip)(`webhook targets with the defaults on ${backend.name}`, () => {
    let server: TestServer.LocalTestServer
    let receiver: R.Receiver
    beforeAll(async () => {
      receiver = await R.start()
      server = await backend.start({ webhookAllowPrivate: false })
    }, 120_000)
    afterAll(async () => {
      await server?.close()
      await receiver?.close()
    })

    const register = (key: string, url: string) =>
      server.request("POST", "/webhook-endpoints", { key, body: { url, enabled_events: ["*"] } })

    it("refuses private, loopback, link-local and plain-http targets for test and live keys alike", async () => {
      const m = await F.merchant(server)
      for (const key of [m.test, m.live])
        for (const url of refused) {
          const res = await register(key, url)
          expect(res.status, url).toBe(422)
          expect(res.body.errors, url).toEqual([{ field: "url", message: expect.any(String) }])
        }
      const local = await register(m.test, receiver.url())
      expect(local.body.errors[0].message).toMatch(/laari listen/)
      expect((await register(m.test, "https://example.com/hook")).status).toBe(201)
      expect((await register(m.live, "https://example.com/hook")).status).toBe(201)
      const moved = await register(m.test, "https://example.com/other")
      const update = await server.request("POST", `/webhook-endpoints/${moved.body.id}`, {
        key: m.test,
        body: { url: "https://[::ffff:0:7f00:1]/" }
      })
      expect(update.status).toBe(422)
    }, 60_000)

    it("refuses at delivery a target that is private by then: nothing is sent, the log shows no answer", async () => {
      const m = await F.merchant(server)
      const hook = await register(m.test, "https://example.com/hook")
      expect(hook.status, hook.text).toBe(201)
      // What DNS rebinding or an endpoint registered before this rule leaves: a private target.
      const target = receiver.url("/internal")
      receiver.answer = () => ({ status: 200, body: "internal secret" })
      await server.sql(
        Effect.flatMap(
          SqlClient.SqlClient,
          (sql) => sql`UPDATE webhook_endpoints SET url = ${target} WHERE id = ${hook.body.id}`
        )
      )
      const made = await server.request("POST", "/mandates", { key: m.test, body: F.mandateBody() })
      expect(made.status, made.text).toBe(201)
      const failed = await R.eventually(
        async () => {
          const res = await server.request("GET", `/webhook-endpoints/${hook.body.id}/deliveries`, {
            key: m.test
          })
          return res.body.find((a: { status: string }) => a.status === "FAILED")
        },
        20_000,
        "a failed attempt"
      )
      expect(failed).toMatchObject({
        responseStatus: null,
        responseBody: null,
        error: "refused: the address is not public"
      })
      expect(receiver.received.filter((r) => r.path === "/internal")).toHaveLength(0)
    }, 60_000)
  })
}
