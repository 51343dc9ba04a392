/**
 * The read side's queries, each named once, for every front end (REST, GraphQL, the dashboard, the
 * wallet app, the operator API): what no domain service reads already. A mandate's charges, a
 * subscription's invoices and a QR code's payments (one parent, or many in one statement for a page of
 * parents), a payment by id, the tenant's checkout sessions, the event log, merchants and customers by
 * id, a customer's notifications and the one-time codes among them still usable, a customer's wallet
 * balance and payments. A domain object's own
 * `get` and `list` stay on its service (`Mandates.list`, `Subscriptions.listInvoices`, ...), which checks
 * the tenant and the reference.
 * Read-only: nothing here writes.
 */
import { DateTime, Effect } from "effect"
import * as Approval from "./approvals/Approval.js"
import type { InvoiceObject } from "./billing/BillingEvents.js"
import type { ChargeFailureObject } from "./mandates/MandateEvents.js"
import { EventLog, type Filter as EventFilter, parsed, type Stored } from "./kernel/EventLog.js"
import type { CustomerId, Environment, MerchantId, Tenant } from "./kernel/Ids.js"
import type { ServiceUnavailable } from "./kernel/Errors.js"
import * as Ids from "./kernel/Ids.js"
import * as Notifications from "./kernel/Notifications.js"
import * as Phone from "./kernel/Phone.js"
import * as Store from "./Store.js"
import * as Telemetry from "./kernel/Telemetry.js"
import type { CheckoutSession } from "./billing/CheckoutSession.js"
import type { Invoice } from "./billing/Invoice.js"
import type { Charge } from "./mandates/Mandate.js"
import type { Payment as QrPayment } from "./qr/QrCode.js"
import * as Balance from "./wallet/Balance.js"
import { Wallet } from "./wallet/Wallet.js"

/** A one-time code the customer can still use: its notice (the only place its plaintext is kept) and its challenge. */
export interface LiveCode {
  readonly notice: Notifications.Notification
  readonly challenge: Approval.Challenge
}

/**
 * A payment from the customer's wallet with what paid it, when the record is found: a mandate's charge,
 * a QR payment, a checkout session or a subscription's invoice (`none` for a transfer no path made).
 */
export interface WalletPayment {
  readonly payment: Balance.PayerPayment
  readonly source:
    | { readonly type: "charge"; readonly charge: Charge | undefined }
    | { readonly type: "qr_payment"; readonly qrPayment: QrPayment | undefined }
    | { readonly type: "checkout_payment"; readonly session: CheckoutSession | undefined }
    | { readonly type: "invoice"; readonly invoice: Invoice | undefined }
    | { readonly type: "none" }
}

/** A refused charge or a missed renewal attempt: when it was recorded, and the event's object. */
export interface Failure<A> {
  readonly at: DateTime.Utc
  readonly eventId: string
  readonly object: A
}

/** The events' objects of the kind `kind`, with their times. */
const failuresOf = <A extends { readonly object: string }>(
  events: ReadonlyArray<Stored>,
  kind: A["object"]
): ReadonlyArray<Failure<A>> =>
  events.flatMap((e) => {
    const object = parsed(e).envelope.data.object as unknown as A
    return object.object === kind ? [{ at: e.createdAt, eventId: e.id, object }] : []
  })

/**
 * `rows` in lists aligned with `parentIds`: each parent's rows, the tenant's only (ids compared as the
 * stores keep them, lower case), in the order the store gave them.
 */
export const groupByParent = <A extends Tenant>(
  tenant: Tenant,
  parentIds: ReadonlyArray<string>,
  rows: ReadonlyArray<A>,
  parentOf: (a: A) => string
): ReadonlyArray<ReadonlyArray<A>> =>
  parentIds.map((id) =>
    rows.filter(
      (r) =>
        parentOf(r) === id.toLowerCase() &&
        r.merchantId === tenant.merchantId &&
        r.environment === tenant.environment
    )
  )

export class Reads extends Effect.Service<Reads>()("laari/Reads", {
  effect: Effect.gen(function* () {
    const merchants = yield* Store.MerchantsStore
    const customers = yield* Store.CustomersStore
    const charges = yield* Store.ChargesStore
    const qrPayments = yield* Store.QrPaymentsStore
    const invoices = yield* Store.InvoicesStore
    const sessions = yield* Store.CheckoutSessionsStore
    const challenges = yield* Store.ChallengesStore
    const tx = yield* Store.Transactor
    const notifications = yield* Notifications.Notifications
    const eventLog = yield* EventLog
    const ledger = yield* Store.LedgerReadsStore
    const wallet = yield* Wallet

    const merchant = Telemetry.fn("Reads.merchant")((id: MerchantId) => merchants.get(id))

    const customer = Telemetry.fn("Reads.customer")((id: CustomerId) => customers.get(id))

    /** The environment's customer with this phone, however it is typed (`Phone.lookupKey`). */
    const customerByPhone = Telemetry.fn("Reads.customerByPhone")((environment: Environment, phone: string) =>
      customers.findByPhone(environment, Phone.lookupKey(phone))
    )

    /** One of the tenant's charges by id; another tenant's is none. */
    const charge = Telemetry.fn("Reads.charge")(
      (tenant: Tenant, id: string) => charges.find(tenant, id),
      Telemetry.withTenant
    )

    /** One of the tenant's QR payments by id; another tenant's is none. */
    const qrPayment = Telemetry.fn("Reads.qrPayment")(
      (tenant: Tenant, id: string) => qrPayments.find(tenant, id),
      Telemetry.withTenant
    )

    /** One of the tenant's invoices by id; another tenant's is none. */
    const invoice = Telemetry.fn("Reads.invoice")(
      (tenant: Tenant, id: string) => invoices.find(tenant, id),
      Telemetry.withTenant
    )

    /** Every charge of a mandate the caller already holds (so already checked), newest first. */
    const chargesOfMandate = Telemetry.fn("Reads.chargesOfMandate")((mandateId: string) =>
      charges.listByMandate(mandateId)
    )

    /** The newest `perMandate` charges of each mandate, the tenant's only, in one statement. */
    const chargesOfMandates = Telemetry.fn("Reads.chargesOfMandates")(
      (tenant: Tenant, mandateIds: ReadonlyArray<string>, perMandate: number) =>
        Effect.map(charges.listByMandates(mandateIds, perMandate), (rows) =>
          groupByParent(tenant, mandateIds, rows, (c) => c.mandateId)
        ),
      Telemetry.withTenant
    )

    /** A subscription's invoices, one per cycle, newest first. */
    const invoicesOfSubscription = Telemetry.fn("Reads.invoicesOfSubscription")(
      (subscriptionId: string, page: Store.Page) => invoices.list(subscriptionId, page)
    )

    /** The newest `perSubscription` invoices of each subscription, the tenant's only, in one statement. */
    const invoicesOfSubscriptions = Telemetry.fn("Reads.invoicesOfSubscriptions")(
      (tenant: Tenant, subscriptionIds: ReadonlyArray<string>, perSubscription: number) =>
        Effect.map(invoices.listBySubscriptions(subscriptionIds, perSubscription), (rows) =>
          groupByParent(tenant, subscriptionIds, rows, (i) => i.subscriptionId)
        ),
      Telemetry.withTenant
    )

    /** The newest `limit` payments through a QR code the caller already holds, newest first. */
    const paymentsOfQrCode = Telemetry.fn("Reads.paymentsOfQrCode")((qrCodeId: string, limit: number) =>
      Effect.map(qrPayments.listByCode(qrCodeId), (list) => list.slice(0, limit))
    )

    /** The tenant's checkout sessions, newest first. */
    const checkoutSessions = Telemetry.fn("Reads.checkoutSessions")(
      (tenant: Tenant, page: Store.Page) => sessions.list(tenant, page),
      Telemetry.withTenant
    )

    /** Recorded events, newest first, as delivered. */
    const events = Telemetry.fn("Reads.events")((filter: EventFilter) => eventLog.list(filter))

    /** One of the tenant's events by id, as delivered. */
    const event = Telemetry.fn("Reads.event")(
      (tenant: Tenant, id: string) => eventLog.find(tenant, id),
      Telemetry.withTenant
    )

    /** A mandate's refused charges, newest first: each `mandate.charge.failed` event's refusal. */
    const chargeFailures = Telemetry.fn("Reads.chargeFailures")(
      (tenant: Tenant, mandateId: string, limit: number) =>
        Effect.map(eventLog.failuresAbout(tenant, mandateId.toLowerCase(), limit), (events) =>
          failuresOf<ChargeFailureObject>(events, "mandate_charge_failure")
        ),
      Telemetry.withTenant
    )

    /** A subscription's missed renewal attempts, newest first: the invoice as each `invoice.payment_failed` left it. */
    const invoiceFailures = Telemetry.fn("Reads.invoiceFailures")(
      (tenant: Tenant, subscriptionId: string, limit: number) =>
        Effect.map(eventLog.failuresAbout(tenant, subscriptionId.toLowerCase(), limit), (events) =>
          failuresOf<InvoiceObject>(events, "invoice")
        ),
      Telemetry.withTenant
    )

    /** The customer's notifications in the wallet app, newest first. */
    const notificationsOf = Telemetry.fn("Reads.notifications")((customerId: CustomerId) =>
      notifications.list(customerId)
    )

    /** The customer's wallet balance; `undefined` when the wallet has none. */
    const walletBalance = Telemetry.fn("Reads.walletBalance")((customerId: CustomerId) =>
      Effect.map(wallet.payer(customerId), (account) => account?.balance)
    )

    /** The customer's newest `limit` payments, whatever paid them, each with its record. */
    const walletPayments = Telemetry.fn("Reads.walletPayments")(function* (
      customerId: CustomerId,
      limit: number
    ) {
      const list = yield* ledger.payments(customerId, limit)
      return yield* Effect.forEach(
        list,
        (payment): Effect.Effect<WalletPayment, ServiceUnavailable> => {
          const tenant: Tenant = { merchantId: payment.merchantId, environment: payment.environment }
          const { type, sourceId } = Balance.classify("payment", payment.transferId)
          switch (type) {
            case "charge":
              return Effect.map(charges.find(tenant, sourceId), (charge) => ({
                payment,
                source: { type, charge }
              }))
            case "qr_payment":
              return Effect.map(qrPayments.find(tenant, sourceId), (qrPayment) => ({
                payment,
                source: { type, qrPayment }
              }))
            case "checkout_payment":
              return Effect.map(sessions.find(tenant, { _tag: "ById", id: sourceId }), (session) => ({
                payment,
                source: { type, session }
              }))
            case "invoice":
              return Effect.map(invoices.find(tenant, sourceId), (invoice) => ({
                payment,
                source: { type, invoice }
              }))
            default:
              return Effect.succeed({ payment, source: { type: "none" } })
          }
        },
        { concurrency: 4 }
      )
    })

    /**
     * The customer's one-time codes that can still approve something, newest first. A spent code is
     * redacted from its notice, but the redaction job may not have run yet: the challenge decides.
     */
    const liveCodes = Telemetry.fn("Reads.liveCodes")(function* (customerId: CustomerId) {
      const now = yield* DateTime.now
      const notices = (yield* notifications.list(customerId)).filter(
        (n) => n.kind === "one_time_code" && typeof n.data.code === "string"
      )
      const found = yield* tx.withTransaction(
        Effect.forEach(notices, (notice) =>
          Ids.isUuid(String(notice.data.challenge_id))
            ? Effect.map(challenges.lock(Ids.ChallengeId.make(String(notice.data.challenge_id))), (c) =>
                c === undefined || Approval.isSpent(c, now) ? [] : [{ notice, challenge: c }]
              )
            : Effect.succeed([])
        )
      )
      return found.flat() as ReadonlyArray<LiveCode>
    })

    return {
      merchant,
      customer,
      customerByPhone,
      charge,
      qrPayment,
      invoice,
      chargesOfMandate,
      chargesOfMandates,
      invoicesOfSubscription,
      invoicesOfSubscriptions,
      paymentsOfQrCode,
      checkoutSessions,
      events,
      event,
      chargeFailures,
      invoiceFailures,
      notifications: notificationsOf,
      liveCodes,
      walletBalance,
      walletPayments
    } as const
  })
}) {}
