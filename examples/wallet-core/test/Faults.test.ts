/**
 * The test-only faults break exactly the rule they name, so a conformance suite pointed at a core with
 * them on must fail, and one pointed at a core without them must pass.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Core, balances, openWallet, payment, start } from "./support.js"

describe("WALLET_CORE_FAULTS", () => {
  let core: Core

  beforeAll(async () => {
    core = await start("pglite", "no-tombstones,double-post")
  }, 120_000)
  afterAll(() => core?.stop(), 60_000)

  it("says it is on when it starts", async () => {
    // The warning may follow the listening line by a moment: wait for it, bounded.
    const deadline = Date.now() + 10_000
    while (!core.output().includes("TEST-ONLY FAULTS ON") && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50))
    expect(core.output()).toContain("TEST-ONLY FAULTS ON: noTombstones, doublePost")
  })

  it("no-tombstones: a cancel forgets, so a late POST of that id posts", async () => {
    const customer = await openWallet(core, { balance: 1_000 })
    const merchant = await openWallet(core, { balance: 0 })
    const request = payment(customer, merchant, 300)
    expect((await core.call("POST", `/transfers/${request.id}/cancel`)).body).toEqual({ status: "cancelled" })
    expect((await core.call("POST", "/transfers", request)).status).toBe(201)
    expect((await balances(core))[customer]).toBe(700)
  })

  it("double-post: a repeat moves the money again", async () => {
    const customer = await openWallet(core, { balance: 1_000 })
    const merchant = await openWallet(core, { balance: 0 })
    const request = payment(customer, merchant, 300)
    await core.call("POST", "/transfers", request)
    expect((await core.call("POST", "/transfers", request)).status).toBe(200)
    expect((await balances(core))[customer]).toBe(400)
  })
})
