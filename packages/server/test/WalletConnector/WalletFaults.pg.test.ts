/**
 * The wallet connector's fault suite: laari as a real server process, the reference wallet core as
 * another, a fault proxy between them, both on PostgreSQL. Concurrent keyed mandate charges run through
 * each fault (an answer dropped after the core committed, an answer held past laari's timeout, a `500`
 * before and after the core, a reset, the core's status and cancel calls failing until laari cancels, the
 * core killed with SIGKILL and restarted, laari killed with SIGKILL mid-payment and restarted); every client
 * retries under its key until it has a final answer. After each fault, read from both databases:
 * - every `201` charge is posted exactly once in the core, and every refusal moved nothing;
 * - nothing is posted in the core that laari does not hold as a settled, posted movement with its charge;
 * - no movement is left pending;
 * - no mandate's charges exceed its period cap, and its running total is their sum;
 * - the core's money is conserved (its balances sum to its opening balances);
 * - reconciliation of the day finds no break.
 */
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as HttpFaults from "../support/HttpFaults.js"
import * as ServerProcess from "../support/ServerProcess.js"
import * as Rig from "../support/WalletFaultRig.js"
import { postgresUrl } from "../support/TestDatabase.js"
import * as TestServer from "../support/TestServer.js"
import * as WalletCore from "../support/WalletCore.js"

const suite = postgresUrl === undefined ? describe.skip : describe
if (postgresUrl === undefined)
  console.warn("WalletFaults.pg.test.ts SKIPPED: set DATABASE_URL to run the wallet connector's fault suite")

const OpsToken = TestServer.OpsToken
const Mandates = 6
const PeriodCap = 40_000
const Charge = 3_000
/** More charges a mandate than its cap admits, so caps are tested under every fault. */
const ChargesPerMandate = 16

interface Outcome {
  readonly status: number
  readonly code?: string
  readonly chargeId?: string
  readonly attempts: number
}

suite("the wallet connector under faults", () => {
  let core: WalletCore.Core
  let faults: HttpFaults.FaultProxy
  let laari: ServerProcess.ServerProcess
  let laariDb: { url: string; drop: () => Promise<void> }
  let key = ""
  let merchantId = ""
  let port = 0
  const totals = { payments: 0, succeeded: 0, refused: 0, retries: 0 }
  const figures: Array<string> = []
  /** The answers that were not final, by status and code, in the current round. */
  const interim = new Map<string, number>()

  const env = () => ({
    DATABASE_URL: laariDb.url,
    LAARI_OPS_TOKEN: OpsToken,
    LAARI_PROCESSES: "1",
    LAARI_RATE_LIMIT: "0",
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

  /** A keyed charge retried under its key until its answer is final, within a bound. */
  const charge = async (mandateId: string): Promise<Outcome> => {
    const idempotencyKey = randomUUID()
    const { response: res, attempts } = await Rig.untilFinal(
      () =>
        api().request("POST", `/mandates/${mandateId}/charges`, {
          key,
          body: { amount: Charge },
          headers: { "idempotency-key": idempotencyKey }
        }),
      interim
    )
    return { status: res.status, code: res.body?.code, chargeId: res.body?.id, attempts }
  }

  const mandate = async () => {
    const res = await api().request("POST", "/mandates", {
      key,
      body: {
        reference: `faults-${randomUUID()}`,
        title: "Fault suite",
        per_charge_cap: 10_000,
        period_cap: PeriodCap,
        period: "MONTH"
      }
    })
    expect(res.status).toBe(201)
    return res.body.id as string
  }

  const settled = () => Rig.settled(laariDb.url)

  /** Charges of fresh mandates, all at once, while `during` runs; then everything settled and checked. */
  const round = async (name: string, during: () => Promise<void> = async () => {}) => {
    const started = Date.now()
    interim.clear()
    const ids = await Promise.all(Array.from({ length: Mandates }, mandate))
    const work = Promise.all(ids.flatMap((id) => Array.from({ length: ChargesPerMandate }, () => charge(id))))
    await during()
    const outcomes = await work
    await settled()
    const ok = outcomes.filter((o) => o.status === 201)
    const refused = outcomes.filter((o) => o.status !== 201)
    totals.payments += outcomes.length
    totals.succeeded += ok.length
    totals.refused += refused.length
    totals.retries += outcomes.reduce((n, o) => n + o.attempts - 1, 0)
    const breaks = await checkInvariants(ids, outcomes)
    figures.push(
      `${name}: ${outcomes.length} charges, ${ok.length} succeeded, ${refused.length} refused (${[...new Set(refused.map((o) => o.code))].join(", ")}), ${outcomes.reduce((n, o) => n + o.attempts - 1, 0)} retries (${JSON.stringify(Object.fromEntries(interim))}), faults so far ${JSON.stringify(faults.applied())}, ${breaks} breaks, ${Date.now() - started} ms`
    )
    return { outcomes, ok, refused }
  }

  const checkInvariants = async (mandateIds: ReadonlyArray<string>, outcomes: ReadonlyArray<Outcome>) => {
    const movements = await query<{ id: string; status: string; cause_id: string; amount: string }>(
      `SELECT id::text, status, cause_id, amount FROM wallet_movements`
    )
    const posted = new Map(movements.filter((m) => m.status === "posted").map((m) => [m.id, m]))
    const inCore = await core.posted()
    // Nothing posted in the core that laari does not hold as posted, and the other way round.
    expect(inCore.map((t) => t.id).sort()).toEqual([...posted.keys()].sort())
    for (const t of inCore) expect(t.amount).toBe(Number(posted.get(t.id)!.amount))
    // Each posted movement has its charge, each charge its posted movement.
    const charges = await query<{ id: string; mandate_id: string; amount: string }>(
      `SELECT id::text, mandate_id::text, amount FROM mandate_charges`
    )
    const chargeIds = new Set(charges.map((c) => c.id))
    expect([...posted.values()].map((m) => m.cause_id).sort()).toEqual([...chargeIds].sort())
    // Every 201 is a charge whose movement is posted once in the core; every refusal moved nothing.
    const postedCauses = new Set([...posted.values()].map((m) => m.cause_id))
    for (const o of outcomes) if (o.status === 201) expect(postedCauses.has(o.chargeId!)).toBe(true)
    expect(outcomes.filter((o) => o.status === 201).length).toBe(
      charges.filter((c) => mandateIds.includes(c.mandate_id)).length
    )
    // Caps never exceeded; each mandate's running total is the sum of its charges.
    const capped = await query<{ id: string; period_charged: string; total: string }>(
      `SELECT m.id::text, m.period_charged, coalesce(sum(c.amount), 0) AS total FROM mandates m
        LEFT JOIN mandate_charges c ON c.mandate_id = m.id GROUP BY m.id, m.period_charged`
    )
    for (const m of capped) {
      expect(Number(m.total)).toBeLessThanOrEqual(PeriodCap)
      expect(Number(m.period_charged)).toBe(Number(m.total))
    }
    const [pending] = await query<{ n: string }>(
      `SELECT count(*) AS n FROM wallet_movements WHERE status = 'pending'`
    )
    expect(Number(pending!.n)).toBe(0)
    const money = await core.totals()
    expect(money.balances).toBe(money.opening)
    // Reconciliation of today (Maldives) through the operator API: no break.
    const run = await api().ops("POST", "/ops/reconciliation/runs", { date: Rig.maldivesToday() })
    expect(run.status).toBe(200)
    expect(run.body.breaks).toEqual([])
    return run.body.breaks.length as number
  }

  beforeAll(async () => {
    core = await WalletCore.start()
    faults = await HttpFaults.start(core.url)
    laariDb = await WalletCore.database(postgresUrl!)
    await startLaari()
    const created = await api().ops("POST", "/ops/merchants", {
      name: "Fault suite",
      outlets: [{ name: "Main" }]
    })
    expect(created.status).toBe(201)
    merchantId = created.body.id
    const keyed = await api().ops("POST", `/ops/merchants/${merchantId}/keys`, {
      environment: "test",
      kind: "secret"
    })
    key = keyed.body.key
    const [payer] = await query<{ sandbox_payer_id: string }>(
      `SELECT sandbox_payer_id::text FROM merchants WHERE id = '${merchantId}'`
    )
    // Enough for most of the charges, not all: some are refused INSUFFICIENT_FUNDS under the faults too.
    await core.openWallet({ id: payer!.sandbox_payer_id, balance: 2_000_000 })
    await core.openWallet({ id: merchantId, balance: 0 })
    await core.openWallet({ id: "laari-fees", balance: 0 })
  }, 180_000)

  afterAll(async () => {
    console.info(
      `wallet fault suite: ${totals.payments} payments (${totals.succeeded} succeeded, ${totals.refused} refused), ${totals.retries} retries\n  ${figures.join("\n  ")}`
    )
    await laari?.stop()
    await faults?.close()
    await core?.stop()
    await laariDb?.drop()
  })

  const transfers = /^\/transfers$/
  const anyTransfer = /^\/transfers\/[^/]+(\/cancel)?$/

  it("with no fault: every charge answered at once, the caps hold", async () => {
    const { ok, refused } = await round("no fault")
    expect(ok.length).toBe(Mandates * Math.floor(PeriodCap / Charge))
    expect(refused.every((o) => o.code === "PERIOD_CAP_EXCEEDED")).toBe(true)
  }, 180_000)

  it("answers dropped after the core committed", async () => {
    faults.setFaults([{ fault: "drop-after-commit", method: "POST", path: transfers, count: 20 }])
    await round("drop-after-commit")
  }, 180_000)

  it("answers held past laari's timeout", async () => {
    faults.setFaults([{ fault: "delay", ms: 1_500, method: "POST", path: transfers, count: 20 }])
    await round("delay")
  }, 180_000)

  it("500 before and after the core, and resets", async () => {
    faults.setFaults([
      { fault: "error-500-before", method: "POST", path: transfers, count: 8 },
      { fault: "error-500-after", method: "POST", path: transfers, count: 8 },
      { fault: "reset", count: 8 }
    ])
    await round("500 and reset")
  }, 180_000)

  it("the core's answers lost until laari cancels: the cancel's answer is final", async () => {
    faults.setFaults([
      { fault: "reset", method: "POST", path: transfers, count: 12 },
      { fault: "error-500-before", method: "GET", path: anyTransfer, count: 400 }
    ])
    const { refused } = await round("lost until cancelled")
    // Cancelled ones answer MANDATE_CHARGE_FAILED, having moved nothing.
    expect(refused.some((o) => o.code === "MANDATE_CHARGE_FAILED")).toBe(true)
  }, 180_000)

  it("the core killed with SIGKILL mid-payment and restarted", async () => {
    faults.setFaults([])
    await round("core SIGKILL", async () => {
      await new Promise((r) => setTimeout(r, 150))
      await core.kill()
      await new Promise((r) => setTimeout(r, 2_000))
      await core.restart()
    })
  }, 180_000)

  it("laari killed with SIGKILL mid-payment and restarted", async () => {
    faults.setFaults([{ fault: "delay", ms: 400, method: "POST", path: transfers, count: 200 }])
    await round("laari SIGKILL", async () => {
      await new Promise((r) => setTimeout(r, 300))
      laari.kill()
      await laari.exited
      await startLaari()
    })
  }, 240_000)
})
