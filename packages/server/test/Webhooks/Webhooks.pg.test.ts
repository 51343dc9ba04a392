/**
 * Deliveries from several server processes on one PostgreSQL, one of them killed with `kill -9` while
 * its attempts are in flight: every event is delivered at least once, the killed process's attempts
 * are made again by the others once their leases run out, and nothing is left pending.
 */
import { Effect, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as F from "../support/Fixtures.js"
import * as R from "../support/Receiver.js"
import * as ServerProcess from "../support/ServerProcess.js"
import * as TestDatabase from "../support/TestDatabase.js"
import * as TestServer from "../support/TestServer.js"

if (TestDatabase.postgresUrl === undefined)
  console.warn("SKIPPED: Webhooks.pg.test.ts needs DATABASE_URL (PostgreSQL); CI sets it")

describe.skipIf(TestDatabase.postgresUrl === undefined)(
  "webhook deliveries across processes, with kill -9",
  () => {
    const scope = Effect.runSync(Scope.make())
    const processes: Array<ServerProcess.ServerProcess> = []
    let databaseUrl: string
    let receiver: R.Receiver

    beforeAll(async () => {
      databaseUrl = await Effect.runPromise(
        Scope.extend(TestDatabase.createDatabase(TestDatabase.postgresUrl!), scope)
      )
      receiver = await R.start()
    }, 30_000)

    afterAll(async () => {
      await Promise.all(processes.map((p) => p.stop()))
      await receiver?.close()
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }, 60_000)

    const start = async () => {
      const p = await ServerProcess.start({
        env: {
          DATABASE_URL: databaseUrl,
          LAARI_OPS_TOKEN: TestServer.OpsToken,
          LAARI_RATE_LIMIT: "0",
          // The receiver is local.
          LAARI_WEBHOOK_ALLOW_PRIVATE: "true"
        }
      })
      processes.push(p)
      return TestServer.client(p.baseUrl) as TestServer.TestServer
    }

    it("delivers every event at least once; a killed process's attempts are made again", async () => {
      const first = await start()
      const m = await F.merchant(first)
      const hook = await first.request("POST", "/webhook-endpoints", {
        key: m.test,
        body: { url: receiver.url("/multi"), enabled_events: ["mandate.activated"] }
      })
      expect(hook.status, hook.text).toBe(201)
      // The first process's attempts hang until it is killed.
      receiver.answer = () => ({ status: 200, delayMs: 60_000 })
      const create = (api: TestServer.TestServer) =>
        api.request("POST", "/mandates", { key: m.test, body: F.mandateBody() }).then((r) => {
          expect(r.status, r.text).toBe(201)
        })
      for (let i = 0; i < 20; i++) await create(first)
      // A process keeps at most 8 attempts in flight per endpoint: kill it with all 8 hanging.
      await R.eventually(() => receiver.received.length >= 8, 8_000, "8 attempts in flight")
      const inFlight = new Set(receiver.received.map((r) => String(r.headers["webhook-id"])))
      processes[0]!.kill()
      await processes[0]!.exited
      receiver.answer = () => ({ status: 200 })

      const others = [await start(), await start()]
      for (let i = 0; i < 40; i++) await create(others[i % 2]!)
      const events = (await others[0]!.request("GET", "/events?limit=100", { key: m.test }))
        .body as Array<any>
      expect(events).toHaveLength(60)
      const ids = new Set(events.map((e) => e.id as string))
      const started = Date.now()
      const counts = () => {
        const times = new Map<string, number>()
        for (const r of receiver.received) {
          const id = String(r.headers["webhook-id"])
          times.set(id, (times.get(id) ?? 0) + 1)
        }
        return times
      }
      // Every event arrives; what hung when the process died arrives again, once its lease has run out.
      await R.eventually(
        () => {
          const times = counts()
          return [...ids].every((id) => (times.get(id) ?? 0) >= (inFlight.has(id) ? 2 : 1))
        },
        60_000,
        "every event delivered"
      )
      const times = counts()
      console.log(
        `webhooks: 60 events, 3 processes, 1 killed with ${inFlight.size} attempts in flight; all delivered ${Date.now() - started} ms after the last event; ${[...times.values()].filter((n) => n > 1).length} delivered twice`
      )
      const entries = await R.eventually(async () => {
        const log = (
          await others[1]!.request("GET", `/webhook-endpoints/${hook.body.id}/deliveries?limit=100`, {
            key: m.test
          })
        ).body as Array<any>
        return log.every((e) => e.status !== "PENDING") && log
      })
      expect(new Set(entries.filter((e) => e.status === "SUCCEEDED").map((e) => e.eventId))).toEqual(ids)
    }, 120_000)
  }
)
