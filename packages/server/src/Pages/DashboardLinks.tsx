/**
 * Where each object's page is in the dashboard, and an id as a link to it: every id the dashboard shows
 * leads to the page of what it names, so a merchant can follow a balance movement to its charge, an
 * event to its subscription, a refund to its payment.
 */
import type { Balance, Events, Refund } from "@laari/core"

export type Kind =
  | "mandate"
  | "charge"
  | "qrCode"
  | "qrPayment"
  | "checkoutSession"
  | "subscription"
  | "invoice"
  | "refund"
  | "event"
  | "endpoint"

const folders: Record<Kind, string> = {
  mandate: "mandates",
  charge: "charges",
  qrCode: "qr-codes",
  qrPayment: "qr-payments",
  checkoutSession: "checkout-sessions",
  subscription: "subscriptions",
  invoice: "invoices",
  refund: "refunds",
  event: "events",
  endpoint: "webhooks"
}

/** The page of object `id` of `kind` under the dashboard's `root`. */
export const to = (root: string, kind: Kind, id: string): string =>
  `${root}/${folders[kind]}/${encodeURIComponent(id)}`

/** An id, in the monospace it is copied in, as a link to its page. */
export const IdLink = (p: { readonly root: string; readonly kind: Kind; readonly id: string }) => (
  <a href={to(p.root, p.kind, p.id)} class="id">
    <code>{p.id}</code>
  </a>
)

/** The page of what moved a balance; an adjustment (an operator's correction) has none. */
export const sourceKind: Record<Balance.Type, Kind | undefined> = {
  charge: "charge",
  qr_payment: "qrPayment",
  checkout_payment: "checkoutSession",
  invoice: "invoice",
  refund: "refund",
  adjustment: undefined
}

/** The page of a refund's payment. */
export const refundSource: Record<Refund.SourceKind, Kind> = {
  charge: "charge",
  qr_payment: "qrPayment",
  invoice: "invoice"
}

/** The object an event carries, as the kind and id of its page. */
export const eventObject = (object: Events.WebhookObject): { readonly kind: Kind; readonly id: string } => {
  switch (object.object) {
    case "mandate":
      return { kind: "mandate", id: object.id }
    case "mandate_charge":
      return { kind: "charge", id: object.id }
    case "mandate_charge_failure":
      return { kind: "mandate", id: object.mandate_id }
    case "qr_code_payment":
      return { kind: "qrPayment", id: object.id }
    case "subscription":
      return { kind: "subscription", id: object.id }
    case "invoice":
      return { kind: "invoice", id: object.id }
    case "checkout.session":
      return { kind: "checkoutSession", id: object.id }
    case "refund":
      return { kind: "refund", id: object.id }
  }
}
