/**
 * Subscription renewals and their retries through the wallet connector, against the reference wallet core
 * (examples/wallet-core) in a child process on its own PostgreSQL database, laari on another, on the
 * manual clock: a renewal posts in the core once and its invoice is `PAID` with `invoice.paid` once; the
 * core's refusal is a missed attempt with the retry schedule and the customer's notice; a core that cannot
 * be reached leaves the attempt `CHARGING` with its movement pending, which the resolver settles once it
 * is back; a lapsed lease (a worker gone mid-attempt) never makes a second movement or transfer; and a
 * subscription cancelled while its movement is pending still ends `PAID` when the core posts it.
 *
 * The subscriptions are paid at consent in laari's own ledger (a first server on the same database, with
 * no connector), each test's two days after the one before, so that each test's renewals come at its
 * own moments; the clock only moves forward.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Connector } from "@laari/core"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import * as Fixtures from "../support/Fixtures.js"
import { postgresUrl } from "../support/TestDatabase.js"
import * as TestServer from "../support/TestServer.js"
import * as WalletCore from "../support/WalletCore.js"

const suite = postgresUrl === undefined ? describe.skip : describe
if (postgresUrl === undefined)
  console.warn("WalletConnectorRenewals.pg.test.ts SKIPPED: set DATABASE_URL to run it against PostgreSQL")

const DAY = 86_400

/** An instant as the clock's API takes it: Maldives time, `+05:00`. */
const maldives = (at: Date) =>
  new Date(at.getTime() + 5 * 3_600_000).toISOString().replace(/\.\d{3}Z$/, "+05:00")

interface InvoiceRow {
  id: string
  status: string
  attempt_count: number
  failure_reason: string | null
  next_retry_at: Date | null
  last_attempt_at: Date | null
  payment_intent_id: string | null
}

interface MovementRow {
  id: string
  status: string
  reason: string | null
  cause_id: string
  settled_by: string | null
  environment: "test" | "live"
  from_wallet: string
  to_wallet: string
  fee_wallet: string | null
  amount: string
  fee: string
  memo: string
  kind: "payment" | "reversal"
}

suite("subscription renewals through the wallet connector", () => {
  let core: WalletCore.Core
  let proxy: WalletCore.Proxy
  let laari: TestServer.LocalTestServer
  let merchant: Fixtures.Merchant
  /** A merchant of its own sandbox payer, whom this server has never asked the core about. */
  let other: Fixtures.Merchant
  let otherPayer: string
  /** A merchant whose sandbox payer has no wallet in the core. */
  let walletless: Fixtures.Merchant
  let payerWallet: string
  let stopDatabase: () => Promise<void>
  /** Each test's subscriptions, made at consent a few days apart. */
  const groups: Record<
    | "paid"
    | "refused"
    | "unreachable"
    | "lapsed"
    | "unasked"
    | "walletless"
    | "abandoned"
    | "cancelled"
    | "breaker",
    Array<string>
  > = {
    paid: [],
    refused: [],
    unreachable: [],
    lapsed: [],
    unasked: [],
    walletless: [],
    abandoned: [],
    cancelled: [],
    breaker: []
  }

  /** The subscriptions of the test running: ended after it, whatever it came to, so none renews in the next. */
  let inUse: ReadonlyArray<string> = []
  const use = (group: keyof typeof groups) => {
    inUse = groups[group]
    return groups[group]
  }

  const rows = <A extends object>(statement: string) =>
    laari.sql(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<A>(statement)))

  const latestInvoice = async (subscriptionId: string) =>
    (
      await rows<InvoiceRow>(
        `SELECT id, status, attempt_count, failure_reason, next_retry_at, last_attempt_at, payment_intent_id
         FROM invoices WHERE subscription_id = '${subscriptionId}' ORDER BY period_index DESC LIMIT 1`
      )
    )[0]!

  /** Every movement of an invoice's attempts, oldest attempt first. */
  const movementsOf = (invoiceId: string) =>
    rows<MovementRow>(
      `SELECT * FROM wallet_movements WHERE cause = 'invoice' AND cause_id LIKE '${invoiceId}:%' ORDER BY cause_id`
    )

  const subscription = async (id: string, key = merchant.test) => {
    const res = await laari.request("GET", `/subscriptions/${id}`, { key })
    expect(res.status, res.text).toBe(200)
    return res.body as { status: string; currentPeriodEnd: string; cancellationInitiator: string | null }
  }

  const advanceTo = async (iso: string) => {
    const res = await laari.ops("POST", "/ops/clock/advance", { to: iso })
    expect(res.status, `advance to ${iso}: ${res.text}`).toBe(200)
  }
  const advanceBy = async (seconds: number) => {
    const res = await laari.ops("POST", "/ops/clock/advance", { by_seconds: seconds })
    expect(res.status, `advance by ${seconds}: ${res.text}`).toBe(200)
  }

  /** The events of `type` about invoice `invoiceId`. */
  const invoiceEvents = async (type: string, invoiceId: string, merchantId = merchant.id) =>
    (await Fixtures.events(laari, merchantId, type)).filter((e) => e.data.object.id === invoiceId)

  const notifications = async (kind: string) => {
    const res = await laari.ops("GET", `/ops/customers/${payerWallet}/notifications`)
    expect(res.status).toBe(200)
    return (res.body as Array<any>).filter((n) => n.kind === kind)
  }

  /** `laari_renewals_total` by outcome, as `/metrics` says now. */
  const renewals = async () => {
    const res = await laari.request("GET", "/metrics", { key: TestServer.OpsToken })
    const found: Record<string, number> = {}
    for (const m of res.text.matchAll(/^laari_renewals_total\{outcome="(\w+)"\} (\S+)$/gm))
      found[m[1]!] = Number(m[2])
    return found
  }
  const gained = (before: Record<string, number>, after: Record<string, number>) =>
    Object.fromEntries(
      Object.entries(after)
        .map(([k, v]) => [k, v - (before[k] ?? 0)] as const)
        .filter(([, d]) => d !== 0)
    )

  /** One monthly subscription of `amount`, paid at consent by the merchant's sandbox payer. */
  const subscribe = async (server: TestServer.TestServer, amount: number, key = merchant.test) => {
    const session = await server.request("POST", "/checkout/sessions", {
      key,
      body: {
        mode: "SUBSCRIPTION",
        title: "Island Fibre",
        reference: Fixtures.unique("renewal"),
        price_data: { name: "Fibre 50", amount, interval: "MONTH" }
      }
    })
    expect(session.status, session.text).toBe(200)
    const paid = await server.request("POST", `/test-helpers/checkout/sessions/${session.body.id}/pay`, {
      key
    })
    expect(paid.status, paid.text).toBe(200)
    return paid.body.subscription.id as string
  }

  beforeAll(async () => {
    core = await WalletCore.start()
    proxy = await WalletCore.proxy(core)
    const database = await WalletCore.database(postgresUrl!)
    stopDatabase = database.drop
    // Consent in laari's own ledger, on a server with no connector: the test's subject is the renewals.
    const first = await TestServer.start({ databaseUrl: database.url })
    try {
      // Consent on a whole second, as the API shows a period's end: the renewal is due at that instant.
      const now = Date.parse((await first.ops("GET", "/ops/clock")).body.now)
      const whole = await first.ops("POST", "/ops/clock/advance", {
        to: maldives(new Date(Math.ceil((now + 1_000) / 60_000) * 60_000))
      })
      expect(whole.status, whole.text).toBe(200)
      merchant = await Fixtures.merchant(first)
      other = await Fixtures.merchant(first)
      walletless = await Fixtures.merchant(first)
      groups.paid.push(await subscribe(first, 1_000))
      for (const [group, amount] of [
        ["refused", 500_000],
        ["unreachable", 2_000],
        ["lapsed", 3_000],
        ["unasked", 5_000],
        ["walletless", 6_000],
        ["abandoned", 7_000],
        ["cancelled", 4_000],
        ["breaker", 8_000]
      ] as const) {
        // Two days apart, all within the first month: no test takes its clock a day past its own renewal
        // (but the last), and each test's subscriptions are ended after it.
        const moved = await first.ops("POST", "/ops/clock/advance", { by_seconds: 2 * DAY })
        expect(moved.status, moved.text).toBe(200)
        const key =
          group === "unasked" ? other.test : group === "walletless" ? walletless.test : merchant.test
        groups[group].push(await subscribe(first, amount, key))
      }
    } finally {
      await first.close()
    }
    laari = await TestServer.start({
      databaseUrl: database.url,
      config: {
        walletConnector: {
          url: proxy.url,
          token: core.tokenRedacted,
          environments: ["test", "live"],
          timeoutMs: 1_000,
          // Long on the manual clock: a test that keeps the core away for minutes means the resolver to ask, not cancel.
          cancelAfterS: 3_600,
          feeWallet: "laari-fees"
        }
      }
    })
    const [payer] = await rows<{ sandbox_payer_id: string }>(
      `SELECT sandbox_payer_id FROM merchants WHERE id = '${merchant.id}'`
    )
    payerWallet = payer!.sandbox_payer_id
    const [second] = await rows<{ sandbox_payer_id: string }>(
      `SELECT sandbox_payer_id FROM merchants WHERE id = '${other.id}'`
    )
    otherPayer = second!.sandbox_payer_id
    await core.openWallet({ id: otherPayer, balance: 100_000 })
    await core.openWallet({ id: other.id, balance: 0 })
    await core.openWallet({ id: payerWallet, balance: 100_000 })
    await core.openWallet({ id: merchant.id, balance: 0 })
    await core.openWallet({ id: "laari-fees", balance: 0 })
  }, 180_000)

  afterEach(async () => {
    await proxy.restore()
    for (const id of inUse) await laari.ops("POST", `/ops/subscriptions/${id}/cancel`)
  })

  afterAll(async () => {
    await laari?.close()
    await proxy?.close()
    await core?.stop()
    await stopDatabase?.()
  })

  it("a renewal posts in the core once, the fee to the fee wallet, and its invoice is PAID with invoice.paid once", async () => {
    const [id] = use("paid")
    const before = await renewals()
    await advanceTo((await subscription(id!)).currentPeriodEnd)
    const invoice = await latestInvoice(id!)
    expect(invoice).toMatchObject({ status: "PAID", attempt_count: 1 })
    const [m, ...more] = await movementsOf(invoice.id)
    expect(more).toEqual([])
    expect(m).toMatchObject({ status: "posted", cause_id: `${invoice.id}:1`, settled_by: "answer" })
    expect(invoice.payment_intent_id).toBe(m!.id)
    expect(await core.transfers(m!.id)).toEqual([
      expect.objectContaining({ status: "posted", amount: 1_000 })
    ])
    expect(await core.balance(payerWallet)).toBe(99_000)
    expect(await core.balance(merchant.id)).toBe(990)
    expect(await core.balance("laari-fees")).toBe(10)
    expect(await invoiceEvents("invoice.paid", invoice.id)).toHaveLength(1)
    expect(gained(before, await renewals())).toEqual({ paid: 1 })
    expect((await subscription(id!)).status).toBe("ACTIVE")
  }, 60_000)

  it("the core's refusal is a missed attempt: retried on the schedule, the customer told, nothing moved", async () => {
    const [id] = use("refused")
    // laari's own wallet row of the payer, emptied: not the customer's money here, so it warns of nothing.
    const emptied = await laari.request("POST", "/test-helpers/payer", {
      key: merchant.test,
      body: { balance: 0 }
    })
    expect(emptied.status, emptied.text).toBe(200)
    const balance = await core.balance(payerWallet)
    const before = await renewals()
    const renewsAt = (await subscription(id!)).currentPeriodEnd
    await advanceTo(renewsAt)
    const missed = await latestInvoice(id!)
    expect(missed).toMatchObject({
      status: "PENDING",
      attempt_count: 1,
      failure_reason: "insufficient-balance"
    })
    // The first retry 12 hours after the attempt.
    expect(missed.next_retry_at!.getTime()).toBe(missed.last_attempt_at!.getTime() + 12 * 3_600_000)
    const [m] = await movementsOf(missed.id)
    expect(m).toMatchObject({ status: "refused", reason: "insufficient-balance" })
    expect((await core.transfers(m!.id)).filter((t) => t.status === "posted")).toEqual([])
    expect(await core.balance(payerWallet)).toBe(balance)
    expect((await subscription(id!)).status).toBe("PAST_DUE")
    expect(await invoiceEvents("invoice.payment_failed", missed.id)).toHaveLength(1)
    const told = (await notifications("payment_failed")).filter((n) => n.data.invoice_id === missed.id)
    expect(told).toHaveLength(1)
    expect(told[0].data).toMatchObject({ attempt_count: 1, failure_reason: "insufficient-balance" })
    expect(told[0].body).toContain("We will try again at")
    expect(gained(before, await renewals())).toEqual({ failed: 1 })
    // The core's balance is not laari's to read (the protocol has none): no balance warning went out.
    expect((await notifications("balance_warning")).filter((n) => n.data.subscription_id === id)).toEqual([])
    // The retry, under a movement of its own (its own transfer id), refused again: the next 24 hours later.
    await advanceTo(maldives(missed.next_retry_at!))
    const retried = await latestInvoice(id!)
    expect(retried).toMatchObject({ id: missed.id, status: "PENDING", attempt_count: 2 })
    expect(retried.next_retry_at!.getTime()).toBe(retried.last_attempt_at!.getTime() + 24 * 3_600_000)
    const both = await movementsOf(missed.id)
    expect(both.map((x) => [x.cause_id, x.status])).toEqual([
      [`${missed.id}:1`, "refused"],
      [`${missed.id}:2`, "refused"]
    ])
    expect(
      (await notifications("payment_failed")).filter((n) => n.data.invoice_id === missed.id)
    ).toHaveLength(2)
    expect(await core.balance(payerWallet)).toBe(balance)
  }, 60_000)

  it("an unreachable core: the attempt stays CHARGING with its movement pending; once it is back the resolver settles it, PAID once, posted once", async () => {
    const [id] = use("unreachable")
    const before = await renewals()
    await proxy.refuse()
    await advanceTo((await subscription(id!)).currentPeriodEnd)
    const charging = await latestInvoice(id!)
    expect(charging).toMatchObject({ status: "CHARGING", attempt_count: 1 })
    const [pending] = await movementsOf(charging.id)
    expect(pending).toMatchObject({ status: "pending" })
    expect(await core.transfers(pending!.id)).toEqual([])
    expect(gained(before, await renewals())).toEqual({})
    await proxy.restore()
    // The resolver's first look, a few seconds on: the core never took it, so it is sent again.
    await advanceBy(10)
    const paid = await latestInvoice(id!)
    expect(paid).toMatchObject({ status: "PAID", attempt_count: 1, payment_intent_id: pending!.id })
    expect(await movementsOf(charging.id)).toEqual([
      expect.objectContaining({ id: pending!.id, status: "posted", settled_by: "resend" })
    ])
    expect(await core.transfers(pending!.id)).toEqual([
      expect.objectContaining({ status: "posted", amount: 2_000 })
    ])
    expect(await invoiceEvents("invoice.paid", charging.id)).toHaveLength(1)
    // Counted once, by the resolver that settled it.
    expect(gained(before, await renewals())).toEqual({ paid: 1 })
    await advanceBy(60)
    expect(gained(before, await renewals())).toEqual({ paid: 1 })
    expect(await invoiceEvents("invoice.paid", charging.id)).toHaveLength(1)
  }, 60_000)

  it("a lapsed lease (a worker gone mid-attempt) never makes a second movement or transfer; an answer lost after the core posted is settled once", async () => {
    const [id] = use("lapsed")
    await proxy.refuse()
    await advanceTo((await subscription(id!)).currentPeriodEnd)
    const charging = await latestInvoice(id!)
    expect(charging).toMatchObject({ status: "CHARGING", attempt_count: 1 })
    const [m] = await movementsOf(charging.id)
    expect(m?.status).toBe("pending")
    // Past two leases: the renewal engine takes the subscription up again each time, and leaves the
    // pending movement to the resolver.
    await advanceBy(150)
    expect(await latestInvoice(id!)).toMatchObject({ id: charging.id, status: "CHARGING", attempt_count: 1 })
    expect(await movementsOf(charging.id)).toEqual([
      expect.objectContaining({ id: m!.id, status: "pending" })
    ])
    const [due] = await rows<{ due_at: Date | null }>(`SELECT due_at FROM subscriptions WHERE id = '${id}'`)
    const [clock] = await rows<{ now_ms: string }>(`SELECT now_ms FROM manual_clock`)
    // Leased, not due: the engine is not spinning on it.
    expect(due!.due_at!.getTime()).toBeGreaterThan(Number(clock!.now_ms))
    // The core takes the transfer as laari sent it and the answer never comes back.
    const taken = await fetch(`${core.url}/transfers`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${core.token}`,
        "content-type": "application/json",
        "request-id": randomUUID()
      },
      body: JSON.stringify({
        id: m!.id,
        environment: m!.environment,
        from: m!.from_wallet,
        to: m!.to_wallet,
        amount: Number(m!.amount),
        fee: m!.fee_wallet === null ? null : { to: m!.fee_wallet, amount: Number(m!.fee) },
        memo: m!.memo.slice(0, Connector.MaxMemoLength),
        kind: m!.kind
      } satisfies Connector.TransferRequest)
    })
    expect(taken.status, await taken.text()).toBe(201)
    await proxy.restore()
    await advanceBy(30)
    expect(await latestInvoice(id!)).toMatchObject({ status: "PAID", payment_intent_id: m!.id })
    expect(await movementsOf(charging.id)).toEqual([
      expect.objectContaining({ id: m!.id, status: "posted", settled_by: "status" })
    ])
    expect(await core.transfers(m!.id)).toEqual([
      expect.objectContaining({ status: "posted", amount: 3_000 })
    ])
    expect((await core.posted()).filter((t) => t.amount === 3_000)).toHaveLength(1)
    expect(await invoiceEvents("invoice.paid", charging.id)).toHaveLength(1)
  }, 60_000)

  it("a payer's wallet the core cannot be asked for: the attempt waits out its lease with no movement and nothing sent, then gets one, posted once", async () => {
    const [id] = use("unasked")
    await proxy.refuse()
    await advanceTo((await subscription(id!, other.test)).currentPeriodEnd)
    const charging = await latestInvoice(id!)
    expect(charging).toMatchObject({ status: "CHARGING", attempt_count: 1 })
    expect(await movementsOf(charging.id)).toEqual([])
    const [due] = await rows<{ due_at: Date | null }>(`SELECT due_at FROM subscriptions WHERE id = '${id}'`)
    const [clock] = await rows<{ now_ms: string }>(`SELECT now_ms FROM manual_clock`)
    // Leased: taken up again once the lease lapses, not before.
    expect(due!.due_at!.getTime()).toBe(Number(clock!.now_ms) + 60_000)
    await proxy.restore()
    await advanceBy(61)
    const paid = await latestInvoice(id!)
    expect(paid).toMatchObject({ id: charging.id, status: "PAID", attempt_count: 1 })
    const [m, ...more] = await movementsOf(charging.id)
    expect(more).toEqual([])
    expect(m).toMatchObject({ status: "posted", cause_id: `${charging.id}:1`, from_wallet: otherPayer })
    expect(await core.transfers(m!.id)).toEqual([
      expect.objectContaining({ status: "posted", amount: 5_000 })
    ])
    expect(await core.balance(otherPayer)).toBe(95_000)
    expect(await invoiceEvents("invoice.paid", charging.id, other.id)).toHaveLength(1)
  }, 60_000)

  it("a payer with no wallet in the core: the attempt misses, as a transfer from no wallet does, with no movement", async () => {
    const [id] = use("walletless")
    await advanceTo((await subscription(id!, walletless.test)).currentPeriodEnd)
    const missed = await latestInvoice(id!)
    expect(missed).toMatchObject({ status: "PENDING", attempt_count: 1, failure_reason: "executor-error" })
    expect(missed.next_retry_at!.getTime()).toBe(missed.last_attempt_at!.getTime() + 12 * 3_600_000)
    expect(await movementsOf(missed.id)).toEqual([])
    expect((await subscription(id!, walletless.test)).status).toBe("PAST_DUE")
    expect(await invoiceEvents("invoice.payment_failed", missed.id, walletless.id)).toHaveLength(1)
  }, 60_000)

  it("a movement the core never took past the cancel time: the resolver cancels it, and the attempt is a miss retried as ever", async () => {
    const [id] = use("abandoned")
    const before = await renewals()
    await proxy.refuse()
    await advanceTo((await subscription(id!)).currentPeriodEnd)
    const charging = await latestInvoice(id!)
    expect(charging.status).toBe("CHARGING")
    await advanceBy(3_600)
    expect((await latestInvoice(id!)).status).toBe("CHARGING")
    await proxy.restore()
    await advanceBy(30)
    const missed = await latestInvoice(id!)
    expect(missed).toMatchObject({ id: charging.id, status: "PENDING", failure_reason: "executor-error" })
    expect(missed.next_retry_at!.getTime()).toBe(missed.last_attempt_at!.getTime() + 12 * 3_600_000)
    const [m] = await movementsOf(charging.id)
    expect(m).toMatchObject({ status: "cancelled", settled_by: "cancel" })
    expect((await core.transfers(m!.id)).filter((t) => t.status === "posted")).toEqual([])
    expect(await invoiceEvents("invoice.payment_failed", charging.id)).toHaveLength(1)
    expect(gained(before, await renewals())).toEqual({ failed: 1 })
  }, 120_000)

  it("cancelled while its movement is pending: when the core posts it, the money moved, so the invoice ends PAID", async () => {
    const [id] = use("cancelled")
    await proxy.refuse()
    await advanceTo((await subscription(id!)).currentPeriodEnd)
    const charging = await latestInvoice(id!)
    expect(charging.status).toBe("CHARGING")
    const cancelled = await laari.request("POST", `/subscriptions/${id}/cancel`, {
      key: merchant.test,
      body: {}
    })
    expect(cancelled.status, cancelled.text).toBe(200)
    expect(cancelled.body.status).toBe("CANCELLED")
    // The attempt in flight is not voided: its transfer started before the cancellation.
    expect((await latestInvoice(id!)).status).toBe("CHARGING")
    await proxy.restore()
    await advanceBy(10)
    const paid = await latestInvoice(id!)
    expect(paid).toMatchObject({ id: charging.id, status: "PAID" })
    const [m] = await movementsOf(charging.id)
    expect(m).toMatchObject({ status: "posted" })
    expect(await core.transfers(m!.id)).toEqual([
      expect.objectContaining({ status: "posted", amount: 4_000 })
    ])
    expect(await invoiceEvents("invoice.paid", charging.id)).toHaveLength(1)
    const after = await subscription(id!)
    expect(after).toMatchObject({ status: "CANCELLED", cancellationInitiator: "MERCHANT" })
    // Nothing more: no next cycle opens for a cancelled subscription.
    await advanceBy(32 * DAY)
    expect((await latestInvoice(id!)).id).toBe(charging.id)
    expect(await movementsOf(charging.id)).toHaveLength(1)
  }, 120_000)
  it("the circuit breaker open: a renewal due waits out its lease with no movement and nothing sent, then renews once", async () => {
    const [id] = use("breaker")
    // Up to a moment before it is due first: the resolver asks again every few seconds of the clock, so
    // the clock goes no further while movements are pending with the core away.
    const due = (await subscription(id!)).currentPeriodEnd
    await advanceTo(maldives(new Date(Date.parse(due) - 2_000)))
    await proxy.refuse()
    // Five calls in a row without an answer open it: charges, whose movements the resolver settles later.
    const mandate = await laari.request("POST", "/mandates", {
      key: merchant.test,
      body: Fixtures.mandateBody({ per_charge_cap: 50_000, period_cap: 100_000, period: "MONTH" })
    })
    expect(mandate.status, mandate.text).toBe(201)
    for (let i = 0; i < 5; i++)
      await laari.request("POST", `/mandates/${mandate.body.id}/charges`, {
        key: merchant.test,
        body: { amount: 100 }
      })
    expect((await laari.request("GET", "/readyz")).body.wallet_connector).toMatchObject({ circuit: "open" })
    await advanceTo(due)
    const charging = await latestInvoice(id!)
    expect(charging).toMatchObject({ status: "CHARGING", attempt_count: 1 })
    expect(await movementsOf(charging.id)).toEqual([])
    await proxy.restore()
    // The resolver's answers close the breaker; the lease lapses and the attempt gets its one movement.
    await advanceBy(10)
    expect((await laari.request("GET", "/readyz")).body.wallet_connector).toMatchObject({ circuit: "closed" })
    await advanceBy(61)
    expect(await latestInvoice(id!)).toMatchObject({ id: charging.id, status: "PAID", attempt_count: 1 })
    const [m, ...more] = await movementsOf(charging.id)
    expect(more).toEqual([])
    expect(m).toMatchObject({ status: "posted", cause_id: `${charging.id}:1` })
    expect(await core.transfers(m!.id)).toEqual([
      expect.objectContaining({ status: "posted", amount: 8_000 })
    ])
  }, 60_000)
})
