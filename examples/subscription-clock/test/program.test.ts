import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { Price, run } from "../src/program.js"

const net = Price - 150 // the default fee, 1%

describe("examples/subscription-clock", () => {
  it("renews on the anchor's calendar in Maldives time, then retries and ends by dunning", async () => {
    const result = await Effect.runPromise(run)
    expect(result.anchor).toBe("2026-01-31 10:00")

    const invoice = (
      at: string,
      type: string,
      status: string,
      attempts: number,
      nextRetry: string | null
    ) => ({
      at,
      type,
      status,
      period: "2026-04-30",
      amount: Price,
      attempts,
      nextRetry,
      failure: "insufficient-balance"
    })
    const paid = (at: string, period: string) => ({
      at,
      type: "invoice.paid",
      status: "PAID",
      period,
      amount: Price,
      attempts: 1,
      nextRetry: null,
      failure: null
    })
    expect(result.timeline).toEqual([
      { at: "2026-01-31 10:00", type: "subscription.activated", status: "ACTIVE" },
      paid("2026-01-31 10:00", "2026-01-31"),
      { at: "2026-01-31 10:00", type: "checkout.session.completed", status: "COMPLETE" },
      // The 31st clamps to the last day of February and returns in March.
      paid("2026-02-28 10:00", "2026-02-28"),
      paid("2026-03-31 10:00", "2026-03-31"),
      invoice("2026-04-30 10:00", "invoice.payment_failed", "PENDING", 1, "2026-04-30 22:00"),
      { at: "2026-04-30 10:00", type: "subscription.past_due", status: "PAST_DUE" },
      // Retries 12 h, then 24 h, then 48 h apart: four attempts in all.
      invoice("2026-04-30 22:00", "invoice.payment_failed", "PENDING", 2, "2026-05-01 22:00"),
      invoice("2026-05-01 22:00", "invoice.payment_failed", "PENDING", 3, "2026-05-03 22:00"),
      invoice("2026-05-03 22:00", "invoice.payment_failed", "FAILED", 4, null),
      { at: "2026-05-03 22:00", type: "subscription.canceled", status: "CANCELLED" }
    ])
    expect(result.ended).toEqual({ status: "CANCELLED", by: "DUNNING", nextBillingAt: null })
  })

  it("moves money once a cycle while paid, and never after the wallet runs dry", async () => {
    const result = await Effect.runPromise(run)
    expect(
      result.months.map((m) => [
        m.at,
        m.subscription,
        m.customerBalance,
        m.merchantBalance,
        m.invoices.length
      ])
    ).toEqual([
      ["2026-02-01 10:00", "ACTIVE", 100_000 - Price, net, 1],
      ["2026-03-01 10:00", "ACTIVE", 100_000 - 2 * Price, 2 * net, 2],
      ["2026-04-01 10:00", "ACTIVE", 100_000 - 3 * Price, 3 * net, 3],
      ["2026-05-01 10:00", "PAST_DUE", 5_000, 3 * net, 4],
      ["2026-06-01 10:00", "CANCELLED", 5_000, 3 * net, 4],
      // Nothing more is ever attempted: no new cycle opens after the end.
      ["2026-07-01 10:00", "CANCELLED", 5_000, 3 * net, 4]
    ])
    expect(result.months.at(-1)?.invoices).toEqual([
      "2026-01-31 PAID",
      "2026-02-28 PAID",
      "2026-03-31 PAID",
      "2026-04-30 FAILED"
    ])
  })
})
