/**
 * A connection cut exactly at COMMIT, by a proxy that reads the wire protocol
 * (`support/CommitCutProxy`): the charge is answered `503` `OUTCOME_UNKNOWN` with `Retry-After`, telling
 * the client to retry with the same Idempotency-Key; the retry replays the committed charge when the
 * COMMIT landed, and charges once when it did not. Either way: one charge, none doubled. PostgreSQL only
 * (DATABASE_URL); skipped, loudly, without it.
 */
import { Effect, Exit, Scope } from "effect"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as CommitCutProxy from "../support/CommitCutProxy.js"
import * as F from "../support/Fixtures.js"
import * as TestDatabase from "../support/TestDatabase.js"
import * as TestServer from "../support/TestServer.js"

if (TestDatabase.postgresUrl === undefined)
  console.warn("CommitOutcome.pg.test: SKIPPED (DATABASE_URL is not set)")

describe.skipIf(TestDatabase.postgresUrl === undefined)(
  "a COMMIT whose outcome is unknown",
  { timeout: 60_000 },
  () => {
    const scope = Effect.runSync(Scope.make())
    let directUrl: string
    let proxy: CommitCutProxy.CommitCutProxy
    let server: TestServer.LocalTestServer
    let merchant: F.Merchant

    beforeAll(async () => {
      directUrl = await Effect.runPromise(
        Scope.extend(TestDatabase.createDatabase(TestDatabase.postgresUrl!), scope)
      )
      const direct = new URL(directUrl)
      proxy = await CommitCutProxy.make({ host: direct.hostname, port: Number(direct.port || 5432) })
      const viaProxy = new URL(directUrl)
      viaProxy.hostname = "127.0.0.1"
      viaProxy.port = String(proxy.port)
      server = await TestServer.start({ databaseUrl: viaProxy.toString() })
      merchant = await F.merchant(server)
    }, 60_000)

    afterAll(async () => {
      await server?.close()
      await proxy?.close()
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }, 30_000)

    const charge = (mandate: string, key: string) =>
      server.request("POST", `/mandates/${mandate}/charges`, {
        key: merchant.test,
        headers: { "idempotency-key": key },
        body: { amount: 1_000 }
      })

    /** The charges of `mandate`, read straight from the database. */
    const chargesOf = async (mandate: string): Promise<Array<string>> => {
      const client = new pg.Client({ connectionString: directUrl })
      await client.connect()
      try {
        const { rows } = await client.query("SELECT id FROM mandate_charges WHERE mandate_id = $1", [mandate])
        return rows.map((r: { id: string }) => r.id)
      } finally {
        await client.end()
      }
    }

    for (const mode of ["before", "after"] as const)
      it(`cut ${mode} the COMMIT reaches the server: 503 OUTCOME_UNKNOWN, and the retry with the same key makes one charge`, async () => {
        const mandate = (
          await server.request("POST", "/mandates", { key: merchant.test, body: F.mandateBody() })
        ).body.id as string
        const key = F.unique(`commit-cut-${mode}`)
        const cut = proxy.arm(mode, key)
        const first = await charge(mandate, key)
        await cut
        expect(first.status).toBe(503)
        expect(first.body.code).toBe("OUTCOME_UNKNOWN")
        expect(first.body.message).toContain("same Idempotency-Key")
        expect(first.headers.get("retry-after")).toBe("1")

        const landed = await chargesOf(mandate)
        expect(landed.length).toBe(mode === "after" ? 1 : 0)

        const retry = await charge(mandate, key)
        expect(retry.status).toBe(201)
        // Committed: the stored answer, replayed; not committed: run now, once.
        expect(retry.headers.get("idempotent-replay")).toBe(mode === "after" ? "true" : null)
        const charges = await chargesOf(mandate)
        expect(charges).toEqual([retry.body.id])
        if (mode === "after") expect(retry.body.id).toBe(landed[0])

        // And again: still one.
        const again = await charge(mandate, key)
        expect(again.body.id).toBe(retry.body.id)
        expect(await chargesOf(mandate)).toHaveLength(1)
      })
  }
)
