/**
 * The whole mandate HTTP suite on PostgreSQL (a fresh database), and the outage behaviour: `503` while
 * the database is away, recovery without a restart when it returns.
 */
import { Effect } from "effect"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as F from "../support/Fixtures.js"
import * as KeyedChargeTrips from "../support/KeyedChargeTrips.js"
import { suite } from "../support/MandateHttpSuite.js"
import { startOnPostgres } from "../support/PostgresServer.js"
import { postgresUrl } from "../support/TestDatabase.js"

if (postgresUrl === undefined) {
  describe.skip("mandates over HTTP on PostgreSQL: DATABASE_URL is not set", () => {
    it("needs DATABASE_URL", () => {})
  })
} else {
  suite("mandates over HTTP on PostgreSQL", async () => (await startOnPostgres()).server)

  describe("a keyed charge's round trips on PostgreSQL", () => {
    let env: Awaited<ReturnType<typeof startOnPostgres>>
    /** What each `query` call of any pg client sent: a batch's statements, each as its first words. */
    const trips: Array<ReadonlyArray<string>> = []
    const query = pg.Client.prototype.query
    beforeAll(async () => {
      env = await startOnPostgres()
      pg.Client.prototype.query = function (this: pg.Client, ...args: Array<unknown>) {
        const q = args[0] as { readonly statements?: ReadonlyArray<{ readonly text: string }> }
        if (q?.statements !== undefined)
          trips.push(q.statements.map((t) => KeyedChargeTrips.firstWords(t.text)))
        return (query as (...a: Array<unknown>) => unknown).apply(this, args)
      } as typeof query
    }, 120_000)
    afterAll(async () => {
      pg.Client.prototype.query = query
      await env?.server.close()
    })

    // The key's claim and the mandate's lock go in one round trip (`WriteBehind.Ahead`), the writes and
    // COMMIT in the other.
    it(
      "is two: BEGIN, the key's claim and the mandate's lock; then the writes and COMMIT",
      () => KeyedChargeTrips.check(env.server, trips, "two-trips"),
      60_000
    )
  })

  describe("a database outage on PostgreSQL", () => {
    let env: Awaited<ReturnType<typeof startOnPostgres>>
    beforeAll(async () => {
      env = await startOnPostgres({ proxy: true })
    }, 120_000)
    afterAll(async () => {
      await env?.server.close()
    })

    it("answers 503 SERVICE_UNAVAILABLE while the database is away, moves nothing, and recovers by itself", async () => {
      const { server, proxy } = env
      const m = await F.merchant(server)
      const id = (await server.request("POST", "/mandates", { key: m.test, body: F.mandateBody() })).body.id
      expect(
        (await server.request("POST", `/mandates/${id}/charges`, { key: m.test, body: { amount: 1000 } }))
          .status
      ).toBe(201)

      await Effect.runPromise(proxy!.stop)
      const down = await server.request("POST", `/mandates/${id}/charges`, {
        key: m.test,
        body: { amount: 1000 },
        headers: { "idempotency-key": "during-outage" }
      })
      expect(down.status).toBe(503)
      expect(down.body).toEqual({
        message: "This service is temporarily unavailable",
        code: "SERVICE_UNAVAILABLE"
      })
      expect((await server.request("GET", "/readyz")).status).toBe(503)

      await Effect.runPromise(proxy!.start)
      // The same request works once the service is back (a 5xx is never stored under its key).
      const again = await server.request("POST", `/mandates/${id}/charges`, {
        key: m.test,
        body: { amount: 1000 },
        headers: { "idempotency-key": "during-outage" }
      })
      expect(again.status).toBe(201)
      expect(again.headers.get("idempotent-replay")).toBeNull()
      expect((await server.request("GET", "/readyz")).status).toBe(200)
      expect((await server.request("GET", "/test-helpers/payer", { key: m.test })).body.balance).toBe(
        10_000_000 - 2000
      )
    }, 60_000)
  })
}
