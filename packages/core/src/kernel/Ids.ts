/**
 * Identifiers. Every resource has a UUID id; merchants address most resources by their own reference too.
 */
import { Schema } from "effect"

/**
 * A kind of id: a UUID branded `brand`, so an id of one kind is never taken for another's. `description`
 * says whose id it is in the published schemas; a refusal still says what is wrong, not what the id is.
 */
export const brandedUuid = <B extends string>(brand: B, description: string) =>
  Schema.UUID.pipe(Schema.brand(brand)).annotations({ description, message: () => "must be a UUID" })

export const MerchantId = brandedUuid("MerchantId", "The merchant's id (a UUID)")
export type MerchantId = typeof MerchantId.Type

export const CustomerId = brandedUuid("CustomerId", "The customer's id (a UUID)")
export type CustomerId = typeof CustomerId.Type

export const MandateId = brandedUuid("MandateId", "The mandate's id (a UUID)")
export type MandateId = typeof MandateId.Type

export const ChargeId = brandedUuid("ChargeId", "The charge's id (a UUID)")
export type ChargeId = typeof ChargeId.Type

export const ChallengeId = brandedUuid("ChallengeId", "The one-time-code challenge's id (a UUID)")
export type ChallengeId = typeof ChallengeId.Type

export const SubscriptionId = brandedUuid("SubscriptionId", "The subscription's id (a UUID)")
export type SubscriptionId = typeof SubscriptionId.Type

export const InvoiceId = brandedUuid("InvoiceId", "The invoice's id (a UUID)")
export type InvoiceId = typeof InvoiceId.Type

export const CheckoutSessionId = brandedUuid("CheckoutSessionId", "The checkout session's id (a UUID)")
export type CheckoutSessionId = typeof CheckoutSessionId.Type

/** Outlets are numbered, as the spec sends `outlet_id` as an integer. */
export const OutletId = Schema.Int.pipe(Schema.positive(), Schema.brand("OutletId"))
export type OutletId = typeof OutletId.Type

export const Environment = Schema.Literal("test", "live").annotations({
  description: "`test`: the sandbox, no real money; `live`: real money"
})
export type Environment = typeof Environment.Type

/** Whom a resource belongs to: every read and write is scoped to one merchant in one environment. */
export interface Tenant {
  readonly merchantId: MerchantId
  readonly environment: Environment
}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

export const isUuid = (s: string): boolean => uuidPattern.test(s)

/** A path `{id}`: a UUID is looked up as an id, anything else as the merchant's reference. */
export type Lookup =
  | { readonly _tag: "ById"; readonly id: string }
  | { readonly _tag: "ByReference"; readonly reference: string }

export const lookup = (idOrReference: string): Lookup =>
  isUuid(idOrReference)
    ? { _tag: "ById", id: idOrReference.toLowerCase() }
    : { _tag: "ByReference", reference: idOrReference }
