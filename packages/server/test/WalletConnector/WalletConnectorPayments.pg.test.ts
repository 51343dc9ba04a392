/**
 * QR payments and checkout payments through the wallet connector, against the reference wallet core
 * (examples/wallet-core) in a child process on its own PostgreSQL database, laari on another, over real
 * HTTP: a payment posts in the core once and is recorded once; the core's refusal declines with its
 * reason and records nothing; a core that cannot be reached answers `503 OUTCOME_UNKNOWN`, keeps the
 * movement pending (a dynamic code or a session it pays is held: never a second transfer), and the
 * resolver settles it once the core is back; a session with a payment pending is neither expired by the
 * sweep nor cancelled, and completes when the core posted it; the hosted page says so readably.
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
  console.warn("WalletConnectorPayments.pg.test.ts SKIPPED: set DATABASE_URL to run it against PostgreSQL")

interface MovementRow {
  id: string
  status: string
  reason: string | null
  amount: string
  fee: string
  hold_key: string | null
  cause_id: string
}

suite("QR and checkout payments through the wallet connector", () => {
  let core: WalletCore.Core
  let proxy: WalletCore.Proxy
  let laari: TestServer.LocalTestServer
  let merchant: Fixtures.Merchant
  let payerWallet: string
  let stopDatabase: () => Promise<void>

  const rows = <A extends object>(statement: string) =>
    laari.sql(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<A>(statement)))

  const movementsWhere = (where: string) =>
    rows<MovementRow>(
      `SELECT id, status, reason, amount, fee, hold_key, cause_id FROM wallet_movements WHERE ${where} ORDER BY created_at`
    )

  const count = async (statement: string) => Number((await rows<{ n: string }>(statement))[0]!.n)

  const qrPaymentsOf = (codeId: string) =>
    count(`SELECT count(*) AS n FROM qr_payments WHERE qr_code_id = '${codeId}'`)

  const eventsAbout = (type: string, id: string) =>
    count(
      `SELECT count(*) AS n FROM events WHERE type = '${type}' AND merchant_id = '${merchant.id}' AND envelope::text LIKE '%"${id}"%'`
    )

  const code = async (body: Record<string, unknown>) => {
    const res = await laari.request("POST", "/qr-codes", {
      key: merchant.test,
      body: { outlet_id: merchant.outletId, reference: Fixtures.unique("qr"), ...body }
    })
    expect(res.status, res.text).toBe(201)
    return res.body as { id: string; payload: string }
  }

  const payQr = (body: Record<string, unknown>, key?: string) =>
    laari.request("POST", "/test-helpers/qr-codes/pay", {
      key: merchant.test,
      body,
      headers: key === undefined ? {} : { "idempotency-key": key }
    })

  const session = async (key: string, body: Record<string, unknown> = {}) => {
    const res = await laari.request("POST", "/checkout/sessions", {
      key,
      body: {
        mode: "PAYMENT",
        title: "Fish curry",
        amount: 2_500,
        reference: Fixtures.unique("order"),
        ...body
      }
    })
    expect(res.status, res.text).toBe(200)
    return res.body as { id: string; url: string }
  }

  const paySession = (id: string, key?: string) =>
    laari.request("POST", `/test-helpers/checkout/sessions/${id}/pay`, {
      key: merchant.test,
      headers: key === undefined ? {} : { "idempotency-key": key }
    })

  const sessionStatus = async (id: string) =>
    (await rows<{ status: string }>(`SELECT status FROM checkout_sessions WHERE id = '${id}'`))[0]?.status

  /** Waits, within a bound, until `check` holds. */
  const eventually = async (check: () => Promise<boolean>, ms = 30_000) => {
    const until = Date.now() + ms
    while (Date.now() < until) {
      if (await check()) return
      await new Promise((r) => setTimeout(r, 200))
    }
    throw new Error("did not happen in time")
  }

  /** Every pending movement settled and the circuit closed: the next test starts with the core answering. */
  const settledAll = () =>
    eventually(async () => {
      const r = await laari.request("GET", "/readyz")
      return r.body.wallet_connector.circuit === "closed" && r.body.wallet_connector.pending_movements === 0
    })

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
    await core.openWallet({ id: payerWallet, balance: 200_000 })
    await core.openWallet({ id: merchant.id, balance: 0 })
    await core.openWallet({ id: "laari-fees", balance: 0 })
    // A payment while the core answers tells laari the sandbox payer's wallet there, which then serves while
    // the core is away (a payer never looked up is refused at once then, nothing committed).
    const warm = await code({ type: "STATIC" })
    expect((await payQr({ payload: warm.payload, amount: 100 })).status).toBe(201)
  }, 120_000)

  afterAll(async () => {
    await laari?.close()
    await proxy?.close()
    await core?.stop()
    await stopDatabase?.()
  })

  it("a dynamic and a static code: each payment posts in the core once and is recorded with its event and notice", async () => {
    const merchantBefore = await core.balance(merchant.id)
    const dynamic = await code({ type: "DYNAMIC", amount: 3_000 })
    const paid = await payQr({ payload: dynamic.payload })
    expect(paid.status, paid.text).toBe(201)
    expect(paid.body).toMatchObject({ amount: 3_000, fee: 30, netAmount: 2_970 })
    const [m] = await movementsWhere(`cause = 'qr-payment' AND cause_id = '${paid.body.id}'`)
    expect(m).toMatchObject({ status: "posted", hold_key: `qr-code:${dynamic.id}` })
    expect(await core.transfers(m!.id)).toEqual([
      expect.objectContaining({ status: "posted", amount: 3_000 })
    ])
    expect(await qrPaymentsOf(dynamic.id)).toBe(1)
    expect(await eventsAbout("qr_code.payment.succeeded", paid.body.id)).toBe(1)
    const notes = await laari.ops("GET", `/ops/customers/${payerWallet}/notifications`)
    expect(notes.body.filter((n: any) => n.data?.payment_id === paid.body.id)).toHaveLength(1)
    // A dynamic code is paid once.
    const again = await payQr({ payload: dynamic.payload })
    expect(again.status).toBe(409)

    const fixed = await code({ type: "STATIC" })
    const first = await payQr({ payload: fixed.payload, amount: 1_500 })
    const second = await payQr({ payload: fixed.payload, amount: 1_000 })
    expect([first.status, second.status]).toEqual([201, 201])
    const staticMovements = await movementsWhere(
      `cause = 'qr-payment' AND cause_id IN ('${first.body.id}', '${second.body.id}')`
    )
    expect(staticMovements.map((s) => [s.status, s.hold_key])).toEqual([
      ["posted", null],
      ["posted", null]
    ])
    expect(await qrPaymentsOf(fixed.id)).toBe(2)
    expect(await core.balance(merchant.id)).toBe(merchantBefore + 2_970 + 1_485 + 990)
  })

  it("the core's refusal declines with its reason, records nothing but the movement, and leaves a dynamic code payable", async () => {
    const balance = await core.balance(payerWallet)
    const fixed = await code({ type: "STATIC" })
    const refused = await payQr({ payload: fixed.payload, amount: balance + 1 })
    expect(refused.status, refused.text).toBe(402)
    expect(refused.body.code).toBe("INSUFFICIENT_BALANCE")
    expect(await qrPaymentsOf(fixed.id)).toBe(0)
    const dynamic = await code({ type: "DYNAMIC", amount: balance + 100 })
    const declined = await payQr({ payload: dynamic.payload })
    expect(declined.status).toBe(402)
    // Refused, the hold is released: the code is declined again rather than answered as already paid.
    const retried = await payQr({ payload: dynamic.payload })
    expect(retried.status).toBe(402)
    const held = await movementsWhere(`hold_key = 'qr-code:${dynamic.id}'`)
    expect(held.map((h) => [h.status, h.reason])).toEqual([
      ["refused", "insufficient-balance"],
      ["refused", "insufficient-balance"]
    ])
    expect(await qrPaymentsOf(dynamic.id)).toBe(0)
    expect(await core.balance(payerWallet)).toBe(balance)
  })

  it("an unreachable core: 503 OUTCOME_UNKNOWN, the dynamic code held (no second transfer), the resolver records it once; a keyed retry answers the payment", async () => {
    const dynamic = await code({ type: "DYNAMIC", amount: 4_000 })
    const fixed = await code({ type: "STATIC" })
    await proxy.refuse()
    const first = await payQr({ payload: dynamic.payload })
    expect(first.status, first.text).toBe(503)
    expect(first.body.code).toBe("OUTCOME_UNKNOWN")
    const [pending] = await movementsWhere(`hold_key = 'qr-code:${dynamic.id}'`)
    expect(pending?.status).toBe("pending")
    // Meanwhile the code counts as paid: a second payment is refused without a call.
    const second = await payQr({ payload: dynamic.payload })
    expect(second.status).toBe(409)
    expect(second.body.message).toContain("already been paid")
    expect(await movementsWhere(`hold_key = 'qr-code:${dynamic.id}'`)).toHaveLength(1)
    // A keyed static payment: pending too, and its retry under the key waits for the outcome.
    const keyed = await payQr({ payload: fixed.payload, amount: 700 }, "qr-outage")
    expect(keyed.body.code).toBe("OUTCOME_UNKNOWN")
    expect(await qrPaymentsOf(dynamic.id)).toBe(0)
    await proxy.restore()
    await eventually(
      async () =>
        (await movementsWhere(`id = '${pending!.id}'`))[0]?.status === "posted" &&
        (await qrPaymentsOf(dynamic.id)) === 1
    )
    expect(await core.transfers(pending!.id)).toHaveLength(1)
    expect(await eventsAbout("qr_code.payment.succeeded", pending!.cause_id)).toBe(1)
    await settledAll()
    const retried = await payQr({ payload: fixed.payload, amount: 700 }, "qr-outage")
    expect(retried.status, retried.text).toBe(201)
    expect(retried.body).toMatchObject({ amount: 700, qrCodeId: fixed.id })
    expect(await qrPaymentsOf(fixed.id)).toBe(1)
    expect(await qrPaymentsOf(dynamic.id)).toBe(1)
  }, 60_000)

  it("the wallet app: a QR payment whose outcome is unknown reads as being confirmed, and the code stays held until the resolver records it", async () => {
    const phone = `+9609${String(Date.now()).slice(-6)}`
    await core.openWallet({ id: `w-app-${Date.now()}`, phone, balance: 20_000 })
    const jar = new Map<string, string>()
    const send = async (path: string, form?: Record<string, string>) => {
      const res = await fetch(`${laari.baseUrl}${path}`, {
        method: form === undefined ? "GET" : "POST",
        headers: {
          cookie: [...jar].map(([k, v]) => `${k}=${v}`).join("; "),
          ...(form === undefined ? {} : { "content-type": "application/x-www-form-urlencoded" })
        },
        body: form === undefined ? undefined : new URLSearchParams(form).toString(),
        redirect: "manual"
      })
      for (const c of res.headers.getSetCookie()) {
        const pair = c.split(";")[0]!
        jar.set(pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1))
      }
      return { status: res.status, text: await res.text() }
    }
    const csrf = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)![1]!
    const start = await send("/wallet")
    const asked = await send("/wallet/code", { _csrf: csrf(start.text), phone })
    const challenge = /name="challenge_id" value="([^"]+)"/.exec(asked.text)?.[1]
    expect(challenge, asked.text).toBeDefined()
    const [customer] = await rows<{ id: string }>(
      `SELECT id FROM customers WHERE phone = '${phone}' AND environment = 'live'`
    )
    const notes = await laari.ops("GET", `/ops/customers/${customer!.id}/notifications`)
    const otp = notes.body.find((n: any) => n.kind === "one_time_code")?.data.code
    const signed = await send("/wallet/sign-in", {
      _csrf: csrf(asked.text),
      phone,
      challenge_id: challenge!,
      otp
    })
    expect(signed.status, signed.text).toBe(303)
    const home = await send("/wallet")
    const liveCode = async () => {
      const created = await laari.request("POST", "/qr-codes", {
        key: merchant.live,
        body: {
          outlet_id: merchant.outletId,
          type: "DYNAMIC",
          amount: 2_000,
          reference: Fixtures.unique("qr")
        }
      })
      expect(created.status, created.text).toBe(201)
      return created.body as { id: string; payload: string }
    }
    // Paid once while the core answers (which also tells laari the payer's wallet there).
    const before = await liveCode()
    const ok = await send("/wallet/qr/pay", { _csrf: csrf(home.text), payload: before.payload, amount: "" })
    expect(ok.status, ok.text).toBe(303)
    expect(await qrPaymentsOf(before.id)).toBe(1)
    const created = { body: await liveCode() }
    await proxy.refuse()
    const paid = await send("/wallet/qr/pay", {
      _csrf: csrf(home.text),
      payload: created.body.payload,
      amount: ""
    })
    expect(paid.status).toBe(503)
    expect(paid.text).toContain("Your payment is being confirmed with your wallet")
    const again = await send("/wallet/qr/pay", {
      _csrf: csrf(home.text),
      payload: created.body.payload,
      amount: ""
    })
    // A page answers a refusal 422, with the refusal's words.
    expect(again.status).toBe(422)
    expect(again.text).toContain("already been paid")
    await proxy.restore()
    await eventually(async () => (await qrPaymentsOf(created.body.id)) === 1)
    await settledAll()
  }, 60_000)

  it("a payer without a wallet in the core is declined as the built-in ledger declines an unknown payer, nothing committed", async () => {
    // Another merchant, whose sandbox payer the core was never given.
    const other = await Fixtures.merchant(laari)
    const created = await laari.request("POST", "/qr-codes", {
      key: other.test,
      body: { outlet_id: other.outletId, type: "STATIC", reference: Fixtures.unique("qr") }
    })
    const paid = await laari.request("POST", "/test-helpers/qr-codes/pay", {
      key: other.test,
      body: { payload: created.body.payload, amount: 1_000 }
    })
    expect(paid.status, paid.text).toBe(422)
    expect(paid.body.code).toBe("EXECUTOR_ERROR")
    const s = await session(other.test)
    const declined = await laari.request("POST", `/test-helpers/checkout/sessions/${s.id}/pay`, {
      key: other.test
    })
    expect(declined.status, declined.text).toBe(422)
    expect(declined.body.code).toBe("EXECUTOR_ERROR")
    expect(await movementsWhere(`merchant_id = '${other.id}'`)).toEqual([])
  })

  it("the breaker open refuses a QR and a checkout payment at once, nothing committed", async () => {
    const fixed = await code({ type: "STATIC" })
    const s = await session(merchant.test)
    await proxy.refuse()
    for (let i = 0; i < 5; i++) await payQr({ payload: fixed.payload, amount: 100 })
    const before = await movementsWhere(`merchant_id = '${merchant.id}'`)
    const started = Date.now()
    const qr = await payQr({ payload: fixed.payload, amount: 100 })
    const checkout = await paySession(s.id)
    expect(Date.now() - started).toBeLessThan(500)
    expect([qr.status, qr.body.code]).toEqual([503, "SERVICE_UNAVAILABLE"])
    expect([checkout.status, checkout.body.code]).toEqual([503, "SERVICE_UNAVAILABLE"])
    expect(await movementsWhere(`merchant_id = '${merchant.id}'`)).toHaveLength(before.length)
    await proxy.restore()
    await settledAll()
    expect(await qrPaymentsOf(fixed.id)).toBe(5)
  }, 90_000)

  it("live, the hosted flow: a PAYMENT and a SUBSCRIPTION session each post once from the customer's wallet in the core", async () => {
    await laari.ops("POST", `/ops/merchants/${merchant.id}/features`, { subscriptions_live: true })
    const walletId = `w-checkout-${Date.now()}`
    const phone = `+9607${String(Date.now()).slice(-6)}`
    await core.openWallet({ id: walletId, phone, balance: 50_000 })
    const pay = async (id: string) => {
      const asked = await laari.request("POST", `/approvals/checkout/${id}/challenge`, { body: { phone } })
      expect(asked.status, asked.text).toBe(200)
      const [customer] = await rows<{ id: string }>(
        `SELECT id FROM customers WHERE phone = '${phone}' AND environment = 'live'`
      )
      const notes = await laari.ops("GET", `/ops/customers/${customer!.id}/notifications`)
      const otp = notes.body.find((n: any) => n.kind === "one_time_code")?.data.code
      return laari.request("POST", `/approvals/checkout/${id}/pay`, {
        body: { challenge_id: asked.body.challenge_id, otp }
      })
    }
    const payment = await session(merchant.live, { amount: 5_000 })
    const paid = await pay(payment.id)
    expect(paid.status, paid.text).toBe(200)
    expect(paid.body.status).toBe("COMPLETE")
    const [m] = await movementsWhere(`hold_key = 'checkout:${payment.id}'`)
    expect(m).toMatchObject({ status: "posted" })
    expect(await core.transfers(m!.id)).toEqual([
      expect.objectContaining({ status: "posted", amount: 5_000 })
    ])
    expect(await eventsAbout("checkout.session.completed", payment.id)).toBe(1)

    const plan = await session(merchant.live, {
      mode: "SUBSCRIPTION",
      amount: undefined,
      title: "Gym",
      price_data: { name: "Gold gym", amount: 10_000, interval: "MONTH" }
    })
    const subscribed = await pay(plan.id)
    expect(subscribed.status, subscribed.text).toBe(200)
    expect(subscribed.body.status).toBe("COMPLETE")
    const subscriptionId = subscribed.body.subscriptionId as string
    const [s] = await rows<{ status: string }>(
      `SELECT status FROM subscriptions WHERE id = '${subscriptionId}'`
    )
    expect(s?.status).toBe("ACTIVE")
    const [invoice] = await rows<{ status: string; payment_id: string }>(
      `SELECT status, payment_intent_id AS payment_id FROM invoices WHERE subscription_id = '${subscriptionId}'`
    )
    const [sm] = await movementsWhere(`hold_key = 'checkout:${plan.id}'`)
    expect(invoice).toMatchObject({ status: "PAID", payment_id: sm!.id })
    expect(await core.transfers(sm!.id)).toHaveLength(1)
    expect(await eventsAbout("subscription.activated", subscriptionId)).toBe(1)
    expect(await core.balance(walletId)).toBe(35_000)
  })

  it("a refused checkout payment declines with its reason and leaves the session open", async () => {
    const balance = await core.balance(payerWallet)
    const s = await session(merchant.test, { amount: balance + 1 })
    const refused = await paySession(s.id)
    expect(refused.status, refused.text).toBe(402)
    expect(refused.body.code).toBe("INSUFFICIENT_BALANCE")
    expect(await sessionStatus(s.id)).toBe("OPEN")
    // Another attempt is another transfer id: the core remembers the refused one.
    expect((await paySession(s.id)).status).toBe(402)
    const tries = await movementsWhere(`hold_key = 'checkout:${s.id}'`)
    expect(tries.map((t) => t.status)).toEqual(["refused", "refused"])
    expect(new Set(tries.map((t) => t.cause_id)).size).toBe(2)
  })

  it("an unreachable core: the hosted page says the payment is being confirmed, the session is held (no second transfer, no cancel), and the resolver completes it", async () => {
    const s = await session(merchant.test)
    const path = `${laari.baseUrl}${new URL(s.url).pathname}`
    const page = await fetch(path)
    expect(page.status).toBe(200)
    const cookie = (page.headers.get("set-cookie") ?? "").split(";")[0]!
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())?.[1]
    expect(csrf).toBeDefined()
    const payOnPage = (query = "") =>
      fetch(`${path}/pay${query}`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", cookie },
        body: new URLSearchParams({ _csrf: csrf! }).toString(),
        redirect: "manual"
      })
    await proxy.refuse()
    const posted = await payOnPage()
    expect(posted.status).toBe(503)
    expect(await posted.text()).toContain("Your payment is being confirmed with your wallet")
    const [pending] = await movementsWhere(`hold_key = 'checkout:${s.id}'`)
    expect(pending?.status).toBe("pending")
    // Paying again on the page, in Dhivehi: told the same in its words, and nothing sent again.
    const again = await payOnPage("?lang=dv")
    expect(again.status).toBe(503)
    expect(await again.text()).toContain("ވޯލެޓާއެކު ކަށަވަރުކުރަމުން")
    // Held: a second payment and a merchant's cancel are both told the payment is being settled.
    const second = await paySession(s.id)
    expect(second.status).toBe(503)
    expect(second.body.code).toBe("OUTCOME_UNKNOWN")
    const cancel = await laari.request("POST", `/checkout/sessions/${s.id}/cancel`, { key: merchant.test })
    expect(cancel.status, cancel.text).toBe(503)
    expect(await movementsWhere(`hold_key = 'checkout:${s.id}'`)).toHaveLength(1)
    await proxy.restore()
    await eventually(async () => (await sessionStatus(s.id)) === "COMPLETE")
    expect(await core.transfers(pending!.id)).toHaveLength(1)
    expect(await eventsAbout("checkout.session.completed", s.id)).toBe(1)
    await settledAll()
    expect((await paySession(s.id)).status).toBe(409)
  }, 60_000)

  it("the expiry sweep leaves a session with a pending payment open; posted, it completes past its expiry", async () => {
    const held = await session(merchant.test)
    const idle = await session(merchant.test)
    await proxy.refuse()
    const unknown = await paySession(held.id, "checkout-outage")
    expect(unknown.body.code).toBe("OUTCOME_UNKNOWN")
    // Past their expiry now, after the payment was taken.
    await rows(`UPDATE checkout_sessions SET expires_at = now() WHERE id IN ('${held.id}', '${idle.id}')`)
    // The sweep has run once the idle one expired; the held one it left alone.
    await eventually(async () => (await sessionStatus(idle.id)) === "EXPIRED")
    expect(await sessionStatus(held.id)).toBe("OPEN")
    await proxy.restore()
    await eventually(async () => (await sessionStatus(held.id)) === "COMPLETE")
    await settledAll()
    const retried = await paySession(held.id, "checkout-outage")
    expect(retried.status, retried.text).toBe(200)
    expect(retried.body.session.status).toBe("COMPLETE")
    expect(await eventsAbout("checkout.session.completed", held.id)).toBe(1)
  }, 60_000)
})
