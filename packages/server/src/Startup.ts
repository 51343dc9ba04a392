/**
 * Start-up failures a newcomer can act on: the port is taken, the database named in `DATABASE_URL` does
 * not exist, PostgreSQL cannot be reached or refuses the user, `DATABASE_URL` is malformed (a host list
 * libpq would not read, an unknown `target_session_attrs`), or every host it lists is a standby. Each becomes one line saying what to do,
 * and the process exits with `ConfigExitCode`, which the supervisor of several processes (`Processes`)
 * never answers with a restart: starting again cannot help until the configuration changes.
 */
import * as Net from "node:net"
import { Cause } from "effect"
import * as HostList from "./Sql/Pg/HostList.js"
import * as Primary from "./Sql/Pg/Primary.js"

/** `EX_CONFIG` of sysexits.h: a configuration error. */
export const ConfigExitCode = 78

interface Target {
  readonly port: number
  readonly databaseUrl: string | undefined
}

/** Every error in `cause`, and every error each was caused by. */
const chain = (cause: Cause.Cause<unknown>): ReadonlyArray<Record<string, unknown>> => {
  const out: Array<Record<string, unknown>> = []
  const visit = (e: unknown, depth: number) => {
    if (typeof e !== "object" || e === null || depth > 8) return
    out.push(e as Record<string, unknown>)
    visit((e as { cause?: unknown }).cause, depth + 1)
    visit((e as { error?: unknown }).error, depth + 1)
  }
  for (const e of [...Cause.failures(cause), ...Cause.defects(cause)]) visit(e, 0)
  return out
}

const postgres = (databaseUrl: string) => {
  try {
    // A host list is no WHATWG URL: its first host's own URL has the same user and database.
    const list = HostList.parse(databaseUrl)
    const u = new URL(list === undefined ? databaseUrl : list.hosts[0]!.urls[0]!)
    const host = u.hostname === "" ? "localhost" : decodeURIComponent(u.hostname)
    const port = u.port === "" ? "5432" : u.port
    return {
      host,
      port,
      where: `PostgreSQL at ${list === undefined ? `${host}:${port}` : HostList.describe(list)}`,
      user: u.username === "" ? "postgres" : decodeURIComponent(u.username),
      database: decodeURIComponent(u.pathname.replace(/^\//, "")) || "postgres"
    }
  } catch {
    return undefined
  }
}

const unreachable = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH"
])

export const portInUse = (port: number) =>
  `port ${port} is already in use: stop what listens on it, or start laari on another port with PORT=<port>`

/** One line for a start-up failure caused by the configuration; `undefined` for anything else. */
export const explain = (cause: Cause.Cause<unknown>, target: Target): string | undefined => {
  const errors = chain(cause)
  const code = (c: string) => errors.find((e) => e.code === c)
  if (code("EADDRINUSE") !== undefined) return portInUse(target.port)
  if (code("EACCES") !== undefined && errors.some((e) => e.syscall === "listen"))
    return `port ${target.port} needs privileges this process does not have: use PORT=<port> with a port above 1023`
  if (target.databaseUrl === undefined) return undefined
  const malformed = code("LAARI_BAD_DATABASE_URL")
  if (malformed !== undefined) return `DATABASE_URL cannot be used: ${String(malformed.message)}`
  const db = postgres(target.databaseUrl)
  if (db === undefined) return undefined
  const { where } = db
  const noPrimary = errors.find(
    (e): e is Record<string, unknown> & Primary.NoPrimary => e instanceof Primary.NoPrimary
  )
  if (noPrimary?.allStandbys)
    return `every host of DATABASE_URL is a standby (read-only): ${where}. Name the primary among them, or promote one (pg_autoctl show state tells which is which)`
  if (code("3D000") !== undefined)
    return `database "${db.database}" does not exist: create it with createdb -h ${db.host} -p ${db.port} -U ${db.user} ${db.database}, or name another in DATABASE_URL`
  if (code("28P01") !== undefined)
    return `${where} refused the password of user "${db.user}": correct it in DATABASE_URL`
  const refused = code("28000")
  if (refused !== undefined)
    return `${where} refused user "${db.user}" (${String(refused.message)}): correct the user in DATABASE_URL, or allow it in pg_hba.conf`
  const network = errors.find((e) => typeof e.code === "string" && unreachable.has(e.code))
  if (network !== undefined)
    return `cannot reach ${where} (${String(network.code)}): is PostgreSQL running there? Check DATABASE_URL`
  return undefined
}

/**
 * Whether something already answers on `port` here, asked before the database is opened so a taken port
 * is said at once and not after the migrations. It connects rather than listens: a probe that listened
 * would accept, then reset, the connections of clients already waiting for this service, and leave the
 * port closed until the real listen. Anything it cannot see (a listener on another interface only) the
 * real listen still reports, in the same words (`explain`).
 */
export const portTaken = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = Net.connect({ port, host: "127.0.0.1" })
    const done = (taken: boolean) => {
      socket.destroy()
      resolve(taken)
    }
    socket.setTimeout(1_000, () => done(false))
    socket.once("connect", () => done(true))
    socket.once("error", () => done(false))
  })
