/**
 * The conformance suite checked both ways against a fake core in the test: the correct core passes every
 * rule, and each fault, one broken rule at a time, fails the rule that names it.
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { afterEach, describe, expect, it } from "vitest"
import * as WalletConformance from "../src/WalletConformance.js"
import * as FakeWalletCore from "./support/FakeWalletCore.js"

let core: FakeWalletCore.FakeCore | undefined

afterEach(async () => {
  await core?.close()
  core = undefined
})

const runAgainst = async (fault?: FakeWalletCore.Fault, setup?: Partial<WalletConformance.Setup>) => {
  core = await FakeWalletCore.start(fault)
  return WalletConformance.runPromise({
    url: core.url,
    token: core.token,
    setup: { ...core.setup, ...setup },
    timeoutMs: 5000
  })
}

const failed = (results: ReadonlyArray<WalletConformance.Result>) =>
  Object.fromEntries(results.filter((r) => r.outcome === "failed").map((r) => [r.rule, r.detail]))

describe("wallet conformance against a fake core", { timeout: 60_000 }, () => {
  it("a correct core passes every rule, and twice in a row (fresh ids each run)", async () => {
    const first = await runAgainst()
    expect(WalletConformance.lines(first).filter((l) => !l.startsWith("ok "))).toEqual([])
    expect(first.map((r) => r.rule)).toEqual([...WalletConformance.rules.map(([rule]) => rule), "request-id"])
    expect(first.find((r) => r.rule === "statement-paging")?.detail).toMatch(/in [2-9] pages/)
    // What docs/wallet-connector.md says a run costs the payer: about 1,600 laari.
    expect(1_000_000 - core!.balance("payer")).toBe(1561)
    expect(core!.balance("empty")).toBe(0)
    const second = await WalletConformance.runPromise({
      url: core!.url,
      token: core!.token,
      setup: core!.setup
    })
    expect(second.filter((r) => !r.ok)).toEqual([])
    // What a run moves: the payer pays, the merchant and the fee wallet receive, nothing else changes.
    expect(core!.balance("payer") + core!.balance("merchant") + core!.balance("fee")).toBe(1_000_000)
    expect(core!.balance("frozen")).toBe(1000)
  })

  it("a refusal rule without its wallet is not checked, and not a failure", async () => {
    const results = await runAgainst(undefined, {
      frozen: undefined,
      blocked: undefined,
      limited: undefined,
      empty: undefined
    })
    expect(results.filter((r) => r.outcome === "not checked").map((r) => [r.rule, r.detail])).toEqual([
      ["money-moves-once", "no empty wallet given (--empty)"],
      ["refusal-frozen", "no frozen wallet given (--frozen)"],
      ["refusal-blocked", "no blocked wallet given (--blocked)"],
      ["refusal-limit", "no limited wallet given (--limited)"],
      ["refusal-balance", "no empty wallet given (--empty)"],
      ["reversal-balance", "no empty wallet given (--empty)"]
    ])
    expect(failed(results)).toEqual({})
    expect(WalletConformance.lines(results)).toContain(
      "not checked  refusal-frozen: no frozen wallet given (--frozen)"
    )
  })

  it("a wallet given in the wrong state is not checked, and says so", async () => {
    const results = await runAgainst(undefined, { frozen: "payer", limited: "merchant" })
    expect(results.find((r) => r.rule === "refusal-frozen")).toMatchObject({
      outcome: "not checked",
      detail: "the wallet given as frozen, payer, is active, not frozen"
    })
    expect(results.find((r) => r.rule === "refusal-limit")?.detail).toContain("has no limit")
  })

  const broken: ReadonlyArray<readonly [FakeWalletCore.Fault, WalletConformance.Rule, RegExp]> = [
    ["no-auth", "authentication", /without a token: expected 401/],
    ["no-request-id", "request-id", /did not carry the Request-Id back/],
    ["no-tombstones", "late-post-after-cancel", /after its cancel .*answered 201/],
    ["double-post", "repeat-same-answer", /a second 201 is a second posting/],
    ["quiet-double-post", "money-moves-once", /paid out 11: the repeat moved the money again/],
    ["refusal-moves", "money-moves-once", /the refused payment of 11 moved money/],
    ["cancelled-moves", "money-moves-once", /the POST of 5 laari to it after its cancel moved money/],
    ["no-conflict", "conflicting-body", /another amount: expected 409, but .* answered 200/],
    ["cancel-cancels-posted", "cancel-after-post", /answered status cancelled/],
    ["cancel-refused-cancels", "cancel-refused", /answered status cancelled, expected refused/],
    ["refusals-forgotten", "refusal-repeat", /GET a refused payment: expected 200, but .* answered 404/],
    ["ignores-frozen", "refusal-frozen", /frozen wallet: expected 422, but .* answered 201/],
    ["balance-first", "refusal-limit", /refused insufficient_balance, expected wallet_limit/],
    [
      "reversals-overdraw",
      "reversal-balance",
      /a reversal of 1 laari from the empty wallet: expected 422, but .* answered 201/
    ],
    ["no-paging", "statement-paging", /holds 1\d\d transfers, more than 100/],
    ["page-overlap", "statement-paging", /listed twice in the pages/],
    ["drops-reversals", "statement-complete", /lists transfer .* not at all: expected once/],
    ["fractional-seconds", "payment-posts", /posted_at/],
    ["crash-on-bad-body", "invalid-request", /expected 400, but .* answered 500/],
    ["slow-concurrent", "concurrent-repeat", /answered 201 and 201/]
  ]

  it.each(broken)("a core that %s fails %s, saying what it saw", async (fault, rule, detail) => {
    const results = await runAgainst(fault)
    const failures = failed(results)
    expect(Object.keys(failures), FakeWalletCore.faults[fault]).toContain(rule)
    expect(failures[rule]).toMatch(detail)
    expect(WalletConformance.lines(results)).toContainEqual(
      expect.stringMatching(new RegExp(`^FAILED  ${rule}: `))
    )
  })

  it("double posting also shows in the statement: an id listed twice, a refusal's id posted", async () => {
    const failures = failed(await runAgainst("double-post"))
    expect(failures["statement-complete"]).toMatch(/lists transfer .* 2 times|which the core must never post/)
    expect(failures["money-moves-once"]).toMatch(/a repeat of the 10 laari to the empty wallet: expected 200/)
  })

  it("a core that cannot be reached or does not answer fails every rule saying so, and never throws", async () => {
    const closed = createServer()
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve))
    const { port } = closed.address() as AddressInfo
    await new Promise((resolve) => closed.close(resolve))
    const refused = await WalletConformance.runPromise({
      url: `http://127.0.0.1:${port}`,
      token: "t",
      setup: { payer: "p", merchant: "m", fee: "f" }
    })
    const checked = (results: ReadonlyArray<WalletConformance.Result>) =>
      results.filter((r) => r.outcome !== "not checked" && r.rule !== "request-id")
    expect(checked(refused).length).toBeGreaterThan(10)
    for (const r of checked(refused))
      expect(r).toMatchObject({
        outcome: "failed",
        detail: expect.stringMatching(/: no answer \(.*ECONNREFUSED/)
      })
    // A core that takes the connection and never answers: each call gives up after its timeout.
    const silent = createServer(() => {})
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve))
    try {
      const results = await WalletConformance.runPromise({
        url: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`,
        token: "t",
        setup: { payer: "p", merchant: "m", fee: "f" },
        timeoutMs: 200
      })
      for (const r of checked(results)) expect(r.detail).toMatch(/: no answer within 200 ms$/)
    } finally {
      silent.closeAllConnections()
      await new Promise((resolve) => silent.close(resolve))
    }
  })
})
