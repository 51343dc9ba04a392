/**
 * A charge through the wallet connector reaches PostgreSQL in four round trips, two per transaction,
 * as a charge on the built-in ledger does in its one: the first commits the movement pending (with the
 * key's pending answer), the call goes out, the second settles it. Each batch's statements are recorded
 * by patching pg's client (as `Mandates.pg.test.ts` does) and grouped by connection, so what the
 * service's background work sends on other connections meanwhile is left aside.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Fixtures from "../support/Fixtures.js"
import { postgresUrl } from "../support/TestDatabase.js"
import * as TestServer from "../support/TestServer.js"
import * as WalletCore from "../support/WalletCore.js"

const suite = postgresUrl === undefined ? describe.skip : describe
if (postgresUrl === undefined)
  console.warn("WalletConnectorTrips.pg.test.ts SKIPPED: set DATABASE_URL to run it against PostgreSQL")

/**
 * A statement as the checks name it: its first three words (four for a SELECT, with its table), or a
 * write-behind flush's CTEs by what each does.
 */
const named = (text: string): string => {
  const flat = text.replace(/\s+/g, " ").trim()
  if (/^WITH w?\w+ AS \((INSERT|UPDATE|DELETE)/.test(flat))
    return `writes: ${[...flat.matchAll(/\w+ AS \((INSERT INTO|UPDATE) "?(\w+)/g)]
      .map((m) => `${m[1] === "UPDATE" ? "update" : "insert"} ${m[2]}`)
      .join(", ")}`
  const words = flat.split(" ")
  return words.slice(0, words[0] === "SELECT" ? 4 : 3).join(" ")
}

interface Trip {
  readonly client: object
  readonly statements: ReadonlyArray<string>
}

/** The transaction of `client` whose first batch is `trips[at]`: its batches up to the one with COMMIT. */
const transactionAt = (trips: ReadonlyArray<Trip>, at: number): Array<ReadonlyArray<string>> => {
  const client = trips[at]!.client
  const batches: Array<ReadonlyArray<string>> = []
  for (const trip of trips.slice(at)) {
    if (trip.client !== client) continue
    batches.push(trip.statements)
    if (trip.statements.includes("COMMIT")) break
  }
  return batches
}

suite("a charge's round trips through the wallet connector", () => {
  let core: WalletCore.Core
  let laari: TestServer.LocalTestServer
  let merchant: Fixtures.Merchant
  let stopDatabase: () => Promise<void>
  const trips: Array<Trip> = []
  const query = pg.Client.prototype.query

  const rows = <A extends object>(statement: string) =>
    laari.sql(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<A>(statement)))

  beforeAll(async () => {
    core = await WalletCore.start()
    const database = await WalletCore.database(postgresUrl!)
    stopDatabase = database.drop
    laari = await TestServer.start({
      databaseUrl: database.url,
      config: {
        clock: "system",
        development: true,
        walletConnector: {
          url: core.url,
          token: core.tokenRedacted,
          environments: ["test", "live"],
          timeoutMs: 5_000,
          cancelAfterS: 30,
          feeWallet: "laari-fees"
        }
      }
    })
    merchant = await Fixtures.merchant(laari)
    const [payer] = await rows<{ sandbox_payer_id: string }>(
      `SELECT sandbox_payer_id FROM merchants WHERE id = '${merchant.id}'`
    )
    await core.openWallet({ id: payer!.sandbox_payer_id, balance: 10_000_000 })
    await core.openWallet({ id: merchant.id, balance: 0 })
    await core.openWallet({ id: "laari-fees", balance: 0 })
    pg.Client.prototype.query = function (this: pg.Client, ...args: Array<unknown>) {
      const q = args[0] as { readonly statements?: ReadonlyArray<{ readonly text: string }> }
      if (q?.statements !== undefined)
        trips.push({ client: this, statements: q.statements.map((s) => named(s.text)) })
      return (query as (...a: Array<unknown>) => unknown).apply(this, args)
    } as typeof query
  }, 120_000)

  afterAll(async () => {
    pg.Client.prototype.query = query
    await laari?.close()
    await core?.stop()
    await stopDatabase?.()
  })

  const charge = async (key?: string) => {
    const created = await laari.request("POST", "/mandates", {
      key: merchant.test,
      body: Fixtures.mandateBody({ per_charge_cap: 50_000, period_cap: 1_000_000, period: "MONTH" })
    })
    expect(created.status).toBe(201)
    const once = (idempotencyKey: string | undefined) =>
      laari.request("POST", `/mandates/${created.body.id}/charges`, {
        key: merchant.test,
        body: { amount: 1_000 },
        headers: idempotencyKey === undefined ? {} : { "idempotency-key": idempotencyKey }
      })
    // The payer's wallet, asked of the core on a first charge, is known for a while after it.
    expect((await once(undefined)).status).toBe(201)
    trips.length = 0
    const res = await once(key)
    expect(res.status).toBe(201)
    const seen = trips.slice()
    const settling = seen.findIndex(
      (t) => t.statements[0] === "BEGIN" && t.statements[1] === "SELECT * FROM wallet_movements"
    )
    expect(settling).toBeGreaterThan(0)
    return { seen, settling }
  }

  it("a keyed charge: the key's claim and the mandate's lock, then the pending movement and COMMIT; the movement's and the mandate's locks, then the settlement, the answer and COMMIT", async () => {
    const { seen, settling } = await charge("four-trips")
    const first = seen.findIndex((t) => t.statements.includes("INSERT INTO idempotency_keys"))
    expect(transactionAt(seen, first)).toEqual([
      ["BEGIN", "INSERT INTO idempotency_keys", "WITH m AS"],
      [
        "SAVEPOINT laari_part_1",
        "writes: insert wallet_movements, update mandates, update idempotency_keys",
        "COMMIT"
      ]
    ])
    const second = transactionAt(seen, settling)
    expect(second).toHaveLength(2)
    expect(second[0]).toEqual(["BEGIN", "SELECT * FROM wallet_movements", 'SELECT * FROM "mandates"'])
    expect(second[1]).toHaveLength(2)
    expect(second[1]![1]).toBe("COMMIT")
    expect(second[1]![0]).toMatch(
      /^writes: insert mandate_charges, update idempotency_keys, update wallet_movements, .*insert events/
    )
  }, 60_000)

  it("a charge without a key: the mandate's lock, then the pending movement and COMMIT; then the same settlement without the answer", async () => {
    const { seen, settling } = await charge()
    const first = seen.findIndex((t) => t.statements.includes("WITH m AS"))
    expect(transactionAt(seen, first)).toEqual([
      ["BEGIN", "WITH m AS"],
      ["writes: insert wallet_movements, update mandates", "COMMIT"]
    ])
    const second = transactionAt(seen, settling)
    expect(second).toHaveLength(2)
    expect(second[0]).toEqual(["BEGIN", "SELECT * FROM wallet_movements", 'SELECT * FROM "mandates"'])
    expect(second[1]![0]).toMatch(/^writes: insert mandate_charges, update wallet_movements, .*insert events/)
    expect(second[1]![0]).not.toContain("idempotency_keys")
  }, 60_000)
})
