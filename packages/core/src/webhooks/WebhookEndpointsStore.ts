/**
 * A merchant's webhook endpoints, their signing secrets kept as the `SecretSealer` sealed them.
 */
import { Context, type DateTime, type Effect } from "effect"
import type { ServiceUnavailable } from "../kernel/Errors.js"
import type { Tenant } from "../kernel/Ids.js"
import type { Endpoint, Secrets } from "./Webhook.js"
import type { EndpointChanges, NewEndpoint, Owner } from "./WebhookEndpoint.js"

export interface WebhookEndpointsStoreService {
  /**
   * A new `ENABLED` endpoint, or `undefined` when the tenant already has `max` (deleted ones not
   * counted); two processes registering at once cannot both pass the count.
   */
  readonly create: (
    tenant: Tenant,
    input: NewEndpoint,
    now: DateTime.Utc,
    max: number
  ) => Effect.Effect<Endpoint | undefined, ServiceUnavailable>
  /** Not deleted; an id or merchant id that is not a UUID finds nothing. */
  readonly find: (owner: Owner, id: string) => Effect.Effect<Endpoint | undefined, ServiceUnavailable>
  /** The endpoint's secrets, sealed as stored. */
  readonly sealedSecrets: (owner: Owner, id: string) => Effect.Effect<Secrets | undefined, ServiceUnavailable>
  /** Newest first, deleted ones left out. */
  readonly list: (
    owner: Owner,
    page: { readonly limit: number; readonly offset: number }
  ) => Effect.Effect<ReadonlyArray<Endpoint>, ServiceUnavailable>
  /** Applies `changes`; enabling clears the failing streak and the reason, disabling records who did. */
  readonly update: (
    owner: Owner,
    id: string,
    changes: EndpointChanges
  ) => Effect.Effect<Endpoint | undefined, ServiceUnavailable>
  /** Deletes it (it receives nothing more; its log stays); the endpoint as it was. */
  readonly remove: (
    owner: Owner,
    id: string,
    now: DateTime.Utc
  ) => Effect.Effect<Endpoint | undefined, ServiceUnavailable>
  /** Replaces the (sealed) secret; the previous one keeps signing until `previousExpiresAt`. False: none. */
  readonly rotate: (
    owner: Owner,
    id: string,
    secret: string,
    previousExpiresAt: DateTime.Utc
  ) => Effect.Effect<boolean, ServiceUnavailable>
}
export class WebhookEndpointsStore extends Context.Tag("laari/Store/WebhookEndpoints")<
  WebhookEndpointsStore,
  WebhookEndpointsStoreService
>() {}
