/**
 * A primary lost and its standby promoted, on a real pair of PostgreSQL 15 clusters
 * (`support/PgPair`), with laari on the host list `127.0.0.1:<primary>,127.0.0.1:<standby>`: charges
 * through the switch get `201` or `503` with `Retry-After`, never `500`, every `201` is committed on the
 * new primary, charges work again without a restart, a LISTEN follows the primary, and the webhook
 * worker delivers again. A standby listed
 * first is skipped; hosts that are all standbys stop the start. Needs the PostgreSQL 15 binaries and root
 * (or the postgres user); skipped, loudly, without them.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Exit, Fiber, Layer, ManagedRuntime, Stream } from "effect"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Database from "../../src/Sql/Database.js"
import * as Wakeup from "../../src/Sql/Wakeup.js"
import * as Startup from "../../src/Startup.js"
import * as F from "../support/Fixtures.js"
import * as PgPair from "../support/PgPair.js"
import * as Receiver from "../support/Receiver.js"
import * as TestServer from "../support/TestServer.js"

const unavailable = PgPair.available()
if (unavailable !== undefined) console.warn(`Failover.pg.test: SKIPPED (${unavailable})`)

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

interface Outcome {
  readonly started: number
  readonly status: number
  readonly retryAfter: string | null
  readonly at: number
  readonly id: string | undefined
}

const charge = async (server: TestServer.TestServer, key: string, mandate: string): Promise<Outcome> => {
  const started = performance.now()
  try {
    const res = await fetch(`${server.baseUrl}/mandates/${mandate}/charges`, {
      method: "POST",
      signal: AbortSignal.timeout(20_000),
      headers: {
        authorization: `Bearer ${key}`,
        "content-type": "application/json",
        "idempotency-key": F.unique("failover")
      },
      body: JSON.stringify({ amount: 100 })
    })
    const body = (await res.json().catch(() => ({}))) as { id?: string }
    return {
      started,
      status: res.status,
      retryAfter: res.headers.get("retry-after"),
      at: performance.now(),
      id: body.id
    }
  } catch {
    return { started, status: 0, retryAfter: null, at: performance.now(), id: undefined }
  }
}

describe.skipIf(unavailable !== undefined)("failover to a promoted standby", { timeout: 60_000 }, () => {
  let pair: PgPair.PgPair
  const database = "laari"
  const list = (first: number, second: number) =>
    `postgres://postgres@127.0.0.1:${first},127.0.0.1:${second}/${database}?target_session_attrs=read-write&sslmode=prefer`

  beforeAll(async () => {
    pair = await PgPair.make()
    await pair.createDatabase(database)
  }, 60_000)

  afterAll(() => pair?.stop(), 30_000)

  it("hosts that are all standbys: the start fails with one line naming them", async () => {
    const url = list(pair.standbyPort, pair.standbyPort)
    const exit = await Effect.runPromiseExit(Layer.launch(Database.clientLayer({ databaseUrl: url })))
    expect(Exit.isFailure(exit)).toBe(true)
    if (Exit.isFailure(exit))
      expect(Startup.explain(exit.cause, { port: 1, databaseUrl: url })).toBe(
        `every host of DATABASE_URL is a standby (read-only): PostgreSQL at 127.0.0.1:${pair.standbyPort},127.0.0.1:${pair.standbyPort}. Name the primary among them, or promote one (pg_autoctl show state tells which is which)`
      )
  })

  it("a standby listed first is skipped: the server migrates and charges on the primary", async () => {
    const server = await TestServer.start({ databaseUrl: list(pair.standbyPort, pair.primaryPort) })
    try {
      const m = await F.merchant(server)
      const mandate = await server.request("POST", "/mandates", { key: m.test, body: F.mandateBody() })
      expect(mandate.status).toBe(201)
      const charged = await charge(server, m.test, mandate.body.id)
      expect(charged.status).toBe(201)
      const onPrimary = await server.sql(
        Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT inet_server_port() AS port`)
      )
      expect(Number(onPrimary[0]!.port)).toBe(pair.primaryPort)
    } finally {
      await server.close()
    }
  })

  it("a primary that turns read-only (SQLSTATE 25006): 503s with Retry-After, no 500, and back once it takes writes", async () => {
    const server = await TestServer.start({ databaseUrl: list(pair.primaryPort, pair.standbyPort) })
    const setReadOnly = async (on: boolean) => {
      const client = new pg.Client({ connectionString: pair.url(pair.primaryPort) })
      await client.connect()
      try {
        await client.query(
          on
            ? "ALTER SYSTEM SET default_transaction_read_only = on"
            : "ALTER SYSTEM RESET default_transaction_read_only"
        )
        await client.query("SELECT pg_reload_conf()")
      } finally {
        await client.end()
      }
    }
    try {
      const m = await F.merchant(server)
      const mandate = (await server.request("POST", "/mandates", { key: m.test, body: F.mandateBody() })).body
        .id as string
      expect((await charge(server, m.test, mandate)).status).toBe(201)
      await setReadOnly(true)
      await sleep(300)
      const refused = [await charge(server, m.test, mandate), await charge(server, m.test, mandate)]
      expect(refused.map((o) => [o.status, o.retryAfter])).toEqual([
        [503, "1"],
        [503, "1"]
      ])
      await setReadOnly(false)
      const deadline = Date.now() + 10_000
      let back: Outcome | undefined
      while (Date.now() < deadline && back?.status !== 201) {
        back = await charge(server, m.test, mandate)
        if (back.status !== 201) {
          expect(back.status).toBe(503)
          await sleep(100)
        }
      }
      expect(back?.status).toBe(201)
    } finally {
      await setReadOnly(false).catch(() => {})
      await server.close()
    }
  })

  it("the primary crashes under load and the standby is promoted: 503s with Retry-After, no 500, every 201 kept, LISTEN follows", async () => {
    const url = list(pair.primaryPort, pair.standbyPort)
    const server = await TestServer.start({ databaseUrl: url })
    const receiver = await Receiver.start()
    // A listener of its own over the same host list, as the row cache and the dispatcher have.
    const listener = ManagedRuntime.make(Database.clientLayer({ databaseUrl: url }))
    const heard: Array<string> = []
    const notify = async (port: number, payload: string) => {
      const client = new pg.Client({ connectionString: pair.url(port, database) })
      await client.connect()
      await client.query("SELECT pg_notify('laari_failover_test', $1)", [payload]).finally(() => client.end())
    }
    /** Notifies on `port` until the listener hears it, within `ms`. */
    const heardWithin = async (port: number, payload: string, ms: number) => {
      const deadline = Date.now() + ms
      while (Date.now() < deadline) {
        await notify(port, payload).catch(() => {})
        await sleep(200)
        if (heard.includes(payload)) return true
      }
      return false
    }
    try {
      const fiber = await listener.runPromise(
        Effect.forkDaemon(
          Stream.runForEach(Stream.unwrap(Wakeup.listen("laari_failover_test")), (p) =>
            Effect.sync(() => heard.push(p))
          )
        )
      )
      expect(await heardWithin(pair.primaryPort, "before", 5_000)).toBe(true)

      const m = await F.merchant(server)
      // Webhooks, to see their worker deliver after the switch as well.
      const hook = await server.request("POST", "/webhook-endpoints", {
        key: m.test,
        body: { url: receiver.url("/failover"), enabled_events: ["mandate.activated"] }
      })
      expect(hook.status, hook.text).toBe(201)
      const mandates: Array<string> = []
      for (let i = 0; i < 4; i++) {
        const created = await server.request("POST", "/mandates", { key: m.test, body: F.mandateBody() })
        mandates.push(created.body.id)
      }
      const outcomes: Array<Outcome> = []
      let crashedAt = Number.POSITIVE_INFINITY
      let running = true
      const load = Promise.all(
        mandates.map(async (mandate) => {
          while (running) outcomes.push(await charge(server, m.test, mandate))
        })
      )
      await sleep(1_000)
      await pair.crashPrimary()
      // Dead by now: what started after this could not have reached it.
      crashedAt = performance.now()
      await pair.promote()
      const promotedAt = performance.now()
      // Until a charge after the crash succeeded, and a second more of load.
      const deadline = Date.now() + 30_000
      while (!outcomes.some((o) => o.started > crashedAt && o.status === 201) && Date.now() < deadline)
        await sleep(50)
      await sleep(1_000)
      running = false
      await load

      const after = outcomes.filter((o) => o.started > crashedAt)
      const firstBack = after.find((o) => o.status === 201)
      const statuses: Record<number, number> = {}
      for (const o of outcomes) statuses[o.status] = (statuses[o.status] ?? 0) + 1
      const unavailableCount = statuses[503] ?? 0
      console.log(
        `Failover: primary crashed; promoted after ${Math.round(promotedAt - crashedAt)} ms; first 201 ${
          firstBack === undefined
            ? "never"
            : `${Math.round(firstBack.at - crashedAt)} ms after the crash, ${Math.round(firstBack.at - promotedAt)} ms after the promotion`
        }; statuses ${JSON.stringify(statuses)}; slowest ${Math.round(Math.max(...outcomes.map((o) => o.at - o.started)))} ms`
      )
      expect(firstBack, JSON.stringify(statuses)).toBeDefined()
      expect(Object.keys(statuses).sort()).toEqual(unavailableCount > 0 ? ["201", "503"] : ["201"])
      for (const o of outcomes.filter((x) => x.status === 503)) expect(o.retryAfter).toBe("1")
      // No wait past the pool's bounds (a connection within 5 s, a reply within 7 s).
      const worst = Math.max(...outcomes.map((o) => o.at - o.started))
      expect(worst).toBeLessThan(12_000)

      // Every 201 is a charge the new primary has: the commit waited for it (synchronous replication;
      // asynchronous, this lost one 201 of 68 in a run).
      const acknowledged = outcomes.filter((o) => o.status === 201).map((o) => o.id!)
      const client = new pg.Client({ connectionString: pair.url(pair.standbyPort, database) })
      await client.connect()
      try {
        const { rows } = await client.query("SELECT id FROM mandate_charges WHERE id = ANY($1::uuid[])", [
          acknowledged
        ])
        expect(rows.length).toBe(acknowledged.length)
      } finally {
        await client.end()
      }

      // Charges work again, and the listener hears the new primary by itself.
      expect((await charge(server, m.test, mandates[0]!)).status).toBe(201)
      expect(await heardWithin(pair.standbyPort, "after", 15_000)).toBe(true)
      // The webhook worker delivers an event made after the switch.
      const later = await server.request("POST", "/mandates", { key: m.test, body: F.mandateBody() })
      expect(later.status).toBe(201)
      const deadline2 = Date.now() + 15_000
      const delivered = () => receiver.received.some((r) => r.body.includes(later.body.id as string))
      while (!delivered() && Date.now() < deadline2) await sleep(100)
      expect(delivered(), "a webhook of a mandate made after the switch").toBe(true)
      await listener.runPromise(Fiber.interrupt(fiber))
    } finally {
      await server.close()
      await listener.dispose()
      await receiver.close()
    }
  })
})
