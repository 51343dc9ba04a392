/**
 * A host platform embedding laari: it brings storage and a wallet ledger (here the testkit's in-memory
 * adapters; in production its own, implementing the same ports) and gets the mandate service.
 */
import { Ids, Mandates, Notifications } from "@laari/core"
import { Seed, Testkit } from "@laari/testkit"
import { Effect } from "effect"

export const program = Effect.gen(function* () {
  const seed = yield* Seed.Seed
  const mandates = yield* Mandates.Mandates
  const notifications = yield* Notifications.Notifications

  // The host's own records: a merchant allowed live mandates, and a customer with a funded wallet.
  const merchant = yield* seed.merchant({ name: "Island Grocer", features: { mandatesLive: true } })
  const customer = yield* seed.customer({ environment: "live", phone: "+960 7771234", balance: 250_000 })
  const tenant: Ids.Tenant = { merchantId: merchant.id, environment: "live" }

  // The merchant asks for a mandate: up to MVR 200.00 a charge, MVR 500.00 a month.
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

  // The customer approves on the hosted page with the one-time code sent to their wallet app.
  const challenge = yield* mandates.requestApproval(created.id, customer.phone)
  const [sent] = yield* notifications.list(customer.id)
  const approved = yield* mandates.approve(created.id, challenge.id, String(sent?.data.code))

  // From now on each payment is one server-side call within the caps.
  const charge = yield* mandates.charge(tenant, created.reference, { amount: 12_550, description: "Week 1" })
  const refused = yield* mandates.charge(tenant, created.id, { amount: 25_000 }).pipe(Effect.flip)

  return {
    created: created.status,
    approved: approved.status,
    charge,
    refused: refused._tag === "ChargeRefused" ? refused.code : refused._tag
  }
})

/** The program on the in-memory adapters. */
export const runInMemory = program.pipe(Effect.provide(Testkit.layer()))
