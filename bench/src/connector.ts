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
import { existsSync, readdirSync, readFileSync } from "node:fs"
import * as Http from "node:http"
import * as Net from "node:net"
import os from "node:os"
import pg from "pg"
import * as Load from "./Load.js"
import * as Spawn from "./Spawn.js"
import * as Workload from "./Workload.js"

/**
 * A proxy in front of the core, in one of three modes:
 * - `forward`: bytes piped both ways (TCP), as if laari called the core itself;
 * - `refuse`: every connection closed and none accepted (the core unreachable: connection refused);
 * - `lossy`: every other new transfer (`POST /transfers` of an id not seen before) cut before it reaches
 *   the core (its connection destroyed: the core never takes it), and every resend of a cut one cut again;
 *   everything else forwarded over HTTP. The circuit breaker opens on 5 calls in a row without an answer,
 *   which this never makes of the charges, so charges keep committing movements the core never took.
 * Leaving `lossy`, the HTTP side answers `Connection: close`, so laari's connections move to the piped
 * side without any call failing on the way.
 */
const proxy = async (target: number) => {
  const sockets = new Set<Net.Socket>()
  let mode: "forward" | "refuse" | "lossy" = "forward"
  const track = (s: Net.Socket) => {
    sockets.add(s)
    s.on("close", () => sockets.delete(s))
    s.on("error", () => s.destroy())
  }
  /** Each transfer id seen while lossy: whether it is cut. */
  const cut = new Map<string, boolean>()
  let fresh = 0
  const agent = new Http.Agent({ keepAlive: true, maxSockets: 64 })
  const filter = Http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const body = Buffer.concat(chunks)
      if (mode === "lossy" && req.method === "POST" && req.url === "/transfers") {
        let id = ""
        try {
          id = String(JSON.parse(body.toString()).id)
        } catch {}
        const lost = cut.get(id) ?? fresh++ % 2 === 0
        cut.set(id, lost)
        if (lost) return req.socket.destroy()
      }
      const up = Http.request(
        { host: "127.0.0.1", port: target, method: req.method, path: req.url, headers: req.headers, agent },
        (answer) => {
          const headers = { ...answer.headers }
          if (mode !== "lossy") headers.connection = "close"
          res.writeHead(answer.statusCode ?? 502, headers)
          answer.pipe(res)
        }
      )
      up.on("error", () => res.destroy())
      up.end(body)
    })
  })
  const server = Net.createServer((client) => {
    track(client)
    if (mode === "lossy") {
      filter.emit("connection", client)
      return
    }
    const upstream = Net.connect(target, "127.0.0.1")
    track(upstream)
    client.pipe(upstream).pipe(client)
    client.on("close", () => upstream.destroy())
    upstream.on("close", () => client.destroy())
  })
  const listen = (port: number) =>
    new Promise<number>((resolve) =>
      server.listen(port, "127.0.0.1", () => resolve((server.address() as Net.AddressInfo).port))
    )
  const port = await listen(0)
  const stop = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy()
      if (!server.listening) return resolve()
      server.close(() => resolve())
    })
  return {
    url: `http://127.0.0.1:${port}`,
    refuse: async () => {
      mode = "refuse"
      await stop()
    },
    /** New connections filtered; the open ones closed so that laari's next calls meet the filter. */
    lossy: () => {
      mode = "lossy"
      for (const s of sockets) s.destroy()
    },
    forward: async () => {
      mode = "forward"
      if (!server.listening) await listen(port)
      filter.closeIdleConnections()
    },
    close: async () => {
      await stop()
      agent.destroy()
      filter.close()
    }
  }
}

const median = (xs: ReadonlyArray<number>) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length === 0
    ? 0
    : s.length % 2 === 1
      ? s[(s.length - 1) / 2]!
      : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}

const round2 = (x: number) => Number(x.toFixed(2))

/** Each key's median over the rounds. */
const medians = (rounds: ReadonlyArray<Record<string, number>>) =>
  Object.fromEntries(Object.keys(rounds[0] ?? {}).map((k) => [k, round2(median(rounds.map((r) => r[k]!)))]))

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** CPU seconds (user + system) of the processes `match` picks, from /proc (Linux; 0 elsewhere). */
const cpuOf = (match: (pid: number, cmdline: string, ppid: number) => boolean): number => {
  let ticks = 0
  for (const entry of existsSync("/proc") ? readdirSync("/proc") : []) {
    const pid = Number(entry)
    if (!Number.isInteger(pid)) continue
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ")
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      if (match(pid, cmdline, Number(fields[1]))) ticks += Number(fields[11]) + Number(fields[12])
    } catch {
      // gone meanwhile
    }
  }
  return ticks / 100
}

/** A process and its children (laari's supervisor and its workers). */
const tree = (root: number) => (pid: number, _: string, ppid: number) => pid === root || ppid === root

/** The PostgreSQL backends of one database. */
const backendsOf = (url: string) => {
  const name = new URL(url).pathname.slice(1)
  return (_: number, cmdline: string) => cmdline.startsWith("postgres: ") && cmdline.includes(` ${name} `)
}

/** CPU seconds of each named set of processes, now; and the load generator's own. */
const cpuNow = (parts: Record<string, (pid: number, cmdline: string, ppid: number) => boolean>) => ({
  ...Object.fromEntries(Object.entries(parts).map(([k, m]) => [k, cpuOf(m)])),
  loadGenerator: (process.cpuUsage().user + process.cpuUsage().system) / 1e6
})

/** CPU milliseconds a successful charge cost each part between two `cpuNow`s. */
const cpuPerCharge = (before: Record<string, number>, after: Record<string, number>, run: Load.Run) => {
  const charges = run.requests - run.failures
  return Object.fromEntries(
    Object.keys(after).map((k) => [k, round2(((after[k]! - before[k]!) * 1000) / Math.max(1, charges))])
  )
}

/** The reference core on `databaseUrl`, its token made here and never printed. */
const startCore = async (databaseUrl: string) => {
  const token = `bench-${randomUUID()}`
  const started = await Spawn.start(
    "examples/wallet-core/src/main.ts",
    { DATABASE_URL: databaseUrl, WALLET_CORE_TOKEN: token, HOST: "127.0.0.1" },
    { nodeArgs: ["--conditions", "@laari/source"] }
  )
  const client = Load.client(started.base)
  let phones = 0
  const openWallet = async (id: string, balance: number) => {
    const phone = `+960${String(3_000_000 + phones++).padStart(7, "0")}`
    const res = await client.request(
      "POST",
      "/admin/wallets",
      { authorization: `Bearer ${token}`, "request-id": randomUUID() },
      { id, phone, balance }
    )
    if (res.status !== 201) throw new Error(`opening wallet ${id} in the core: ${res.status} ${res.body}`)
  }
  return {
    ...started,
    databaseUrl,
    port: Number(new URL(started.base).port),
    token,
    openWallet,
    stop: async () => {
      client.close()
      await started.stop()
    }
  }
}

type Core = Awaited<ReturnType<typeof startCore>>

/** `merchants` merchants with `mandates` test mandates each; each sandbox payer and merchant a wallet in the core. */
const seedConnector = async (
  base: string,
  db: pg.Client,
  core: Core,
  merchants: number,
  mandates: number
) => {
  const client = Load.client(base)
  const targets: Array<Workload.Target> = []
  for (let m = 0; m < merchants; m++) {
    const merchant = await client.json("POST", "/ops/merchants", Workload.OpsToken, {
      name: `Bench ${m}`,
      outlets: [{ name: "Main" }]
    })
    const { key } = await client.json("POST", `/ops/merchants/${merchant.id}/keys`, Workload.OpsToken, {
      environment: "test"
    })
    const payer = await db.query<{ sandbox_payer_id: string }>(
      "SELECT sandbox_payer_id FROM merchants WHERE id = $1",
      [merchant.id]
    )
    await core.openWallet(payer.rows[0]!.sandbox_payer_id, 1_000_000_000_000)
    await core.openWallet(merchant.id, 0)
    for (let i = 0; i < mandates; i++) {
      const mandate = await client.json("POST", "/mandates", key, {
        reference: `bench-${m}-${i}-${randomUUID().slice(0, 8)}`,
        title: "Bench",
        per_charge_cap: 500_000
      })
      targets.push({ key, mandateId: mandate.id })
    }
  }
  client.close()
  return targets
}

/** The connector's settings for a laari pointed at `url` (the core, or the proxy in front of it). */
const connectorEnv = (url: string, core: Core, timeoutMs: number) => ({
  LAARI_WALLET_URL: url,
  LAARI_WALLET_TOKEN: core.token,
  LAARI_WALLET_ENVIRONMENTS: "test,live",
  LAARI_WALLET_TIMEOUT_MS: String(timeoutMs),
  // The longest allowed: movements left by the outage are sent again when the core is back, not cancelled.
  LAARI_WALLET_CANCEL_AFTER_S: "3600",
  LAARI_WALLET_FEE_WALLET: "laari-fees"
})

/** Transactions committed so far (`pg_stat_database`) in each of `databases` (a name for each URL). */
const committed = async (db: pg.Client, databases: Record<string, string>) => {
  const names = Object.fromEntries(
    Object.entries(databases).map(([k, u]) => [new URL(u).pathname.slice(1), k])
  )
  const rows = await db.query<{ datname: string; n: string }>(
    "SELECT datname, xact_commit AS n FROM pg_stat_database WHERE datname = ANY($1)",
    [Object.keys(names)]
  )
  return Object.fromEntries(rows.rows.map((r) => [names[r.datname]!, Number(r.n)]))
}

const count = async (db: pg.Client, sql: string) => Number((await db.query<{ n: string }>(sql)).rows[0]!.n)

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
