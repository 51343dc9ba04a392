/**
 * The reference wallet core (examples/wallet-core) for laari's connector tests: the real service in a
 * child process, started as its README says, on a fresh PostgreSQL database of its own that tests read
 * directly (what the core posted, each wallet's balance); a TCP proxy in front to take it away and bring
 * it back; and a fresh database for laari beside it.
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Redacted, Scope, Exit } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import * as Path from "node:path"
import * as CliProcess from "./CliProcess.js"
import * as TcpProxy from "./TcpProxy.js"
import { createDatabase } from "./TestDatabase.js"

const example = Path.join(CliProcess.root, "examples/wallet-core")
const tsx = Path.join(CliProcess.root, "node_modules/tsx/dist/cli.mjs")

/** A fresh database on the server at `url`, and how to drop it. */
export const database = async (url: string) => {
  const scope = Effect.runSync(Scope.make())
  const made = await Effect.runPromise(Scope.extend(createDatabase(url), scope))
  return { url: made, drop: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}

export interface Core {
  readonly url: string
  readonly port: number
  readonly token: string
  readonly tokenRedacted: Redacted.Redacted<string>
  /** Opens a wallet with an opening balance (`POST /admin/wallets`). */
  readonly openWallet: (wallet: {
    readonly id: string
    readonly balance: number
    readonly phone?: string
    readonly status?: string
  }) => Promise<void>
  /** Changes a wallet's status (`PATCH /admin/wallets/{id}`). */
  readonly setStatus: (walletId: string, status: "active" | "frozen" | "blocked") => Promise<void>
  /** The core's rows for a transfer id (none, or one). */
  readonly transfers: (id: string) => Promise<ReadonlyArray<{ status: string; amount: number }>>
  /** Every transfer the core posted. */
  readonly posted: () => Promise<ReadonlyArray<{ id: string; amount: number; fee: number }>>
  readonly balance: (walletId: string) => Promise<number>
  /** The sum of every wallet's balance, and of their opening balances: equal while no money is made. */
  readonly totals: () => Promise<{ readonly balances: number; readonly opening: number }>
  /** SIGKILL, and waits for the exit. */
  readonly kill: () => Promise<void>
  /** Starts it again on the same port and database. */
  readonly restart: () => Promise<void>
  readonly stop: () => Promise<void>
}

let phones = 0
const phone = () =>
  `+960${String(3_000_000 + ((process.pid * 7919 + ++phones) % 6_000_000)).padStart(7, "0")}`

/** A core on its own database on the PostgreSQL server at `process.env.DATABASE_URL`. */
export const start = async (): Promise<Core> => {
  const token = `core-${randomUUID()}`
  const own = await database(process.env.DATABASE_URL!)
  let child: ChildProcess
  let exited: Promise<void>
  let output = ""
  const spawnCore = (port: number) =>
    new Promise<string>((resolve, reject) => {
      output = ""
      child = spawn(process.execPath, [tsx, "-C", "@laari/source", "src/main.ts"], {
        cwd: example,
        env: { ...CliProcess.baseEnv(), PORT: String(port), WALLET_CORE_TOKEN: token, DATABASE_URL: own.url },
        stdio: ["ignore", "pipe", "pipe"],
        // Its own process group: tsx runs the service in a child of its own, and a SIGKILL must reach both.
        detached: true
      })
      child.stdout!.on("data", (d) => (output += d))
      child.stderr!.on("data", (d) => (output += d))
      exited = new Promise<void>((done) => child.once("exit", () => done()))
      const timer = setTimeout(() => reject(new Error(`wallet-core did not start:\n${output}`)), 60_000)
      child.stdout!.on("data", () => {
        const found = /^WALLET_CORE_URL=(\S+)$/m.exec(output)
        if (found) {
          clearTimeout(timer)
          resolve(found[1]!)
        }
      })
      child.once("exit", () => reject(new Error(`wallet-core exited:\n${output}`)))
    })
  const url = await spawnCore(0)
  const port = Number(new URL(url).port)
  const query = <A extends object>(statement: string, params: ReadonlyArray<unknown> = []) =>
    Effect.runPromise(
      Effect.scoped(
        Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<A>(statement, params)).pipe(
          Effect.provide(PgClient.layer({ url: Redacted.make(own.url), maxConnections: 1 }))
        )
      )
    )
  return {
    url,
    port,
    kill: async () => {
      process.kill(-child.pid!, "SIGKILL")
      await exited
    },
    restart: async () => {
      await spawnCore(port)
    },
    token,
    tokenRedacted: Redacted.make(token),
    openWallet: async (wallet) => {
      const res = await fetch(`${url}/admin/wallets`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${token}`,
          "content-type": "application/json",
          "request-id": randomUUID()
        },
        body: JSON.stringify({ phone: phone(), ...wallet })
      })
      if (res.status !== 201) throw new Error(`seeding ${wallet.id}: ${res.status} ${await res.text()}`)
    },
    setStatus: async (walletId, status) => {
      const res = await fetch(`${url}/admin/wallets/${encodeURIComponent(walletId)}`, {
        method: "PATCH",
        headers: {
          authorization: `Bearer ${token}`,
          "content-type": "application/json",
          "request-id": randomUUID()
        },
        body: JSON.stringify({ status })
      })
      if (res.status !== 200) throw new Error(`${walletId} ${status}: ${res.status} ${await res.text()}`)
    },
    transfers: async (id) =>
      (
        await query<{ status: string; amount: string | null }>(
          `SELECT status, amount FROM transfers WHERE id = $1`,
          [id]
        )
      ).map((r) => ({ status: r.status, amount: Number(r.amount) })),
    posted: async () =>
      (
        await query<{ id: string; amount: string; fee_amount: string | null }>(
          `SELECT id, amount, fee_amount FROM transfers WHERE status = 'posted'`
        )
      ).map((r) => ({ id: r.id, amount: Number(r.amount), fee: Number(r.fee_amount ?? 0) })),
    balance: async (walletId) =>
      Number(
        (await query<{ balance: string }>(`SELECT balance FROM wallets WHERE id = $1`, [walletId]))[0]
          ?.balance
      ),
    totals: async () => {
      const [row] = await query<{ balances: string; opening: string }>(
        `SELECT coalesce(sum(balance), 0) AS balances, coalesce(sum(opening_balance), 0) AS opening FROM wallets`
      )
      return { balances: Number(row!.balances), opening: Number(row!.opening) }
    },
    stop: async () => {
      process.kill(-child.pid!, "SIGTERM")
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))])
      await own.drop()
    }
  }
}

export interface Proxy {
  readonly url: string
  /** Connections refused: the core is unreachable. */
  readonly refuse: () => Promise<void>
  readonly restore: () => Promise<void>
  readonly close: () => Promise<void>
}

/** A TCP proxy in front of `core`. */
export const proxy = async (core: Core): Promise<Proxy> => {
  const scope = Effect.runSync(Scope.make())
  const p = await Effect.runPromise(
    Scope.extend(TcpProxy.make({ host: "127.0.0.1", port: core.port }), scope)
  )
  return {
    url: `http://127.0.0.1:${p.port}`,
    refuse: () => Effect.runPromise(p.stop),
    restore: () => Effect.runPromise(p.start),
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}
