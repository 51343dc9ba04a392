import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { accountId } from "../src/HostLedger.js"
import { run } from "../src/program.js"

describe("examples/host-wallet", () => {
  it("charges through the host's ledger and refuses over the cap and over the balance", async () => {
    const result = await Effect.runPromise(run)
    expect(result.created).toBe("INITIATED")
    expect(result.approved).toBe("ACTIVE")
    expect(result.charge).toMatchObject({
      amount: 12_550,
      fee: 126,
      netAmount: 12_424,
      periodCharged: 12_550
    })
    expect(result.overCap).toBe("PER_CHARGE_CAP_EXCEEDED")
    expect(result.overBalance).toBe("INSUFFICIENT_FUNDS")
    // The customer was debited the whole charge, the merchant credited net of the fee, the fee account the fee.
    expect(result.balances).toEqual({ customer: 17_450, merchant: 12_424, fees: 126, treasury: -30_000 })
  })

  it("books exactly one laari posting, balanced: debits equal credits", async () => {
    const result = await Effect.runPromise(run)
    const laari = result.postings.filter((p) => p.id.startsWith("laari/"))
    expect(laari).toHaveLength(1)
    expect(laari[0]!.lines.map((l) => [l.account.split("/")[0], l.amount])).toEqual([
      ["CUST", -12_550],
      ["MERC", 12_424],
      ["FEES", 126]
    ])
    // The two openings (the merchant's sandbox payer in test, the customer in live) and the charge.
    expect(result.trial.postings).toBe(3)
    expect(result.trial.debits).toBe(result.trial.credits)
    expect(result.trial.debits).toBe(10_000_000 + 30_000 + 12_550)
    expect(result.trial.sum).toBe(0)
  })

  it("keeps the sum of postings at zero after every step, and only the treasury below zero", async () => {
    const result = await Effect.runPromise(run)
    expect(result.steps.map((s) => s.step)).toEqual([
      "onboarded",
      "mandate created",
      "mandate approved",
      "charged",
      "over the cap refused",
      "insufficient funds refused"
    ])
    expect(result.steps.map((s) => s.trial.sum)).toEqual([0, 0, 0, 0, 0, 0])
    // Money moved at the charge and only there: the refusals posted nothing.
    expect(result.steps.map((s) => s.trial.postings)).toEqual([2, 2, 2, 3, 3, 3])
    const negative = result.accounts.filter((a) => a.balance < 0).map((a) => a.id)
    expect(negative.sort()).toEqual([accountId.treasury("live"), accountId.treasury("test")].sort())
  })
})
