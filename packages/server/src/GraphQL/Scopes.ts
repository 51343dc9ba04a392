/**
 * The scopes of the GraphQL read API: each field reads as a REST operation does, and needs what that
 * operation declares (`Access`), so a scope is written once, on the REST endpoint.
 */
import { Auth } from "@laari/core"
import * as G from "graphql"
import { BalanceApi } from "../Balance/Api.js"
import { CheckoutApi } from "../Checkout/Api.js"
import * as Access from "../Http/Access.js"
import { MandatesApi } from "../Mandates/Api.js"
import { QrCodesApi } from "../QrCodes/Api.js"
import { RefundsApi } from "../Refunds/Api.js"
import { SubscriptionsApi } from "../Subscriptions/Api.js"
import { EventsApi, WebhookEndpointsApi } from "../Webhooks/Api.js"

/** The REST operation each field reads as: its declared access (`Access`) is the field's. */
const mirrors = {
  mandates: Access.of(MandatesApi, "list"),
  mandate: Access.of(MandatesApi, "get"),
  qrCodes: Access.of(QrCodesApi, "list"),
  qrCode: Access.of(QrCodesApi, "get"),
  checkoutSession: Access.of(CheckoutApi, "get"),
  subscriptions: Access.of(SubscriptionsApi, "list"),
  subscription: Access.of(SubscriptionsApi, "get"),
  refunds: Access.of(RefundsApi, "list"),
  refund: Access.of(RefundsApi, "get"),
  balance: Access.of(BalanceApi, "get"),
  balanceTransactions: Access.of(BalanceApi, "transactions"),
  events: Access.of(EventsApi, "list"),
  event: Access.of(EventsApi, "get"),
  webhookEndpoints: Access.of(WebhookEndpointsApi, "list"),
  webhookDeliveries: Access.of(WebhookEndpointsApi, "deliveries")
} as const

export type Field = keyof typeof mirrors

/** The scope a field needs, as its description names it. */
export const scopeOf = (field: Field): Auth.Scope => {
  const rule = mirrors[field]
  if (rule._tag !== "Scoped") throw new Error(`GraphQL field ${field} mirrors an operation without a scope`)
  return rule.scope
}

/** Refuses, as a GraphQL error, what the principal's scopes do not allow for `field`, as REST would. */
export const allow = (principal: Auth.Principal, field: Field): void => {
  const rule = mirrors[field]
  const scope = scopeOf(field)
  const denial = Auth.check(principal, scope, rule._tag === "Scoped" ? rule : {})
  if (denial !== undefined)
    throw new G.GraphQLError(
      denial === "publishable-key"
        ? "A publishable key cannot read this; use a secret key"
        : `This key lacks the scope ${scope}`,
      { extensions: { code: "FORBIDDEN", scope } }
    )
}
