/**
 * Notifications to customers in the wallet app: charge notices, one-time codes, balance warnings,
 * failures, cancellations.
 */
import { Context, type DateTime, type Effect } from "effect"
import type { ServiceUnavailable } from "./Errors.js"
import type { CustomerId, Environment } from "./Ids.js"

export type Kind =
  | "mandate.charge"
  | "mandate.charge_failed"
  | "mandate.approved"
  | "mandate.revoked"
  | "one_time_code"
  | "payment"
  | "balance_warning"
  | "payment_failed"
  | "subscription.cancelled"
  | "refund"

export interface Notification {
  readonly id: string
  readonly customerId: CustomerId
  readonly environment: Environment
  readonly kind: Kind
  readonly title: string
  readonly body: string
  /**
   * Structured details for the app (amounts, ids, and the names it shows: `merchant_name`, `plan_name`),
   * from which it can word the notice in the customer's own language. A one-time code is in `data.code`.
   */
  readonly data: { readonly [key: string]: unknown }
  readonly createdAt: DateTime.Utc
  /** When it stops being of use (a one-time code's expiry): a channel never delivers it later. */
  readonly expiresAt?: DateTime.Utc | undefined
}

export interface NotificationsService {
  /** Queues a notification in the caller's transaction. */
  readonly send: (notification: Notification) => Effect.Effect<void, ServiceUnavailable>
  /**
   * Replaces the body of notification `id` and removes `data.code`: for a one-time code that can no
   * longer be used. Unknown ids are ignored.
   */
  readonly redactCode: (id: string, body: string) => Effect.Effect<void, ServiceUnavailable>
  /** The customer's notifications, newest first. */
  readonly list: (customerId: CustomerId) => Effect.Effect<ReadonlyArray<Notification>, ServiceUnavailable>
}

export class Notifications extends Context.Tag("laari/Notifications")<
  Notifications,
  NotificationsService
>() {}
