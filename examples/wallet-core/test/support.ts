/**
 * The wallet core as a caller meets it: the real service in a child process (as its README starts it),
 * on PGlite in a temporary directory, or on a fresh PostgreSQL database of its own when DATABASE_URL is
 * set, spoken to over HTTP only.
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Redacted } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const here = Path.dirname(fileURLToPath(import.meta.url))
const example = Path.resolve(here, "..")
const tsx = Path.resolve(example, "../../node_modules/tsx/dist/cli.mjs")

export interface Core {
  readonly url: string
  readonly token: string
  readonly output: () => string
  readonly call: (
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>
  ) => Promise<Answer>
  readonly stop: () => Promise<void>
}

export interface Answer {
  readonly status: number
  /** The parsed JSON: tests read it field by field and compare it whole. */
  readonly body: any
  readonly headers: Headers
}

/** Which databases to run on: PGlite always, PostgreSQL too when the environment names one. */
export const databases: ReadonlyArray<"pglite" | "postgres"> = process.env.DATABASE_URL
  ? ["pglite", "postgres"]
  : ["pglite"]

const onServer = (url: string, statement: string) =>
  Effect.runPromise(
    Effect.scoped(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(statement)).pipe(
        Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 }))
      )
    )
  )

/** Starts a core; `faults` is WALLET_CORE_FAULTS. */
export const start = async (database: "pglite" | "postgres", faults = ""): Promise<Core> => {
  const token = `test-${randomUUID()}`
  const dataDir = mkdtempSync(Path.join(tmpdir(), "wallet-core-"))
  let databaseUrl = ""
  let dropDatabase = async () => {}
  if (database === "postgres") {
    const base = new URL(process.env.DATABASE_URL!)
    const name = `wallet_core_${randomUUID().replaceAll("-", "")}`
    await onServer(base.toString(), `CREATE DATABASE ${name}`)
    const own = new URL(base)
    own.pathname = `/${name}`
    databaseUrl = own.toString()
    dropDatabase = () =>
      onServer(base.toString(), `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).then(() => {})
  }
  const child: ChildProcess = spawn(process.execPath, [tsx, "-C", "@laari/source", "src/main.ts"], {
    cwd: example,
    env: {
      ...process.env,
      PORT: "0",
      WALLET_CORE_TOKEN: token,
      WALLET_CORE_DATA_DIR: dataDir,
      WALLET_CORE_FAULTS: faults,
      DATABASE_URL: databaseUrl
    },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout!.on("data", (d) => (output += d))
  child.stderr!.on("data", (d) => (output += d))
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))

  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`wallet-core did not start:\n${output}`)), 90_000)
    const look = () => {
      const found = /^WALLET_CORE_URL=(\S+)$/m.exec(output)
      if (found) {
        clearTimeout(timer)
        resolve(found[1]!)
      }
    }
    child.stdout!.on("data", look)
    child.once("exit", () => reject(new Error(`wallet-core exited:\n${output}`)))
  })

  const call: Core["call"] = async (method, path, body, headers = {}) => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        "request-id": randomUUID(),
        ...(body === undefined ? {} : { "content-type": "application/json" }),
        ...headers
      },
      body: body === undefined ? undefined : JSON.stringify(body)
    })
    const text = await res.text()
    let parsed: unknown = text
    try {
      parsed = JSON.parse(text)
    } catch {}
    return { status: res.status, body: parsed, headers: res.headers }
  }

  const stop = async () => {
    child.kill("SIGTERM")
    await exited
    rmSync(dataDir, { recursive: true, force: true })
    await dropDatabase()
  }
  return { url, token, output: () => output, call, stop }
}

let phones = 0
/** A phone number no other wallet of this process has. */
const phone = () => `+960${String(7_000_000 + process.pid * 1000 + ++phones).slice(-7)}`

/** Seeds a wallet through the admin endpoint and returns its id. */
export const openWallet = async (
  core: Core,
  wallet: { balance: number; status?: string; limit?: number | null }
): Promise<string> => {
  const id = `w-${randomUUID()}`
  const res = await core.call("POST", "/admin/wallets", { id, phone: phone(), ...wallet })
  if (res.status !== 201) throw new Error(`seeding failed: ${res.status} ${JSON.stringify(res.body)}`)
  return id
}

/** Every wallet's balance, by id. */
export const balances = async (core: Core): Promise<Record<string, number>> => {
  const res = await core.call("GET", "/admin/wallets")
  return Object.fromEntries(res.body.wallets.map((w: { id: string; balance: number }) => [w.id, w.balance]))
}

export const total = (b: Record<string, number>) => Object.values(b).reduce((a, n) => a + n, 0)

/** A payment request, every field set. */
export const payment = (
  from: string,
  to: string,
  amount: number,
  fee: { to: string; amount: number } | null = null
) => ({
  id: randomUUID(),
  environment: "live",
  from,
  to,
  amount,
  fee,
  memo: "test payment",
  kind: "payment"
})
