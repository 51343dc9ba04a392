/**
 * A merchant's webhook endpoints as stored: what a new one and a change carry, and who owns what is read
 * (`WebhookEndpointsStore` keeps them). Signing secrets must be read back to sign, so they are sealed
 * (encrypted, by the host's `SecretSealer`), not hashed; the store keeps them as the sealer wrote them and
 * never sees one in the clear. The URL rules (which addresses may be called) are the host's, as they depend on its network.
 */
import { Effect, Encoding, Either } from "effect"
import type { CryptoService } from "../kernel/Crypto.js"
import type { Environment } from "../kernel/Ids.js"
import * as Webhook from "./Webhook.js"
import type { EndpointStatus } from "./Webhook.js"

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
