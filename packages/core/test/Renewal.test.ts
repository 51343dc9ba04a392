/**
 * The renewal engine's working state: a batch's subscription, the invoices its steps touched, and what an
 * attempt is counted as.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Renewal from "../src/billing/Renewal.js"
import type * as Invoice from "../src/billing/Invoice.js"
import type * as Subscription from "../src/billing/Subscription.js"
import * as Counters from "../src/kernel/Counters.js"

const sub = { id: "sub_1" } as Subscription.Subscription
const invoice = (id: string, status: Invoice.Invoice["status"] = "PENDING") =>
  ({ id, status }) as Invoice.Invoice

describe("Renewal.renewal and progress", () => {
  it("a subscription starts a batch with nothing touched, and its steps so far", () => {
    const latest = invoice("inv_0")
    expect(Renewal.renewal(sub, latest)).toEqual({ sub, latest, invoices: new Map(), steps: 0, trail: [] })
    expect(Renewal.renewal(sub, undefined, 3)).toMatchObject({ latest: undefined, steps: 3 })
    expect(Renewal.progress()).toEqual({ attempts: [], sends: [], outcomes: [] })
    // Each call is a fresh one: one batch's progress is never another's.
    expect(Renewal.progress().attempts).not.toBe(Renewal.progress().attempts)
  })
})

describe("Renewal.touch", () => {
  it("keeps the invoice as the latest, to be written once, inserted only if opened here", () => {
    const r = Renewal.renewal(sub, undefined)
    const opened = invoice("inv_1")
    Renewal.touch(r, opened, true)
    expect(r.latest).toBe(opened)
    const charging = invoice("inv_1", "CHARGING")
    Renewal.touch(r, charging)
    // Still the new row it was: written once, as an insert, with its last state.
    expect([...r.invoices]).toEqual([["inv_1", { invoice: charging, isNew: true }]])
    const old = invoice("inv_0", "PAID")
    Renewal.touch(r, old)
    expect(r.latest).toBe(old)
    expect([...r.invoices.entries()]).toEqual([
      ["inv_1", { invoice: charging, isNew: true }],
      ["inv_0", { invoice: old, isNew: false }]
    ])
  })
})

describe("Renewal.outcome", () => {
  it("paid; else voided, ended or failed by the invoice after the attempt", () => {
    const missed = { _tag: "Missed", reason: "insufficient-balance" } as Subscription.Outcome
    expect(Renewal.outcome({ _tag: "Paid" } as Subscription.Outcome, invoice("i", "VOID"))).toBe("paid")
    expect(Renewal.outcome(missed, invoice("i", "VOID"))).toBe("voided")
    expect(Renewal.outcome(missed, invoice("i", "FAILED"))).toBe("ended")
    expect(Renewal.outcome(missed, invoice("i", "PENDING"))).toBe("failed")
    expect(Renewal.outcome(missed, undefined)).toBe("failed")
  })
})

describe("Renewal.count", () => {
  it.effect("adds each committed outcome to its own series", () =>
    Effect.gen(function* () {
      const before = new Map(yield* Counters.read(Renewal.Renewals))
      // Counting answers nothing: the outcomes are not handed back.
      expect(yield* Renewal.count(["paid", "paid", "ended"])).toBeUndefined()
      const after = new Map(yield* Counters.read(Renewal.Renewals))
      expect(Renewal.Renewals.values.map((v) => after.get(v)! - before.get(v)!)).toEqual([2, 0, 1, 0])
    })
  )
})
