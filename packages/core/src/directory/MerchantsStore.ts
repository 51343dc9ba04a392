/**
 * Merchants, their outlets and customers (read side; `Merchant.MerchantsStore` creates and lists merchants).
 */
import type { Customer, Merchant, Outlet } from "./Merchant.js"
import { Context, Effect } from "effect"
import type { ServiceUnavailable } from "../kernel/Errors.js"
import type { CustomerId, Environment, MerchantId } from "../kernel/Ids.js"

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

export type { Customer, Merchant, Outlet } from "./Merchant.js"
