/**
 * The roles of people, each a fixed set of permissions: a merchant's team (`MerchantRole`) and the
 * wallet provider's staff (`OperatorRole`). Pure: the dashboard and the operator console check a
 * permission on the server for every page and action (`can`), and the team page shows this matrix.
 */
import { Schema } from "effect"

export const MerchantRole = Schema.Literal(
  "owner",
  "admin",
  "developer",
  "finance",
  "support",
  "viewer"
).annotations({
  description:
    "`owner`: everything, the team and payout destinations included; `admin`: everything but transferring ownership; `developer`: keys, webhooks and logs; `finance`: refunds, payouts and reports; `support`: reads everything, cancels a subscription or revokes a mandate on a customer's request; `viewer`: reads only"
})
export type MerchantRole = typeof MerchantRole.Type

export const merchantRoles: ReadonlyArray<MerchantRole> = MerchantRole.literals

/** What a member of a merchant's team may do in the dashboard. */
export const Permission = Schema.Literal(
  "dashboard:read",
  "refunds:create",
  "payouts:create",
  "payout_destinations:manage",
  "reports:read",
  "keys:manage",
  "webhooks:manage",
  "logs:read",
  "mandates:revoke",
  "subscriptions:cancel",
  "team:manage",
  "ownership:transfer"
)
export type Permission = typeof Permission.Type

export const permissions: ReadonlyArray<Permission> = Permission.literals

const everything = permissions.filter((p) => p !== "ownership:transfer")

/** Each role's permissions: the one table every check reads. */
export const Matrix: { readonly [R in MerchantRole]: ReadonlyArray<Permission> } = {
  owner: permissions,
  admin: everything,
  developer: ["dashboard:read", "keys:manage", "webhooks:manage", "logs:read"],
  finance: ["dashboard:read", "refunds:create", "payouts:create", "reports:read"],
  support: ["dashboard:read", "reports:read", "logs:read", "mandates:revoke", "subscriptions:cancel"],
  viewer: ["dashboard:read", "reports:read", "logs:read"]
}

export const can = (role: MerchantRole, permission: Permission): boolean => Matrix[role].includes(permission)

/** Owners and admins must sign in with a second factor; everyone else is offered it. */
export const requiresTwoFactor = (role: MerchantRole): boolean => role === "owner" || role === "admin"

export const OperatorRole = Schema.Literal("ops_admin", "ops_support", "ops_risk").annotations({
  description:
    "`ops_admin`: everything the operator API does; `ops_support`: customers, merchants and outlets, reading keys; `ops_risk`: suspensions and feature gates, reading the rest"
})
export type OperatorRole = typeof OperatorRole.Type

export const operatorRoles: ReadonlyArray<OperatorRole> = OperatorRole.literals

/** What a member of the provider's staff may do in the operator console (two-factor always). */
export const OperatorPermission = Schema.Literal(
  "ops:read",
  "merchants:manage",
  "keys:manage",
  "features:manage",
  "customers:manage",
  "suspensions:manage",
  "clock:manage",
  "operators:manage"
)
export type OperatorPermission = typeof OperatorPermission.Type

export const operatorPermissions: ReadonlyArray<OperatorPermission> = OperatorPermission.literals

export const OperatorMatrix: { readonly [R in OperatorRole]: ReadonlyArray<OperatorPermission> } = {
  ops_admin: operatorPermissions,
  ops_support: ["ops:read", "merchants:manage", "customers:manage"],
  ops_risk: ["ops:read", "features:manage", "suspensions:manage"]
}

export const operatorCan = (role: OperatorRole, permission: OperatorPermission): boolean =>
  OperatorMatrix[role].includes(permission)
