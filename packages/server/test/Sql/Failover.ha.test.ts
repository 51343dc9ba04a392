/**
 * The failover suite: a pg_auto_failover formation (a monitor and three PostgreSQL nodes with
 * `number_sync_standbys` 1, so the primary never commits alone, `support/Formation.ts`), two laari hosts behind HAProxy (`deploy/haproxy.cfg`,
 * `support/LaariHosts.ts`), a steady mix of charges, QR payments and checkout payments through HAProxy
 * (`support/FailoverTraffic.ts`), renewals on the manual clock and webhooks to a local receiver. Faults:
 * (a) `kill -9` of the primary's postmaster, (b) `pg_autoctl perform switchover`, (c) `kill -9` of a whole
 * laari host, (d) a laari host cut off from the database for 10 s. After each: every acknowledged
 * payment is in the database, none twice, the ledger invariants hold, every event is delivered, every
 * renewal ran exactly once, no 500.
 *
 * Runs when pg_auto_failover and HAProxy are installed (`scripts/install-ha.sh`); skipped loudly
 * otherwise, and failing under CI=true. The hosts take the formation's multi-host URL (`pg_autoctl show
 * uri`), each host through TCP proxies of its own; `firstSuccessAfterFaultSeconds` in the figures is the
 * time from the fault to the first 201 of a request sent after it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Traffic from "../support/FailoverTraffic.js"
import * as F from "../support/Fixtures.js"
import * as Formation from "../support/Formation.js"
import * as Invariants from "../support/Invariants.js"
import * as LaariHosts from "../support/LaariHosts.js"
import * as Receiver from "../support/Receiver.js"
import * as TestServer from "../support/TestServer.js"

const tools = Formation.installed()
if (!tools.ok && process.env.CI === "true")
  throw new Error(
    `${tools.missing.join(" and ")} missing: CI runs the failover suite (scripts/install-ha.sh)`
  )
if (!tools.ok)
  console.warn(
    `SKIPPING the failover suite: ${tools.missing.join(" and ")} not installed (scripts/install-ha.sh installs them)`
  )

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const Day = 86_400_000
/** `/ops/clock/advance` takes whole seconds and a numeric offset, not `Z`. */
const iso = (ms: number) =>
  new Date(Math.ceil(ms / 1_000) * 1_000).toISOString().replace(/\.\d{3}Z$/, "+00:00")

/** Three nodes: with two, a switchover can leave the primary committing alone (`Formation.ts`). */
const DataNodes = 3

describe.skipIf(!tools.ok)("failover: pg_auto_failover, two laari hosts behind HAProxy", () => {
  let formation: Formation.Formation
  let hosts: LaariHosts.Hosts
  let api: ReturnType<typeof TestServer.client>
  let receiver: Receiver.Receiver
  let renewals: { readonly merchant: F.Merchant; readonly subscriptions: ReadonlyArray<string> }
  let clockAt: number
  let cycles = 1
  const figures: Array<Record<string, unknown>> = []

  /** Synchronous replication is back, every standby named, once the old primary has rejoined as one. */
  const expectSynchronous = async () => {
    const names = await formation.waitSynchronous(60_000)
    expect(Formation.allStandbys(names, DataNodes), names).toBe(true)
  }

  /** A URL to whichever node is primary now, for the checks (not through any proxy). */
  const primaryUrl = async () => formation.nodeUrl((await formation.waitForPrimary()).port)

  beforeAll(async () => {
    formation = await Formation.start({ dataNodes: DataNodes, timeoutMs: 240_000 })
    // A COMMIT (and a 201) waits for the secondary: what makes "every 201 is on the new primary" hold.
    await expectSynchronous()
    const nodes = formation.nodes.map((n) => ({ host: "127.0.0.1", port: n.port }))
    hosts = await LaariHosts.start({
      count: 2,
      database: nodes,
      url: (ports) => LaariHosts.formationUrl(formation.uri, formation.nodes, ports)
    })
    api = TestServer.client(hosts.baseUrl)
    receiver = await Receiver.start()
    // Subscriptions to renew after every fault, on both hosts' clocks at once.
    const merchant = await F.merchant(api as TestServer.TestServer)
    const subscriptions = await F.paidSubscriptions(api as TestServer.TestServer, merchant.test, 6, "ha-sub")
    renewals = { merchant, subscriptions }
    // Each host keeps its own manual clock: the later of the two, so that `to` is in neither's past.
    const clocks = await Promise.all(
      hosts.hosts.map((h) => TestServer.client(h.baseUrl).ops("GET", "/ops/clock"))
    )
    clockAt = Math.max(...clocks.map((c) => Date.parse(c.body.now)))
    // Three nodes, each standby cloned in turn: minutes on a loaded machine.
  }, 600_000)

  afterAll(async () => {
    console.log(`failover figures:\n${figures.map((f) => JSON.stringify(f)).join("\n")}`)
    await receiver?.close()
    await hosts?.stop()
    await formation?.stop()
  }, 60_000)

  /**
   * Traffic through HAProxy for 3 s, then `fault` (resolves when the fault is over), traffic for 3 s
   * more, then the checks. `recovery` measures from the moment `fault` starts to the first 201 of a
   * request sent after it.
   */
  const round = async (name: string, fault: () => Promise<void>) => {
    const merchant = await Traffic.setup(api, hosts.baseUrl, receiver.url(`/${name}`))
    const log = Traffic.emptyLog()
    const traffic = Traffic.run(hosts.baseUrl, merchant, log)
    await sleep(3_000)
    const faultAt = performance.now()
    await fault()
    await sleep(3_000)
    await traffic.stop()
    await hosts.waitAllUp(90_000)
    const firstAfter = log.answers
      .filter((a) => a.sent >= faultAt && a.status === 201)
      .sort((x, y) => x.at - y.at)[0]
    const during = log.answers.filter((a) => a.sent >= faultAt - 1_000)
    // The longest time without any success from the fault on: how long the service was down for clients.
    const successes = log.answers
      .filter((a) => a.at >= faultAt && (a.status === 201 || a.status === 200))
      .map((a) => a.at)
      .sort((x, y) => x - y)
    const longestGap = Math.max(0, ...successes.map((t, i) => t - (i === 0 ? faultAt : successes[i - 1]!)))
    const url = await primaryUrl()

    // Renewals: both hosts' clocks to the next cycle at once; each subscription is paid once more.
    clockAt += 32 * Day
    cycles += 1
    const to = iso(clockAt)
    const advanced = await Promise.all(
      hosts.hosts.map((h) => TestServer.client(h.baseUrl).ops("POST", "/ops/clock/advance", { to }))
    )
    for (const a of advanced) expect(a.status, a.text).toBe(200)
    const invoices = await Invariants.withClient(url, (db) =>
      db.query<{ id: string; paid: number; other: number }>(
        `SELECT subscription_id::text AS id, count(*) FILTER (WHERE status = 'PAID')::int AS paid,
           count(*) FILTER (WHERE status <> 'PAID')::int AS other
         FROM invoices WHERE subscription_id::text = ANY($1) GROUP BY 1`,
        [renewals.subscriptions]
      )
    )
    expect(invoices.rows.map((r) => [r.paid, r.other])).toEqual(renewals.subscriptions.map(() => [cycles, 0]))

    // Webhooks: every event of the round's merchant reaches the receiver (retries fall due on the clock).
    const eventIds = await Invariants.withClient(url, (db) =>
      db.query<{ id: string }>("SELECT id FROM events WHERE merchant_id = $1", [merchant.id])
    ).then((r) => r.rows.map((e) => e.id))
    const delivered = () => new Set(receiver.received.map((r) => String(r.headers["webhook-id"])))
    const deadline = Date.now() + 60_000
    while (eventIds.some((id) => !delivered().has(id)) && Date.now() < deadline) {
      await sleep(1_000)
      clockAt += 120_000
      const to = iso(clockAt)
      await Promise.all(
        hosts.hosts.map((h) => TestServer.client(h.baseUrl).ops("POST", "/ops/clock/advance", { to }))
      )
    }
    const missing = eventIds.filter((id) => !delivered().has(id))

    const counts = await Traffic.reconcile(url, merchant, log)
    const figure = {
      fault: name,
      ...counts,
      abandoned: log.abandoned.length,
      events: eventIds.length,
      undelivered: missing.length,
      firstSuccessAfterFaultSeconds: firstAfter
        ? Number(((firstAfter.at - faultAt) / 1_000).toFixed(1))
        : null,
      longestGapWithoutSuccessSeconds: Number((longestGap / 1_000).toFixed(1)),
      status503DuringSwitch: during.filter((a) => a.status === 503).length,
      status502DuringSwitch: during.filter((a) => a.status === 502).length,
      status503WithoutRetryAfter: log.answers.filter((a) => a.status === 503 && !a.retryAfter).length
    }
    figures.push(figure)
    console.log(`failover ${name}: ${JSON.stringify(figure)}`)
    expect(counts.acknowledged).toBeGreaterThan(0)
    expect(counts.found).toBe(counts.acknowledged)
    expect(counts.doubled).toBe(0)
    expect(counts.statuses["500"] ?? 0).toBe(0)
    expect(counts.statuses["-1"] ?? 0).toBe(0)
    // Every 503 says when to retry, laari's and HAProxy's own (no host ready) alike.
    expect(figure.status503WithoutRetryAfter).toBe(0)
    expect(missing).toEqual([])
    expect(await Invariants.check(url)).toEqual(Invariants.none)
  }

  it("(c) kill -9 of a whole laari host: the other serves, the killed one comes back", async () => {
    await round("host-killed", async () => {
      await hosts.killHost(0)
      await sleep(3_000)
      await hosts.restartHost(0)
    })
  }, 180_000)

  it("(d) a laari host cut off from the database for 10 s", async () => {
    await round("host-cut-off", async () => {
      await hosts.cut(1)
      await sleep(10_000)
      await hosts.heal(1)
    })
  }, 180_000)

  it("(a) kill -9 of the primary's postmaster", async () => {
    await round("primary-killed", async () => {
      const old = await formation.killPrimaryPostmaster()
      await formation.waitForFailover(old.name, 180_000)
    })
    await formation.waitForSteady(240_000)
    await expectSynchronous()
  }, 420_000)

  it("(b) pg_autoctl perform switchover", async () => {
    await round("switchover", () => formation.switchover())
    await formation.waitForSteady(240_000)
    await expectSynchronous()
  }, 420_000)

  // Figures only: what waiting for the secondary at COMMIT costs. The same hosts and
  // formation, charges from 8 clients for 5 s with synchronous replication, then with the secondary out
  // of the quorum (the primary commits alone, as a single database does), twice. Noisy on a shared
  // machine: the ratio, measured in the same run, is the figure.
  it("figures: charge throughput with synchronous replication against the primary committing alone", async () => {
    const merchant = await Traffic.setup(api, hosts.baseUrl, receiver.url("/throughput"))
    const rate = async () => {
      const log = Traffic.emptyLog()
      const started = performance.now()
      await Promise.all(
        Array.from({ length: 8 }, async (_, w) => {
          for (let n = 0; performance.now() - started < 5_000; n++) {
            const res = await fetch(`${hosts.baseUrl}/mandates/${merchant.mandates[(w + n) % 4]}/charges`, {
              method: "POST",
              signal: AbortSignal.timeout(30_000),
              headers: {
                authorization: `Bearer ${merchant.key}`,
                "content-type": "application/json",
                "idempotency-key": F.unique("rate")
              },
              body: JSON.stringify({ amount: 1_000 })
            })
            await res.arrayBuffer()
            log.answers.push({ status: res.status, sent: 0, at: 0 })
          }
        })
      )
      const ok = log.answers.filter((a) => a.status === 201).length
      expect(log.answers.length - ok).toBe(0)
      return ok / ((performance.now() - started) / 1_000)
    }
    // Alternated twice, so that a change in the machine's load weighs on both alike.
    const synchronous: Array<number> = []
    const alone: Array<number> = []
    try {
      for (let i = 0; i < 2; i++) {
        synchronous.push(await rate())
        await formation.setSynchronous(false)
        alone.push(await rate())
        await formation.setSynchronous(true)
      }
    } finally {
      await formation.setSynchronous(true)
    }
    const mean = (xs: ReadonlyArray<number>) => xs.reduce((a, b) => a + b, 0) / xs.length
    const figure = {
      fault: "none (throughput)",
      synchronousChargesPerSecond: synchronous.map(Math.round),
      primaryAloneChargesPerSecond: alone.map(Math.round),
      ratio: Number((mean(synchronous) / mean(alone)).toFixed(2))
    }
    figures.push(figure)
    console.log(`failover throughput: ${JSON.stringify(figure)}`)
    // Each of the four changes of the quorum waits for the formation to settle: minutes under load.
  }, 480_000)
})
