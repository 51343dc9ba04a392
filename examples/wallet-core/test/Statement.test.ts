/**
 * The core's statement of a Maldives day, paged, and the book under load: 50 payments at once from one
 * wallet that can afford only some of them never overdraw it, and money is neither made nor lost.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Core, balances, databases, openWallet, payment, start, total } from "./support.js"

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** The Maldives day of a `posted_at` (+05:00): its date part. */
const dayOf = (postedAt: string) => postedAt.slice(0, 10)

describe.each(databases)("wallet core on %s", (database) => {
  let core: Core

  beforeAll(async () => {
    core = await start(database)
  }, 120_000)
  afterAll(() => core?.stop(), 60_000)

  it("lists every transfer posted on a day once, in (posted_at, id) order, 100 a page", async () => {
    const customer = await openWallet(core, { balance: 1_000_000 })
    const merchant = await openWallet(core, { balance: 0 })
    const fees = await openWallet(core, { balance: 0 })
    const posted = new Map<string, string>()
    for (let i = 0; i < 130; i++) {
      const res = await core.call(
        "POST",
        "/transfers",
        payment(customer, merchant, 100 + i, { to: fees, amount: i % 3 })
      )
      expect(res.status).toBe(201)
      posted.set(res.body.id, res.body.posted_at)
    }
    // A refused and a cancelled transfer are not on the statement.
    await core.call("POST", "/transfers", payment(customer, merchant, 10_000_000))
    const cancelled = payment(customer, merchant, 5)
    await core.call("POST", `/transfers/${cancelled.id}/cancel`)
    await core.call("POST", "/transfers", cancelled)

    // The run may straddle Maldives midnight: read every day it touched.
    const days = [...new Set(posted.values())].map(dayOf)
    const seen: Array<{ id: string; posted_at: string; amount: number; fee: unknown }> = []
    let pages = 0
    for (const day of new Set(days)) {
      let cursor: string | null = null
      do {
        const query: string = `/transfers?posted_on=${day}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`
        const res = await core.call("GET", query)
        expect(res.status).toBe(200)
        expect(res.body.transfers.length).toBeLessThanOrEqual(100)
        for (const t of res.body.transfers) expect(dayOf(t.posted_at)).toBe(day)
        seen.push(...res.body.transfers)
        cursor = res.body.next_cursor
        pages++
      } while (cursor !== null)
    }
    expect(pages).toBeGreaterThanOrEqual(2)
    expect(seen.map((t) => t.id).sort()).toEqual([...posted.keys()].sort())
    const order = seen.map((t) => `${new Date(t.posted_at).toISOString()} ${t.id}`)
    expect(order).toEqual([...order].sort())
    expect(seen[0]).toEqual({
      id: seen[0]!.id,
      from: customer,
      to: merchant,
      amount: expect.any(Number),
      fee: { to: fees, amount: expect.any(Number) },
      kind: "payment",
      posted_at: posted.get(seen[0]!.id)
    })
    // A day without transfers is one empty page.
    expect((await core.call("GET", "/transfers?posted_on=2001-01-01")).body).toEqual({
      transfers: [],
      next_cursor: null
    })
  }, 120_000)

  it("never overdraws: 50 payments at once from a wallet that can afford 20", async () => {
    const customer = await openWallet(core, { balance: 2_000 })
    const merchants = await Promise.all([0, 1, 2].map(() => openWallet(core, { balance: 0 })))
    const fees = await openWallet(core, { balance: 0 })
    const before = total(await balances(core))
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        core.call("POST", "/transfers", payment(customer, merchants[i % 3]!, 100, { to: fees, amount: 3 }))
      )
    )
    const statuses = answers.map((a) => a.status)
    expect(statuses.filter((s) => s === 201)).toHaveLength(20)
    expect(statuses.filter((s) => s === 422)).toHaveLength(30)
    for (const a of answers.filter((a) => a.status === 422))
      expect(a.body.reason).toBe("insufficient_balance")
    const after = await balances(core)
    expect(after[customer]).toBe(0)
    expect(after[fees]).toBe(60)
    expect(merchants.reduce((a, m) => a + after[m]!, 0)).toBe(20 * 97)
    expect(total(after)).toBe(before)
  }, 120_000)

  it("a cancel racing its POST: one wins, the other sees it, and the money agrees", async () => {
    const customer = await openWallet(core, { balance: 10_000 })
    const merchant = await openWallet(core, { balance: 0 })
    const requests = Array.from({ length: 30 }, () => payment(customer, merchant, 100))
    const answers = await Promise.all(
      // The cancel leaves 0 to 14 ms after its POST, so that each side wins some of the races.
      requests.map((r, i) =>
        Promise.all([
          core.call("POST", "/transfers", r),
          sleep(i % 15).then(() => core.call("POST", `/transfers/${r.id}/cancel`))
        ])
      )
    )
    let posted = 0
    for (const [i, [post, cancel]] of answers.entries()) {
      const read = await core.call("GET", `/transfers/${requests[i]!.id}`)
      // The POST and the cancel tell the same story, and so does a read afterwards.
      if (post.status === 201) {
        posted++
        expect([cancel.body.status, read.body.status]).toEqual(["posted", "posted"])
      } else {
        expect([post.status, post.body.status, cancel.body.status, read.body.status]).toEqual([
          200,
          "cancelled",
          "cancelled",
          "cancelled"
        ])
      }
    }
    expect((await balances(core))[merchant]).toBe(posted * 100)
  }, 120_000)

  it("repeats at once post once: 20 copies of one request, one 201 and the rest its answer", async () => {
    const customer = await openWallet(core, { balance: 1_000 })
    const merchant = await openWallet(core, { balance: 0 })
    const request = payment(customer, merchant, 100)
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => core.call("POST", "/transfers", request))
    )
    expect(answers.filter((a) => a.status === 201)).toHaveLength(1)
    expect(answers.filter((a) => a.status === 200)).toHaveLength(19)
    expect(new Set(answers.map((a) => JSON.stringify(a.body))).size).toBe(1)
    expect((await balances(core))[customer]).toBe(900)
  }, 120_000)
})
