/**
 * Losing the database primary, as figures: a pg_auto_failover formation (a monitor and
 * three PostgreSQL nodes with `number_sync_standbys` 1, or two with 0: `dataNodes`) and two laari hosts
 * behind HAProxy (`deploy/haproxy.cfg`), built by the failover suite's own `Formation` and `LaariHosts`,
 * under a steady charge load (`FaultLoad.ts`):
 *
 * - (a) `kill -9` of the primary's postmaster, `kills` times: seconds from the kill to the formation's
 *   new primary and to the first 201 of a request sent after the kill, and every answer after the kill
 *   by status (503s expected, never a 500);
 * - (b) `pg_autoctl perform switchover`, `switchovers` times: the same figures;
 * - after each, every charge a 201 acknowledged is looked up on the new primary (none may be lost), and
 *   the formation is back to a primary and synchronous secondaries before the next;
 * - (c), measured first, on the formation as it starts: charge throughput (`Load.closedLoop` with the
 *   fault load's charges, 32 in flight) through the formation with synchronous replication against the
 *   same two hosts' configuration on a single PostgreSQL (a database the part creates on the admin URL's
 *   server and drops), alternated `rounds` times in the same run; the ratio.
 *
 * Everything it starts (keepers, postmasters, hosts, HAProxy) is stopped and every data directory
 * removed, also when a step fails. Without pg_auto_failover or HAProxy it says so and returns nothing;
 * under CI=true it fails.
 */
import pg from "pg"
import { ensureBuilt, server } from "../../scripts/ensure-built.mjs"
import * as Formation from "../../packages/server/test/support/Formation.js"
import * as LaariHosts from "../../packages/server/test/support/LaariHosts.js"
import * as FaultLoad from "./FaultLoad.js"
import * as Load from "./Load.js"
import * as Workload from "./Workload.js"

export interface Options {
  /** An admin URL of the single PostgreSQL to compare with. */
  readonly admin: string
  /** The single database's name (created, then dropped). */
  readonly database: string
  /** laari processes per host (`LAARI_PROCESSES`). */
  readonly processes: number
  readonly merchants: number
  readonly mandates: number
  /** How many times the primary is killed (the figures are their medians). */
  readonly kills: number
  /** How many `pg_autoctl perform switchover`s follow the kills. */
  readonly switchovers: number
  /** PostgreSQL nodes of the formation: 3 (`number_sync_standbys` 1) or 2 (0; see `Formation.ts`). */
  readonly dataNodes: 2 | 3
  /** Seconds of load before each fault and after its first 201. */
  readonly calm: number
  /** Clients of the load during the faults. */
  readonly faultConcurrency: number
  /** Seconds of each throughput run, and how many times formation and single database alternate. */
  readonly seconds: number
  readonly rounds: number
  readonly log: (line: string) => void
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const secondsSince = (t0: number, t: number) => Number(((t - t0) / 1_000).toFixed(2))
const median = (xs: ReadonlyArray<number>) => {
  const s = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(s.length / 2)
  return s.length % 2 === 1 ? s[mid]! : Number(((s[mid - 1]! + s[mid]!) / 2).toFixed(2))
}

/** Whether the part can run here; loud when not, and an error under CI=true. */
export const available = (log: (line: string) => void) => {
  const tools = Formation.installed()
  if (tools.ok) return true
  const why = `${tools.missing.join(" and ")} missing (scripts/install-ha.sh installs them)`
  if (process.env.CI === "true") throw new Error(`failover: ${why}; CI measures the failover part`)
  log(`SKIPPING the failover part: ${why}`)
  console.warn(`[bench] SKIPPING the failover part: ${why}`)
  return false
}

/** The single database's URL with `host:port` replaced, for a host that reaches it through a proxy. */
const through = (url: string, database: string, port: number) => {
  const u = new URL(url)
  u.hostname = "127.0.0.1"
  u.port = String(port)
  u.pathname = `/${database}`
  u.searchParams.set("sslmode", "disable")
  return u.toString()
}

const admin = async <A>(url: string, f: (c: pg.Client) => Promise<A>) => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await f(client)
  } finally {
    await client.end()
  }
}

/** Starts the two hosts behind HAProxy with the configuration every host set of the part shares. */
const hostsOn = (
  options: Options,
  database: ReadonlyArray<{ readonly host: string; readonly port: number }>,
  url: (ports: ReadonlyArray<number>) => string
) =>
  LaariHosts.start({
    count: 2,
    database,
    url,
    env: { LAARI_OPS_TOKEN: Workload.OpsToken, LAARI_PROCESSES: String(options.processes) }
  })

export const run = async (options: Options) => {
  const { log } = options
  ensureBuilt(server)
  let formation: Formation.Formation | undefined
  let hosts: LaariHosts.Hosts | undefined
  let single: LaariHosts.Hosts | undefined
  let created = false
  try {
    log(`failover: starting the formation (monitor, ${options.dataNodes} synchronous nodes)`)
    const startedAt = performance.now()
    // A loaded machine clones a standby in minutes.
    formation = await Formation.start({ dataNodes: options.dataNodes, timeoutMs: 300_000 })
    const f = formation
    const synchronous = await f.waitSynchronous(60_000)
    if (!Formation.allStandbys(synchronous, options.dataNodes))
      throw new Error(`failover: commits do not wait for a standby (${synchronous})`)
    const formationStartSeconds = secondsSince(startedAt, performance.now())
    log(`failover: formation up in ${formationStartSeconds} s, synchronous_standby_names '${synchronous}'`)
    const settings = await f.settings()
    hosts = await hostsOn(
      options,
      f.nodes.map((n) => ({ host: "127.0.0.1", port: n.port })),
      (ports) => LaariHosts.formationUrl(f.uri, f.nodes, ports)
    )
    const h = hosts
    const seeding = Load.client(h.baseUrl)
    const targets = await Workload.seed(seeding, options.merchants, options.mandates)
    seeding.close()

    log("failover: charge throughput through the formation against a single PostgreSQL")
    await admin(options.admin, async (db) => {
      await db.query(`DROP DATABASE IF EXISTS ${options.database} WITH (FORCE)`)
      await db.query(`CREATE DATABASE ${options.database}`)
    })
    created = true
    const server = new URL(options.admin)
    single = await hostsOn(options, [{ host: server.hostname, port: Number(server.port || 5432) }], (ports) =>
      through(options.admin, options.database, ports[0]!)
    )
    const seedSingle = Load.client(single.baseUrl)
    const singleTargets = await Workload.seed(seedSingle, options.merchants, options.mandates)
    seedSingle.close()
    const formationRuns: Array<Load.Run & { readonly lostAnswers: number }> = []
    const singleRuns: Array<Load.Run & { readonly lostAnswers: number }> = []
    // The fault load's charges (a lost answer sent again with its key, counted in `lostAnswers`), 32 in flight.
    const measure = async (base: string, to: ReadonlyArray<Workload.Target>, warm: boolean) => {
      const client = Load.client(base)
      const log: FaultLoad.Log = { answers: [], charges: [] }
      const shot = FaultLoad.shot(client, to, log)
      if (warm) await Load.closedLoop({ concurrency: 32, seconds: Math.min(5, options.seconds / 4), shot })
      log.answers.length = 0
      const result = await Load.closedLoop({ concurrency: 32, seconds: options.seconds, shot })
      client.close()
      return { ...result, lostAnswers: FaultLoad.lostAnswers(log) }
    }
    // Alternated, so that a change in the machine's load weighs on both alike.
    for (let i = 0; i < options.rounds; i++) {
      formationRuns.push(await measure(h.baseUrl, targets, i === 0))
      singleRuns.push(await measure(single.baseUrl, singleTargets, i === 0))
    }
    const mean = (runs: ReadonlyArray<Load.Run>, pick: (r: Load.Run) => number) =>
      Number((runs.reduce((a, r) => a + pick(r), 0) / runs.length).toFixed(1))
    const summary = (runs: ReadonlyArray<Load.Run & { readonly lostAnswers: number }>) => ({
      perSecond: mean(runs, (r) => r.perSecond),
      p50Ms: mean(runs, (r) => r.latencyMs.p50),
      p99Ms: mean(runs, (r) => r.latencyMs.p99),
      lostAnswers: runs.reduce((a, r) => a + r.lostAnswers, 0)
    })
    const throughput = {
      formation: summary(formationRuns),
      single: summary(singleRuns),
      synchronousOverSingle: Number(
        (mean(formationRuns, (r) => r.perSecond) / mean(singleRuns, (r) => r.perSecond)).toFixed(3)
      ),
      runs: { formation: formationRuns, single: singleRuns }
    }
    // The single database's hosts are not needed for the faults: their work would only slow them.
    await single.stop()
    single = undefined
    /** Load for `calm` s, the fault, load until the first 201 after it and `calm` s more; the checks. */
    const round = async (fault: string, act: () => Promise<void>): Promise<Record<string, unknown>> => {
      const before = await f.waitForPrimary()
      const load = FaultLoad.start(h.baseUrl, targets, options.faultConcurrency)
      await sleep(options.calm * 1_000)
      const faultAt = performance.now()
      const faultWallClock = Date.now()
      const newPrimary = f.waitForFailover(before.name, 180_000).then((node) => ({
        node,
        at: performance.now()
      }))
      await act()
      const promoted = await newPrimary
      const first = await load.firstSuccessAfter(faultAt, 120_000)
      await sleep(options.calm * 1_000)
      const answers = (await load.stop()).answers
      const after = answers.filter((a) => a.sent >= faultAt)
      const statuses = FaultLoad.byStatus(after)
      const successes = after.filter((a) => a.status === 201).map((a) => a.at)
      const longestGap = Math.max(0, ...successes.map((t, i) => t - (i === 0 ? faultAt : successes[i - 1]!)))
      // Every acknowledged charge, looked up on the primary now (not through any proxy).
      const charges = load.log.charges
      const found = await admin(f.nodeUrl((await f.waitForPrimary()).port), async (db) =>
        Number(
          (
            await db.query<{ n: number }>(
              "SELECT count(*)::int AS n FROM mandate_charges WHERE id::text = ANY($1)",
              [charges]
            )
          ).rows[0]!.n
        )
      )
      const figure = {
        fault,
        events: await f.events(faultWallClock - 1_000),
        from: before.name,
        to: promoted.node.name,
        toNewPrimarySeconds: secondsSince(faultAt, promoted.at),
        recovered: first !== undefined,
        toFirst201Seconds: first === undefined ? null : secondsSince(faultAt, first.at),
        longestGapWithout201Seconds: secondsSince(0, longestGap),
        requests: answers.length,
        afterTheFault: statuses,
        status503: statuses["503"] ?? 0,
        status500: FaultLoad.byStatus(answers)["500"] ?? 0,
        acknowledged: charges.length,
        found,
        lostCharges: charges.length - found,
        noChargeLost: found === charges.length
      }
      log(`failover ${fault}: ${JSON.stringify(figure)}`)
      // Back to a primary and synchronous secondaries, and both hosts ready, before anything else.
      await f.waitForSteady(240_000)
      const names = await f.waitSynchronous(60_000)
      if (!Formation.allStandbys(names, options.dataNodes))
        throw new Error(`failover: not synchronous again after ${fault} (${names})`)
      await h.waitAllUp(90_000)
      return figure
    }

    const kills: Array<Record<string, unknown>> = []
    for (let i = 0; i < options.kills; i++)
      kills.push(
        await round(`kill -9 of the primary's postmaster (${i + 1} of ${options.kills})`, async () => {
          await f.killPrimaryPostmaster()
        })
      )
    const switchovers: Array<Record<string, unknown>> = []
    for (let i = 0; i < options.switchovers; i++)
      switchovers.push(
        await round(`pg_autoctl perform switchover (${i + 1} of ${options.switchovers})`, () =>
          f.switchover()
        )
      )

    const figure = (key: string) => kills.map((k) => k[key] as number)
    return {
      hosts: 2,
      dataNodes: options.dataNodes,
      formationStartSeconds,
      processesPerHost: options.processes,
      faultConcurrency: options.faultConcurrency,
      settings,
      synchronousStandbyNames: synchronous,
      killMedian: {
        toNewPrimarySeconds: median(figure("toNewPrimarySeconds")),
        toFirst201Seconds: median(figure("toFirst201Seconds").map((x) => x ?? Number.POSITIVE_INFINITY)),
        status503: median(figure("status503"))
      },
      kills,
      switchovers,
      switchoverMedian: {
        toFirst201Seconds: median(
          switchovers.map((s) => (s.toFirst201Seconds as number | null) ?? Number.POSITIVE_INFINITY)
        ),
        lostCharges: switchovers.reduce((a, s) => a + (s.lostCharges as number), 0),
        acknowledged: switchovers.reduce((a, s) => a + (s.acknowledged as number), 0)
      },
      throughput
    }
  } finally {
    await single?.stop().catch((e) => log(`failover: stopping the single database's hosts: ${e}`))
    await hosts?.stop().catch((e) => log(`failover: stopping the formation's hosts: ${e}`))
    await formation?.stop().catch((e) => log(`failover: stopping the formation: ${e}`))
    if (created)
      await admin(options.admin, (db) =>
        db.query(`DROP DATABASE IF EXISTS ${options.database} WITH (FORCE)`)
      ).catch((e) => log(`failover: dropping ${options.database}: ${e}`))
  }
}
