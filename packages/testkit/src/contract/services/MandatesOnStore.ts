/**
 * The Mandates service on the adapter's store: concurrent charges never pass a cap, and what the
 * service's transactions leave behind when a charge is refused.
 */
import { describe, expect } from "@effect/vitest"
import { Events, Mandates, Notifications, Store, Wallet } from "@laari/core"
import { Effect, Either } from "effect"
import { SandboxPayerBalance, Seed } from "../../Seed.js"
import { type It, freshMerchant, freshPhone, freshTenant, tenantOf } from "../support/Helpers.js"
import { mandateTerms } from "../support/Payments.js"
import { at } from "./ManualClock.js"

export const tests = (it: It): void => {
  describe("the Mandates service on this store", () => {
    it.effect("40 concurrent charges on one mandate never exceed its period cap", () =>
      Effect.gen(function* () {
        const seed = yield* Seed
        const mandates = yield* Mandates.Mandates
        const charges = yield* Store.ChargesStore
        const { merchant, tenant } = yield* freshTenant()
        const periodCap = 100_000
        const m = yield* mandates.create(
          tenant,
          yield* mandateTerms("concurrent", "Concurrent", { perChargeCap: 5_000, periodCap, period: "MONTH" })
        )
        const feeBefore = yield* seed.feeBalance("test")
        const amounts = Array.from({ length: 40 }, (_, i) => 3_000 + (i % 5) * 100)
        const outcomes = yield* Effect.all(
          amounts.map((amount) => Effect.either(mandates.charge(tenant, m.id, { amount }))),
          { concurrency: "unbounded" }
        )
        const succeeded = outcomes.filter(Either.isRight).map((o) => o.right)
        const refused = outcomes.filter(Either.isLeft).map((o) => o.left)
        const sum = succeeded.reduce((s, c) => s + c.amount, 0)
        expect(sum).toBeLessThanOrEqual(periodCap)
        // Charges stop only when the next one would not fit.
        expect(sum).toBeGreaterThan(periodCap - Math.max(...amounts))
        for (const r of refused)
          expect(r).toMatchObject({ _tag: "ChargeRefused", code: "PERIOD_CAP_EXCEEDED" })
        // Serialized: in commit order, each success's running total is the previous one plus its amount.
        const byTotal = [...succeeded].sort((a, b) => a.periodCharged - b.periodCharged)
        for (const [i, c] of byTotal.entries())
          expect(c.periodCharged - (byTotal[i - 1]?.periodCharged ?? 0)).toBe(c.amount)

        const after = yield* mandates.get(tenant, m.id)
        expect(after.periodCharged).toBe(sum)
        expect(after.periodKey).toBe("2026-03")
        expect((yield* charges.listByMandate(m.id)).length).toBe(succeeded.length)
        const payer = yield* (yield* Wallet.Wallet).payer(merchant.sandboxPayer)
        expect(SandboxPayerBalance - payer!.balance).toBe(sum)
        const merchantGot = yield* seed.merchantBalance(merchant.id, "test")
        const feeGot = (yield* seed.feeBalance("test")) - feeBefore
        expect(merchantGot + feeGot).toBe(sum)
        expect(merchantGot).toBe(succeeded.reduce((s, c) => s + c.netAmount, 0))
        expect(yield* seed.ledgerTotal).toBe(0)

        const events = (yield* seed.events).filter((e) => e.merchantId === merchant.id)
        const count = (type: Events.Type) => events.filter((e) => e.envelope.type === type).length
        expect(count("mandate.charge.succeeded")).toBe(succeeded.length)
        expect(count("mandate.charge.failed")).toBe(refused.length)
      }).pipe(at("2026-03-15T10:00:00Z"))
    )

    it.effect(
      "approval through the service: a code to the customer, then an ACTIVE mandate bound to them",
      () =>
        Effect.gen(function* () {
          const seed = yield* Seed
          const mandates = yield* Mandates.Mandates
          const notifications = yield* Notifications.Notifications
          const merchant = yield* freshMerchant({ features: { mandatesLive: true } })
          const tenant = tenantOf(merchant, "live")
          const phone = yield* freshPhone
          const customer = yield* seed.customer({ environment: "live", phone, balance: 20_000 })
          const m = yield* mandates.create(
            tenant,
            yield* mandateTerms("approval", "Approval", { perChargeCap: 10_000 })
          )
          expect(m.status).toBe("INITIATED")
          const challenge = yield* mandates.requestApproval(m.id, phone)
          const [notice] = yield* notifications.list(customer.id)
          expect(notice).toMatchObject({ kind: "one_time_code", data: { challenge_id: challenge.id } })
          const approved = yield* mandates.approve(m.id, challenge.id, String(notice!.data.code))
          expect(approved).toMatchObject({ status: "ACTIVE", customerId: customer.id })
          const charge = yield* mandates.charge(tenant, m.reference, { amount: 5_000 })
          expect(charge).toMatchObject({
            amount: 5_000,
            fee: 50,
            netAmount: 4_950,
            amountRefunded: 0,
            customerId: customer.id
          })
          expect((yield* (yield* Wallet.Wallet).payer(customer.id))?.balance).toBe(15_000)
          expect(yield* seed.merchantBalance(merchant.id, "live")).toBe(4_950)
          const types = (yield* seed.events)
            .filter((e) => e.merchantId === merchant.id)
            .map((e) => e.envelope.type)
          expect(types).toEqual(["mandate.activated", "mandate.charge.succeeded"])
        }).pipe(at("2026-03-15T10:00:00Z"))
    )
  })
}
