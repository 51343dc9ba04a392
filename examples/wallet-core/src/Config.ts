/**
 * The service's settings, all from the environment. A bad value stops the start with one line that says
 * which variable and why, rather than a core that half works.
 */
import { randomBytes } from "node:crypto"
import * as Path from "node:path"

/** Test-only faults: each breaks one rule on purpose, so a conformance suite can show it notices. */
export interface Faults {
  /** A cancel of an id never seen records nothing, so a late `POST /transfers` of that id posts. */
  readonly noTombstones: boolean
  /** A repeat of a posted transfer moves the money again. */
  readonly doublePost: boolean
}

export interface Config {
  readonly host: string
  /** 0: any free port (the URL printed at start says which). */
  readonly port: number
  readonly token: string
  /** Whether the token was made at start (and so must be printed for a caller to use). */
  readonly tokenGenerated: boolean
  /** PostgreSQL; unset: PGlite in `dataDir`. */
  readonly databaseUrl: string | undefined
  readonly dataDir: string
  readonly faults: Faults
}

const knownFaults = ["no-tombstones", "double-post"]

export const fromEnv = (env: NodeJS.ProcessEnv): Config => {
  const port = Number(env.PORT ?? "4100")
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`PORT must be a port number, not ${env.PORT}`)
  const faults = (env.WALLET_CORE_FAULTS ?? "")
    .split(",")
    .map((f) => f.trim())
    .filter((f) => f !== "")
  const unknown = faults.find((f) => !knownFaults.includes(f))
  if (unknown !== undefined)
    throw new Error(`WALLET_CORE_FAULTS: unknown fault ${unknown} (known: ${knownFaults.join(", ")})`)
  const token = env.WALLET_CORE_TOKEN ?? ""
  return {
    host: env.HOST || "127.0.0.1",
    port,
    token: token || randomBytes(24).toString("base64url"),
    tokenGenerated: token === "",
    databaseUrl: env.DATABASE_URL || undefined,
    dataDir: Path.resolve(env.WALLET_CORE_DATA_DIR || ".data/wallet-core"),
    faults: { noTombstones: faults.includes("no-tombstones"), doublePost: faults.includes("double-post") }
  }
}
