/**
 * Merchants, their outlets and customers (read side; the server's ops API writes them).
 */
import { Context, Effect } from "effect"
import type { ServiceUnavailable } from "../kernel/Errors.js"
import type { CustomerId, Environment, MerchantId } from "../kernel/Ids.js"

export interface Merchant {
  readonly id: MerchantId
  readonly name: string
  readonly city: string
  readonly mcc: string
  readonly feeBps: number
  readonly features: { readonly mandatesLive: boolean; readonly subscriptionsLive: boolean }
  /** The sandbox payer wallet: test-mode mandates are bound to it. */
  readonly sandboxPayer: CustomerId
}

export interface Customer {
  readonly id: CustomerId
  readonly environment: Environment
  readonly phone: string
  readonly name: string | null
}

export interface MerchantsRepo {
  readonly get: (id: MerchantId) => Effect.Effect<Merchant | undefined, ServiceUnavailable>
}
export class Merchants extends Context.Tag("laari/Store/Merchants")<Merchants, MerchantsRepo>() {}

/** A merchant that must exist (it owns a key or a resource): a missing one is a defect, not a 404. */
export const registeredMerchant = (
  merchants: MerchantsRepo,
  id: MerchantId
): Effect.Effect<Merchant, ServiceUnavailable> =>
  Effect.flatMap(merchants.get(id), (m) =>
    m === undefined ? Effect.dieMessage(`merchant ${id} is not registered`) : Effect.succeed(m)
  )

export interface Outlet {
  readonly id: number
  readonly merchantId: MerchantId
  readonly name: string
}

export interface OutletsRepo {
  /** The merchant's outlet, or `undefined` when it is unknown or another merchant's. */
  readonly find: (
    merchantId: MerchantId,
    outletId: number
  ) => Effect.Effect<Outlet | undefined, ServiceUnavailable>
}
export class Outlets extends Context.Tag("laari/Store/Outlets")<Outlets, OutletsRepo>() {}

export interface CustomersRepo {
  readonly get: (id: CustomerId) => Effect.Effect<Customer | undefined, ServiceUnavailable>
  readonly findByPhone: (
    environment: Environment,
    phone: string
  ) => Effect.Effect<Customer | undefined, ServiceUnavailable>
}
export class Customers extends Context.Tag("laari/Store/Customers")<Customers, CustomersRepo>() {}
