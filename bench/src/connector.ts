/**
 * Mandate charges through the wallet connector against the reference core (examples/wallet-core, a
 * process of its own on its own database), beside charges on the built-in ledger, in one run on the same
 * machine and PostgreSQL:
 *
 * - rate: `concurrency` charges in flight over distinct mandates (so no two wait on one mandate's lock),
 *   the built-in ledger and the connector in alternating rounds of `seconds`, medians of the rounds, the
 *   ratio connector/built-in, and the CPU a charge costs each process (laari, the core, their databases);
 * - latency: both at half the connector's median rate (open loop), alternating rounds, p50/p99;
 * - outages, on a third laari whose core is behind a proxy: charges are driven until `outageTarget`
 *   movements are pending or the outage's budget runs out, then the core is back and the time until no
 *   movement is pending is measured. First the core unreachable (connections refused): the circuit
 *   breaker then refuses new payments at once, committing nothing, and the resolver's failing looks keep
 *   it open, so few movements get committed; then every other new transfer lost on the way (and lost
 *   again on each resend), which the breaker does not see as the core gone, to reach the target with
 *   real charges.
 *
 * Every movement the connector's laaris posted must be one transfer posted in the core (`exactlyOnce`),
 * and none may stay pending (`recovered`).
 */
import { randomUUID } from "node:crypto"
import os from "node:os"
import pg from "pg"
import * as Load from "./Load.js"
import * as Spawn from "./Spawn.js"
import * as Workload from "./Workload.js"
import {
  proxy,
  median,
  round2,
  medians,
  sleep,
  tree,
  backendsOf,
  cpuNow,
  cpuPerCharge,
  startCore,
  seedConnector,
  connectorEnv,
  committed,
  count
} from "./connectorParts.js"

export const run = async (options: {
  /** `fresh(part)`: a new empty database, its URL (`Databases.make`). */
  readonly fresh: (part: string) => Promise<string>
  readonly processes: number
  readonly seconds: number
  readonly rounds: number
  readonly halfRounds: number
  readonly concurrency: number
  readonly merchants: number
  readonly mandates: number
  readonly outageTarget: number
  readonly outageBudgetS: number
  readonly unreachableBudgetS: number
  readonly outageConcurrency: number
  readonly recoveryBoundS: number
  readonly log: (line: string) => void
}) => {
  const { processes, seconds, concurrency, log } = options
  // A shared machine: how busy it was, to read the figures by.
  const loadBefore = os.loadavg().map(round2)
  const core = await startCore(await options.fresh("connector_core"))
  await core.openWallet("laari-fees", 0)
  const coreDb = new pg.Client({ connectionString: core.databaseUrl })
  const dbs: Array<pg.Client> = [coreDb]
  const servers: Array<{ stop: () => Promise<void> }> = [core]
  // A call's bound: a refused connection fails at once; an answer from a loaded core within it.
  const timeoutMs = 1_000
  try {
    await coreDb.connect()
    // -------------------------------------------------------------------------------------------------
    // Rate and latency: built-in ledger and connector side by side, rounds alternating.
    // -------------------------------------------------------------------------------------------------
    const builtInUrl = await options.fresh("connector_builtin")
    const builtIn = await Spawn.laari({ DATABASE_URL: builtInUrl }, { processes })
    servers.push(builtIn)
    const viaUrl = await options.fresh("connector_laari")
    const via = await Spawn.laari(
      { DATABASE_URL: viaUrl, ...connectorEnv(core.base, core, timeoutMs) },
      { processes }
    )
    servers.push(via)
    const viaDb = new pg.Client({ connectionString: viaUrl })
    await viaDb.connect()
    dbs.push(viaDb)

    log(`connector: seeding ${options.merchants} x ${options.mandates} mandates on each`)
    const seedClient = Load.client(builtIn.base)
    const builtInTargets = await Workload.seed(seedClient, options.merchants, options.mandates)
    seedClient.close()
    const viaTargets = await seedConnector(via.base, viaDb, core, options.merchants, options.mandates)

    const builtInClient = Load.client(builtIn.base)
    const viaClient = Load.client(via.base)
    const shootBuiltIn = Workload.charge(builtInClient, builtInTargets)
    const shootVia = Workload.charge(viaClient, viaTargets)
    const warm = Math.min(5, Math.max(1, seconds / 4))
    await Load.closedLoop({ concurrency, seconds: warm, shot: shootBuiltIn })
    await Load.closedLoop({ concurrency, seconds: warm, shot: shootVia })

    const builtInRounds: Array<Load.Run> = []
    const viaRounds: Array<Load.Run> = []
    // Where a charge's CPU goes, each round: laari, its database, the core and its database, this process.
    const builtInParts = { laari: tree(builtIn.child.pid!), laariDatabase: backendsOf(builtInUrl) }
    const viaParts = {
      laari: tree(via.child.pid!),
      laariDatabase: backendsOf(viaUrl),
      core: tree(core.child.pid!),
      coreDatabase: backendsOf(core.databaseUrl)
    }
    const builtInCpu: Array<Record<string, number>> = []
    const builtInCommits: Array<Record<string, number>> = []
    const viaCommits: Array<Record<string, number>> = []
    const viaCpu: Array<Record<string, number>> = []
    for (let r = 0; r < options.rounds; r++) {
      // Alternating which goes first, so neither always follows the other's leftovers.
      const pair = r % 2 === 0 ? (["b", "v"] as const) : (["v", "b"] as const)
      for (const which of pair) {
        const parts = which === "b" ? builtInParts : viaParts
        const databases: Record<string, string> =
          which === "b" ? { laari: builtInUrl } : { laari: viaUrl, core: core.databaseUrl }
        const before = cpuNow(parts)
        const committedBefore = await committed(coreDb, databases)
        const x = await Load.closedLoop({
          concurrency,
          seconds,
          shot: which === "b" ? shootBuiltIn : shootVia
        })
        ;(which === "b" ? builtInRounds : viaRounds).push(x)
        ;(which === "b" ? builtInCpu : viaCpu).push(cpuPerCharge(before, cpuNow(parts), x))
        // PostgreSQL counts a backend's commits when it reports its statistics (within a second): a wait.
        await sleep(1_100)
        const after = await committed(coreDb, databases)
        ;(which === "b" ? builtInCommits : viaCommits).push(
          Object.fromEntries(
            Object.keys(after).map((k) => [
              k,
              round2((after[k]! - committedBefore[k]!) / Math.max(1, x.requests - x.failures))
            ])
          )
        )
      }
      log(
        `connector: round ${r + 1}/${options.rounds}: built-in ${builtInRounds.at(-1)!.perSecond}/s, connector ${viaRounds.at(-1)!.perSecond}/s`
      )
    }
    const builtInRate = median(builtInRounds.map((x) => x.perSecond))
    const viaRate = median(viaRounds.map((x) => x.perSecond))
    const halfRate = Math.max(1, viaRate / 2)
    log(`connector: half the connector's rate, ${halfRate.toFixed(1)}/s, open loop, both`)
    const builtInHalf: Array<Load.Run> = []
    const viaHalf: Array<Load.Run> = []
    for (let r = 0; r < options.halfRounds; r++) {
      const pair = r % 2 === 0 ? (["b", "v"] as const) : (["v", "b"] as const)
      for (const which of pair)
        (which === "b" ? builtInHalf : viaHalf).push(
          await Load.openLoop({ rate: halfRate, seconds, shot: which === "b" ? shootBuiltIn : shootVia })
        )
    }
    builtInClient.close()
    viaClient.close()
    const pendingAfterRate = await count(
      viaDb,
      "SELECT count(*) AS n FROM wallet_movements WHERE status = 'pending'"
    )
    await builtIn.stop()
    await via.stop()

    // -------------------------------------------------------------------------------------------------
    // Outages: pending movements made by real charges while the core cannot take them, then the core
    // back and the time until none is pending. First unreachable (connections refused), then with its
    // transfers lost on the way and its reads answered.
    // -------------------------------------------------------------------------------------------------
    const front = await proxy(core.port)
    servers.push({ stop: front.close })
    const outUrl = await options.fresh("connector_outage")
    const out = await Spawn.laari(
      { DATABASE_URL: outUrl, ...connectorEnv(front.url, core, timeoutMs) },
      { processes }
    )
    servers.push(out)
    const outDb = new pg.Client({ connectionString: outUrl })
    await outDb.connect()
    dbs.push(outDb)
    // Enough mandates that the outage's charges rarely meet on one mandate's lock.
    const outTargets = await seedConnector(
      out.base,
      outDb,
      core,
      options.merchants,
      Math.max(options.mandates, Math.ceil((4 * options.outageConcurrency) / options.merchants))
    )
    const outClient = Load.client(out.base)
    // Warm: every payer's wallet answered once (laari keeps it to decide caps while the core is away).
    await Load.closedLoop({
      concurrency: Math.min(concurrency, outTargets.length),
      seconds: warm,
      shot: Workload.charge(outClient, outTargets)
    })
    const pendingCount = () =>
      count(outDb, "SELECT count(*) AS n FROM wallet_movements WHERE status = 'pending'")

    /** Charges while the core is away (`away`), until `target` pending or `budgetS`; then back, and timed. */
    const outage = async (
      name: string,
      away: () => Promise<void> | void,
      target: number,
      budgetS: number
    ) => {
      const since = new Date()
      await away()
      log(
        `connector: ${name}; driving charges (${options.outageConcurrency} in flight) to ${target} pending, at most ${budgetS} s`
      )
      const answers: Record<string, number> = {}
      let done = false
      let next = 0
      const drivenFrom = performance.now()
      const driver = async () => {
        while (!done) {
          const t = outTargets[next++ % outTargets.length]!
          const res = await outClient
            .request(
              "POST",
              `/mandates/${t.mandateId}/charges`,
              { authorization: `Bearer ${t.key}`, "idempotency-key": randomUUID() },
              { amount: 1000 }
            )
            .catch((e: { code?: string }) => ({
              status: 0,
              body: JSON.stringify({ code: e.code ?? "no answer" })
            }))
          let code = ""
          try {
            code = JSON.parse(res.body).code ?? ""
          } catch {}
          const label = `${res.status}${code === "" ? "" : ` ${code}`}`
          answers[label] = (answers[label] ?? 0) + 1
        }
      }
      const timeline: Array<{ s: number; pending: number }> = []
      const watcher = async () => {
        while (!done) {
          await sleep(1_000)
          const pending = await pendingCount()
          const s = (performance.now() - drivenFrom) / 1000
          timeline.push({ s: Math.round(s), pending })
          if (timeline.length % 10 === 0) log(`connector: ${name}, ${Math.round(s)} s: ${pending} pending`)
          if (pending >= target || s >= budgetS) done = true
        }
      }
      await Promise.all([watcher(), ...Array.from({ length: options.outageConcurrency }, driver)])
      const drivenSeconds = round2((performance.now() - drivenFrom) / 1000)
      const pendingReached = await pendingCount()
      const whenBack = await readyz(out.base)
      log(`connector: ${pendingReached} pending after ${drivenSeconds} s; the core back`)

      await front.forward()
      const backAt = performance.now()
      let left = pendingReached
      const drain: Array<{ s: number; pending: number }> = []
      while (left > 0 && performance.now() - backAt < options.recoveryBoundS * 1000) {
        await sleep(250)
        left = await pendingCount()
        drain.push({ s: round2((performance.now() - backAt) / 1000), pending: left })
      }
      const recoverySeconds = round2((performance.now() - backAt) / 1000)
      log(`connector: ${name}: ${left} pending ${recoverySeconds} s after the core came back`)
      // How the outage's movements ended: each answered at once, or settled by the resolver.
      const settled = Object.fromEntries(
        (
          await outDb.query<{ status: string; settled_by: string | null; n: string }>(
            "SELECT status, settled_by, count(*) AS n FROM wallet_movements WHERE created_at >= $1 GROUP BY 1, 2 ORDER BY 1, 2",
            [since]
          )
        ).rows.map((r) => [`${r.status} by ${r.settled_by ?? "-"}`, Number(r.n)])
      )
      return {
        target,
        concurrency: options.outageConcurrency,
        drivenSeconds,
        pendingReached,
        answers,
        whenBack,
        recoverySeconds,
        recovered: left === 0,
        // Movements settled a second, on average from the core's return until none was pending.
        drainedPerSecond: round2((pendingReached - left) / recoverySeconds),
        settled,
        // Every 5th second while driving, each second while draining: enough to see the shape.
        timeline: timeline.filter((x) => x.s % 5 === 0),
        drain: drain.filter((_, i) => i % 4 === 3 || i === drain.length - 1)
      }
    }
    const unreachable = await outage(
      "core unreachable (connections refused)",
      front.refuse,
      options.outageTarget,
      options.unreachableBudgetS
    )
    const halfLost = await outage(
      "every other new transfer lost on the way to the core",
      front.lossy,
      options.outageTarget,
      options.outageBudgetS
    )
    outClient.close()
    await out.stop()

    // Exactly once: every movement posted in laari is one posted transfer in the core, and nothing else is.
    const postedInLaari =
      (await count(viaDb, "SELECT count(*) AS n FROM wallet_movements WHERE status = 'posted'")) +
      (await count(outDb, "SELECT count(*) AS n FROM wallet_movements WHERE status = 'posted'"))
    const postedInCore = await count(coreDb, "SELECT count(*) AS n FROM transfers WHERE status = 'posted'")
    const rateFigures = {
      builtIn: {
        medianPerSecond: builtInRate,
        rounds: builtInRounds,
        cpuMsPerCharge: medians(builtInCpu),
        commitsPerCharge: medians(builtInCommits)
      },
      connector: {
        medianPerSecond: viaRate,
        rounds: viaRounds,
        cpuMsPerCharge: medians(viaCpu),
        commitsPerCharge: medians(viaCommits)
      },
      connectorOverBuiltIn: Number((viaRate / builtInRate).toFixed(3))
    }
    const halfFigures = {
      perSecondOffered: round2(halfRate),
      builtIn: {
        p50MedianMs: median(builtInHalf.map((x) => x.latencyMs.p50)),
        p99MedianMs: median(builtInHalf.map((x) => x.latencyMs.p99)),
        rounds: builtInHalf
      },
      connector: {
        p50MedianMs: median(viaHalf.map((x) => x.latencyMs.p50)),
        p99MedianMs: median(viaHalf.map((x) => x.latencyMs.p99)),
        rounds: viaHalf
      }
    }
    return {
      processes,
      concurrency,
      seconds,
      loadAverage: { before: loadBefore, after: os.loadavg().map(round2) },
      rate: rateFigures,
      half: halfFigures,
      outage: { unreachable, halfLost },
      pendingAfterRate,
      postedInLaari,
      postedInCore,
      exactlyOnce: postedInLaari === postedInCore && pendingAfterRate === 0
    }
  } finally {
    for (const db of dbs) await db.end().catch(() => undefined)
    for (const s of servers.reverse()) await s.stop().catch(() => undefined)
  }
}

/** What `/readyz` says of the connector (the breaker, the pending count). */
const readyz = async (base: string) => {
  const res = await fetch(`${base}/readyz`).catch(() => undefined)
  if (res === undefined) return undefined
  const body = (await res.json().catch(() => ({}))) as { wallet_connector?: unknown }
  return body.wallet_connector
}

/** The suite's summary rows of this part's results. */
export const summary = (
  w: any,
  row: (what: string, figure: string, against: string, goal: string) => void
) => {
  row(
    `charges through the wallet connector vs the built-in ledger, ${w.concurrency} in flight (${w.processes} processes; medians of ${w.rate.connector.rounds.length} rounds)`,
    `${w.rate.connector.medianPerSecond}/s vs ${w.rate.builtIn.medianPerSecond}/s`,
    `${w.rate.connectorOverBuiltIn}x`,
    ">= 0.6x"
  )
  row(
    `connector vs built-in at half the connector's rate (${w.half.perSecondOffered}/s, open loop)`,
    `p50 ${w.half.connector.p50MedianMs} ms, p99 ${w.half.connector.p99MedianMs} ms vs p50 ${w.half.builtIn.p50MedianMs} ms, p99 ${w.half.builtIn.p99MedianMs} ms (medians of ${w.half.connector.rounds.length} rounds)`,
    "",
    "connector p99 <= 50 ms"
  )
  const out = (o: any, what: string) =>
    row(
      `${what} (${o.concurrency} charges in flight, ${o.drivenSeconds} s): movements pending; then the core back: until none is`,
      `${o.pendingReached} of ${o.target} pending; ${o.recoverySeconds} s`,
      `recovered: ${o.recovered}`,
      "10,000 pending; <= 60 s"
    )
  out(w.outage.unreachable, "core unreachable, connections refused")
  out(
    w.outage.halfLost,
    "every other new transfer lost on the way to the core (a lost one lost again on resend)"
  )
  row(
    "connector: movements posted in laari vs transfers posted in the core",
    `${w.postedInLaari} vs ${w.postedInCore}`,
    `exactly once: ${w.exactlyOnce}`,
    "equal"
  )
}
