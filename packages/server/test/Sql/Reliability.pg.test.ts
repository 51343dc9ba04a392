/**
 * The reliability suite, on PostgreSQL: faults an unlucky network or a crashing database produces, each
 * followed by the money invariants (`support/Invariants.ts`). Every wait is bounded: a request that does
 * not answer within `Hang` fails the test as a hang.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as F from "../support/Fixtures.js"
import * as Invariants from "../support/Invariants.js"
import { startOnPostgres } from "../support/PostgresServer.js"
import type * as TcpProxy from "../support/TcpProxy.js"
import * as TestDatabase from "../support/TestDatabase.js"
import * as TestServer from "../support/TestServer.js"

/** Longer than any bound the service sets itself; past it a request counts as hung. */
const Hang = 30_000

interface Outcome {
  readonly status: number
  readonly ms: number
}

/** One request with a deadline; a hang or a reset is status 0. */
const timed = async (run: (signal: AbortSignal) => Promise<Response>): Promise<Outcome> => {
  const started = performance.now()
  try {
    const res = await run(AbortSignal.timeout(Hang))
    await res.arrayBuffer()
    return { status: res.status, ms: performance.now() - started }
  } catch (e) {
    const hung = e instanceof Error && e.name === "TimeoutError"
    return { status: hung ? -1 : 0, ms: performance.now() - started }
  }
}

const chargeOnce = (server: TestServer.TestServer, key: string, mandate: string, idempotencyKey: string) =>
  timed((signal) =>
    fetch(`${server.baseUrl}/mandates/${mandate}/charges`, {
      method: "POST",
      signal,
      headers: {
        authorization: `Bearer ${key}`,
        "content-type": "application/json",
        "idempotency-key": idempotencyKey
      },
      body: JSON.stringify({ amount: 1_000 })
    })
  )

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

const expectInvariants = async (url: string) => expect(await Invariants.check(url)).toEqual(Invariants.none)

describe.skipIf(TestDatabase.postgresUrl === undefined)("reliability on PostgreSQL", () => {
  let env: Awaited<ReturnType<typeof startOnPostgres>>
  let databaseUrl: string
  let proxy: TcpProxy.TcpProxy
  let server: TestServer.TestServer
  let merchant: F.Merchant
  let mandates: Array<string>

  beforeAll(async () => {
    env = await startOnPostgres({ proxy: true })
    server = env.server
    proxy = env.proxy!
    databaseUrl = env.directUrl
    merchant = await F.merchant(server)
    mandates = []
    for (let i = 0; i < 4; i++) {
      const created = await server.request("POST", "/mandates", { key: merchant.test, body: F.mandateBody() })
      mandates.push(created.body.id)
    }
  }, 60_000)

  afterAll(() => env?.server.close(), 30_000)

  /** Charges from `concurrency` clients until `stop` resolves; every outcome. */
  const load = async (stop: Promise<void>, concurrency = 8): Promise<Array<Outcome>> => {
    let running = true
    void stop.then(() => {
      running = false
    })
    const outcomes: Array<Outcome> = []
    await Promise.all(
      Array.from({ length: concurrency }, async (_, worker) => {
        let n = 0
        while (running) {
          const mandate = mandates[(worker + n) % mandates.length]!
          outcomes.push(await chargeOnce(server, merchant.test, mandate, F.unique(`load-${worker}`)))
          n++
        }
      })
    )
    return outcomes
  }

  /** Milliseconds until a charge succeeds again, trying every 100 ms. */
  const timeToRecover = async (): Promise<number> => {
    const started = performance.now()
    for (;;) {
      const outcome = await chargeOnce(server, merchant.test, mandates[0]!, F.unique("recover"))
      if (outcome.status === 201) return performance.now() - started
      if (performance.now() - started > 60_000) throw new Error("did not recover within 60 s")
      await sleep(100)
    }
  }

  const summary = (outcomes: ReadonlyArray<Outcome>) => {
    const statuses: Record<number, number> = {}
    for (const o of outcomes) statuses[o.status] = (statuses[o.status] ?? 0) + 1
    const worst = Math.max(0, ...outcomes.map((o) => o.ms))
    return { statuses, worst: Math.round(worst) }
  }

  /**
   * Charges under load while `fault` runs (it starts a second into the load), then `heal`, then: only
   * 201s and 503s, none slower than `bound`, a charge works again (without a restart), invariants hold.
   */
  const underFault = async (
    name: string,
    fault: () => Promise<void>,
    heal: () => Promise<void>,
    bound = 15_000
  ) => {
    let end!: () => void
    const running = load(new Promise<void>((r) => (end = r)))
    await sleep(1_000)
    await fault()
    end()
    const outcomes = await running
    await heal()
    const recovered = Math.round(await timeToRecover())
    const { statuses, worst } = summary(outcomes)
    console.log(
      `${name}: statuses ${JSON.stringify(statuses)}, worst ${worst} ms, recovered in ${recovered} ms`
    )
    expect(Object.keys(statuses).every((s) => s === "201" || s === "503")).toBe(true)
    expect(statuses[503]).toBeGreaterThan(0)
    expect(worst).toBeLessThan(bound)
    await expectInvariants(databaseUrl)
  }

  it(
    "a database connection cut mid-load: 503s, no 500, no hang, recovery without restart",
    () =>
      underFault(
        "connection cut",
        async () => {
          await Effect.runPromise(proxy.stop)
          await sleep(2_000)
        },
        () => Effect.runPromise(proxy.start)
      ),
    90_000
  )

  // The bound: the 7 s read timeout, plus at most a 5 s wait for a connection.
  it(
    "a connection that goes silent mid-load: every request answers within the bound, then recovery",
    () =>
      underFault(
        "connection frozen",
        async () => {
          await Effect.runPromise(proxy.freeze)
          await sleep(9_000)
        },
        () => Effect.runPromise(Effect.zipRight(proxy.stop, proxy.start))
      ),
    90_000
  )

  it(
    "pg_terminate_backend of every laari connection mid-load: 503s, no 500, recovery",
    () =>
      underFault(
        "pg_terminate_backend",
        () =>
          Invariants.withClient(databaseUrl, async (client) => {
            for (let round = 0; round < 5; round++) {
              await client.query(
                `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
               WHERE datname = current_database() AND application_name = 'laari' AND pid <> pg_backend_pid()`
              )
              await sleep(200)
            }
          }),
        async () => {}
      ),
    90_000
  )

  it("one Idempotency-Key, a first request stuck on a lock and retries during and after it: one charge", async () => {
    const mandate = mandates[1]!
    const key = F.unique("stuck")
    const countCharges = () =>
      Invariants.withClient(databaseUrl, (client) =>
        client.query<{ n: number }>("SELECT count(*)::int AS n FROM mandate_charges WHERE mandate_id = $1", [
          mandate
        ])
      ).then((r) => r.rows[0]!.n)
    const chargesBefore = await countCharges()
    // Another session holds the mandate's row, as an operator's long transaction in psql would.
    const outcomes = await Invariants.withClient(databaseUrl, async (client) => {
      await client.query("BEGIN")
      await client.query("SELECT 1 FROM mandates WHERE id = $1 FOR UPDATE", [mandate])
      const first = chargeOnce(server, merchant.test, mandate, key)
      await sleep(1_000)
      // Sent while the first still runs: it waits for the key, then gets its turn or a 409.
      const second = chargeOnce(server, merchant.test, mandate, key)
      const during = await Promise.all([first, second])
      await sleep(4_000)
      const later = await chargeOnce(server, merchant.test, mandate, key)
      await client.query("COMMIT")
      return [...during, later]
    })
    // Now nothing holds the row: the key runs (or replays) and charges at most once.
    const after = await chargeOnce(server, merchant.test, mandate, key)
    const replay = await chargeOnce(server, merchant.test, mandate, key)
    console.log(`stuck first request: ${JSON.stringify([...outcomes, after, replay].map((o) => o.status))}`)
    for (const o of outcomes) expect([409, 503]).toContain(o.status)
    expect(after.status).toBe(201)
    expect(replay.status).toBe(201)
    expect((await countCharges()) - chargesBefore).toBe(1)
    await expectInvariants(databaseUrl)
  }, 60_000)

  it("fifty concurrent duplicates of one key: exactly one execution, the rest replay it or are told it is in flight", async () => {
    const mandate = mandates[2]!
    const key = F.unique("dup")
    const results = await Promise.all(
      Array.from({ length: 50 }, () =>
        fetch(`${server.baseUrl}/mandates/${mandate}/charges`, {
          method: "POST",
          signal: AbortSignal.timeout(Hang),
          headers: {
            authorization: `Bearer ${merchant.test}`,
            "content-type": "application/json",
            "idempotency-key": key
          },
          body: JSON.stringify({ amount: 1_000 })
        }).then(async (r) => ({
          status: r.status,
          replay: r.headers.get("idempotent-replay"),
          body: (await r.json()) as { id: string }
        }))
      )
    )
    expect(results.every((r) => r.status === 201 || r.status === 409)).toBe(true)
    const executed = results.filter((r) => r.status === 201 && r.replay !== "true")
    expect(executed).toHaveLength(1)
    expect(new Set(results.filter((r) => r.status === 201).map((r) => r.body.id)).size).toBe(1)
    const charges = await Invariants.withClient(databaseUrl, (client) =>
      client.query("SELECT count(*)::int AS n FROM mandate_charges WHERE id = $1", [executed[0]!.body.id])
    )
    expect(charges.rows[0].n).toBe(1)
    await expectInvariants(databaseUrl)
  }, 60_000)
})
