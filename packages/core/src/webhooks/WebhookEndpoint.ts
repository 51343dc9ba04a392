/**
 * A merchant's webhook endpoints as stored: what a new one and a change carry, who owns what is read, and
 * the two ports, the store and the `SecretSealer`. Signing secrets must be read back to sign, so they are
 * sealed (encrypted), not hashed; the store keeps them as the sealer wrote them and never sees one in the
 * clear. The URL rules (which addresses may be called) are the host's, as they depend on its network.
 */
import { Context, type DateTime, Effect, Encoding, Either } from "effect"
import type { CryptoService } from "../kernel/Crypto.js"
import type { ServiceUnavailable } from "../kernel/Errors.js"
import type { Environment, Tenant } from "../kernel/Ids.js"
import * as Webhook from "./Webhook.js"
import type { Endpoint, EndpointStatus, Secrets } from "./Webhook.js"

/** Random bytes in a signing secret, `whsec_` and their base64 (Standard Webhooks). */
export const SecretBytes = 32
export const SecretPrefix = "whsec_"

/** The key a secret signs with: the bytes its base64 encodes. A secret that is not base64 is a defect. */
export const signingKey = (secret: string): Uint8Array =>
  Either.getOrThrow(
    Encoding.decodeBase64(secret.startsWith(SecretPrefix) ? secret.slice(SecretPrefix.length) : secret)
  )

/**
 * The headers of one attempt (Standard Webhooks), for webhook deliveries and customer notices alike: one
 * signature per secret, the current one first, each an HMAC through `Crypto` keyed by `signingKey`.
 */
export const signedHeaders = (
  crypto: CryptoService,
  secrets: ReadonlyArray<string>,
  id: string,
  timestamp: number,
  body: string
): Effect.Effect<Record<string, string>> =>
  Effect.forEach(secrets, (secret) =>
    Effect.suspend(() =>
      crypto.hmacSha256(signingKey(secret), Webhook.signedContent(id, timestamp, body))
    ).pipe(Effect.map((hex) => Webhook.signature(Either.getOrThrow(Encoding.decodeHex(hex)))))
  ).pipe(Effect.map((signatures) => Webhook.headers(id, timestamp, signatures)))

export interface NewEndpoint {
  readonly id: string
  readonly url: string
  readonly enabledEvents: ReadonlyArray<string>
  readonly description: string | null
  /** Sealed (`SecretSealer.seal`). */
  readonly secret: string
}

export interface EndpointChanges {
  readonly url?: string | undefined
  readonly enabledEvents?: ReadonlyArray<string> | undefined
  /** `null` clears it. */
  readonly description?: string | null | undefined
  readonly status?: EndpointStatus | undefined
}

/** Who owns what is read: a merchant in one environment, or (ops) a merchant in both. */
export interface Owner {
  readonly merchantId: string
  readonly environment?: Environment | undefined
}

export interface WebhookEndpointsRepo {
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
  WebhookEndpointsRepo
>() {}

/**
 * Seals a signing secret for one endpoint (its id bound in, so a sealed secret copied to another endpoint
 * does not open there) and opens it again. A secret that does not open is a defect: a key is missing.
 */
export interface Sealer {
  readonly seal: (endpointId: string, secret: string) => Effect.Effect<string>
  readonly open: (endpointId: string, sealed: string) => Effect.Effect<string>
}
export class SecretSealer extends Context.Tag("laari/WebhookEndpoints/SecretSealer")<
  SecretSealer,
  Sealer
>() {}

/** Keeps secrets as they are: for stores in memory, which hold nothing at rest. */
export const plainSealer: Sealer = {
  seal: (_, secret) => Effect.succeed(secret),
  open: (_, sealed) => Effect.succeed(sealed)
}
