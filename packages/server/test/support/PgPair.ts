/**
 * A PostgreSQL primary and its hot standby on this machine, to stage a failover without pg_auto_failover:
 * made with the Debian binaries of PostgreSQL 15 (`initdb`, `pg_basebackup -R`), replicating
 * synchronously (`synchronous_standby_names = '*'` on the primary), on free ports, trust
 * authentication on 127.0.0.1, in a temporary directory owned by the `postgres` user (as which they run
 * when this process is root). `crashPrimary` stops the primary at once (`pg_ctl -m immediate`, as a
 * crash), `promote` makes the standby the primary. Every step is bounded; `stop` stops both clusters and
 * removes the directory, whatever state they are in.
 *
 * `available()` says why it cannot run here (no binaries, or neither root nor `postgres`): the tests that
 * need it skip then, and say so.
 */
import { execFile } from "node:child_process"
import { appendFileSync, chownSync, existsSync, mkdtempSync, rmSync } from "node:fs"
import * as Net from "node:net"
import { tmpdir, userInfo } from "node:os"
import * as Path from "node:path"
import pg from "pg"

const Bin = "/usr/lib/postgresql/15/bin"

/** Why a pair cannot be made here, or `undefined` when it can. */
export const available = (): string | undefined => {
  if (!existsSync(`${Bin}/initdb`)) return `no PostgreSQL 15 binaries in ${Bin}`
  const user = userInfo().username
  if (user !== "root" && user !== "postgres") return `runs as ${user}, neither root nor postgres`
  return undefined
}

const asPostgres = userInfo().username === "root"

/** Runs a PostgreSQL binary as `postgres`, within `timeoutMs`. */
const run = (bin: string, args: ReadonlyArray<string>, timeoutMs = 30_000): Promise<string> =>
  new Promise((resolve, reject) => {
    const [file, argv] = asPostgres
      ? ["runuser", ["-u", "postgres", "--", `${Bin}/${bin}`, ...args]]
      : [`${Bin}/${bin}`, [...args]]
    execFile(file, argv, { timeout: timeoutMs, cwd: "/" }, (error, stdout, stderr) =>
      error ? reject(new Error(`${bin} ${args.join(" ")}: ${error.message}\n${stderr}`)) : resolve(stdout)
    )
  })

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = Net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as Net.AddressInfo
      server.close(() => resolve(port))
    })
  })

export interface PgPair {
  readonly primaryPort: number
  readonly standbyPort: number
  /** `postgres://postgres@127.0.0.1:<port>/<database>` of one node. */
  readonly url: (port: number, database?: string) => string
  /** Creates `database` on the primary and waits until the standby has it. */
  readonly createDatabase: (database: string) => Promise<void>
  /** Stops the primary at once, as a crash (`pg_ctl stop -m immediate`). */
  readonly crashPrimary: () => Promise<void>
  /** Promotes the standby and waits until it takes writes. */
  readonly promote: () => Promise<void>
  /** Stops both clusters and removes their directory. */
  readonly stop: () => Promise<void>
}

const settings = (port: number, dir: string) =>
  [
    `port = ${port}`,
    "listen_addresses = '127.0.0.1'",
    `unix_socket_directories = '${dir}'`,
    // A test cluster: no durability to pay for, small and quick to start.
    "fsync = off",
    "full_page_writes = off",
    "shared_buffers = 32MB",
    "max_connections = 60",
    "hot_standby = on",
    "wal_level = replica",
    "max_wal_senders = 4",
    "logging_collector = off"
  ].join("\n")

/** Polls `query` on `port` until it answers `expected`, within `timeoutMs`. */
const waitFor = async (
  port: number,
  database: string,
  query: string,
  expected: string,
  timeoutMs: number
) => {
  const deadline = Date.now() + timeoutMs
  let last = ""
  while (Date.now() < deadline) {
    const client = new pg.Client({
      host: "127.0.0.1",
      port,
      user: "postgres",
      database,
      connectionTimeoutMillis: 1_000
    })
    client.on("error", () => {})
    try {
      await client.connect()
      const { rows } = await client.query(query)
      last = String(Object.values(rows[0] ?? {})[0])
      if (last === expected) return
    } catch (e) {
      last = e instanceof Error ? e.message : String(e)
    } finally {
      await client.end().catch(() => {})
    }
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(
    `${query} on port ${port} did not answer ${expected} within ${timeoutMs} ms (last: ${last})`
  )
}

/** Runs one statement on a node. */
const sql = async (port: number, statement: string) => {
  const client = new pg.Client({ host: "127.0.0.1", port, user: "postgres", database: "postgres" })
  await client.connect()
  try {
    await client.query(statement)
  } finally {
    await client.end()
  }
}

export const make = async (): Promise<PgPair> => {
  const root = mkdtempSync(Path.join(tmpdir(), "laari-pgpair-"))
  if (asPostgres) {
    const { uid, gid } = await postgresIds()
    chownSync(root, uid, gid)
  }
  const primary = Path.join(root, "primary")
  const standby = Path.join(root, "standby")
  const started: Array<string> = []
  const stop = async () => {
    for (const dir of started.reverse())
      await run("pg_ctl", ["-D", dir, "-m", "immediate", "-w", "-t", "10", "stop"], 15_000).catch(() => {})
    rmSync(root, { recursive: true, force: true })
  }
  try {
    const [primaryPort, standbyPort] = [await freePort(), await freePort()]
    await run("initdb", ["-D", primary, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"], 60_000)
    appendFileSync(Path.join(primary, "postgresql.conf"), `\n${settings(primaryPort, root)}\n`)
    await run(
      "pg_ctl",
      ["-D", primary, "-l", Path.join(root, "primary.log"), "-w", "-t", "30", "start"],
      40_000
    )
    started.push(primary)
    await run(
      "pg_basebackup",
      [
        "-h",
        "127.0.0.1",
        "-p",
        String(primaryPort),
        "-U",
        "postgres",
        "-D",
        standby,
        "-R",
        "-X",
        "stream",
        "--no-sync"
      ],
      60_000
    )
    appendFileSync(Path.join(standby, "postgresql.conf"), `\nport = ${standbyPort}\n`)
    await run(
      "pg_ctl",
      ["-D", standby, "-l", Path.join(root, "standby.log"), "-w", "-t", "30", "start"],
      40_000
    )
    started.push(standby)
    await waitFor(standbyPort, "postgres", "SELECT pg_is_in_recovery()", "true", 20_000)
    // Synchronous replication, as pg_auto_failover runs it: a commit returns once the standby has it.
    // Set after the copy, so the standby, once promoted, waits for no one (as pg_auto_failover does
    // while the other node is down).
    await sql(primaryPort, "ALTER SYSTEM SET synchronous_standby_names = '*'")
    await sql(primaryPort, "SELECT pg_reload_conf()")
    await waitFor(
      primaryPort,
      "postgres",
      "SELECT string_agg(sync_state, ',') FROM pg_stat_replication",
      "sync",
      20_000
    )
    const url = (port: number, database = "postgres") => `postgres://postgres@127.0.0.1:${port}/${database}`
    return {
      primaryPort,
      standbyPort,
      url,
      createDatabase: async (database) => {
        const client = new pg.Client({ connectionString: url(primaryPort) })
        await client.connect()
        try {
          await client.query(`CREATE DATABASE ${pg.escapeIdentifier(database)}`)
        } finally {
          await client.end()
        }
        await waitFor(standbyPort, database, "SELECT 1", "1", 20_000)
      },
      crashPrimary: async () => {
        await run("pg_ctl", ["-D", primary, "-m", "immediate", "-w", "-t", "10", "stop"], 15_000)
      },
      promote: async () => {
        await run("pg_ctl", ["-D", standby, "-w", "-t", "30", "promote"], 40_000)
        await waitFor(standbyPort, "postgres", "SHOW transaction_read_only", "off", 20_000)
      },
      stop
    }
  } catch (e) {
    await stop()
    throw e
  }
}

/** The uid and gid of `postgres`. */
const postgresIds = async (): Promise<{ readonly uid: number; readonly gid: number }> => {
  const id = (flag: string) =>
    new Promise<number>((resolve, reject) =>
      execFile("id", [flag, "postgres"], (error, stdout) =>
        error ? reject(error) : resolve(Number(stdout.trim()))
      )
    )
  return { uid: await id("-u"), gid: await id("-g") }
}
