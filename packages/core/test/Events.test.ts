import { describe, expect, it } from "@effect/vitest"
import { DateTime, Schema } from "effect"
import fc from "fast-check"
import * as Calendar from "../src/kernel/Calendar.js"
import * as CheckoutSession from "../src/billing/CheckoutSession.js"
import * as Events from "../src/Events.js"
import * as EventType from "../src/kernel/EventType.js"
import type * as Ids from "../src/kernel/Ids.js"
import * as Invoice from "../src/billing/Invoice.js"
import * as Mandate from "../src/mandates/Mandate.js"
import type * as QrCode from "../src/qr/QrCode.js"
import * as Refund from "../src/refunds/Refund.js"
import * as Subscription from "../src/billing/Subscription.js"

// -------------------------------------------------------------------------------------------------
// Arbitrary domain values: every status, every nullable both ways, any instant.
// -------------------------------------------------------------------------------------------------

const instant = fc
  .integer({ min: Date.UTC(2024, 0, 1), max: Date.UTC(2031, 0, 1) })
  .map((ms) => DateTime.unsafeMake(ms))
const nullable = <A>(a: fc.Arbitrary<A>) => fc.option(a, { nil: null })
const uuid = <A>() => fc.uuid().map((u) => u as A)
const text = fc.string({ maxLength: 40 })
const laari = fc.integer({ min: 0, max: 100_000_000 })
const interval = fc.constantFrom(...Calendar.Interval.literals)
const merchantId = uuid<Ids.MerchantId>()
const customerId = uuid<Ids.CustomerId>()
const environment = fc.constantFrom<Ids.Environment>("test", "live")

const mandate: fc.Arbitrary<Mandate.Mandate> = fc.record({
  id: uuid<Ids.MandateId>(),
  merchantId,
  environment,
  reference: text,
  status: fc.constantFrom(...Mandate.Status.literals),
  title: text,
  description: nullable(text),
  perChargeCap: laari,
  periodCap: nullable(laari),
  period: nullable(fc.constant("MONTH" as const)),
  periodKey: nullable(fc.constant("2026-07")),
  periodCharged: laari,
  returnUrl: nullable(fc.constant("https://example.mv/back")),
  customerId: nullable(customerId),
  setupExpiresAt: instant,
  expiresAt: instant,
  approvedAt: nullable(instant),
  revokedAt: nullable(instant),
  revokedBy: nullable(fc.constantFrom(...Mandate.RevokedBy.literals)),
  declinedAt: nullable(instant),
  expiredAt: nullable(instant),
  createdAt: instant
})

const charge: fc.Arbitrary<Mandate.Charge> = fc.record({
  id: fc.uuid(),
  mandateId: uuid<Ids.MandateId>(),
  merchantId,
  environment,
  customerId,
  amount: laari,
  description: text,
  reference: text,
  fee: laari,
  netAmount: laari,
  amountRefunded: laari,
  periodKey: fc.constant("2026-07"),
  periodCharged: laari,
  createdAt: instant
})

const chargeFailure = fc.record({
  mandate,
  amount: fc.integer(),
  reference: text,
  description: text,
  code: fc.constantFrom(...Mandate.RefusalCode.literals),
  message: text,
  now: instant
})

const qrPayment: fc.Arbitrary<QrCode.Payment> = fc.record({
  id: fc.uuid(),
  qrCodeId: fc.uuid(),
  qrid: text,
  merchantId,
  environment,
  outletId: fc.integer({ min: 1, max: 999 }),
  customerId,
  amount: laari,
  fee: laari,
  netAmount: laari,
  amountRefunded: laari,
  reference: text,
  createdAt: instant
})

const subscription: fc.Arbitrary<Subscription.Subscription> = fc.record({
  id: uuid<Ids.SubscriptionId>(),
  merchantId,
  environment,
  reference: text,
  status: fc.constantFrom(...Subscription.Status.literals),
  planName: text,
  amount: laari,
  interval,
  intervalCount: fc.integer({ min: 1, max: 52 }),
  checkoutSessionId: uuid<Ids.CheckoutSessionId>(),
  customerId,
  billingCycleAnchor: instant,
  currentPeriodIndex: fc.nat(100),
  currentPeriodStart: instant,
  currentPeriodEnd: instant,
  nextBillingAt: nullable(instant),
  cancelAtPeriodEnd: fc.boolean(),
  cancelledAt: nullable(instant),
  cancellationInitiator: nullable(fc.constantFrom(...Subscription.Initiator.literals)),
  pastDueSince: nullable(instant),
  balanceWarnedFor: nullable(fc.nat(100)),
  metadata: nullable(fc.dictionary(text, text, { maxKeys: 3 })),
  createdAt: instant
})

const invoice: fc.Arbitrary<Invoice.Invoice> = fc.record({
  id: uuid<Ids.InvoiceId>(),
  subscriptionId: uuid<Ids.SubscriptionId>(),
  merchantId,
  environment,
  subscriptionReference: text,
  periodIndex: fc.nat(100),
  periodKey: fc.constant("2026-07"),
  periodStart: instant,
  periodEnd: instant,
  amount: laari,
  amountRefunded: laari,
  status: fc.constantFrom(...Invoice.Status.literals),
  attemptCount: fc.nat(4),
  nextRetryAt: nullable(instant),
  failureReason: nullable(fc.constantFrom(...Invoice.FailureReason.literals)),
  paymentIntentId: nullable(fc.uuid()),
  paidAt: nullable(instant),
  lastAttemptAt: nullable(instant),
  voidedAt: nullable(instant),
  createdAt: instant
})

const refund: fc.Arbitrary<Refund.Refund> = fc.record({
  id: uuid<Refund.RefundId>(),
  merchantId,
  environment,
  source: fc.record({ kind: fc.constantFrom(...Refund.SourceKind.literals), id: fc.uuid() }),
  customerId,
  amount: laari,
  reason: nullable(fc.constantFrom(...Refund.Reason.literals)),
  reference: nullable(text),
  description: nullable(text),
  createdAt: instant
})

const session: fc.Arbitrary<CheckoutSession.CheckoutSession> = fc.record({
  id: uuid<Ids.CheckoutSessionId>(),
  merchantId,
  environment,
  mode: fc.constantFrom(...CheckoutSession.Mode.literals),
  status: fc.constantFrom(...CheckoutSession.Status.literals),
  reference: text,
  title: text,
  description: nullable(text),
  returnUrl: nullable(fc.constant("https://example.mv/back")),
  amount: laari,
  price: nullable(
    fc.record({ name: text, amount: laari, interval, intervalCount: fc.integer({ min: 1, max: 52 }) })
  ),
  customerId: nullable(customerId),
  paymentId: nullable(fc.uuid()),
  subscriptionId: nullable(uuid<Ids.SubscriptionId>()),
  expiresAt: instant,
  completedAt: nullable(instant),
  cancelledAt: nullable(instant),
  expiredAt: nullable(instant),
  createdAt: instant
})

/** For each event type, arbitrary objects built the way the emitters build them. */
const built: { readonly [T in EventType.Type]: fc.Arbitrary<Events.WebhookObject> } = {
  "mandate.activated": mandate.map(Events.mandateObject),
  "mandate.declined": mandate.map(Events.mandateObject),
  "mandate.revoked": mandate.map(Events.mandateObject),
  "mandate.charge.succeeded": charge.map(Events.chargeObject),
  "mandate.charge.failed": chargeFailure.map(Events.chargeFailedObject),
  "subscription.activated": subscription.map(Events.subscriptionObject),
  "invoice.paid": invoice.map(Events.invoiceObject),
  "invoice.payment_failed": invoice.map(Events.invoiceObject),
  "subscription.past_due": subscription.map(Events.subscriptionObject),
  "subscription.canceled": subscription.map(Events.subscriptionObject),
  "checkout.session.completed": session.map(Events.checkoutSessionObject),
  "qr_code.payment.succeeded": qrPayment.map(Events.qrPaymentObject),
  "refund.created": refund.map(Refund.refundObject)
}

/** The object as a webhook receiver sees it: JSON text, parsed. */
const wire = (value: unknown): unknown => JSON.parse(JSON.stringify(value))

const envelope = (
  type: EventType.Type,
  object: Events.WebhookObject,
  environment: Ids.Environment = "test"
) =>
  Events.seal(
    Events.make({
      id: "evt_0123456789abcdef0123456789abcdef",
      type,
      merchantId: "6f1c1f44-9a39-4c5e-8a57-0b3fe4d0a111" as Ids.MerchantId,
      environment,
      now: DateTime.unsafeMake("2026-07-01T10:00:00Z"),
      object
    }),
    1
  ).envelope

const decodes = (schema: Schema.Schema.Any, value: unknown): boolean => {
  try {
    Schema.decodeUnknownSync(schema as Schema.Schema<unknown, unknown>)(value, { onExcessProperty: "error" })
    return true
  } catch {
    return false
  }
}

/** Two-sided: the same object with any one field missing, mistyped, or one field too many is refused. */
const refusesEveryWrongField = (type: EventType.Type) => (object: Events.WebhookObject) => {
  const schema = Events.Objects[type]
  for (const key of Object.keys(object)) {
    const { [key]: _dropped, ...missing } = object as Record<string, unknown>
    expect(decodes(schema, missing), `without ${key}`).toBe(false)
    // An array is no string, number, literal, null or struct of the catalogue.
    expect(decodes(schema, { ...object, [key]: [1] }), `${key}: [1]`).toBe(false)
  }
  expect(decodes(schema, { ...object, currency: "USD" })).toBe(false)
  expect(decodes(schema, { ...object, created_at: 1.5 })).toBe(false)
  expect(decodes(schema, { ...object, unexpected: 1 })).toBe(false)
}

describe("Events", () => {
  it("the catalogue names every event type the service emits, each with an object", () => {
    expect(Object.keys(Events.Objects).sort()).toEqual([...EventType.Types].sort())
    expect(Events.Types).toBe(EventType.Types)
    expect(EventType.ApiVersion).toBe("2026-07-01")
  })

  for (const type of EventType.Types) {
    it(`${type}: every built object decodes with its schema, on the wire too`, () => {
      fc.assert(
        fc.property(built[type], (object) => {
          expect(decodes(Events.Objects[type], object)).toBe(true)
          expect(decodes(Events.Objects[type], wire(object))).toBe(true)
          expect(decodes(Events.envelopeOf(type), wire(envelope(type, object, "live")))).toBe(true)
          expect(decodes(Events.Envelope, wire(envelope(type, object)))).toBe(true)
        })
      )
    })

    it(`${type}: a missing or mistyped field is refused`, () => {
      fc.assert(fc.property(built[type], refusesEveryWrongField(type)))
    })
  }

  it("an envelope's type is fixed to its event and its object to that event's object", () => {
    const object = Events.mandateObject(fc.sample(mandate, { numRuns: 1, seed: 7 })[0]!)
    const revoked = wire(envelope("mandate.revoked", object))
    expect(decodes(Events.envelopeOf("mandate.revoked"), revoked)).toBe(true)
    expect(decodes(Events.envelopeOf("mandate.activated"), revoked)).toBe(false)
    expect(decodes(Events.envelopeOf("invoice.paid"), wire(envelope("invoice.paid", object)))).toBe(false)
    expect(
      decodes(Events.envelopeOf("mandate.revoked"), { ...(revoked as object), api_version: "2025-01-01" })
    ).toBe(false)
  })
})
