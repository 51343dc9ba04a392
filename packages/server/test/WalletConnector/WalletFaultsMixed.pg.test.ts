/**
 * The wallet connector's fault suite for every kind of payment at once: renewals, QR payments, refunds
 * and mandate charges through the reference wallet core, a fault proxy between, both on PostgreSQL, laari
 * on a manual clock that a ticker moves on (so renewals come due within a test: each round jumps a month).
 * Each dynamic QR code is paid twice at once and each refund asked twice at once, so holds are tested
 * under every fault. After each fault, read from both databases:
 * - the core's postings are exactly laari's posted movements, amount for amount;
 * - each posted movement is its cause's record (a charge, a QR payment, a refund, a paid invoice), and
 *   each such record has its posted movement;
 * - a dynamic code is paid at most once, a payment refunded at most in full, an invoice paid at most once;
 * - nothing is left pending or `CHARGING`;
 * - the core's money is conserved, and reconciliation of the day finds no break.
 */
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Fixtures from "../support/Fixtures.js"
import * as HttpFaults from "../support/HttpFaults.js"
import * as ServerProcess from "../support/ServerProcess.js"
import { postgresUrl } from "../support/TestDatabase.js"
import * as TestServer from "../support/TestServer.js"
import * as Rig from "../support/WalletFaultRig.js"
import * as WalletCore from "../support/WalletCore.js"

const suite = postgresUrl === undefined ? describe.skip : describe
if (postgresUrl === undefined)
  console.warn("WalletFaultsMixed.pg.test.ts SKIPPED: set DATABASE_URL to run the mixed wallet fault suite")

const Subscriptions = 6
const Codes = 6
const Refunds = 4
const Charges = 8
const Charge = 2_000

suite("every kind of payment through the wallet connector under faults", () => {
  let core: WalletCore.Core
  let faults: HttpFaults.FaultProxy
  let laari: ServerProcess.ServerProcess
  let laariDb: { url: string; drop: () => Promise<void> }
  let merchant = { id: "", key: "", outletId: 0 }
  let mandateId = ""
  let port = 0
  let ticking = true
  let ticker: Promise<void> = Promise.resolve()
  const figures: Array<string> = []
  const interim = new Map<string, number>()
  /** Charges of earlier rounds not yet refunded: the next round refunds them. */
  const refundable: Array<{ id: string; amount: number }> = []

  const env = () => ({
    DATABASE_URL: laariDb.url,
    LAARI_OPS_TOKEN: TestServer.OpsToken,
    LAARI_PROCESSES: "1",
    LAARI_RATE_LIMIT: "0",
    LAARI_CLOCK: "manual",
    LAARI_WALLET_URL: faults.url,
    LAARI_WALLET_TOKEN: core.token,
    LAARI_WALLET_ENVIRONMENTS: "test,live",
    LAARI_WALLET_TIMEOUT_MS: "600",
    LAARI_WALLET_CANCEL_AFTER_S: "8"
  })
  const api = () => TestServer.client(laari.baseUrl)
  const query = <A>(statement: string) => Rig.query<A>(laariDb.url, statement)
  const startLaari = async () => {
    laari = await ServerProcess.start({ env: env(), ...(port === 0 ? {} : { port }) })
    port = laari.port
  }

  /** Moves the manual clock a second at a time, so the resolver's looks and the breaker's pauses come due. */
  const tick = async () => {
    while (ticking) {
      await api()
        .ops("POST", "/ops/clock/advance", { by_seconds: 1 })
        .catch(() => undefined)
      await new Promise((r) => setTimeout(r, 300))
    }
  }

  const keyed = (method: "POST", path: string, body: Record<string, unknown>) => {
    const idempotencyKey = randomUUID()
    return Rig.untilFinal(
      () =>
        api().request(method, path, {
          key: merchant.key,
          body,
          headers: { "idempotency-key": idempotencyKey }
        }),
      interim
    )
  }

  /** One round: a month's renewals, then charges, QR payments and refunds at once, under `fault`. */
  const round = async (name: string, during: () => Promise<void> = async () => {}) => {
    const started = Date.now()
    interim.clear()
    const toRefund = refundable.splice(0, Refunds)
    // The month's renewals first, under the fault (the ticker waits: one advance at a time).
    ticking = false
    await ticker
    const advanced = await api()
      .ops("POST", "/ops/clock/advance", { by_seconds: 32 * 86_400 })
      .catch(() => undefined)
    ticking = true
    ticker = tick()
    const codes = await Promise.all(
      Array.from({ length: Codes }, async () => {
        const res = await api().request("POST", "/qr-codes", {
          key: merchant.key,
          body: { outlet_id: merchant.outletId, type: "DYNAMIC", amount: 1_500 }
        })
        expect(res.status).toBe(201)
        return res.body as { id: string; payload: string }
      })
    )
    const work = Promise.all([
      Promise.all(
        Array.from({ length: Charges }, () =>
          keyed("POST", `/mandates/${mandateId}/charges`, { amount: Charge })
        )
      ),
      Promise.all(
        codes.flatMap((c) =>
          [0, 1].map(() => keyed("POST", "/test-helpers/qr-codes/pay", { payload: c.payload }))
        )
      ),
      Promise.all(
        toRefund.flatMap((c) =>
          [0, 1].map(() => keyed("POST", "/refunds", { charge_id: c.id, amount: Math.ceil(c.amount * 0.6) }))
        )
      )
    ])
    await during()
    const [charged, paid, refunds] = await work
    await Rig.settled(laariDb.url)
    await noCharging()
    // Each code paid once, its second payment refused as already paid.
    for (let i = 0; i < codes.length; i++) {
      const pair = paid.slice(2 * i, 2 * i + 2).map((f) => f.response)
      expect(pair.filter((r) => r.status === 201).length).toBeLessThanOrEqual(1)
    }
    // Each charge's two refunds of 60%: never both.
    for (let i = 0; i < toRefund.length; i++) {
      const pair = refunds.slice(2 * i, 2 * i + 2).map((f) => f.response)
      expect(pair.filter((r) => r.status === 201).length).toBeLessThanOrEqual(1)
    }
    const ok = charged.filter((f) => f.response.status === 201).map((f) => f.response.body)
    refundable.push(...ok.map((c: any) => ({ id: c.id as string, amount: c.amount as number })))
    await checkInvariants()
    const [renewed] = await query<{ paid: string; missed: string }>(
      `SELECT count(*) FILTER (WHERE status = 'posted') AS paid, count(*) FILTER (WHERE status <> 'posted') AS missed
        FROM wallet_movements WHERE cause = 'invoice'`
    )
    const count = (list: ReadonlyArray<Rig.Final>) => list.filter((f) => f.response.status === 201).length
    const retries = [...charged, ...paid, ...refunds].reduce((n, f) => n + f.attempts - 1, 0)
    figures.push(
      `${name}: ${charged.length} charges (${count(charged)} ok), ${paid.length} QR payments (${count(paid)} ok), ${refunds.length} refunds (${count(refunds)} ok), renewals so far ${renewed!.paid} paid and ${renewed!.missed} missed (the month's advance ${advanced?.status ?? "lost"}), ${retries} retries ${JSON.stringify(Object.fromEntries(interim))}, faults ${JSON.stringify(faults.applied())}, 0 breaks, ${Date.now() - started} ms`
    )
  }

  /** Waits until no invoice is left `CHARGING` (an attempt whose movement settled is written back). */
  const noCharging = async () => {
    const deadline = Date.now() + 60_000
    for (;;) {
      const [row] = await query<{ n: string }>(`SELECT count(*) AS n FROM invoices WHERE status = 'CHARGING'`)
      if (Number(row!.n) === 0) return
      if (Date.now() > deadline) throw new Error(`${row!.n} invoices still CHARGING`)
      await new Promise((r) => setTimeout(r, 250))
    }
  }

  const checkInvariants = async () => {
    const movements = await query<{
      id: string
      status: string
      cause: string
      cause_id: string
      amount: string
    }>(`SELECT id::text, status, cause, cause_id, amount FROM wallet_movements`)
    const posted = movements.filter((m) => m.status === "posted")
    const inCore = await core.posted()
    expect(inCore.map((t) => t.id).sort()).toEqual(posted.map((m) => m.id).sort())
    const byId = new Map(posted.map((m) => [m.id, m]))
    for (const t of inCore) expect(t.amount).toBe(Number(byId.get(t.id)!.amount))
    const causes = (cause: string) =>
      posted
        .filter((m) => m.cause === cause)
        .map((m) => m.cause_id)
        .sort()
    const ids = async (statement: string) => (await query<{ id: string }>(statement)).map((r) => r.id).sort()
    expect(causes("mandate-charge")).toEqual(await ids(`SELECT id::text FROM mandate_charges`))
    expect(causes("qr-payment")).toEqual(await ids(`SELECT id::text FROM qr_payments`))
    expect(causes("refund")).toEqual(await ids(`SELECT id::text FROM refunds`))
    expect(causes("checkout").length).toBe(Subscriptions)
    // Each paid invoice after the first cycle is paid by exactly one posted movement of its own.
    const paidInvoices = await ids(`SELECT id::text FROM invoices WHERE status = 'PAID' AND period_index > 0`)
    expect(
      causes("invoice")
        .map((c) => c.split(":")[0])
        .sort()
    ).toEqual(paidInvoices)
    // A dynamic code paid at most once; a payment refunded at most in full.
    const twice = await query(`SELECT qr_code_id FROM qr_payments GROUP BY qr_code_id HAVING count(*) > 1`)
    expect(twice).toEqual([])
    const over = await query(
      `SELECT c.id FROM mandate_charges c JOIN refunds r ON r.charge_id = c.id
        GROUP BY c.id, c.amount HAVING sum(r.amount) > c.amount`
    )
    expect(over).toEqual([])
    const money = await core.totals()
    expect(money.balances).toBe(money.opening)
    const run = await api().ops("POST", "/ops/reconciliation/runs", { date: Rig.maldivesToday() })
    expect(run.status).toBe(200)
    expect(run.body.breaks).toEqual([])
  }

  beforeAll(async () => {
    core = await WalletCore.start()
    faults = await HttpFaults.start(core.url)
    laariDb = await WalletCore.database(postgresUrl!)
    await startLaari()
    const created = await Fixtures.merchant(api() as TestServer.TestServer)
    merchant = { id: created.id, key: created.test, outletId: created.outletId }
    const [payer] = await query<{ sandbox_payer_id: string }>(
      `SELECT sandbox_payer_id::text FROM merchants WHERE id = '${merchant.id}'`
    )
    await core.openWallet({ id: payer!.sandbox_payer_id, balance: 5_000_000 })
    await core.openWallet({ id: merchant.id, balance: 0 })
    await core.openWallet({ id: "laari-fees", balance: 0 })
    ticker = tick()
    const mandate = await api().request("POST", "/mandates", {
      key: merchant.key,
      body: Fixtures.mandateBody({ per_charge_cap: 10_000 })
    })
    expect(mandate.status).toBe(201)
    mandateId = mandate.body.id
    await Fixtures.paidSubscriptions(api() as TestServer.TestServer, merchant.key, Subscriptions, "faults")
  }, 180_000)

  afterAll(async () => {
    console.info(`mixed wallet fault suite:\n  ${figures.join("\n  ")}`)
    ticking = false
    await ticker
    await laari?.stop()
    await faults?.close()
    await core?.stop()
    await laariDb?.drop()
  })

  const transfers = /^\/transfers$/

  it("with no fault", async () => {
    await round("no fault")
  }, 180_000)

  it("answers dropped after the core committed, and held past the timeout", async () => {
    faults.setFaults([
      { fault: "drop-after-commit", method: "POST", path: transfers, count: 12 },
      { fault: "delay", ms: 1_500, method: "POST", path: transfers, count: 8 }
    ])
    await round("dropped and delayed")
  }, 180_000)

  it("500 before and after the core, and resets", async () => {
    faults.setFaults([
      { fault: "error-500-before", method: "POST", path: transfers, count: 6 },
      { fault: "error-500-after", method: "POST", path: transfers, count: 6 },
      { fault: "reset", count: 6 }
    ])
    await round("500 and reset")
  }, 180_000)

  it("the core's answers lost until laari cancels: the cancel's answer is final", async () => {
    faults.setFaults([
      { fault: "reset", method: "POST", path: transfers, count: 10 },
      { fault: "error-500-before", method: "GET", path: /^\/transfers\/[^/]+$/, count: 200 }
    ])
    await round("lost until cancelled")
  }, 240_000)

  it("the core killed with SIGKILL mid-payment and restarted", async () => {
    faults.setFaults([{ fault: "delay", ms: 300, method: "POST", path: transfers, count: 100 }])
    await round("core SIGKILL", async () => {
      await new Promise((r) => setTimeout(r, 200))
      await core.kill()
      await new Promise((r) => setTimeout(r, 2_000))
      await core.restart()
    })
  }, 240_000)

  it("laari killed with SIGKILL mid-payment and restarted", async () => {
    faults.setFaults([{ fault: "delay", ms: 400, method: "POST", path: transfers, count: 100 }])
    await round("laari SIGKILL", async () => {
      await new Promise((r) => setTimeout(r, 300))
      laari.kill()
      await laari.exited
      await startLaari()
    })
  }, 240_000)
})
