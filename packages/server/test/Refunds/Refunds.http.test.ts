/**
 * Refunds over real HTTP on embedded PGlite: the endpoints, their scope, refusals with codes,
 * Idempotency-Key, tenant scoping, `amountRefunded` on the charge and the `refund.created` event.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as F from "../support/Fixtures.js"
import * as TestServer from "../support/TestServer.js"

const readFields = [
  "id",
  "amount",
  "currency",
  "status",
  "chargeId",
  "qrPaymentId",
  "invoiceId",
  "reason",
  "reference",
  "description",
  "createdAt"
]

describe("refunds over HTTP on embedded PGlite", () => {
  let server: TestServer.TestServer
  beforeAll(async () => {
    server = await TestServer.start()
  }, 120_000)
  afterAll(async () => {
    await server?.close()
  })

  const refund = (key: string, body: Record<string, unknown>, headers?: Record<string, string>) =>
    server.request("POST", "/refunds", { key, body, ...(headers ? { headers } : {}) })

  /** A merchant with a sandbox mandate charged `amounts`; returns the charges as answered. */
  const charged = async (amounts: ReadonlyArray<number>) => {
    const m = await F.merchant(server)
    const mandate = await server.request("POST", "/mandates", { key: m.test, body: F.mandateBody() })
    expect(mandate.status).toBe(201)
    const charges = []
    for (const amount of amounts) {
      const c = await server.request("POST", `/mandates/${mandate.body.id}/charges`, {
        key: m.test,
        body: { amount }
      })
      expect(c.status).toBe(201)
      charges.push(c.body)
    }
    return { m, charges }
  }

  it("refunds part of a charge, then the rest by default; a charge reads amountRefunded", async () => {
    const { m, charges } = await charged([10_000, 10_000])
    const charge = charges[0]
    expect(charge.amountRefunded).toBe(0)
    const before = (await server.request("GET", "/test-helpers/payer", { key: m.test })).body.balance

    const first = await refund(m.test, {
      charge_id: charge.id,
      amount: 2_500,
      reason: "requested_by_customer",
      reference: "refund-1",
      description: "Cold coffee"
    })
    expect(first.status).toBe(201)
    expect(Object.keys(first.body)).toEqual(readFields)
    expect(first.body).toMatchObject({
      amount: 2_500,
      currency: "MVR",
      status: "SUCCEEDED",
      chargeId: charge.id,
      qrPaymentId: null,
      invoiceId: null,
      reason: "requested_by_customer",
      reference: "refund-1",
      description: "Cold coffee"
    })
    expect(first.body.createdAt).toMatch(/\+05:00$/)
    const rest = await refund(m.test, { charge_id: charge.id })
    expect(rest.status).toBe(201)
    expect(rest.body).toMatchObject({ amount: 7_500, reason: null, reference: null, description: null })
    const after = (await server.request("GET", "/test-helpers/payer", { key: m.test })).body.balance
    expect(after - before).toBe(10_000)

    const again = await refund(m.test, { charge_id: charge.id, amount: 1 })
    expect(again.status).toBe(409)
    expect(again.body).toEqual({
      message: "The payment has already been refunded in full",
      code: "PAYMENT_ALREADY_REFUNDED"
    })

    expect((await server.request("GET", `/refunds/${first.body.id}`, { key: m.test })).body).toEqual(
      first.body
    )
    expect((await server.request("GET", "/refunds/refund-1", { key: m.test })).body).toEqual(first.body)
    const listed = await server.request("GET", `/refunds?charge_id=${charge.id}`, { key: m.test })
    expect(listed.body.map((r: { id: string }) => r.id)).toEqual([rest.body.id, first.body.id])
    const other = await server.request("GET", `/refunds?charge_id=${charges[1].id}`, { key: m.test })
    expect(other.body).toEqual([])
    const paged = await server.request("GET", "/refunds?limit=1&offset=1", { key: m.test })
    expect(paged.body.map((r: { id: string }) => r.id)).toEqual([first.body.id])

    const events = await F.events(server, m.id, "refund.created")
    expect(events.map((e) => e.data.object.id).sort()).toEqual([first.body.id, rest.body.id].sort())
    expect(events.find((e) => e.data.object.id === first.body.id)?.data.object).toMatchObject({
      object: "refund",
      amount: 2_500,
      charge_id: charge.id,
      qr_payment_id: null,
      invoice_id: null,
      reason: "requested_by_customer"
    })
  })

  it("refuses with codes and moves nothing: naming, amounts, the merchant's balance, references", async () => {
    const { m, charges } = await charged([5_000])
    const charge = charges[0]
    const none = await refund(m.test, { amount: 100 })
    expect(none.status).toBe(422)
    expect(none.body.code).toBe("VALIDATION_FAILED")
    expect(none.body.errors.map((e: { field: string }) => e.field)).toEqual([
      "charge_id",
      "charge_reference",
      "qr_payment_id",
      "qr_payment_reference",
      "invoice_id"
    ])
    expect(none.body.message).toBe(
      "charge_id: one of charge_id, charge_reference, qr_payment_id, qr_payment_reference, invoice_id is required"
    )
    const idAndReference = await refund(m.test, { charge_id: charge.id, charge_reference: "x" })
    expect(idAndReference.status).toBe(422)
    expect(idAndReference.body.message).toBe(
      "charge_id: only one of charge_id, charge_reference may be given"
    )
    for (const bad of ["", "x".repeat(256), 7])
      expect((await refund(m.test, { qr_payment_reference: bad })).status, String(bad)).toBe(422)
    const two = await refund(m.test, { charge_id: charge.id, invoice_id: charge.id })
    expect(two.status).toBe(422)
    expect(two.body.message).toBe("charge_id: only one of charge_id, invoice_id may be given")
    for (const amount of [0, -5, 1.5, "100"]) {
      const bad = await refund(m.test, { charge_id: charge.id, amount })
      expect(bad.status, String(amount)).toBe(422)
      expect(bad.body.code).toBe("VALIDATION_FAILED")
    }
    const badReason = await refund(m.test, { charge_id: charge.id, reason: "bored" })
    expect(badReason.status).toBe(422)
    const unknown = await refund(m.test, { qr_payment_id: charge.id })
    expect(unknown.status).toBe(404)
    expect(unknown.body).toEqual({ message: "QR payment not found", code: "QR_PAYMENT_NOT_FOUND" })
    const notUuid = await refund(m.test, { charge_id: "gym-1" })
    expect(notUuid.status).toBe(422)
    const tooMuch = await refund(m.test, { charge_id: charge.id, amount: 5_001 })
    expect(tooMuch.status).toBe(422)
    expect(tooMuch.body.code).toBe("REFUND_EXCEEDS_PAYMENT")
    // The merchant holds 4,950 of the 5,000 (the fee is laari's and stays so): a full refund is short.
    const short = await refund(m.test, { charge_id: charge.id })
    expect(short.status).toBe(402)
    expect(short.body).toEqual({
      message: "The merchant's balance is too low to fund this refund",
      code: "INSUFFICIENT_MERCHANT_BALANCE"
    })
    expect((await server.request("GET", "/refunds", { key: m.test })).body).toEqual([])
    expect(await F.events(server, m.id, "refund.created")).toEqual([])

    expect((await refund(m.test, { charge_id: charge.id, amount: 100, reference: "dup" })).status).toBe(201)
    const taken = await refund(m.test, { charge_id: charge.id, amount: 100, reference: "dup" })
    expect(taken.status).toBe(409)
    expect(taken.body.code).toBe("REFERENCE_TAKEN")
    expect((await server.request("GET", "/refunds", { key: m.test })).body).toHaveLength(1)
  })

  it("names a charge or a QR payment by the merchant's reference: one of the tenant's, else 404 or 409", async () => {
    const m = await F.merchant(server)
    const mandate = await server.request("POST", "/mandates", { key: m.test, body: F.mandateBody() })
    const charge = (body: Record<string, unknown>) =>
      server.request("POST", `/mandates/${mandate.body.id}/charges`, { key: m.test, body })
    const order = F.unique("order")
    const named = await charge({ amount: 6_000, reference: order })
    expect(named.body.reference).toBe(order)
    // Two charges with the mandate's reference (the default).
    expect((await charge({ amount: 2_000 })).body.reference).toBe(mandate.body.reference)
    expect((await charge({ amount: 2_000 })).status).toBe(201)

    const byRef = await refund(m.test, { charge_reference: order, amount: 1_000 })
    expect(byRef.status).toBe(201)
    expect(byRef.body).toMatchObject({ chargeId: named.body.id, qrPaymentId: null, amount: 1_000 })
    const listed = await server.request("GET", `/refunds?charge_id=${named.body.id}`, { key: m.test })
    expect(listed.body.map((r: { id: string }) => r.id)).toEqual([byRef.body.id])

    const ambiguous = await refund(m.test, { charge_reference: mandate.body.reference, amount: 100 })
    expect(ambiguous.status).toBe(409)
    expect(ambiguous.body).toEqual({
      message: "Several charges carry this reference; name the one to refund by charge_id",
      code: "PAYMENT_REFERENCE_AMBIGUOUS"
    })
    const other = await F.merchant(server)
    for (const key of [other.test, m.live]) {
      const hidden = await refund(key, { charge_reference: order, amount: 100 })
      expect(hidden.status).toBe(404)
      expect(hidden.body).toEqual({ message: "Charge not found", code: "CHARGE_NOT_FOUND" })
    }

    // A dynamic code's payment by the code's reference; a static code's several payments are ambiguous.
    const qrRef = F.unique("qr")
    const code = await server.request("POST", "/qr-codes", {
      key: m.test,
      body: { outlet_id: m.outletId, type: "DYNAMIC", amount: 3_000, reference: qrRef }
    })
    expect(code.status).toBe(201)
    const paid = await server.request("POST", "/test-helpers/qr-codes/pay", {
      key: m.test,
      body: { payload: code.body.payload }
    })
    expect(paid.status).toBe(201)
    const qrRefund = await refund(m.test, { qr_payment_reference: qrRef })
    expect(qrRefund.status).toBe(201)
    expect(qrRefund.body).toMatchObject({ qrPaymentId: paid.body.id, chargeId: null, amount: 3_000 })
    const till = F.unique("till")
    const stat = await server.request("POST", "/qr-codes", {
      key: m.test,
      body: { outlet_id: m.outletId, type: "STATIC", reference: till }
    })
    for (const amount of [500, 600])
      expect(
        (
          await server.request("POST", "/test-helpers/qr-codes/pay", {
            key: m.test,
            body: { payload: stat.body.payload, amount }
          })
        ).status
      ).toBe(201)
    const several = await refund(m.test, { qr_payment_reference: till })
    expect(several.status).toBe(409)
    expect(several.body.code).toBe("PAYMENT_REFERENCE_AMBIGUOUS")
    const none = await refund(m.test, { qr_payment_reference: order })
    expect(none.status).toBe(404)
    expect(none.body.code).toBe("QR_PAYMENT_NOT_FOUND")
    const all = await server.request("GET", "/refunds", { key: m.test })
    expect(all.body.map((r: { id: string }) => r.id)).toEqual([qrRefund.body.id, byRef.body.id])
  })

  it("Idempotency-Key: a retry replays the first refund and moves nothing again", async () => {
    const { m, charges } = await charged([10_000])
    const headers = { "idempotency-key": F.unique("idem") }
    const first = await refund(m.test, { charge_id: charges[0].id, amount: 1_000 }, headers)
    const replay = await refund(m.test, { charge_id: charges[0].id, amount: 1_000 }, headers)
    expect(first.status).toBe(201)
    expect(replay.status).toBe(201)
    expect(replay.body).toEqual(first.body)
    expect(replay.headers.get("idempotent-replay")).toBe("true")
    expect((await server.request("GET", "/refunds", { key: m.test })).body).toHaveLength(1)
    const reused = await refund(m.test, { charge_id: charges[0].id, amount: 2_000 }, headers)
    expect(reused.status).toBe(422)
  })

  it("scope payments:write; another merchant's or environment's payment and refund are 404", async () => {
    const { m, charges } = await charged([10_000])
    const mandatesOnly = await m.key("test", ["mandates:write"])
    const denied = await refund(mandatesOnly, { charge_id: charges[0].id, amount: 100 })
    expect(denied.status).toBe(403)
    expect(denied.body.message).toContain("payments:write")
    expect((await server.request("GET", "/refunds", { key: mandatesOnly })).status).toBe(403)
    expect((await refund(m.publishable, { charge_id: charges[0].id })).status).toBe(403)
    const paymentsOnly = await m.key("test", ["payments:write"])
    const made = await refund(paymentsOnly, { charge_id: charges[0].id, amount: 100 })
    expect(made.status).toBe(201)

    const other = await F.merchant(server)
    for (const key of [other.test, m.live]) {
      const refused = await refund(key, { charge_id: charges[0].id, amount: 100 })
      expect(refused.status).toBe(404)
      expect(refused.body.code).toBe("CHARGE_NOT_FOUND")
      const got = await server.request("GET", `/refunds/${made.body.id}`, { key })
      expect(got.status).toBe(404)
      expect(got.body).toEqual({ message: "Refund not found", code: "REFUND_NOT_FOUND" })
      expect((await server.request("GET", "/refunds", { key })).body).toEqual([])
    }
  })
})
