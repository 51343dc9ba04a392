/**
 * Connections killed under the batched transactions (`Sql/PgTransaction`): pg_terminate_backend
 * of every laari connection, round after round, while many charges run, more of them than the pool has
 * connections (so a released connection goes straight to a waiting transaction). A pg client that
 * hears the server's FATAL while nothing listens on it throws it out of the process: the server must
 * leave no uncaught exception and no unhandled rejection, answer each charge 201 or 503 (plain, or
 * `OUTCOME_UNKNOWN` for a lost COMMIT), and a retry with the same key must charge each key exactly once.
 * PostgreSQL only (DATABASE_URL); skipped, loudly, without it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as F from "../support/Fixtures.js"
import * as Invariants from "../support/Invariants.js"
import { startOnPostgres } from "../support/PostgresServer.js"
import * as TestDatabase from "../support/TestDatabase.js"
import type * as TestServer from "../support/TestServer.js"

if (TestDatabase.postgresUrl === undefined)
  console.warn("TerminateBatched.pg.test: SKIPPED (DATABASE_URL is not set)")

/** Longer than any bound the service sets itself; past it a request counts as hung. */
const Hang = 30_000
/** More workers than the pool's 10 connections: transactions wait for one. */
const Workers = 24
const Rounds = 20

interface Outcome {
  readonly key: string
  readonly mandate: string
  readonly status: number
  readonly code: string | undefined
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

const charge = async (
  server: TestServer.TestServer,
  secret: string,
  mandate: string,
  key: string
): Promise<Outcome> => {
  try {
    const res = await fetch(`${server.baseUrl}/mandates/${mandate}/charges`, {
      method: "POST",
      signal: AbortSignal.timeout(Hang),
      headers: {
        authorization: `Bearer ${secret}`,
        "content-type": "application/json",
        "idempotency-key": key
      },
      body: JSON.stringify({ amount: 100 })
    })
    const body = (await res.json().catch(() => undefined)) as { readonly code?: string } | undefined
    return { key, mandate, status: res.status, code: body?.code }
  } catch {
    return { key, mandate, status: 0, code: undefined }
  }
}

describe.skipIf(TestDatabase.postgresUrl === undefined)(
  "pg_terminate_backend under batched transactions",
  () => {
    let env: Awaited<ReturnType<typeof startOnPostgres>>
    let merchant: F.Merchant
    const mandates: Array<string> = []
    const uncaught: Array<unknown> = []
    const onUncaught = (error: unknown) => uncaught.push(error)

    beforeAll(async () => {
      process.on("uncaughtException", onUncaught)
      process.on("unhandledRejection", onUncaught)
      env = await startOnPostgres()
      merchant = await F.merchant(env.server)
      for (let i = 0; i < 6; i++) {
        const created = await env.server.request("POST", "/mandates", {
          key: merchant.test,
          body: F.mandateBody()
        })
        mandates.push(created.body.id)
      }
    }, 60_000)

    afterAll(async () => {
      process.off("uncaughtException", onUncaught)
      process.off("unhandledRejection", onUncaught)
      await env?.server.close()
    }, 30_000)

    it("no uncaught error, every charge 201 or 503, each key charged once after retries", async () => {
      const server = env.server
      let running = true
      const outcomes: Array<Outcome> = []
      const load = Promise.all(
        Array.from({ length: Workers }, async (_, worker) => {
          for (let n = 0; running; n++) {
            const mandate = mandates[(worker + n) % mandates.length]!
            outcomes.push(await charge(server, merchant.test, mandate, F.unique(`kill-${worker}`)))
          }
        })
      )
      await sleep(1_000)
      await Invariants.withClient(env.directUrl, async (client) => {
        for (let round = 0; round < Rounds; round++) {
          await client.query(
            `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
           WHERE datname = current_database() AND application_name = 'laari' AND pid <> pg_backend_pid()`
          )
          await sleep(150)
        }
      })
      running = false
      await load
      // A client's error event comes after its query's answer: give the last ones time to surface.
      await sleep(1_000)

      const statuses: Record<string, number> = {}
      for (const o of outcomes) {
        const label = o.status === 503 ? `503 ${o.code}` : String(o.status)
        statuses[label] = (statuses[label] ?? 0) + 1
      }
      console.log(`terminate under batches: ${outcomes.length} charges, ${JSON.stringify(statuses)}`)
      expect(uncaught.map(String)).toEqual([])
      expect(outcomes.every((o) => o.status === 201 || o.status === 503)).toBe(true)
      expect(
        outcomes.every(
          (o) => o.status !== 503 || o.code === "SERVICE_UNAVAILABLE" || o.code === "OUTCOME_UNKNOWN"
        )
      ).toBe(true)
      expect(outcomes.some((o) => o.status === 503)).toBe(true)

      // Every key that did not answer 201, retried with the same key until it does: at most once each.
      for (const o of outcomes.filter((o) => o.status !== 201)) {
        let retried = await charge(server, merchant.test, o.mandate, o.key)
        for (let i = 0; retried.status !== 201 && i < 50; i++) {
          await sleep(100)
          retried = await charge(server, merchant.test, o.mandate, o.key)
        }
        expect(retried.status).toBe(201)
      }
      const charged = await Invariants.withClient(env.directUrl, (client) =>
        client.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM mandate_charges WHERE mandate_id = ANY($1)",
          [mandates]
        )
      )
      expect(charged.rows[0]!.n).toBe(outcomes.length)
      expect(await Invariants.check(env.directUrl)).toEqual(Invariants.none)
      expect(uncaught.map(String)).toEqual([])
    }, 120_000)
  }
)
