/**
 * Mandate charges through the wallet connector, against the reference wallet core (examples/wallet-core)
 * in a child process on its own PostgreSQL database, laari on another, over real HTTP: a charge posts in
 * the core once and answers as the spec says; the core's refusal is the spec's refusal and releases the
 * cap; a core that cannot be reached answers `503 OUTCOME_UNKNOWN`, keeps the movement pending (counted
 * in the cap), and the resolver settles it once the core is back, where a retry under the same key
 * answers the settled charge; the circuit breaker refuses at once after repeated failures, and says so
 * in `/readyz`.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Fixtures from "../support/Fixtures.js"
import { postgresUrl } from "../support/TestDatabase.js"
import * as TestServer from "../support/TestServer.js"
import * as WalletCore from "../support/WalletCore.js"

const suite = postgresUrl === undefined ? describe.skip : describe
if (postgresUrl === undefined)
  console.warn("WalletConnectorCharges.pg.test.ts SKIPPED: set DATABASE_URL to run it against PostgreSQL")

suite("mandate charges through the wallet connector", () => {
  let core: WalletCore.Core
  let proxy: WalletCore.Proxy
  let laari: TestServer.LocalTestServer
  let merchant: Fixtures.Merchant
  let payerWallet: string
  let stopDatabase: () => Promise<void>

  const rows = <A extends object>(statement: string) =>
    laari.sql(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<A>(statement)))

  const movement = async (chargeOrMovement: string) =>
    (
      await rows<{ id: string; status: string; reason: string | null; amount: string }>(
        `SELECT id, status, reason, amount FROM wallet_movements WHERE id::text = '${chargeOrMovement}' OR cause_id = '${chargeOrMovement}'`
      )
    )[0]

  const mandate = async (overrides: Record<string, unknown> = {}) => {
    const res = await laari.request("POST", "/mandates", {
      key: merchant.test,
      body: Fixtures.mandateBody({
        per_charge_cap: 50_000,
        period_cap: 100_000,
        period: "MONTH",
        ...overrides
      })
    })
    expect(res.status).toBe(201)
    return res.body.id as string
  }

  const charge = (mandateId: string, amount: number, key?: string) =>
    laari.request("POST", `/mandates/${mandateId}/charges`, {
      key: merchant.test,
      body: { amount },
      headers: key === undefined ? {} : { "idempotency-key": key }
    })

  /** Waits, within a bound, until `check` holds. */
  const eventually = async (check: () => Promise<boolean>, ms = 30_000) => {
    const until = Date.now() + ms
    while (Date.now() < until) {
      if (await check()) return
      await new Promise((r) => setTimeout(r, 200))
    }
    throw new Error("did not happen in time")
  }

  beforeAll(async () => {
    core = await WalletCore.start()
    proxy = await WalletCore.proxy(core)
    const database = await WalletCore.database(postgresUrl!)
    stopDatabase = database.drop
    laari = await TestServer.start({
      databaseUrl: database.url,
      config: {
        clock: "system",
        development: true,
        walletConnector: {
          url: proxy.url,
          token: core.tokenRedacted,
          environments: ["test", "live"],
          timeoutMs: 1_000,
          cancelAfterS: 30,
          feeWallet: "laari-fees"
        }
      }
    })
    merchant = await Fixtures.merchant(laari)
    const [payer] = await rows<{ sandbox_payer_id: string }>(
      `SELECT sandbox_payer_id FROM merchants WHERE id = '${merchant.id}'`
    )
    payerWallet = payer!.sandbox_payer_id
    await core.openWallet({ id: payerWallet, balance: 120_000 })
    await core.openWallet({ id: merchant.id, balance: 0 })
    await core.openWallet({ id: "laari-fees", balance: 0 })
  }, 120_000)

  afterAll(async () => {
    await laari?.close()
    await proxy?.close()
    await core?.stop()
    await stopDatabase?.()
  })

  it("a charge posts in the core once, the fee to the fee wallet, and answers 201", async () => {
    const id = await mandate()
    const res = await charge(id, 10_000)
    expect(res.status).toBe(201)
    expect(res.body).toMatchObject({ amount: 10_000, status: "SUCCEEDED", fee: 100, netAmount: 9_900 })
    const m = await movement(res.body.id)
    expect(m).toMatchObject({ status: "posted" })
    const posted = await core.transfers(m!.id)
    expect(posted).toEqual([expect.objectContaining({ status: "posted", amount: 10_000 })])
    expect(await core.balance(merchant.id)).toBe(9_900)
    expect(await core.balance("laari-fees")).toBe(100)
  })

  it("the core's refusal is the spec's refusal, moves nothing, and releases the cap", async () => {
    const id = await mandate({ per_charge_cap: 200_000, period_cap: 200_000 })
    const before = await core.balance(payerWallet)
    const refused = await charge(id, before + 1)
    expect(refused.status).toBe(402)
    expect(refused.body.code).toBe("INSUFFICIENT_FUNDS")
    expect(await core.balance(payerWallet)).toBe(before)
    const [row] = await rows<{ status: string; reason: string }>(
      `SELECT status, reason FROM wallet_movements ORDER BY created_at DESC LIMIT 1`
    )
    expect(row).toMatchObject({ status: "refused", reason: "insufficient-balance" })
    // Had the refused amount stayed counted, this would pass the period cap of 200,000.
    const [mandateRow] = await rows<{ period_charged: string }>(
      `SELECT period_charged FROM mandates WHERE id = '${id}'`
    )
    expect(Number(mandateRow!.period_charged)).toBe(0)
    expect((await charge(id, 1_000)).status).toBe(201)
  })

  it("an unreachable core: 503 OUTCOME_UNKNOWN, pending counted in the cap, settled once it is back; a retry under the key answers the charge", async () => {
    const id = await mandate({ per_charge_cap: 60_000, period_cap: 60_000 })
    await proxy.refuse()
    const first = await charge(id, 50_000, "retry-after-outage")
    expect(first.status).toBe(503)
    expect(first.body.code).toBe("OUTCOME_UNKNOWN")
    expect(first.headers.get("retry-after")).not.toBeNull()
    // Pending, and counted: a second charge of the same mandate cannot overrun the cap meanwhile.
    const [pending] = await rows<{ id: string; status: string }>(
      `SELECT id, status FROM wallet_movements WHERE status = 'pending' ORDER BY created_at DESC LIMIT 1`
    )
    expect(pending?.status).toBe("pending")
    const over = await charge(id, 20_000)
    expect(over.status).toBe(422)
    expect(over.body.code).toBe("PERIOD_CAP_EXCEEDED")
    // A retry while the core is still away answers the same: unknown, not a second payment.
    expect((await charge(id, 50_000, "retry-after-outage")).body.code).toBe("OUTCOME_UNKNOWN")
    await proxy.restore()
    await eventually(async () => (await movement(pending!.id))?.status === "posted")
    const retried = await charge(id, 50_000, "retry-after-outage")
    expect(retried.status).toBe(201)
    expect(retried.body).toMatchObject({ amount: 50_000, status: "SUCCEEDED" })
    expect(await core.transfers(pending!.id)).toHaveLength(1)
    // The key now holds the charge: the next retry replays it.
    const again = await charge(id, 50_000, "retry-after-outage")
    expect(again.status).toBe(201)
    expect(again.body.id).toBe(retried.body.id)
    expect(again.headers.get("idempotent-replay")).toBe("true")
  }, 60_000)

  it("the breaker opens after repeated failures: new payments are refused at once, /readyz says so", async () => {
    const id = await mandate()
    await proxy.refuse()
    for (let i = 0; i < 5; i++) await charge(id, 100)
    const started = Date.now()
    const refused = await charge(id, 100)
    expect(Date.now() - started).toBeLessThan(500)
    expect(refused.status).toBe(503)
    expect(refused.body.code).toBe("SERVICE_UNAVAILABLE")
    const ready = await laari.request("GET", "/readyz")
    expect(ready.body.wallet_connector).toMatchObject({ circuit: "open" })
    expect(ready.body.wallet_connector.pending_movements).toBeGreaterThan(0)
    await proxy.restore()
    // The resolver's answers close it; every pending movement settles.
    await eventually(async () => {
      const r = await laari.request("GET", "/readyz")
      return r.body.wallet_connector.circuit === "closed" && r.body.wallet_connector.pending_movements === 0
    })
    expect((await charge(id, 100)).status).toBe(201)
  }, 90_000)

  it("the merchant's balance, its transactions and the day's settlement report are what the core posted", async () => {
    // Every earlier test's posted charge credited the merchant's wallet in the core; nothing else has.
    const balance = await laari.request("GET", "/balance", { key: merchant.test })
    expect(balance.status).toBe(200)
    const inCore = await core.balance(merchant.id)
    expect(inCore).toBeGreaterThan(0)
    expect(balance.body.available).toBe(inCore)
    const posted = await rows<{ id: string; cause_id: string; amount: string; fee: string }>(
      `SELECT id, cause_id, amount, fee FROM wallet_movements WHERE status = 'posted' AND environment = 'test'`
    )
    const list = await laari.request("GET", "/balance-transactions?limit=100", { key: merchant.test })
    expect(list.status).toBe(200)
    // Each row is the core's transfer, under the id the core holds, naming the charge it paid.
    expect(list.body.data.map((r: any) => [r.id, r.type, r.sourceId, r.gross, r.fee, r.net]).sort()).toEqual(
      posted
        .map((p) => [
          p.id,
          "charge",
          p.cause_id,
          Number(p.amount),
          Number(p.fee),
          Number(p.amount) - Number(p.fee)
        ])
        .sort()
    )
    // Paged by its own ids.
    const first = await laari.request("GET", "/balance-transactions?limit=1", { key: merchant.test })
    const rest = await laari.request(
      "GET",
      `/balance-transactions?limit=100&starting_after=${first.body.data[0].id}`,
      {
        key: merchant.test
      }
    )
    expect(rest.body.data.length).toBe(posted.length - 1)
    // The report of each Maldives day a charge posted on (a run may straddle midnight there).
    const days = await rows<{ day: string }>(
      `SELECT DISTINCT to_char(posted_at AT TIME ZONE 'Indian/Maldives', 'YYYY-MM-DD') AS day
        FROM wallet_movements WHERE status = 'posted' AND environment = 'test'`
    )
    let reported = 0
    for (const { day } of days) {
      const report = await laari.request("GET", `/reports/settlement?date=${day}`, { key: merchant.test })
      expect(report.status).toBe(200)
      reported += Number(report.text.trim().split("\n").at(-1)!.split(",").at(-1))
    }
    expect(reported).toBe(inCore)
  })

  it("live: a customer unknown to laari is found in the core by phone at approval, linked, and charged from that wallet", async () => {
    await laari.ops("POST", `/ops/merchants/${merchant.id}/features`, { mandates_live: true })
    const walletId = `w-live-${Date.now()}`
    const phone = `+9607${String(Date.now()).slice(-6)}`
    await core.openWallet({ id: walletId, phone, balance: 50_000 })
    const created = await laari.request("POST", "/mandates", {
      key: merchant.live,
      body: Fixtures.mandateBody({ per_charge_cap: 20_000 })
    })
    expect(created.status).toBe(201)
    const id = created.body.id as string
    const asked = await laari.request("POST", `/approvals/mandates/${id}/challenge`, { body: { phone } })
    expect(asked.status).toBe(200)
    const [customer] = await rows<{ id: string; wallet_id: string }>(
      `SELECT id, wallet_id FROM customers WHERE phone = '${phone}' AND environment = 'live'`
    )
    expect(customer?.wallet_id).toBe(walletId)
    const notes = await laari.ops("GET", `/ops/customers/${customer!.id}/notifications`)
    const code = notes.body.find((n: any) => n.kind === "one_time_code")?.data.code
    const approved = await laari.request("POST", `/approvals/mandates/${id}/approve`, {
      body: { challenge_id: asked.body.challenge_id, otp: code }
    })
    expect(approved.status).toBe(200)
    const charged = await laari.request("POST", `/mandates/${id}/charges`, {
      key: merchant.live,
      body: { amount: 5_000 }
    })
    expect(charged.status).toBe(201)
    expect(await core.balance(walletId)).toBe(45_000)
    // A phone neither side knows is no customer.
    const other = await laari.request("POST", "/mandates", {
      key: merchant.live,
      body: Fixtures.mandateBody()
    })
    const unknown = await laari.request("POST", `/approvals/mandates/${other.body.id}/challenge`, {
      body: { phone: "+9602999999" }
    })
    expect(unknown.status).toBe(404)
  })
})
