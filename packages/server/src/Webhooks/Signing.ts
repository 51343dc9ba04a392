/**
 * Standard Webhooks signing (the format: `Webhook.signature`), synchronous, for the
 * customer notices (`Notify`) and `laari listen`, whose secrets are given by the operator (decoded as
 * leniently as Node's base64); webhook deliveries are signed by core's `Deliveries`. Secrets are
 * `whsec_` + base64 of 32 random bytes.
 */
// The modules, not the package's index: the CLI (`laari listen`) loads no more than it needs.
import * as Webhook from "@laari/core/webhooks/Webhook"
import * as WebhookEndpoint from "@laari/core/webhooks/WebhookEndpoint"
import { createHmac, randomBytes } from "node:crypto"

export const SecretPrefix = WebhookEndpoint.SecretPrefix

/** A new signing secret. */
export const generateSecret = (): string => `${SecretPrefix}${randomBytes(32).toString("base64")}`

const keyOf = (secret: string): Buffer =>
  Buffer.from(secret.startsWith(SecretPrefix) ? secret.slice(SecretPrefix.length) : secret, "base64")

/** One signature: `v1,<base64>`. */
export const sign = (secret: string, id: string, timestamp: number, body: string): string =>
  Webhook.signature(
    createHmac("sha256", keyOf(secret))
      .update(Webhook.signedContent(id, timestamp, body), "utf8")
      .digest()
  )

/** The three headers of one attempt: one signature per secret, the current one first. */
export const headers = (
  secrets: ReadonlyArray<string>,
  id: string,
  timestamp: number,
  body: string
): Record<string, string> =>
  Webhook.headers(
    id,
    timestamp,
    secrets.map((secret) => sign(secret, id, timestamp, body))
  )
