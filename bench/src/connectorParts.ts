/**
 * The parts of the connector benchmark (`connector.ts`): the proxy in front of the core, the core and its
 * wallets, each process's CPU and each database's commits, the figures' medians.
 */
import { randomUUID } from "node:crypto"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import * as Http from "node:http"
import * as Net from "node:net"
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
export const proxy = async (target: number) => {
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

export const median = (xs: ReadonlyArray<number>) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length === 0
    ? 0
    : s.length % 2 === 1
      ? s[(s.length - 1) / 2]!
      : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}

export const round2 = (x: number) => Number(x.toFixed(2))

/** Each key's median over the rounds. */
export const medians = (rounds: ReadonlyArray<Record<string, number>>) =>
  Object.fromEntries(Object.keys(rounds[0] ?? {}).map((k) => [k, round2(median(rounds.map((r) => r[k]!)))]))

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** CPU seconds (user + system) of the processes `match` picks, from /proc (Linux; 0 elsewhere). */
export const cpuOf = (match: (pid: number, cmdline: string, ppid: number) => boolean): number => {
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
export const tree = (root: number) => (pid: number, _: string, ppid: number) => pid === root || ppid === root

/** The PostgreSQL backends of one database. */
export const backendsOf = (url: string) => {
  const name = new URL(url).pathname.slice(1)
  return (_: number, cmdline: string) => cmdline.startsWith("postgres: ") && cmdline.includes(` ${name} `)
}

/** CPU seconds of each named set of processes, now; and the load generator's own. */
export const cpuNow = (parts: Record<string, (pid: number, cmdline: string, ppid: number) => boolean>) => ({
  ...Object.fromEntries(Object.entries(parts).map(([k, m]) => [k, cpuOf(m)])),
  loadGenerator: (process.cpuUsage().user + process.cpuUsage().system) / 1e6
})

/** CPU milliseconds a successful charge cost each part between two `cpuNow`s. */
export const cpuPerCharge = (
  before: Record<string, number>,
  after: Record<string, number>,
  run: Load.Run
) => {
  const charges = run.requests - run.failures
  return Object.fromEntries(
    Object.keys(after).map((k) => [k, round2(((after[k]! - before[k]!) * 1000) / Math.max(1, charges))])
  )
}

/** The reference core on `databaseUrl`, its token made here and never printed. */
export const startCore = async (databaseUrl: string) => {
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

export type Core = Awaited<ReturnType<typeof startCore>>

/** `merchants` merchants with `mandates` test mandates each; each sandbox payer and merchant a wallet in the core. */
export const seedConnector = async (
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
export const connectorEnv = (url: string, core: Core, timeoutMs: number) => ({
  LAARI_WALLET_URL: url,
  LAARI_WALLET_TOKEN: core.token,
  LAARI_WALLET_ENVIRONMENTS: "test,live",
  LAARI_WALLET_TIMEOUT_MS: String(timeoutMs),
  // The longest allowed: movements left by the outage are sent again when the core is back, not cancelled.
  LAARI_WALLET_CANCEL_AFTER_S: "3600",
  LAARI_WALLET_FEE_WALLET: "laari-fees"
})

/** Transactions committed so far (`pg_stat_database`) in each of `databases` (a name for each URL). */
export const committed = async (db: pg.Client, databases: Record<string, string>) => {
  const names = Object.fromEntries(
    Object.entries(databases).map(([k, u]) => [new URL(u).pathname.slice(1), k])
  )
  const rows = await db.query<{ datname: string; n: string }>(
    "SELECT datname, xact_commit AS n FROM pg_stat_database WHERE datname = ANY($1)",
    [Object.keys(names)]
  )
  return Object.fromEntries(rows.rows.map((r) => [names[r.datname]!, Number(r.n)]))
}

export const count = async (db: pg.Client, sql: string) =>
  Number((await db.query<{ n: string }>(sql)).rows[0]!.n)
