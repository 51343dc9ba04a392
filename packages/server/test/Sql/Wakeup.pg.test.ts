/**
 * LISTEN comes back by itself after its connection is lost (`Sql/Wakeup`), on a DATABASE_URL of one
 * host: the connection goes through a proxy that is stopped and started again. (PgClient.listen, used
 * before, swallowed the loss and went silent for good.) The host-list case is in Failover.pg.test.
 * PostgreSQL only (DATABASE_URL); skipped, loudly, without it.
 */
import { Effect, Exit, Fiber, ManagedRuntime, Scope, Stream } from "effect"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Database from "../../src/Sql/Database.js"
import * as Wakeup from "../../src/Sql/Wakeup.js"
import * as TcpProxy from "../support/TcpProxy.js"
import * as TestDatabase from "../support/TestDatabase.js"

if (TestDatabase.postgresUrl === undefined) console.warn("Wakeup.pg.test: SKIPPED (DATABASE_URL is not set)")

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe.skipIf(TestDatabase.postgresUrl === undefined)(
  "LISTEN after a lost connection",
  { timeout: 60_000 },
  () => {
    const scope = Effect.runSync(Scope.make())
    let directUrl: string
    let proxy: TcpProxy.TcpProxy

    beforeAll(async () => {
      directUrl = await Effect.runPromise(
        Scope.extend(TestDatabase.createDatabase(TestDatabase.postgresUrl!), scope)
      )
      const direct = new URL(directUrl)
      proxy = await Effect.runPromise(
        Scope.extend(TcpProxy.make({ host: direct.hostname, port: Number(direct.port || 5432) }), scope)
      )
    }, 60_000)

    afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)), 30_000)

    it("hears notifications again once the database can be reached, without a restart", async () => {
      const viaProxy = new URL(directUrl)
      viaProxy.hostname = "127.0.0.1"
      viaProxy.port = String(proxy.port)
      const runtime = ManagedRuntime.make(Database.clientLayer({ databaseUrl: viaProxy.toString() }))
      const heard: Array<string> = []
      const heardWithin = async (payload: string, ms: number) => {
        const deadline = Date.now() + ms
        while (Date.now() < deadline) {
          const client = new pg.Client({ connectionString: directUrl })
          await client.connect()
          await client
            .query("SELECT pg_notify('laari_wakeup_test', $1)", [payload])
            .finally(() => client.end())
          await sleep(200)
          if (heard.includes(payload)) return true
        }
        return false
      }
      try {
        const fiber = await runtime.runPromise(
          Effect.forkDaemon(
            Stream.runForEach(Stream.unwrap(Wakeup.listen("laari_wakeup_test")), (p) =>
              Effect.sync(() => heard.push(p))
            )
          )
        )
        expect(await heardWithin("before", 5_000)).toBe(true)
        await Effect.runPromise(proxy.stop)
        await sleep(1_500)
        await Effect.runPromise(proxy.start)
        expect(await heardWithin("after", 10_000)).toBe(true)
        await runtime.runPromise(Fiber.interrupt(fiber))
      } finally {
        await runtime.dispose()
      }
    })
  }
)
