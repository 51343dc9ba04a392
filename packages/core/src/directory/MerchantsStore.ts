/**
 * The directory's storage ports: merchants, their outlets and customers as every payment reads them
 * (`MerchantsStore` is the cached read), and `MerchantRegistryStore`, which creates, lists and changes
 * merchants for the `Merchants` service.
 */
import type { Customer, FeaturesPatch, Merchant, NewMerchant, Outlet, WithOutlets } from "./Merchant.js"
import { Context, type DateTime, Effect } from "effect"
import type { ServiceUnavailable } from "../kernel/Errors.js"
import type { CustomerId, Environment, MerchantId } from "../kernel/Ids.js"

export interface MerchantsStoreService {
  readonly get: (id: MerchantId) => Effect.Effect<Merchant | undefined, ServiceUnavailable>
}
export class MerchantsStore extends Context.Tag("laari/Store/Merchants")<
  MerchantsStore,
  MerchantsStoreService
>() {}

/** A merchant that must exist (it owns a key or a resource): a missing one is a defect, not a 404. */
export const registeredMerchant = (
  merchants: MerchantsStoreService,
  id: MerchantId
): Effect.Effect<Merchant, ServiceUnavailable> =>
  Effect.flatMap(merchants.get(id), (m) =>
    m === undefined ? Effect.dieMessage(`merchant ${id} is not registered`) : Effect.succeed(m)
  )

export interface OutletsStoreService {
  /** The merchant's outlet, or `undefined` when it is unknown or another merchant's. */
  readonly find: (
    merchantId: MerchantId,
    outletId: number
  ) => Effect.Effect<Outlet | undefined, ServiceUnavailable>
}
export class OutletsStore extends Context.Tag("laari/Store/Outlets")<OutletsStore, OutletsStoreService>() {}

export interface CustomersStoreService {
  readonly get: (id: CustomerId) => Effect.Effect<Customer | undefined, ServiceUnavailable>
  readonly findByPhone: (
    environment: Environment,
    phone: string
  ) => Effect.Effect<Customer | undefined, ServiceUnavailable>
}
export class CustomersStore extends Context.Tag("laari/Store/Customers")<
  CustomersStore,
  CustomersStoreService
>() {}

export interface MerchantRegistryStoreService {
  /**
   * Stores `created` in one transaction: its sandbox payer with a test wallet holding
   * `SandboxPayerBalance` (in `SandboxPayerZone`, funded from the funding account), the merchant, its
   * test and live wallets at zero, and its outlets, numbered by the store in order; the outlets.
   */
  readonly create: (
    created: NewMerchant,
    now: DateTime.Utc
  ) => Effect.Effect<ReadonlyArray<Outlet>, ServiceUnavailable>
  /** Merchants with their outlets, oldest first, at most `limit`. */
  readonly list: (limit: number) => Effect.Effect<ReadonlyArray<WithOutlets>, ServiceUnavailable>
  /** How many merchants there are. */
  readonly count: Effect.Effect<number, ServiceUnavailable>
  /** A new outlet of the merchant; `undefined` when there is no such merchant. */
  readonly addOutlet: (
    merchantId: MerchantId,
    name: string,
    now: DateTime.Utc
  ) => Effect.Effect<Outlet | undefined, ServiceUnavailable>
  /** The merchant's outlets by number (none for an unknown merchant). */
  readonly listOutlets: (merchantId: MerchantId) => Effect.Effect<ReadonlyArray<Outlet>, ServiceUnavailable>
  /** Sets the gates `patch` names; the merchant after, or `undefined` when there is no such merchant. */
  readonly setFeatures: (
    merchantId: MerchantId,
    patch: FeaturesPatch
  ) => Effect.Effect<Merchant | undefined, ServiceUnavailable>
}
export class MerchantRegistryStore extends Context.Tag("laari/Store/MerchantRegistry")<
  MerchantRegistryStore,
  MerchantRegistryStoreService
>() {}

export type { Customer, Merchant, Outlet } from "./Merchant.js"
