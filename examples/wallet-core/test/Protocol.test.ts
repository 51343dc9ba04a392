/**
 * The protocol's rules, each checked over HTTP against the running core: posting and its entries, an
 * idempotent repeat, a conflicting body, every refusal (in core's order) moving nothing, cancel before and
 * after posting, reads and their 404s, the errors' shapes and the Request-Id echoed back.
 */
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Core, balances, databases, openWallet, payment, start, total } from "./support.js"

describe.each(databases)("wallet core on %s", (database) => {
  let core: Core
  let merchant: string
  let feeWallet: string

  beforeAll(async () => {
    core = await start(database)
    merchant = await openWallet(core, { balance: 0 })
    feeWallet = await openWallet(core, { balance: 0 })
  }, 120_000)
  afterAll(() => core?.stop(), 60_000)

  it("posts a payment: from debited the amount, to credited the rest, fee.to the fee", async () => {
    const customer = await openWallet(core, { balance: 10_000 })
    const request = payment(customer, merchant, 2_500, { to: feeWallet, amount: 50 })
    const before = await balances(core)
    const res = await core.call("POST", "/transfers", request)
    expect(res.status).toBe(201)
    expect(res.body).toEqual({ id: request.id, status: "posted", posted_at: expect.any(String) })
    expect(res.body.posted_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+05:00$/)
    const after = await balances(core)
    expect(after[customer]).toBe(before[customer]! - 2_500)
    expect(after[merchant]).toBe(before[merchant]! + 2_450)
    expect(after[feeWallet]).toBe(before[feeWallet]! + 50)

    const read = await core.call("GET", `/transfers/${request.id}`)
    expect(read.status).toBe(200)
    expect(read.body).toEqual({ ...request, status: "posted", posted_at: res.body.posted_at })
  })

  it("answers a repeat with the same body with the first answer, and moves nothing", async () => {
    const customer = await openWallet(core, { balance: 1_000 })
    const request = payment(customer, merchant, 400)
    const first = await core.call("POST", "/transfers", request)
    const before = await balances(core)
    const again = await core.call("POST", "/transfers", request)
    expect(again.status).toBe(200)
    expect(again.body).toEqual(first.body)
    expect(await balances(core)).toEqual(before)
  })

  it("answers the same id with another body 409, and moves nothing", async () => {
    const customer = await openWallet(core, { balance: 1_000 })
    const request = payment(customer, merchant, 400)
    await core.call("POST", "/transfers", request)
    const before = await balances(core)
    for (const other of [
      { ...request, amount: 401 },
      { ...request, memo: "other" },
      { ...request, environment: "test" }
    ]) {
      const res = await core.call("POST", "/transfers", other)
      expect(res.status).toBe(409)
      expect(res.body).toEqual({ code: "conflict", message: expect.any(String) })
    }
    expect(await balances(core)).toEqual(before)
  })

  // Each wallet breaks the rules from that reason on down, so the answer shows core's order: frozen
  // before blocked before the limit before the balance.
  const refusals = [
    { reason: "wallet_frozen", wallet: { status: "frozen", limit: 100, balance: 50 } },
    { reason: "blocked_by_rules", wallet: { status: "blocked", limit: 100, balance: 50 } },
    { reason: "wallet_limit", wallet: { status: "active", limit: 100, balance: 50 } },
    { reason: "insufficient_balance", wallet: { status: "active", limit: null, balance: 50 } }
  ] as const
  it.each(refusals)(
    "refuses $reason in core's order, moves nothing, and keeps the refusal",
    async ({ reason, wallet }) => {
      const customer = await openWallet(core, wallet)
      const request = payment(customer, merchant, 200, { to: feeWallet, amount: 10 })
      const before = await balances(core)
      const res = await core.call("POST", "/transfers", request)
      expect(res.status).toBe(422)
      expect(res.body).toEqual({ id: request.id, status: "refused", reason })
      expect(await balances(core)).toEqual(before)
      // Stored: the same body gets the same 422, a read shows it, a cancel cannot change it.
      expect(await core.call("POST", "/transfers", request)).toMatchObject({ status: 422, body: res.body })
      expect((await core.call("GET", `/transfers/${request.id}`)).body).toEqual({
        ...request,
        status: "refused",
        reason
      })
      expect(await core.call("POST", `/transfers/${request.id}/cancel`)).toMatchObject({
        status: 200,
        body: { status: "refused" }
      })
      expect(await balances(core)).toEqual(before)
    }
  )

  it("posts a reversal from the merchant back to the customer, refused when the merchant is short or the customer's wallet frozen or blocked", async () => {
    // A refund is not a payment: the merchant's limit does not apply, only its balance.
    const shop = await openWallet(core, { balance: 300, limit: 100 })
    const customer = await openWallet(core, { balance: 0 })
    const refund = { ...payment(shop, customer, 200), kind: "reversal" }
    expect((await core.call("POST", "/transfers", refund)).status).toBe(201)
    const after = await balances(core)
    expect([after[shop], after[customer]]).toEqual([100, 200])
    const short = { ...payment(shop, customer, 101), kind: "reversal" }
    expect((await core.call("POST", "/transfers", short)).body).toMatchObject({
      status: "refused",
      reason: "insufficient_balance"
    })
    // A credit to a frozen or blocked wallet is refused first, whatever the merchant holds.
    for (const [status, reason] of [
      ["frozen", "wallet_frozen"],
      ["blocked", "blocked_by_rules"]
    ] as const) {
      const held = await openWallet(core, { balance: 0, status })
      const back = { ...payment(shop, held, 50), kind: "reversal" }
      expect((await core.call("POST", "/transfers", back)).body).toMatchObject({ status: "refused", reason })
    }
    const now = await balances(core)
    expect([now[shop], now[customer]]).toEqual([100, 200])
  })

  it("cancel before posting: a tombstone, and a late POST answers cancelled and moves nothing", async () => {
    const customer = await openWallet(core, { balance: 1_000 })
    const request = payment(customer, merchant, 300)
    expect(await core.call("POST", `/transfers/${request.id}/cancel`)).toMatchObject({
      status: 200,
      body: { status: "cancelled" }
    })
    const before = await balances(core)
    const late = await core.call("POST", "/transfers", request)
    expect(late.status).toBe(200)
    expect(late.body).toEqual({ id: request.id, status: "cancelled" })
    expect(await balances(core)).toEqual(before)
    expect((await core.call("GET", `/transfers/${request.id}`)).body).toEqual({
      id: request.id,
      status: "cancelled"
    })
    // Final: a second cancel, and a late POST with any body, say the same.
    expect((await core.call("POST", `/transfers/${request.id}/cancel`)).body).toEqual({ status: "cancelled" })
    expect((await core.call("POST", "/transfers", { ...request, amount: 1 })).body.status).toBe("cancelled")
  })

  it("cancel after posting answers posted, and the money stays moved", async () => {
    const customer = await openWallet(core, { balance: 1_000 })
    const request = payment(customer, merchant, 300)
    await core.call("POST", "/transfers", request)
    const before = await balances(core)
    expect(await core.call("POST", `/transfers/${request.id}/cancel`)).toMatchObject({
      status: 200,
      body: { status: "posted" }
    })
    expect(await balances(core)).toEqual(before)
    expect((await core.call("GET", `/transfers/${request.id}`)).body.status).toBe("posted")
  })

  it("reads wallets by id and by phone, and answers 404 for what it does not know", async () => {
    const id = await openWallet(core, { balance: 5, limit: 1_000 })
    const wallet = await core.call("GET", `/wallets/${id}`)
    expect(wallet.status).toBe(200)
    expect(wallet.body).toEqual({
      id,
      phone: expect.stringMatching(/^\+960\d{7}$/),
      status: "active",
      limit: 1_000,
      time_zone: "Indian/Maldives"
    })
    const byPhone = await core.call("GET", `/wallets?phone=${encodeURIComponent(wallet.body.phone)}`)
    expect(byPhone.body).toEqual(wallet.body)
    expect((await core.call("GET", "/wallets?phone=%2B9600000000")).status).toBe(404)
    expect(await core.call("GET", "/wallets/nobody")).toMatchObject({
      status: 404,
      body: { code: "not_found" }
    })
    expect(await core.call("GET", `/transfers/${randomUUID()}`)).toMatchObject({
      status: 404,
      body: { code: "not_found" }
    })
    // A transfer to a wallet the core does not have is a 404 too, and leaves nothing behind.
    const stray = payment(id, "nobody", 1)
    expect((await core.call("POST", "/transfers", stray)).status).toBe(404)
    expect((await core.call("GET", `/transfers/${stray.id}`)).status).toBe(404)
  })

  it("answers 401 without the token, 400 for what does not decode, and echoes Request-Id", async () => {
    const res = await core.call("GET", "/wallets/x", undefined, {
      authorization: "Bearer wrong",
      "request-id": "r-1"
    })
    expect(res.status).toBe(401)
    expect(res.body).toEqual({ code: "unauthorized", message: expect.any(String) })
    expect(res.headers.get("request-id")).toBe("r-1")
    const customer = await openWallet(core, { balance: 100 })
    const bad = [
      { ...payment(customer, merchant, 0) },
      { ...payment(customer, merchant, 10, { to: feeWallet, amount: 11 }) },
      { ...payment(customer, merchant, 10), id: "not-a-uuid" },
      { ...payment(customer, merchant, 10), memo: "x".repeat(141) },
      { ...payment(customer, merchant, 10), kind: "gift" }
    ]
    for (const body of bad) {
      const answer = await core.call("POST", "/transfers", body, { "request-id": "r-2" })
      expect(answer.status).toBe(400)
      expect(answer.body).toEqual({ code: "invalid_request", message: expect.any(String) })
      expect(answer.headers.get("request-id")).toBe("r-2")
    }
    const notJson = await fetch(`${core.url}/transfers`, {
      method: "POST",
      headers: { authorization: `Bearer ${core.token}`, "content-type": "application/json" },
      body: "{"
    })
    expect(notJson.status).toBe(400)
    expect((await core.call("GET", "/transfers?posted_on=2026-02-30")).status).toBe(400)
    expect((await core.call("GET", "/transfers?posted_on=2026-12-01&cursor=nonsense")).status).toBe(400)
  })

  it("conserves money: every wallet's balance adds up to what was seeded", async () => {
    // Everything above moved money between wallets; only seeding adds any.
    const wallets = (await core.call("GET", "/admin/wallets")).body.wallets as Array<{
      opening_balance: number
      balance: number
    }>
    expect(total(await balances(core))).toBe(wallets.reduce((a, w) => a + w.opening_balance, 0))
  })
})
