/**
 * The reference wallet core (examples/wallet-core) as a real child process, started as its own tests start
 * it (`node tsx -C @laari/source src/main.ts` in its directory), on a fresh PostgreSQL database of its own
 * with a fixed token: to be killed with SIGKILL and started again on the same port and database, seeded
 * through `POST /admin/wallets`, and read directly in its tables (src/Schema.ts) for assertions. Killed and
 * its database dropped when the scope closes.
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Context, Data, Duration, Effect, Layer, Redacted, type Scope } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import * as Net from "node:net"
import * as Path from "node:path"
import * as CliProcess from "./CliProcess.js"
import * as TestDatabase from "./TestDatabase.js"

const example = Path.join(CliProcess.root, "examples/wallet-core")
const tsx = Path.join(CliProcess.root, "node_modules/tsx/dist/cli.mjs")

export class WalletCoreError extends Data.TaggedError("WalletCoreError")<{ readonly message: string }> {}

export interface Options {
  /** The PostgreSQL server to make the core's database on; default `DATABASE_URL`. */
  readonly serverUrl?: string
  /** The bearer token; default a fresh one. */
  readonly token?: string
  /** `WALLET_CORE_FAULTS`: rules the core breaks on purpose (`no-tombstones`, `double-post`). */
  readonly faults?: ReadonlyArray<"no-tombstones" | "double-post">
  /** How long a start may take, to its printed URL and a `200` from `GET /healthz`; default 20 s. */
  readonly startWithin?: Duration.DurationInput
}

export interface SeedWallet {
  readonly id: string
  /** Default: one no other wallet of this core has. */
  readonly phone?: string
  readonly balance: number
  readonly status?: "active" | "frozen" | "blocked"
  readonly limit?: number | null
  readonly timeZone?: string
}

/** A wallet as `POST /admin/wallets` answers it. */
export interface Wallet {
  readonly id: string
  readonly phone: string
  readonly status: string
  readonly limit: number | null
  readonly time_zone: string
  readonly balance: number
}

/** A row of the core's `transfers` (a tombstone has only its id and status). */
export interface TransferRow {
  readonly id: string
  readonly status: "posted" | "refused" | "cancelled"
  readonly environment: string | null
  readonly from: string | null
  readonly to: string | null
  readonly amount: number | null
  readonly feeTo: string | null
  readonly feeAmount: number | null
  readonly memo: string | null
  readonly kind: string | null
  readonly reason: string | null
  readonly postedAt: Date | null
}

/** A row of the core's `wallets`. */
export interface WalletRow {
  readonly id: string
  readonly phone: string
  readonly status: string
  readonly limit: number | null
  readonly openingBalance: number
  readonly balance: number
}

/** A row of the core's `entries`: one side of one transfer. */
export interface EntryRow {
  readonly transferId: string
  readonly walletId: string
  readonly side: "debit" | "credit"
  readonly amount: number
}

export interface WalletCoreProcess {
  /** `http://127.0.0.1:<port>`, the same across restarts. */
  readonly url: string
  readonly port: number
  readonly token: string
  /** Its own database (for a `psql` by hand while debugging). */
  readonly databaseUrl: string
  /** Whether the current process is alive. */
  readonly running: () => boolean
  /** What the current process printed (stdout and stderr). */
  readonly output: () => string
  /** SIGKILL to the core (and tsx's process before it), and waits for the exit. */
  readonly kill: Effect.Effect<void>
  /** SIGTERM, and waits for the exit (SIGKILL after 10 s). */
  readonly stop: Effect.Effect<void>
  /** Starts it again on the same port and database (stopping it first if it runs). */
  readonly restart: Effect.Effect<void, WalletCoreError>
  /** Opens a wallet with an opening balance (`POST /admin/wallets`, `201`). */
  readonly seedWallet: (wallet: SeedWallet) => Effect.Effect<Wallet, WalletCoreError>
  /** A client of its database, whether the core runs or not. */
  readonly sql: SqlClient.SqlClient
  readonly transfer: (id: string) => Effect.Effect<TransferRow | undefined, SqlError>
  readonly transfers: Effect.Effect<ReadonlyArray<TransferRow>, SqlError>
  readonly wallet: (id: string) => Effect.Effect<WalletRow | undefined, SqlError>
  readonly wallets: Effect.Effect<ReadonlyArray<WalletRow>, SqlError>
  readonly entries: (transferId: string) => Effect.Effect<ReadonlyArray<EntryRow>, SqlError>
}

/** bigint columns come back as text. */
const num = (v: unknown): number => Number(v)
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v))

const transferRow = (r: Record<string, unknown>): TransferRow => ({
  id: r.id as string,
  status: r.status as TransferRow["status"],
  environment: (r.environment as string | null) ?? null,
  from: (r.from_wallet as string | null) ?? null,
  to: (r.to_wallet as string | null) ?? null,
  amount: numOrNull(r.amount),
  feeTo: (r.fee_to as string | null) ?? null,
  feeAmount: numOrNull(r.fee_amount),
  memo: (r.memo as string | null) ?? null,
  kind: (r.kind as string | null) ?? null,
  reason: (r.reason as string | null) ?? null,
  postedAt: r.posted_at === null || r.posted_at === undefined ? null : new Date(r.posted_at as string)
})

const walletRow = (r: Record<string, unknown>): WalletRow => ({
  id: r.id as string,
  phone: r.phone as string,
  status: r.status as string,
  limit: numOrNull(r.limit),
  openingBalance: num(r.opening_balance),
  balance: num(r.balance)
})

interface Running {
  readonly child: ChildProcess
  readonly exited: Promise<void>
  output: string
  alive: boolean
  /** Once it printed where it listens. */
  port: number | undefined
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Whether a new connection to `port` on 127.0.0.1 is refused. */
const refused = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = Net.connect(port, "127.0.0.1")
    socket.once("connect", () => {
      socket.destroy()
      resolve(false)
    })
    socket.once("error", (e: NodeJS.ErrnoException) => resolve(e.code === "ECONNREFUSED"))
  })

/** A core on a fresh database of its own, on a free port. */
export const make = (options: Options = {}): Effect.Effect<WalletCoreProcess, WalletCoreError, Scope.Scope> =>
  Effect.gen(function* () {
    const serverUrl = options.serverUrl ?? TestDatabase.postgresUrl
    if (serverUrl === undefined)
      return yield* new WalletCoreError({ message: "no PostgreSQL server: set DATABASE_URL" })
    const token = options.token ?? `core-${randomUUID()}`
    const startWithin = Duration.toMillis(options.startWithin ?? Duration.seconds(20))
    const databaseUrl = yield* TestDatabase.createDatabase(serverUrl).pipe(
      Effect.mapError((e) => new WalletCoreError({ message: `making its database: ${e.message}` }))
    )
    const sql = yield* Layer.build(
      PgClient.layer({ url: Redacted.make(databaseUrl), maxConnections: 2 })
    ).pipe(
      Effect.map(Context.get(SqlClient.SqlClient)),
      Effect.mapError((e) => new WalletCoreError({ message: `connecting to its database: ${e.message}` }))
    )

    let current: Running | undefined
    /** A vitest worker that dies never runs the scope's finalizers: the core must not outlive it. */
    const orphanGuard = () => {
      if (current?.alive) process.kill(-current.child.pid!, "SIGKILL")
    }
    process.once("exit", orphanGuard)

    const spawnCore = (port: number): Running => {
      const child = spawn(process.execPath, [tsx, "-C", "@laari/source", "src/main.ts"], {
        cwd: example,
        env: {
          ...CliProcess.baseEnv(),
          HOST: "127.0.0.1",
          PORT: String(port),
          WALLET_CORE_TOKEN: token,
          DATABASE_URL: databaseUrl,
          ...(options.faults?.length ? { WALLET_CORE_FAULTS: options.faults.join(",") } : {})
        },
        stdio: ["ignore", "pipe", "pipe"],
        // A group of its own: tsx runs the service in a child process, and a SIGKILL must reach both.
        detached: true
      })
      const running: Running = {
        child,
        output: "",
        alive: true,
        port: undefined,
        exited: new Promise<void>((done) =>
          child.once("exit", () => {
            running.alive = false
            done()
          })
        )
      }
      child.stdout!.on("data", (d) => (running.output += d))
      child.stderr!.on("data", (d) => (running.output += d))
      return running
    }

    const signal = (running: Running, name: NodeJS.Signals) => {
      try {
        process.kill(-running.child.pid!, name)
      } catch {
        // Already gone.
      }
    }

    /**
     * Whether the service itself is gone too: tsx's process exits first, and the service (its child) a
     * moment later. Gone when no process of the group is left, or (a zombie waiting to be reaped still
     * counts) nothing listens on its port.
     */
    const gone = async (running: Running) => {
      try {
        process.kill(-running.child.pid!, 0)
      } catch {
        return true
      }
      return running.port === undefined ? false : await refused(running.port)
    }

    const awaitGone = async (running: Running) => {
      const deadline = Date.now() + 5_000
      while (!(await gone(running)) && Date.now() < deadline) await sleep(20)
    }

    const killRunning = (running: Running | undefined) =>
      Effect.promise(async () => {
        if (running === undefined) return
        if (running.alive) {
          signal(running, "SIGKILL")
          await running.exited
        }
        await awaitGone(running)
      })

    const stopRunning = (running: Running | undefined) =>
      Effect.promise(async () => {
        if (running === undefined) return
        if (running.alive) {
          signal(running, "SIGTERM")
          const stopped = await Promise.race([
            running.exited.then(() => true),
            sleep(10_000).then(() => false)
          ])
          if (!stopped) {
            signal(running, "SIGKILL")
            await running.exited
          }
        }
        await awaitGone(running)
      })

    /**
     * One start, to its printed URL and a `200` from `/healthz`. On the same port after a kill, the port
     * can still be held for a moment by the dying process: a start that fails with EADDRINUSE goes again.
     */
    const start = (port: number) =>
      Effect.tryPromise({
        try: async () => {
          const deadline = Date.now() + startWithin
          for (;;) {
            const running = spawnCore(port)
            current = running
            const url = await new Promise<string | undefined>((resolve) => {
              const look = () => {
                const found = /^WALLET_CORE_URL=(\S+)$/m.exec(running.output)
                if (found) {
                  clearInterval(timer)
                  resolve(found[1]!)
                }
              }
              const timer = setInterval(() => {
                look()
                if (!running.alive || Date.now() > deadline) {
                  clearInterval(timer)
                  resolve(undefined)
                }
              }, 25)
              running.child.stdout!.on("data", look)
            })
            if (url === undefined) {
              const busy = /EADDRINUSE/.test(running.output)
              const why = running.alive ? `not up within ${startWithin} ms` : "it exited"
              await Effect.runPromise(killRunning(running))
              if (busy && Date.now() < deadline) {
                await sleep(100)
                continue
              }
              throw new Error(`${why}:\n${running.output}`)
            }
            running.port = Number(new URL(url).port)
            for (;;) {
              const ok = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1_000) }).then(
                (r) => r.ok,
                () => false
              )
              if (ok) return running.port
              if (Date.now() > deadline) {
                await Effect.runPromise(killRunning(running))
                throw new Error(`GET /healthz not 200 within ${startWithin} ms:\n${running.output}`)
              }
              await sleep(50)
            }
          }
        },
        catch: (e) => new WalletCoreError({ message: `wallet-core did not start: ${(e as Error).message}` })
      })

    const port = yield* Effect.acquireRelease(start(0), () =>
      Effect.zipRight(
        killRunning(current),
        Effect.sync(() => process.off("exit", orphanGuard))
      )
    )
    const url = `http://127.0.0.1:${port}`

    let phones = 0
    const phone = () => `+960${String(7_000_000 + ++phones).padStart(7, "0")}`

    const seedWallet = (wallet: SeedWallet) =>
      Effect.tryPromise({
        try: async () => {
          const res = await fetch(`${url}/admin/wallets`, {
            method: "POST",
            headers: {
              authorization: `Bearer ${token}`,
              "content-type": "application/json",
              "request-id": randomUUID()
            },
            body: JSON.stringify({
              id: wallet.id,
              phone: wallet.phone ?? phone(),
              balance: wallet.balance,
              ...(wallet.status === undefined ? {} : { status: wallet.status }),
              ...(wallet.limit === undefined ? {} : { limit: wallet.limit }),
              ...(wallet.timeZone === undefined ? {} : { time_zone: wallet.timeZone })
            }),
            signal: AbortSignal.timeout(10_000)
          })
          const text = await res.text()
          if (res.status !== 201) throw new Error(`${res.status} ${text}`)
          return JSON.parse(text) as Wallet
        },
        catch: (e) => new WalletCoreError({ message: `seeding ${wallet.id}: ${(e as Error).message}` })
      })

    const rows = (statement: string, params: ReadonlyArray<unknown> = []) =>
      sql.unsafe<Record<string, unknown>>(statement, params)

    return {
      url,
      port,
      token,
      databaseUrl,
      running: () => current?.alive ?? false,
      output: () => current?.output ?? "",
      kill: Effect.suspend(() => killRunning(current)),
      stop: Effect.suspend(() => stopRunning(current)),
      restart: Effect.suspend(() => Effect.zipRight(stopRunning(current), Effect.asVoid(start(port)))),
      seedWallet,
      sql,
      transfer: (id) =>
        Effect.map(rows(`SELECT * FROM transfers WHERE id = $1`, [id]), (r) =>
          r[0] === undefined ? undefined : transferRow(r[0])
        ),
      transfers: Effect.map(rows(`SELECT * FROM transfers ORDER BY created_at, id`), (r) =>
        r.map(transferRow)
      ),
      wallet: (id) =>
        Effect.map(rows(`SELECT * FROM wallets WHERE id = $1`, [id]), (r) =>
          r[0] === undefined ? undefined : walletRow(r[0])
        ),
      wallets: Effect.map(rows(`SELECT * FROM wallets ORDER BY id`), (r) => r.map(walletRow)),
      entries: (transferId) =>
        Effect.map(
          rows(
            `SELECT transfer_id, wallet_id, side, amount FROM entries WHERE transfer_id = $1 ORDER BY id`,
            [transferId]
          ),
          (r) =>
            r.map((e) => ({
              transferId: e.transfer_id as string,
              walletId: e.wallet_id as string,
              side: e.side as EntryRow["side"],
              amount: num(e.amount)
            }))
        )
    }
  })
