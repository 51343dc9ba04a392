/**
 * Refunds through the wallet connector, against the reference wallet core (examples/wallet-core) in a
 * child process on its own PostgreSQL database, laari on another, over real HTTP (laari -> a fault proxy
 * -> a TCP proxy -> the core): a refund is one `reversal` posted in the core from the merchant's wallet
 * to the payer's, recorded once; refunds pending count against what remains of the payment, and hold
 * their reference; the merchant's wallet short in the core is the merchant's balance too low, nothing
 * recorded; a core that cannot be reached answers `503 OUTCOME_UNKNOWN`, a retry under the key meanwhile
 * sends nothing, and once the resolver settled it the retry answers the refund.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Fixtures from "../support/Fixtures.js"
import * as HttpFaults from "../support/HttpFaults.js"
import { postgresUrl } from "../support/TestDatabase.js"
import * as TestServer from "../support/TestServer.js"
import * as WalletCore from "../support/WalletCore.js"

const suite = postgresUrl === undefined ? describe.skip : describe
if (postgresUrl === undefined)
  console.warn("WalletConnectorRefunds.pg.test.ts SKIPPED: set DATABASE_URL to run it against PostgreSQL")

/** A merchant with its wallet and its sandbox payer's in the core, and a mandate of that payer's. */
interface Shop {
  readonly merchant: Fixtures.Merchant
  readonly payerWallet: string
  readonly mandateId: string
}

suite("refunds through the wallet connector", () => {
  let core: WalletCore.Core
  let proxy: WalletCore.Proxy
  let faults: HttpFaults.FaultProxy
  let laari: TestServer.LocalTestServer
  let merchant: Fixtures.Merchant
  let payerWallet: string
  let main: Shop
  let stopDatabase: () => Promise<void>

  const rows = <A extends object>(statement: string) =>
    laari.sql(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<A>(statement)))

  /** A refund's movement, by the refund's id. */
  const movementOf = async (refundId: string) =>
    (
      await rows<{
        id: string
        status: string
        kind: string
        amount: string
        from_wallet: string
        to_wallet: string
      }>(
        `SELECT id, status, kind, amount, from_wallet, to_wallet FROM wallet_movements
         WHERE cause = 'refund' AND cause_id = '${refundId}'`
      )
    )[0]

  const pendingRefunds = () =>
    rows<{ id: string; cause_id: string }>(
      `SELECT id, cause_id FROM wallet_movements WHERE cause = 'refund' AND status = 'pending'`
    )

  const refundRows = (chargeId: string) =>
    rows<{ id: string; amount: string }>(`SELECT id, amount FROM refunds WHERE charge_id = '${chargeId}'`)

  const refunded = async (chargeId: string) =>
    Number(
      (
        await rows<{ amount_refunded: string }>(
          `SELECT amount_refunded FROM mandate_charges WHERE id = '${chargeId}'`
        )
      )[0]!.amount_refunded
    )

  const shop = async (): Promise<Shop> => {
    const merchant = await Fixtures.merchant(laari)
    const [payer] = await rows<{ sandbox_payer_id: string }>(
      `SELECT sandbox_payer_id FROM merchants WHERE id = '${merchant.id}'`
    )
    await core.openWallet({ id: payer!.sandbox_payer_id, balance: 500_000 })
    await core.openWallet({ id: merchant.id, balance: 0 })
    const m = await laari.request("POST", "/mandates", {
      key: merchant.test,
      body: Fixtures.mandateBody({ per_charge_cap: 50_000, period_cap: 400_000, period: "MONTH" })
    })
    expect(m.status).toBe(201)
    return { merchant, payerWallet: payer!.sandbox_payer_id, mandateId: m.body.id }
  }

  /** A mandate charge through the core (already routed): the payment to refund. */
  const charge = async (amount: number, at: Shop = main) => {
    const res = await laari.request("POST", `/mandates/${at.mandateId}/charges`, {
      key: at.merchant.test,
      body: { amount }
    })
    expect(res.status).toBe(201)
    return res.body.id as string
  }

  const refund = (body: Record<string, unknown>, key?: string, at: Shop = main) =>
    laari.request("POST", "/refunds", {
      key: at.merchant.test,
      body,
      headers: key === undefined ? {} : { "idempotency-key": key }
    })

  /** Waits, within a bound, until `check` holds. */
  const eventually = async (check: () => Promise<boolean>, ms = 30_000, every = 200) => {
    const until = Date.now() + ms
    while (Date.now() < until) {
      if (await check()) return
      await new Promise((r) => setTimeout(r, every))
    }
    throw new Error("did not happen in time")
  }

  beforeAll(async () => {
    core = await WalletCore.start()
    proxy = await WalletCore.proxy(core)
    faults = await HttpFaults.start(proxy.url)
    const database = await WalletCore.database(postgresUrl!)
    stopDatabase = database.drop
    laari = await TestServer.start({
      databaseUrl: database.url,
      config: {
        clock: "system",
        development: true,
        walletConnector: {
          url: faults.url,
          token: core.tokenRedacted,
          environments: ["test", "live"],
          timeoutMs: 2_000,
          cancelAfterS: 30,
          feeWallet: "laari-fees"
        }
      }
    })
    await core.openWallet({ id: "laari-fees", balance: 0 })
    main = await shop()
    merchant = main.merchant
    payerWallet = main.payerWallet
  }, 120_000)

  afterAll(async () => {
    await laari?.close()
    await faults?.close()
    await proxy?.close()
    await core?.stop()
    await stopDatabase?.()
  })

  it("a refund posts one reversal in the core from the merchant's wallet to the payer's, recorded once", async () => {
    const chargeId = await charge(10_000)
    const merchantBefore = await core.balance(merchant.id)
    const payerBefore = await core.balance(payerWallet)
    const res = await refund({ charge_id: chargeId, amount: 4_000, reference: "core-refund-1" })
    expect(res.status).toBe(201)
    expect(res.body).toMatchObject({
      amount: 4_000,
      status: "SUCCEEDED",
      chargeId,
      reference: "core-refund-1"
    })
    const m = await movementOf(res.body.id)
    expect(m).toMatchObject({
      status: "posted",
      kind: "reversal",
      from_wallet: merchant.id,
      to_wallet: payerWallet
    })
    expect(await core.transfers(m!.id)).toEqual([
      expect.objectContaining({ status: "posted", amount: 4_000 })
    ])
    expect(await core.balance(merchant.id)).toBe(merchantBefore - 4_000)
    expect(await core.balance(payerWallet)).toBe(payerBefore + 4_000)
    expect(await refundRows(chargeId)).toEqual([expect.objectContaining({ id: res.body.id })])
    expect(await refunded(chargeId)).toBe(4_000)
    const events = await Fixtures.events(laari, merchant.id, "refund.created")
    expect(events.filter((e) => e.data.object.id === res.body.id)).toHaveLength(1)
    const notes = await laari.ops("GET", `/ops/customers/${payerWallet}/notifications`)
    expect(
      notes.body.filter((n: any) => n.kind === "refund" && n.data.refund_id === res.body.id)
    ).toHaveLength(1)
    // Its reference is taken, as ever.
    const again = await refund({ charge_id: chargeId, amount: 1, reference: "core-refund-1" })
    expect(again.status).toBe(409)
    expect(again.body.code).toBe("REFERENCE_TAKEN")
  })

  it("refunds never exceed the payment while one is pending: of two refunds of the rest, one posts, the other is refused", async () => {
    const chargeId = await charge(10_000)
    expect((await refund({ charge_id: chargeId, amount: 3_000 })).status).toBe(201)
    // The first one's answer held in the core's way, so the second is decided while it is pending.
    faults.setFaults([{ fault: "delay", method: "POST", path: /^\/transfers$/, count: 1, ms: 1_200 }])
    const first = refund({ charge_id: chargeId, amount: 7_000 })
    await eventually(async () => (await pendingRefunds()).length === 1, 5_000, 20)
    const second = await refund({ charge_id: chargeId, amount: 7_000 })
    expect(second.status).toBe(422)
    expect(second.body.code).toBe("REFUND_EXCEEDS_PAYMENT")
    // All that remains, asked while that one is pending, is none of it either.
    const rest = await refund({ charge_id: chargeId })
    expect(rest.status).toBe(422)
    expect(rest.body.code).toBe("REFUND_EXCEEDS_PAYMENT")
    expect((await first).status).toBe(201)
    expect(await refunded(chargeId)).toBe(10_000)
    expect((await refundRows(chargeId)).map((r) => Number(r.amount)).sort()).toEqual([3_000, 7_000])
    const after = await refund({ charge_id: chargeId, amount: 1 })
    expect(after.body.code).toBe("PAYMENT_ALREADY_REFUNDED")
  })

  it("two refunds with one reference at once, of two payments: one is made, the other is refused", async () => {
    const [a, b] = [await charge(1_000), await charge(1_000)]
    const [one, two] = await Promise.all([
      refund({ charge_id: a, amount: 500, reference: "core-refund-race" }),
      refund({ charge_id: b, amount: 500, reference: "core-refund-race" })
    ])
    expect([one.status, two.status].sort()).toEqual([201, 409])
    expect([one, two].find((r) => r.status === 409)?.body.code).toBe("REFERENCE_TAKEN")
    expect((await refundRows(a)).length + (await refundRows(b)).length).toBe(1)
  })

  it("the merchant's wallet in the core short: INSUFFICIENT_MERCHANT_BALANCE, nothing recorded", async () => {
    // A merchant whose wallet in the core holds only this charge, less laari's fee: less than its amount.
    const other = await shop()
    const chargeId = await charge(10_000, other)
    const balances = [await core.balance(other.merchant.id), await core.balance(other.payerWallet)]
    expect(balances[0]).toBe(9_900)
    const res = await refund({ charge_id: chargeId }, undefined, other)
    expect(res.status).toBe(402)
    expect(res.body.code).toBe("INSUFFICIENT_MERCHANT_BALANCE")
    const [m] = await rows<{ id: string; status: string; reason: string }>(
      `SELECT id, status, reason FROM wallet_movements WHERE cause = 'refund' AND merchant_id = '${other.merchant.id}'`
    )
    expect(m).toMatchObject({ status: "refused", reason: "insufficient-balance" })
    expect([await core.balance(other.merchant.id), await core.balance(other.payerWallet)]).toEqual(balances)
    expect(await refundRows(chargeId)).toEqual([])
    expect(await refunded(chargeId)).toBe(0)
    expect(await Fixtures.events(laari, other.merchant.id, "refund.created")).toEqual([])
    // Refused, it holds nothing: what the wallet can cover is refunded.
    expect((await refund({ charge_id: chargeId, amount: 9_900 }, undefined, other)).status).toBe(201)
  })

  it("the payer's wallet frozen or blocked in the core: PAYMENT_NOT_REFUNDABLE with the core's reason, nothing recorded; active again, refunded", async () => {
    const other = await shop()
    const chargeId = await charge(4_000, other)
    for (const [status, reason, message] of [
      ["frozen", "wallet-frozen", "The paying wallet is frozen: it cannot be refunded now"],
      ["blocked", "blocked-by-rules", "The wallet provider's rules refused this refund"]
    ] as const) {
      await core.setStatus(other.payerWallet, status)
      const res = await refund({ charge_id: chargeId }, undefined, other)
      expect(res.status, res.text).toBe(409)
      expect(res.body).toMatchObject({ code: "PAYMENT_NOT_REFUNDABLE", message })
      const refused = await rows<{ status: string; reason: string }>(
        `SELECT status, reason FROM wallet_movements WHERE cause = 'refund' AND merchant_id = '${other.merchant.id}' AND reason = '${reason}'`
      )
      expect(refused).toEqual([{ status: "refused", reason }])
    }
    expect(await refundRows(chargeId)).toEqual([])
    expect(await refunded(chargeId)).toBe(0)
    expect(await Fixtures.events(laari, other.merchant.id, "refund.created")).toEqual([])
    // Active again: refunded (what the merchant's wallet holds, the charge less laari's fee).
    await core.setStatus(other.payerWallet, "active")
    const res = await refund({ charge_id: chargeId, amount: 3_000 }, undefined, other)
    expect(res.status, res.text).toBe(201)
    expect(await refunded(chargeId)).toBe(3_000)
  })

  it("a payer the core holds no wallet of: PAYMENT_NOT_REFUNDABLE, nothing committed", async () => {
    const other = await shop()
    const chargeId = await charge(1_000, other)
    // Its wallet gone from the core's view, once laari's short memory of it (30 s) has passed.
    await rows(`UPDATE customers SET wallet_id = 'no-such-wallet' WHERE id = '${other.payerWallet}'`)
    await new Promise((r) => setTimeout(r, 31_000))
    const res = await refund({ charge_id: chargeId }, undefined, other)
    expect(res.status).toBe(409)
    expect(res.body.code).toBe("PAYMENT_NOT_REFUNDABLE")
    const movements = await rows(
      `SELECT id FROM wallet_movements WHERE cause = 'refund' AND merchant_id = '${other.merchant.id}'`
    )
    expect(movements).toEqual([])
    expect(await refundRows(chargeId)).toEqual([])
  }, 60_000)

  it("an unreachable core: 503 OUTCOME_UNKNOWN, a retry meanwhile sends nothing; settled once it is back, the retry answers the refund", async () => {
    const chargeId = await charge(10_000)
    await proxy.refuse()
    const first = await refund(
      { charge_id: chargeId, amount: 6_000, reference: "core-refund-away" },
      "refund-away"
    )
    expect(first.status).toBe(503)
    expect(first.body.code).toBe("OUTCOME_UNKNOWN")
    expect(first.headers.get("retry-after")).not.toBeNull()
    const [pending] = await pendingRefunds()
    expect(pending).toBeDefined()
    // Pending, it counts and holds its reference.
    const over = await refund({ charge_id: chargeId, amount: 5_000 })
    expect(over.body.code).toBe("REFUND_EXCEEDS_PAYMENT")
    const taken = await refund({ charge_id: chargeId, amount: 100, reference: "core-refund-away" })
    expect(taken.status).toBe(409)
    expect(taken.body.code).toBe("REFERENCE_TAKEN")
    // A retry while the core is still away answers the same: unknown, and no second reversal.
    const retry = await refund(
      { charge_id: chargeId, amount: 6_000, reference: "core-refund-away" },
      "refund-away"
    )
    expect(retry.status).toBe(503)
    expect(retry.body.code).toBe("OUTCOME_UNKNOWN")
    expect(await refundRows(chargeId)).toEqual([])
    await proxy.restore()
    await eventually(async () => (await movementOf(pending!.cause_id))?.status === "posted")
    expect(await core.transfers(pending!.id)).toHaveLength(1)
    const retried = await refund(
      { charge_id: chargeId, amount: 6_000, reference: "core-refund-away" },
      "refund-away"
    )
    expect(retried.status).toBe(201)
    expect(retried.body).toMatchObject({
      id: pending!.cause_id,
      amount: 6_000,
      reference: "core-refund-away"
    })
    const again = await refund(
      { charge_id: chargeId, amount: 6_000, reference: "core-refund-away" },
      "refund-away"
    )
    expect(again.status).toBe(201)
    expect(again.body.id).toBe(pending!.cause_id)
    expect(again.headers.get("idempotent-replay")).toBe("true")
    expect(await core.transfers(pending!.id)).toHaveLength(1)
    expect(await refundRows(chargeId)).toEqual([expect.objectContaining({ id: pending!.cause_id })])
    expect(await refunded(chargeId)).toBe(6_000)
    const events = await Fixtures.events(laari, merchant.id, "refund.created")
    expect(events.filter((e) => e.data.object.id === pending!.cause_id)).toHaveLength(1)
  }, 60_000)

  it("the breaker open: a refund is refused at once, nothing committed; settled once the core is back", async () => {
    const chargeId = await charge(10_000)
    await proxy.refuse()
    for (let i = 0; i < 5; i++) await refund({ charge_id: chargeId, amount: 100 })
    const count = async () =>
      Number((await rows<{ n: string }>(`SELECT count(*) AS n FROM wallet_movements`))[0]!.n)
    const before = await count()
    const refused = await refund({ charge_id: chargeId, amount: 100 })
    expect(refused.status).toBe(503)
    expect(refused.body.code).toBe("SERVICE_UNAVAILABLE")
    expect(await count()).toBe(before)
    await proxy.restore()
    await eventually(async () => (await pendingRefunds()).length === 0, 60_000)
    expect(await refunded(chargeId)).toBe(500)
  }, 90_000)
})
