/**
 * Every page and action of the signed-in dashboard with the permission it needs (`Role.Matrix` says
 * which roles hold it). The one table: `DashboardKit.at` registers each route from it, so a route cannot
 * exist without its permission, and the permission matrix test walks it against every role.
 * Paths are under `{base_url}/dashboard`.
 */
import type { Auth, Person, Role } from "@laari/core"

export interface Route {
  readonly method: "GET" | "POST"
  readonly path: string
  readonly permission: Role.Permission
}

const get = (path: string, permission: Role.Permission = "dashboard:read"): Route => ({
  method: "GET",
  path,
  permission
})
const post = (path: string, permission: Role.Permission): Route => ({ method: "POST", path, permission })

export const Routes = {
  home: get(""),
  mandates: get("/mandates"),
  mandate: get("/mandates/:id"),
  mandateRevoke: post("/mandates/:id/revoke", "mandates:revoke"),
  qrCodes: get("/qr-codes"),
  qrCode: get("/qr-codes/:id"),
  checkoutSessions: get("/checkout-sessions"),
  subscriptions: get("/subscriptions"),
  subscription: get("/subscriptions/:id"),
  subscriptionCancel: post("/subscriptions/:id/cancel", "subscriptions:cancel"),
  balance: get("/balance", "reports:read"),
  settlement: get("/balance/settlement", "reports:read"),
  refunds: get("/refunds"),
  refundPayment: get("/refunds/:id/payment"),
  refundCharge: get("/mandates/:id/charges/:payment/refund", "refunds:create"),
  refundChargeSubmit: post("/mandates/:id/charges/:payment/refund", "refunds:create"),
  refundInvoice: get("/subscriptions/:id/invoices/:payment/refund", "refunds:create"),
  refundInvoiceSubmit: post("/subscriptions/:id/invoices/:payment/refund", "refunds:create"),
  refundQrPayment: get("/qr-codes/:id/payments/:payment/refund", "refunds:create"),
  refundQrPaymentSubmit: post("/qr-codes/:id/payments/:payment/refund", "refunds:create"),
  events: get("/events", "logs:read"),
  webhooks: get("/webhooks"),
  webhookCreate: post("/webhooks", "webhooks:manage"),
  webhook: get("/webhooks/:id"),
  webhookUpdate: post("/webhooks/:id", "webhooks:manage"),
  webhookRotate: post("/webhooks/:id/rotate", "webhooks:manage"),
  webhookDelete: post("/webhooks/:id/delete", "webhooks:manage"),
  webhookResend: post("/webhooks/:id/resend", "webhooks:manage"),
  charge: get("/charges/:id"),
  qrPayment: get("/qr-payments/:id"),
  checkoutSession: get("/checkout-sessions/:id"),
  invoice: get("/invoices/:id"),
  refund: get("/refunds/:id"),
  event: get("/events/:id", "logs:read"),
  audit: get("/audit", "logs:read"),
  auditExport: get("/audit/export", "logs:read"),
  team: get("/team"),
  invite: post("/team/invitations", "team:manage"),
  invitationRevoke: post("/team/invitations/:id/revoke", "team:manage"),
  memberRole: post("/team/members/:id/role", "team:manage"),
  memberRemove: post("/team/members/:id/remove", "team:manage"),
  ownershipTransfer: post("/team/members/:id/ownership", "ownership:transfer"),
  keys: get("/keys", "keys:manage"),
  keyCreate: post("/keys", "keys:manage"),
  keyRevoke: post("/keys/:id/revoke", "keys:manage"),
  account: get("/account"),
  sessionEnd: post("/account/sessions/:id/end", "dashboard:read"),
  switchTo: post("/switch", "dashboard:read")
} as const satisfies Record<string, Route>

export type RouteName = keyof typeof Routes

export const routeNames = Object.keys(Routes) as ReadonlyArray<RouteName>

/** Who is signed in, at the `full` stage, on which merchant and environment, with which role. */
export interface Signed {
  /** The merchant and environment shown; its key id `user:<id>` makes the person the audit log's actor. */
  readonly principal: Auth.Principal
  readonly user: Person.User
  readonly role: Role.MerchantRole
  readonly session: Person.Session
  readonly memberships: ReadonlyArray<Person.Membership>
  /** The session's token, for the actions that replace it (a merchant switch). */
  readonly token: string
}
