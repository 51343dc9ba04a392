/**
 * Every page and action of the operator console with the operator permission it needs
 * (`Role.OperatorMatrix` says which staff roles hold it). The one table: `ConsoleKit.at` registers each
 * route from it, so a route cannot exist without its permission, and the permission matrix test walks it
 * against every operator role. Paths are under `{base_url}/ops/console`.
 */
import type { Auth, Person, Role } from "@laari/core"

export interface Route {
  readonly method: "GET" | "POST"
  readonly path: string
  readonly permission: Role.OperatorPermission
}

const get = (path: string, permission: Role.OperatorPermission = "ops:read"): Route => ({
  method: "GET",
  path,
  permission
})
const post = (path: string, permission: Role.OperatorPermission): Route => ({
  method: "POST",
  path,
  permission
})

export const Routes = {
  home: get(""),
  merchants: get("/merchants"),
  merchantCreate: post("/merchants", "merchants:manage"),
  merchant: get("/merchants/:id"),
  outletAdd: post("/merchants/:id/outlets", "merchants:manage"),
  keyIssue: post("/merchants/:id/keys", "keys:manage"),
  keyRevoke: post("/merchants/:id/keys/:key/revoke", "keys:manage"),
  features: post("/merchants/:id/features", "features:manage"),
  customers: get("/customers"),
  customerCreate: post("/customers", "customers:manage"),
  suspensions: get("/suspensions"),
  suspend: post("/suspensions", "suspensions:manage"),
  clock: get("/clock"),
  clockAdvance: post("/clock", "clock:manage"),
  audit: get("/audit"),
  account: get("/account"),
  sessionEnd: post("/account/sessions/:id/end", "ops:read")
} as const satisfies Record<string, Route>

export type RouteName = keyof typeof Routes

export const routeNames = Object.keys(Routes) as ReadonlyArray<RouteName>

/** A member of the provider's staff, signed in at the `full` stage, with their operator role. */
export interface Signed {
  /** The audit log's caller: its key id `user:<id>` makes the person the actor (its tenant is unused). */
  readonly caller: Auth.Principal
  readonly user: Person.User
  readonly role: Role.OperatorRole
  readonly session: Person.Session
  readonly token: string
}
