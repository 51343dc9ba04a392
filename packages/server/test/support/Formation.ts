/**
 * A pg_auto_failover formation on this machine, for the failover suite and the bench's failover part: a
 * monitor and two or three PostgreSQL nodes (own free ports, own data directories under one temporary
 * folder), run by `pg_autoctl` as the `postgres` user, trust authentication, no TLS (every packet stays
 * on 127.0.0.1), synchronous replication. Everything it starts is killed and its folder removed by
 * `stop`, also after a failure.
 *
 * Replication, by the number of data nodes (`start({ dataNodes })`):
 * - three (the callers' default): `pg_autoctl set formation number-sync-standbys 1`, every node with
 *   `replication-quorum true`; the primary's `synchronous_standby_names` is `ANY 1
 *   (pgautofailover_standby_N, pgautofailover_standby_M)`. Commits need a second node: with one
 *   standby gone the other confirms. In a switchover the old primary goes `draining` (writes stop),
 *   `report_lsn`, `join_secondary`, never `wait_primary`: measured, five switchovers and a kill under
 *   charges lost no acknowledged charge (BENCHMARKS.md).
 * - two: `number_sync_standbys` stays 0 (1 would need two standbys), both nodes in the quorum, so the
 *   primary's `synchronous_standby_names` is `ANY 1 (pgautofailover_standby_N)` while the secondary is
 *   healthy. When the monitor sees no healthy standby, the primary is moved to `wait_primary`, which clears
 *   `synchronous_standby_names` and commits alone (availability first). That includes `perform switchover`:
 *   the monitor may move the primary to `wait_primary` as soon as the secondary is in `prepare_promotion`,
 *   and what the old primary acknowledges then is lost when it rejoins (measured: 37 of 416 charges in one
 *   bench run, BENCHMARKS.md). pg_auto_failover promises nothing for `wait_primary` commits.
 *
 * Timeouts, tuned so that a failover completes well under 30 s (defaults in brackets):
 * - monitor `pgautofailover.health_check_period` 1000 ms [5000], `health_check_timeout` 1000 ms [5000],
 *   `health_check_max_retries` 1 [2], `health_check_retry_delay` 500 ms [2000]: a dead node is seen in
 *   about 2.5 s rather than 20 s;
 * - monitor `pgautofailover.node_considered_unhealthy_timeout` 3000 ms [20000]: a node that stopped
 *   reporting is failed over after 3 s;
 * - monitor `pgautofailover.primary_demote_timeout` 10000 ms [30000] and keeper
 *   `timeout.network_partition_timeout` 5 s [20]: an isolated primary demotes itself after 5 s, before
 *   the monitor gives up waiting for it (10 s after it has seen it unhealthy, itself at least 2.5 s after
 *   the loss) and promotes a standby; meanwhile synchronous replication blocks its commits, so nothing it
 *   acknowledges can be lost. Every failover and switchover passes through `demote_timeout` (the
 *   monitor's events, bench `failover` part, BENCHMARKS.md); 5000 ms and 3 s measured no faster at load 25,
 *   where the promoted node's `stop_replication`, not the timer, gated the switch.
 */
import { type ChildProcess, execFile, execFileSync, spawn } from "node:child_process"
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import { promisify } from "node:util"
import { freePort } from "./ServerProcess.js"

const run = promisify(execFile)
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

const PgBin = "/usr/lib/postgresql/15/bin"

/** Whether pg_auto_failover (`pg_autoctl`, with its PostgreSQL 15 extension) and HAProxy are installed, and we are root. */
export const installed = (): { readonly ok: boolean; readonly missing: ReadonlyArray<string> } => {
  const missing: Array<string> = []
  if (!existsSync("/usr/bin/pg_autoctl") || !existsSync(`${PgBin}/pg_ctl`))
    missing.push("postgresql-15-auto-failover")
  if (!existsSync("/usr/sbin/haproxy")) missing.push("haproxy")
  if (!existsSync("/usr/sbin/runuser")) missing.push("runuser (util-linux)")
  // `runuser -u postgres` (PostgreSQL refuses to run as root) needs root.
  if (process.getuid?.() !== 0) missing.push("root (to run pg_autoctl as the postgres user)")
  return { ok: missing.length === 0, missing }
}

export interface Node {
  readonly name: string
  readonly port: number
  readonly pgdata: string
}

export interface NodeState {
  readonly name: string
  readonly port: number
  readonly reported: string
  readonly assigned: string
}

export interface Formation {
  readonly dir: string
  readonly monitorPort: number
  readonly nodes: ReadonlyArray<Node>
  /** `pg_autoctl show uri --formation default`, with the `postgres` user laari connects as. */
  readonly uri: string
  /** A URL to one node only (the single-host form), e.g. to the primary's port. */
  readonly nodeUrl: (port: number) => string
  /** `pg_autoctl show state`, parsed. */
  readonly state: () => Promise<ReadonlyArray<NodeState>>
  /**
   * Waits until one node is `primary` and every other `secondary` (reported and assigned); `secondary` is
   * the first of them.
   */
  readonly waitForSteady: (
    timeoutMs?: number
  ) => Promise<{ primary: Node; secondary: Node; secondaries: ReadonlyArray<Node> }>
  /** Waits until a node reports and is assigned `primary` (or `wait_primary`, `single`), other than `not`. */
  readonly waitForPrimary: (options?: { readonly not?: string; readonly timeoutMs?: number }) => Promise<Node>
  /**
   * Waits until the monitor has moved the primary `from` out of `primary` (or made another node primary),
   * then for a primary again: the failover after a kill or a switchover. With three nodes the new primary
   * may be `from` itself: the monitor elects the node with the most WAL, which after a `kill -9` whose
   * keeper restarted PostgreSQL can be the old primary (seen: `draining`, `report_lsn`, `prepare_promotion`,
   * `wait_primary`, `primary`, all on the same node).
   */
  readonly waitForFailover: (from: string, timeoutMs?: number) => Promise<Node>
  /**
   * The primary's `synchronous_standby_names`: `ANY 1 (pgautofailover_standby_N)` with two nodes,
   * `ANY 1 (pgautofailover_standby_N, pgautofailover_standby_M)` with three, when commits wait for a standby.
   */
  readonly synchronousStandbys: () => Promise<string>
  /**
   * Waits until commits wait for a standby again and every standby is named (`synchronousStandbys` is
   * `ANY 1 (...)` with one name per standby), e.g. once a failed primary has rejoined; resolves with the
   * last value seen, which says otherwise after `timeoutMs`.
   */
  readonly waitSynchronous: (timeoutMs?: number) => Promise<string>
  /** What the formation runs with: the monitor's `pgautofailover.*` settings, the formation's and each node's. */
  readonly settings: () => Promise<Record<string, string>>
  /**
   * `pg_autoctl set node replication-quorum` on every secondary (with three nodes, `number-sync-standbys`
   * 0 first, 1 after): `false` makes the primary commit alone (asynchronous replication, as a single
   * database commits), `true` brings synchronous commits back. Resolves once the primary's
   * `synchronous_standby_names` says so.
   */
  readonly setSynchronous: (on: boolean) => Promise<void>
  /** `kill -9` of the primary's postmaster (its keeper stays: it restarts it or takes the demotion). */
  readonly killPrimaryPostmaster: () => Promise<Node>
  /** `pg_autoctl perform switchover`: resolves when the command returns. */
  readonly switchover: () => Promise<void>
  /** Kills every process it started (keepers and postmasters) and removes its folder. Idempotent. */
  readonly stop: () => Promise<void>
  /** What the keepers and the monitor wrote, for a failure message. */
  readonly logs: () => string
  /**
   * The monitor's events (`pg_autoctl show events`) since `since` (epoch ms), each as "+seconds since
   * `since`  node: reported -> assigned: description", to tell where the time of a failover went.
   */
  readonly events: (since: number) => Promise<ReadonlyArray<string>>
}

/** pg_autoctl keeps its configuration and state under XDG folders: inside our folder, so stop removes them. */
const autoctlEnv = (dir: string): NodeJS.ProcessEnv => ({
  PATH: `${PgBin}:/usr/bin:/bin:/usr/sbin:/sbin`,
  XDG_CONFIG_HOME: Path.join(dir, "xdg-config"),
  XDG_DATA_HOME: Path.join(dir, "xdg-data"),
  XDG_RUNTIME_DIR: Path.join(dir, "xdg-run"),
  HOME: dir,
  LANG: "C.UTF-8"
})

const asPostgres = (dir: string, args: ReadonlyArray<string>, timeoutMs = 60_000) =>
  run("/usr/sbin/runuser", ["-u", "postgres", "--", "pg_autoctl", ...args], {
    env: autoctlEnv(dir),
    cwd: dir,
    timeout: timeoutMs,
    maxBuffer: 16 * 1024 * 1024
  })

const postmasterPid = (pgdata: string): number | undefined => {
  try {
    const pid = Number(readFileSync(Path.join(pgdata, "postmaster.pid"), "utf8").split("\n")[0])
    return Number.isInteger(pid) && pid > 0 ? pid : undefined
  } catch {
    return undefined
  }
}

const kill = (pid: number, signal: NodeJS.Signals = "SIGKILL") => {
  try {
    process.kill(pid, signal)
  } catch {
    // already gone
  }
}

/**
 * Creates and starts the formation with `dataNodes` PostgreSQL nodes (2 unless told); resolves once it has a
 * primary and synchronous secondaries. `timeoutMs` bounds each node's clone and the final steady state.
 */
export const start = async (
  options: { readonly timeoutMs?: number; readonly dataNodes?: 2 | 3 } = {}
): Promise<Formation> => {
  const dataNodes = options.dataNodes ?? 2
  const dir = mkdtempSync(Path.join(tmpdir(), "laari-formation-"))
  chownSync(dir, uidOf("postgres"), gidOf("postgres"))
  const monitorPort = await freePort()
  const monitor: Node = { name: "monitor", port: monitorPort, pgdata: Path.join(dir, "monitor") }
  const nodes: Array<Node> = []
  for (let i = 1; i <= dataNodes; i++)
    nodes.push({ name: `node${i}`, port: await freePort(), pgdata: Path.join(dir, `node${i}`) })
  const keepers: Array<{ readonly node: Node; readonly child: ChildProcess; output: string }> = []
  const common = ["--pgctl", `${PgBin}/pg_ctl`, "--hostname", "127.0.0.1", "--auth", "trust", "--no-ssl"]
  const monitorUrl = `postgres://autoctl_node@127.0.0.1:${monitorPort}/pg_auto_failover?sslmode=disable`

  /** `pg_autoctl run` in its own process group, so `stop` can end it with everything it forked. */
  const runKeeper = (node: Node) => {
    const child = spawn(
      "/usr/sbin/runuser",
      ["-u", "postgres", "--", "pg_autoctl", "run", "--pgdata", node.pgdata],
      {
        env: autoctlEnv(dir),
        cwd: dir,
        detached: true,
        stdio: ["ignore", "pipe", "pipe"]
      }
    )
    const keeper = { node, child, output: "" }
    child.stdout!.setEncoding("utf8").on("data", (s: string) => (keeper.output += s))
    child.stderr!.setEncoding("utf8").on("data", (s: string) => (keeper.output += s))
    keepers.push(keeper)
  }

  /** Each command on its own (`ALTER SYSTEM` may not share a transaction). */
  const psql = (port: number, database: string, ...commands: ReadonlyArray<string>) =>
    run(
      `${PgBin}/psql`,
      [
        "-h",
        "127.0.0.1",
        "-p",
        String(port),
        "-U",
        "postgres",
        "-d",
        database,
        "-At",
        ...commands.flatMap((c) => ["-c", c])
      ],
      { timeout: 10_000 }
    )

  let stopped = false
  const killAll = () => {
    for (const k of keepers) if (k.child.pid !== undefined) kill(-k.child.pid)
    for (const n of [monitor, ...nodes]) {
      const pid = postmasterPid(n.pgdata)
      if (pid !== undefined) kill(pid)
    }
  }
  // Should the test process end without `stop` (a timeout, a signal), the formation does not outlive it.
  const onExit = () => {
    killAll()
    rmSync(dir, { recursive: true, force: true })
  }
  process.once("exit", onExit)
  const stop = async () => {
    if (stopped) return
    stopped = true
    process.off("exit", onExit)
    killAll()
    // Anything else still running from our folder (a pg_basebackup, a pg_rewind, a keeper's child).
    const left = await run("pgrep", ["-f", dir]).then(
      (r) => r.stdout.split("\n").filter(Boolean).map(Number),
      () => []
    )
    for (const pid of left) if (pid !== process.pid) kill(pid)
    await sleep(500)
    rmSync(dir, { recursive: true, force: true })
  }

  const logs = () => keepers.map((k) => `--- ${k.node.name}\n${k.output.slice(-4_000)}`).join("\n")

  // What `pg_autoctl show state` prints, read from the monitor's table (its JSON keys vary by version).
  const state = async (): Promise<ReadonlyArray<NodeState>> => {
    const { stdout } = await psql(
      monitorPort,
      "pg_auto_failover",
      "SELECT nodename, nodeport, reportedstate, goalstate FROM pgautofailover.node ORDER BY nodeid"
    )
    return stdout
      .split("\n")
      .filter(Boolean)
      .map((line) => {
        const [name, port, reported, assigned] = line.split("|")
        return { name: name!, port: Number(port), reported: reported!, assigned: assigned! }
      })
  }

  const byName = (name: string) => nodes.find((n) => n.name === name)!

  const waitFor = async <A>(
    what: string,
    timeoutMs: number,
    check: (s: ReadonlyArray<NodeState>) => A | undefined
  ) => {
    const deadline = Date.now() + timeoutMs
    let last: ReadonlyArray<NodeState> = []
    while (Date.now() < deadline) {
      last = await state().catch(() => last)
      const found = check(last)
      if (found !== undefined) return found
      await sleep(250)
    }
    throw new Error(
      `formation: no ${what} within ${timeoutMs} ms; last state ${JSON.stringify(last)}\n${logs()}`
    )
  }

  const waitForSteady = (timeoutMs = 90_000) =>
    waitFor("primary and secondaries", timeoutMs, (s) => {
      const primary = s.find((n) => n.reported === "primary" && n.assigned === "primary")
      const secondaries = s.filter((n) => n.reported === "secondary" && n.assigned === "secondary")
      return primary && secondaries.length === dataNodes - 1
        ? {
            primary: byName(primary.name),
            secondary: byName(secondaries[0]!.name),
            secondaries: secondaries.map((n) => byName(n.name))
          }
        : undefined
    })

  const waitForPrimary = (o: { readonly not?: string; readonly timeoutMs?: number } = {}) =>
    waitFor("primary", o.timeoutMs ?? 60_000, (s) => {
      const found = s.find(
        (n) =>
          n.name !== o.not &&
          (n.reported === "primary" || n.reported === "wait_primary" || n.reported === "single") &&
          n.reported === n.assigned
      )
      return found ? byName(found.name) : undefined
    })

  /** The postmaster `killPrimaryPostmaster` killed, by node name. */
  const killed = new Map<string, number>()
  const waitForFailover = async (from: string, timeoutMs = 90_000) => {
    const deadline = Date.now() + timeoutMs
    const restartedInPlace = (n: NodeState) => {
      const pid = killed.has(n.name) ? postmasterPid(byName(n.name).pgdata) : undefined
      return (
        n.reported === "primary" &&
        n.assigned === "primary" &&
        pid !== undefined &&
        pid !== killed.get(n.name)
      )
    }
    await waitFor(`failover from ${from}`, timeoutMs, (s) =>
      // Either the monitor moved the primary, or the keeper restarted the killed postmaster before the
      // monitor saw it down (a kill it absorbs in place: a new postmaster, still primary).
      s.some((n) =>
        n.name === from ? n.assigned !== "primary" || restartedInPlace(n) : n.assigned === "primary"
      )
        ? true
        : undefined
    )
    return waitForPrimary({ timeoutMs: Math.max(1_000, deadline - Date.now()) })
  }

  const synchronousStandbys = async () => {
    const primary = await waitForPrimary()
    return (await psql(primary.port, "laari", "SHOW synchronous_standby_names")).stdout.trim()
  }

  try {
    await asPostgres(dir, [
      "create",
      "monitor",
      "--pgdata",
      monitor.pgdata,
      "--pgport",
      String(monitorPort),
      ...common
    ])
    runKeeper(monitor)
    await waitReady(() => psql(monitorPort, "pg_auto_failover", "SELECT 1"), 30_000, "the monitor")
    await psql(
      monitorPort,
      "pg_auto_failover",
      ...[
        "ALTER SYSTEM SET pgautofailover.health_check_period = 1000",
        "ALTER SYSTEM SET pgautofailover.health_check_timeout = 1000",
        "ALTER SYSTEM SET pgautofailover.health_check_max_retries = 1",
        "ALTER SYSTEM SET pgautofailover.health_check_retry_delay = 500",
        "ALTER SYSTEM SET pgautofailover.node_considered_unhealthy_timeout = 3000",
        "ALTER SYSTEM SET pgautofailover.primary_demote_timeout = 10000",
        "SELECT pg_reload_conf()"
      ]
    )

    for (const [i, node] of nodes.entries()) {
      await asPostgres(dir, [
        "create",
        "postgres",
        "--pgdata",
        node.pgdata,
        "--pgport",
        String(node.port),
        "--name",
        node.name,
        "--dbname",
        "laari",
        "--listen",
        "127.0.0.1",
        "--monitor",
        monitorUrl,
        "--ssl-mode",
        "disable",
        ...common
      ])
      await asPostgres(dir, [
        "config",
        "set",
        "--pgdata",
        node.pgdata,
        "timeout.network_partition_timeout",
        "5"
      ])
      runKeeper(node)
      if (i === 0) {
        await waitForPrimary({ timeoutMs: 60_000 })
        continue
      }
      // The secondary's pg_basebackup waits for a spread checkpoint on the primary (minutes when idle):
      // ask for an immediate one until the secondary has caught up.
      await waitFor("secondary", options.timeoutMs ?? 120_000, (s) =>
        s.some((n) => n.name === node.name && n.reported === "secondary")
          ? true
          : void psql(nodes[0]!.port, "laari", "CHECKPOINT").catch(() => {})
      )
    }
    await waitForSteady(options.timeoutMs ?? 60_000)
    // `pg_autoctl set formation number-sync-standbys`, through a node's keeper (it finds the monitor).
    if (dataNodes === 3)
      await asPostgres(dir, ["set", "formation", "number-sync-standbys", "--pgdata", nodes[0]!.pgdata, "1"])
    const { stdout } = await asPostgres(dir, [
      "show",
      "uri",
      "--pgdata",
      monitor.pgdata,
      "--formation",
      "default"
    ])
    // laari connects as `postgres`; the nodes have no TLS (the URI says `prefer`, which some clients take as `require`).
    const uri = stdout
      .trim()
      .replace(/^postgres(ql)?:\/\//, "postgres://postgres@")
      .replace(/sslmode=[a-z-]+/, "sslmode=disable")

    return {
      dir,
      monitorPort,
      nodes,
      uri,
      nodeUrl: (port) => `postgres://postgres@127.0.0.1:${port}/laari?sslmode=disable`,
      state,
      waitForSteady,
      waitForPrimary,
      waitForFailover,
      synchronousStandbys,
      waitSynchronous: async (timeoutMs = 30_000) => {
        const deadline = Date.now() + timeoutMs
        let names = await synchronousStandbys()
        while (!allStandbys(names, dataNodes) && Date.now() < deadline) {
          await sleep(250)
          names = await synchronousStandbys()
        }
        return names
      },
      settings: async () => {
        const rows = await psql(
          monitorPort,
          "pg_auto_failover",
          "SELECT name, setting FROM pg_settings WHERE name LIKE 'pgautofailover.%' ORDER BY name",
          "SELECT 'formation.number_sync_standbys', number_sync_standbys FROM pgautofailover.formation WHERE formationid = 'default'",
          "SELECT 'node.' || nodename || '.replication_quorum', replicationquorum FROM pgautofailover.node ORDER BY nodeid"
        )
        const found: Record<string, string> = Object.fromEntries(
          rows.stdout
            .split("\n")
            .filter(Boolean)
            .map((line) => line.split("|") as [string, string])
        )
        for (const node of nodes)
          for (const key of KeeperTimeouts)
            found[`node.${node.name}.${key}`] = (
              await asPostgres(dir, ["config", "get", "--pgdata", node.pgdata, key])
            ).stdout.trim()
        return found
      },
      setSynchronous: async (on) => {
        // The monitor refuses a change while the primary still applies the previous one (`apply_settings`):
        // each step waits for the primary and its secondaries to be steady again.
        const step = async (args: ReadonlyArray<string>) => {
          await waitForSteady(120_000)
          await asPostgres(dir, args)
        }
        const { secondaries } = await waitForSteady()
        // With three nodes `number_sync_standbys` 1 needs standbys in the quorum: lowered first, raised last.
        const syncStandbys = ["set", "formation", "number-sync-standbys", "--pgdata", nodes[0]!.pgdata]
        if (dataNodes === 3 && !on) await step([...syncStandbys, "0"])
        for (const secondary of secondaries)
          await step(["set", "node", "replication-quorum", "--pgdata", secondary.pgdata, String(on)])
        if (dataNodes === 3 && on) await step([...syncStandbys, "1"])
        const deadline = Date.now() + 60_000
        for (;;) {
          const primary = await waitForPrimary()
          const names = (await psql(primary.port, "laari", "SHOW synchronous_standby_names")).stdout.trim()
          if (on ? allStandbys(names, dataNodes) : names === "") return
          if (Date.now() > deadline)
            throw new Error(`formation: synchronous_standby_names is still '${names}'`)
          await sleep(250)
        }
      },
      killPrimaryPostmaster: async () => {
        const primary = await waitForPrimary()
        const pid = postmasterPid(primary.pgdata)
        if (pid === undefined) throw new Error(`formation: no postmaster.pid in ${primary.pgdata}`)
        kill(pid)
        killed.set(primary.name, pid)
        return primary
      },
      switchover: async () => {
        await asPostgres(
          dir,
          ["perform", "switchover", "--pgdata", monitor.pgdata, "--formation", "default"],
          90_000
        )
      },
      stop,
      logs,
      events: async (since) => {
        const { stdout } = await psql(
          monitorPort,
          "pg_auto_failover",
          `SELECT round(extract(epoch FROM eventtime) * 1000), nodename, reportedstate, goalstate, description
             FROM pgautofailover.event WHERE eventtime >= to_timestamp(${since / 1000}) ORDER BY eventid`
        )
        return stdout
          .split("\n")
          .filter(Boolean)
          .map((line) => {
            const [at, node, reported, assigned, ...description] = line.split("|")
            const seconds = ((Number(at) - since) / 1000).toFixed(2)
            return `+${seconds} s  ${node}: ${reported} -> ${assigned}: ${description.join("|")}`
          })
      }
    }
  } catch (error) {
    await stop()
    throw error
  }
}

/** Whether `synchronous_standby_names` makes commits wait for one of the `dataNodes - 1` standbys, all named. */
export const allStandbys = (names: string, dataNodes: number) =>
  new RegExp(
    `^ANY 1 \\(pgautofailover_standby_\\d+(, pgautofailover_standby_\\d+){${dataNodes - 2}}\\)$`
  ).test(names)

/** The keeper's timeouts `settings` reports. */
const KeeperTimeouts = [
  "timeout.network_partition_timeout",
  "timeout.postgresql_restart_failure_timeout",
  "timeout.postgresql_restart_failure_max_retries"
] as const

const waitReady = async (attempt: () => Promise<unknown>, timeoutMs: number, what: string) => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    try {
      return await attempt()
    } catch (error) {
      if (Date.now() > deadline)
        throw new Error(`formation: ${what} did not answer within ${timeoutMs} ms: ${error}`)
      await sleep(250)
    }
  }
}

const idOf = (flag: "-u" | "-g", user: string) => {
  return Number(execFileSync("id", [flag, user], { encoding: "utf8" }).trim())
}
const uidOf = (user: string) => idOf("-u", user)
const gidOf = (user: string) => idOf("-g", user)
