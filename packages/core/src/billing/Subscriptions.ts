/**
 * The subscription service: reading subscriptions and their invoices, and ending them (by the merchant,
 * the customer or operations). Renewals are the `Billing` engine's.
 */
import { DateTime, Effect, Either, Schema } from "effect"
import { Audit, change as auditChange } from "../audit/Audit.js"
import { Crypto } from "../kernel/Crypto.js"
import * as Outbox from "../kernel/Outbox.js"
import * as BillingEvents from "./BillingEvents.js"
import { type CustomerId, type Tenant } from "../kernel/Ids.js"
import type * as Invoice from "./Invoice.js"
import { Notifications } from "../kernel/Notifications.js"
import { InvoicesStore, type SubscriptionFilter, SubscriptionsStore } from "./BillingStore.js"
import { type Page, findOrFail } from "../kernel/Storage.js"
import * as Subscription from "./Subscription.js"
import * as Telemetry from "../kernel/Telemetry.js"
import { Transactor } from "../kernel/Transactor.js"

export class SubscriptionNotFound extends Schema.TaggedError<SubscriptionNotFound>()("SubscriptionNotFound", {
  message: Schema.optionalWith(Schema.String, { default: () => "Subscription not found" })
}) {}

export class SubscriptionNotCancellable extends Schema.TaggedError<SubscriptionNotCancellable>()(
  "SubscriptionNotCancellable",
  { message: Schema.optionalWith(Schema.String, { default: () => "Subscription cannot be cancelled" }) }
) {}

export class Subscriptions extends Effect.Service<Subscriptions>()("laari/Subscriptions", {
  effect: Effect.gen(function* () {
    const tx = yield* Transactor
    const store = yield* SubscriptionsStore
    const invoices = yield* InvoicesStore
    const emit = yield* Outbox.emitter
    const notifications = yield* Notifications
    const crypto = yield* Crypto
    const audit = yield* Audit

    const find = findOrFail(store.find, () => new SubscriptionNotFound())

    const get = Telemetry.fn("Subscriptions.get")(
      (tenant: Tenant, idOrReference: string) => find(tenant, idOrReference),
      Telemetry.withTenant
    )

    const list = Telemetry.fn("Subscriptions.list")(
      (tenant: Tenant, filter: SubscriptionFilter) => store.list(tenant, filter),
      Telemetry.withTenant
    )

    const listInvoices = Telemetry.fn("Subscriptions.listInvoices")(function* (
      tenant: Tenant,
      idOrReference: string,
      page: Page
    ) {
      const s = yield* find(tenant, idOrReference)
      return yield* invoices.list(s.id, page)
    }, Telemetry.withTenant)

    /**
     * What a transition says to the world: its events, with the subscription and invoice as they stand
     * after it, and the customer's notice of a cancellation. The renewal engine writes the rows itself
     * (once per batch) and calls this for each transition.
     */
    const announce = Telemetry.fn("Subscriptions.announce")(function* (
      change: Subscription.Change,
      now: DateTime.Utc,
      latest: Invoice.Invoice | undefined
    ) {
      const { subscription, invoice } = change
      for (const type of change.events) {
        yield* emit(
          type,
          subscription,
          BillingEvents.subscriptionEventObject(type, { subscription, invoice: invoice ?? latest }),
          now
        )
        if (type === "subscription.canceled")
          yield* notifications.send({
            id: yield* crypto.uuid,
            customerId: subscription.customerId,
            environment: subscription.environment,
            kind: "subscription.cancelled",
            title: `${subscription.planName} has ended`,
            body:
              subscription.cancellationInitiator === "DUNNING"
                ? `Your subscription to ${subscription.planName} has ended after four payments could not be taken.`
                : `Your subscription to ${subscription.planName} has ended; nothing more will be charged.`,
            data: {
              subscription_id: subscription.id,
              cancellation_initiator: subscription.cancellationInitiator,
              plan_name: subscription.planName
            },
            createdAt: now
          })
      }
    })

    /** Writes what a transition left behind: the subscription with its next due moment, the invoice it touched, and `announce`. */
    const record = Telemetry.fn("Subscriptions.record")(function* (
      change: Subscription.Change,
      now: DateTime.Utc,
      latest: Invoice.Invoice | undefined
    ) {
      const { subscription, invoice } = change
      if (invoice !== undefined) yield* invoices.update(invoice)
      yield* store.update(subscription, Subscription.nextDueAt(subscription, invoice ?? latest) ?? null)
      yield* announce(change, now, latest)
    })

    const cancelLocked = (
      sub: Subscription.Subscription,
      initiator: Subscription.Initiator,
      atPeriodEnd: boolean
    ) =>
      Effect.gen(function* () {
        const now = yield* DateTime.now
        const latest = yield* invoices.latest(sub.id)
        yield* audit.note(
          auditChange(
            sub,
            "subscription.cancel",
            { type: "subscription", id: sub.id },
            {
              by: initiator,
              at_period_end: atPeriodEnd
            }
          )
        )
        if (atPeriodEnd) {
          const flagged = yield* Either.match(Subscription.cancelAtPeriodEnd(sub), {
            onLeft: () => Effect.fail(new SubscriptionNotCancellable()),
            onRight: Effect.succeed
          })
          yield* record({ subscription: flagged, invoice: undefined, events: [] }, now, latest)
          return flagged
        }
        const change = yield* Either.match(Subscription.cancelNow(sub, initiator, now, latest), {
          onLeft: () => Effect.fail(new SubscriptionNotCancellable()),
          onRight: Effect.succeed
        })
        yield* record(change, now, latest)
        return change.subscription
      })

    /** `POST /subscriptions/{id}/cancel`: now (voiding an open unpaid cycle) or at the period's end. */
    const cancel = Telemetry.fn("Subscriptions.cancel")(
      function* (tenant: Tenant, idOrReference: string, atPeriodEnd: boolean) {
        const s = yield* find(tenant, idOrReference, true)
        return yield* cancelLocked(s, "MERCHANT", atPeriodEnd)
      },
      tx.withTransaction,
      Telemetry.withTenant
    )

    /** The customer ends it from the wallet app, with no second factor. */
    const cancelAsPayer = Telemetry.fn("Subscriptions.cancelAsPayer")(function* (
      customerId: CustomerId,
      subscriptionId: string
    ) {
      const s = yield* store.lockById(subscriptionId)
      if (s === undefined || s.customerId !== customerId) return yield* new SubscriptionNotFound()
      return yield* cancelLocked(s, "PAYER", false)
    }, tx.withTransaction)

    /** Operations end it. */
    const cancelByOps = Telemetry.fn("Subscriptions.cancelByOps")(function* (subscriptionId: string) {
      const s = yield* store.lockById(subscriptionId)
      if (s === undefined) return yield* new SubscriptionNotFound()
      return yield* cancelLocked(s, "OPS", false)
    }, tx.withTransaction)

    const listForCustomer = Telemetry.fn("Subscriptions.listForCustomer")((customerId: CustomerId) =>
      store.listByCustomer(customerId)
    )

    return {
      get,
      list,
      listInvoices,
      cancel,
      cancelAsPayer,
      cancelByOps,
      listForCustomer,
      record,
      announce
    } as const
  })
}) {}
