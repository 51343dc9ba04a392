/**
 * What the wallet provider's notification service receives for one customer notice. The rules of its
 * delivery (retry schedule, give-up time, expiry) are core's `Notice`; storage is `Notify/Sql`.
 */
import { Notice, type Notifications } from "@laari/core"
import { DateTime } from "effect"

/**
 * The JSON document POSTed (snake_case, Unix seconds, keys in this order). `customer.phone` is read when
 * the attempt is made (the number to reach now); everything else is fixed when the notice is made.
 */
export interface Document {
  /** The notice's id; also the `webhook-id` of every attempt, so a receiver drops repeats by it. */
  readonly id: string
  readonly type: Notifications.Kind
  readonly created: number
  /** When the notice stops being of use (a one-time code's expiry); `null` for the others. */
  readonly expires: number | null
  readonly livemode: boolean
  readonly customer: { readonly id: string; readonly phone: string | null }
  readonly title: string
  readonly body: string
  /** Details by type: amounts (laari), ids; `data.code` is the six-digit code of a `one_time_code`. */
  readonly data: { readonly [key: string]: unknown }
}

const seconds = (t: DateTime.Utc) => Math.floor(DateTime.toEpochMillis(t) / 1000)

/** The document of `n`, its phone still `null`: the text stored in the outbox. */
export const stored = (n: Notifications.Notification): string =>
  JSON.stringify({
    id: n.id,
    type: n.kind,
    created: seconds(n.createdAt),
    expires: n.expiresAt === undefined ? null : seconds(n.expiresAt),
    livemode: n.environment === "live",
    customer: { id: n.customerId, phone: null },
    title: n.title,
    body: n.body,
    data: n.data
  } satisfies Document)

/** The text sent: the stored document with the customer's phone. Same phone, same bytes. */
export const withPhone = (text: string, phone: string | null): string => {
  const document = JSON.parse(text) as { customer: { phone: string | null } }
  document.customer.phone = phone
  return JSON.stringify(document)
}

/** The delivery rules are core's (`Notice`), named here too for the document's readers. */
export const { DeliveryWindow, RetryDelays, afterFailure, delayAfter, giveUpAt } = Notice
export type AfterFailure = Notice.AfterFailure
