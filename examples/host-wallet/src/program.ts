/**
 * A host platform that keeps customers' money in its own ledger: laari decides (caps, approvals, fees)
 * and the host's book moves the money. The story: a merchant, a customer funded in the host book, a
 * mandate created, approved with the one-time code, charged, then two refusals (over the cap, more than
 * the customer has), with the host book's trial balance taken after every step.
 */
import { type Ids, Mandates, Notifications } from "@laari/core"
import { Seed } from "@laari/testkit"
import { Effect } from "effect"
import { type Account, HostLedger, type TrialBalance, accountId } from "./HostLedger.js"
import * as HostPorts from "./HostPorts.js"

export interface Step {
  readonly step: string
  readonly trial: TrialBalance
}

/** A refusal's code: a charge refusal's own code, or the error's tag. */
const codeOf = (e: { readonly _tag: string; readonly code?: string }) => e.code ?? e._tag

export const program = Effect.gen(function* () {
  const seed = yield* Seed.Seed
  const mandates = yield* Mandates.Mandates
  const notifications = yield* Notifications.Notifications
  const ledger = yield* HostLedger

  const steps: Array<Step> = []
  const check = (step: string) =>
    Effect.map(ledger.trialBalance, (trial) => {
      steps.push({ step, trial })
    })

  // The host onboards a merchant and a customer; the customer's MVR 300.00 is a treasury posting.
  const merchant = yield* seed.merchant({ name: "Island Grocer", features: { mandatesLive: true } })
  const customer = yield* seed.customer({ environment: "live", phone: "+960 7771234", balance: 30_000 })
  const tenant: Ids.Tenant = { merchantId: merchant.id, environment: "live" }
  yield* check("onboarded")

  // Up to MVR 200.00 a charge, MVR 500.00 a month.
  const created = yield* mandates.create(tenant, {
    reference: "GROCER-0001",
    title: "Weekly groceries",
    description: "Delivered every Friday",
    perChargeCap: 20_000,
    periodCap: 50_000,
    period: "MONTH",
    expiresAt: null,
    returnUrl: null
  })
  yield* check("mandate created")

  // The customer approves with the one-time code laari sends to their wallet app.
  const challenge = yield* mandates.requestApproval(created.id, customer.phone)
  const [sent] = yield* notifications.list(customer.id)
  const approved = yield* mandates.approve(created.id, challenge.id, String(sent?.data.code))
  yield* check("mandate approved")

  // MVR 125.50: laari works out the fee, the host book debits the customer and credits merchant and fees.
  const charge = yield* mandates.charge(tenant, created.reference, { amount: 12_550, description: "Week 1" })
  yield* check("charged")

  // Over the per-charge cap: laari refuses before the ledger is asked.
  const overCap = yield* mandates.charge(tenant, created.id, { amount: 25_000 }).pipe(Effect.flip)
  yield* check("over the cap refused")

  // Within the caps but more than the MVR 174.50 left: the host ledger refuses, nothing moves.
  const overBalance = yield* mandates.charge(tenant, created.id, { amount: 18_000 }).pipe(Effect.flip)
  yield* check("insufficient funds refused")

  const balances = {
    customer: yield* ledger.balance(accountId.customer(customer.id)),
    merchant: yield* ledger.balance(accountId.merchant("live", merchant.id)),
    fees: yield* ledger.balance(accountId.fees("live")),
    treasury: yield* ledger.balance(accountId.treasury("live"))
  }
  const accounts: ReadonlyArray<Account> = yield* ledger.accounts

  return {
    created: created.status,
    approved: approved.status,
    charge,
    overCap: codeOf(overCap),
    overBalance: codeOf(overBalance),
    balances,
    accounts,
    postings: yield* ledger.postings,
    trial: yield* ledger.trialBalance,
    steps
  }
})

/** The program on the host's ports, each run a new empty world. */
export const run = program.pipe(Effect.provide(HostPorts.layer()))
