import { describe, expect, it } from "@effect/vitest"
import { DateTime } from "effect"
import type { MandateId, MerchantId } from "../src/kernel/Ids.js"
import * as Mandate from "../src/mandates/Mandate.js"
import * as MandateNotices from "../src/mandates/MandateNotices.js"

const now = DateTime.unsafeMake("2026-03-31T10:00:00Z")

const mandate = (caps: Pick<Mandate.Terms, "periodCap" | "period">) =>
  Mandate.initiate(
    {
      id: "0b6a3c8e-0d3e-4f59-9a39-5f3b8f5f0c01" as MandateId,
      merchantId: "6f1c1f44-9a39-4c5e-8a57-0b3fe4d0a111" as MerchantId,
      environment: "live",
      terms: {
        reference: "gym-1",
        title: "Gym membership",
        description: null,
        perChargeCap: 50_000,
        expiresAt: null,
        returnUrl: null,
        ...caps
      }
    },
    now
  )

describe("MandateNotices", () => {
  it("an approval names the caps in MVR, the period cap only when there is one", () => {
    const capped = MandateNotices.approved("Fit Club", mandate({ periodCap: 120_000, period: "MONTH" }))
    expect(capped.title).toBe("Mandate approved for Fit Club")
    expect(capped.body).toContain("up to MVR 500.00 a charge, MVR 1,200.00 a month.")
    const uncapped = MandateNotices.approved("Fit Club", mandate({ periodCap: null, period: null }))
    expect(uncapped.body).toContain("up to MVR 500.00 a charge. You can end it")
  })

  it("a wallet refusal gives the amount and the refusal in words, with its code in the data", () => {
    const m = mandate({ periodCap: null, period: null })
    const n = MandateNotices.chargeRefused("Fit Club", m, {
      amount: 1_500,
      description: "March",
      code: "INSUFFICIENT_FUNDS"
    })
    expect(n.kind).toBe("mandate.charge_failed")
    expect(n.body).toBe(
      `A charge of MVR 15.00 by Fit Club (March) was refused: ${Mandate.refusalMessages.INSUFFICIENT_FUNDS}.`
    )
    expect(n.data).toEqual({
      mandate_id: m.id,
      amount: 1_500,
      code: "INSUFFICIENT_FUNDS",
      merchant_name: "Fit Club"
    })
  })

  it("an ending says who ended it", () => {
    const n = MandateNotices.revoked(mandate({ periodCap: null, period: null }), "CUSTOMER")
    expect(n).toMatchObject({
      kind: "mandate.revoked",
      title: "Mandate ended",
      data: { revoked_by: "CUSTOMER" }
    })
    expect(n.body).toContain('"Gym membership" has ended')
  })

  it("a charge names the merchant, the amount in MVR, the mandate and what it was for", () => {
    const m = mandate({ periodCap: null, period: null })
    const charge = {
      id: "c-1",
      amount: 12_550,
      description: "March",
      reference: "inv-7"
    } as Mandate.Charge
    expect(MandateNotices.charged("Fit Club", m, charge)).toEqual({
      kind: "mandate.charge",
      title: "Fit Club charged MVR 125.50",
      body: 'Fit Club charged MVR 125.50 to your wallet under the mandate "Gym membership": March.',
      data: {
        mandate_id: m.id,
        charge_id: "c-1",
        amount: 12_550,
        reference: "inv-7",
        merchant_name: "Fit Club"
      }
    })
  })

  it("a refusal and an approval say whose, in their titles and data", () => {
    const m = mandate({ periodCap: 120_000, period: "MONTH" })
    const refused = MandateNotices.chargeRefused("Fit Club", m, {
      amount: 1_500,
      description: "March",
      code: "INSUFFICIENT_FUNDS"
    })
    expect(refused.title).toBe("Fit Club could not charge your wallet")
    expect(MandateNotices.approved("Fit Club", m)).toEqual({
      kind: "mandate.approved",
      title: "Mandate approved for Fit Club",
      body: 'You approved "Gym membership": up to MVR 500.00 a charge, MVR 1,200.00 a month. You can end it at any time in the app.',
      data: { mandate_id: m.id, merchant_name: "Fit Club" }
    })
    expect(MandateNotices.revoked(m, "MERCHANT")).toEqual({
      kind: "mandate.revoked",
      title: "Mandate ended",
      body: 'The mandate "Gym membership" has ended; no further charges can be made under it.',
      data: { mandate_id: m.id, revoked_by: "MERCHANT" }
    })
  })
})
