/**
 * `kill -9` of a server process in the middle of charges and of a renewal run, then a restart on the
 * same PostgreSQL database: nothing is charged twice, nothing is lost, the ledger adds up, and no
 * idempotency key is left in flight. The servers are real processes (`pnpm start`'s entry point).
 */
import { Effect, Exit, Scope } from "effect"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as F from "../support/Fixtures.js"
import * as Invariants from "../support/Invariants.js"
import * as ServerProcess from "../support/ServerProcess.js"
import * as TestDatabase from "../support/TestDatabase.js"
import * as TestServer from "../support/TestServer.js"

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe.skipIf(TestDatabase.postgresUrl === undefined)("kill -9 and restart on PostgreSQL", () => {
  const scope = Effect.runSync(Scope.make())
  let databaseUrl: string
  let running: ServerProcess.ServerProcess | undefined
  const env = () => ({
    DATABASE_URL: databaseUrl,
    LAARI_OPS_TOKEN: TestServer.OpsToken,
    LAARI_CLOCK: "manual",
    LAARI_RATE_LIMIT: "0"
  })

  beforeAll(async () => {
    databaseUrl = await Effect.runPromise(
      Scope.extend(TestDatabase.createDatabase(TestDatabase.postgresUrl!), scope)
    )
  }, 30_000)

  afterAll(async () => {
    await running?.stop()
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }, 30_000)

  const restart = async () => {
    running?.kill()
    running = await ServerProcess.start({ env: env() })
    return TestServer.client(running.baseUrl)
  }

  it("during charges: every key is charged exactly once after the restart", async () => {
    let api = await restart()
    const merchant = await F.merchant(api as TestServer.TestServer)
    const mandates: Array<string> = []
    for (let i = 0; i < 4; i++)
      mandates.push(
        (await api.request("POST", "/mandates", { key: merchant.test, body: F.mandateBody() })).body.id
      )

    interface Sent {
      readonly key: string
      readonly mandate: string
      status: number
      id?: string
    }
    const sent: Array<Sent> = []
    const charge = (target: TestServer.TestServer | typeof api, s: Sent) =>
      target
        .request("POST", `/mandates/${s.mandate}/charges`, {
          key: merchant.test,
          body: { amount: 1_000 },
          headers: { "idempotency-key": s.key }
        })
        .then(
          (r) => ({
            status: r.status,
            id: r.body?.id as string | undefined,
            replay: r.headers.get("idempotent-replay")
          }),
          () => ({ status: 0, id: undefined, replay: null })
        )
    let killed = false
    const workers = Array.from({ length: 8 }, async (_, w) => {
      for (let n = 0; !killed; n++) {
        const s: Sent = {
          key: F.unique(`crash-${w}`),
          mandate: mandates[(w + n) % mandates.length]!,
          status: 0
        }
        sent.push(s)
        const r = await charge(api, s)
        s.status = r.status
        if (r.id !== undefined) s.id = r.id
      }
    })
    await sleep(1_500)
    killed = true
    running!.kill()
    await Promise.all(workers)
    const unknown = sent.filter((s) => s.status === 0).length
    expect(sent.every((s) => s.status === 201 || s.status === 0)).toBe(true)

    api = await restart()
    // The client retries every request with its key: answered ones replay, cut ones run now or replay.
    for (const s of sent) {
      const r = await charge(api, s)
      expect(r.status, s.key).toBe(201)
      if (s.status === 201) {
        expect(r.replay, s.key).toBe("true")
        expect(r.id).toBe(s.id)
      }
      s.id = r.id
    }
    console.log(
      `kill -9 during charges: ${sent.length} keys, ${unknown} without an answer when the process died`
    )
    const ids = new Set(sent.map((s) => s.id))
    expect(ids.size).toBe(sent.length)
    const count = await Invariants.withClient(databaseUrl, (client) =>
      client.query<{ n: number }>("SELECT count(*)::int AS n FROM mandate_charges")
    )
    expect(count.rows[0]!.n).toBe(sent.length)
    expect(await Invariants.check(databaseUrl)).toEqual(Invariants.none)
  }, 120_000)

  it("during a renewal run: nothing of the dying batch is written, and every cycle is paid exactly once after the restart", async () => {
    let api = await restart()
    const merchant = await F.merchant(api as TestServer.TestServer)
    const subscriptions = await F.paidSubscriptions(api as TestServer.TestServer, merchant.test, 60, "sub")
    const month = 32 * 24 * 3600
    const query = <R extends pg.QueryResultRow>(text: string) =>
      Invariants.withClient(databaseUrl, (client) => client.query<R>(text)).then((r) => r.rows)
    // Up to an hour before the renewals, past the balance warnings a day before them.
    const [{ end }] = (await query<{ end: Date }>(
      "SELECT min(current_period_end) AS end FROM subscriptions"
    )) as [{ end: Date }]
    const before = new Date(end.getTime() - 3600_000).toISOString().replace(/\.\d{3}Z$/, "+00:00")
    const early = await api.ops("POST", "/ops/clock/advance", { to: before })
    expect(early.status, early.text).toBe(200)

    // The payers' wallets held by another transaction: the renewal run claims its batch, opens and
    // attempts each cycle, and then waits to lock the wallets it pays from. The process dies there.
    const holder = new pg.Client({ connectionString: databaseUrl })
    await holder.connect()
    await holder.query("BEGIN")
    await holder.query(
      "SELECT id FROM ledger_accounts WHERE customer_id IN (SELECT customer_id FROM subscriptions) FOR UPDATE"
    )
    const run = api.ops("POST", "/ops/clock/advance", { by_seconds: month }).catch(() => undefined)
    const waiting = async () =>
      (
        await query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()"
        )
      )[0]!.n
    const deadline = Date.now() + 30_000
    while ((await waiting()) === 0 && Date.now() < deadline) await sleep(5)
    expect(await waiting()).toBeGreaterThan(0)
    running!.kill()
    await run
    await holder.query("ROLLBACK")
    await holder.end()
    // Its backend goes on once the wallets are free, finds its client gone, and rolls back.
    await sleep(500)
    const dying = await query<{ status: string; n: number }>(
      "SELECT status, count(*)::int AS n FROM invoices GROUP BY status ORDER BY status"
    )
    console.log(`kill -9 during renewals: invoices by status when it died ${JSON.stringify(dying)}`)
    expect(dying).toEqual([{ status: "PAID", n: subscriptions.length }])

    api = await restart()
    // Past the renewals, and not as far as the next ones.
    const after = new Date(end.getTime() + 3600_000).toISOString().replace(/\.\d{3}Z$/, "+00:00")
    const advanced = await api.ops("POST", "/ops/clock/advance", { to: after })
    expect(advanced.status, advanced.text).toBe(200)
    for (const id of subscriptions) {
      const invoices = await api.request("GET", `/subscriptions/${id}/invoices`, { key: merchant.test })
      expect(invoices.body.map((i: { status: string }) => i.status)).toEqual(["PAID", "PAID"])
    }
    expect(await Invariants.check(databaseUrl)).toEqual(Invariants.none)
  }, 180_000)
})
