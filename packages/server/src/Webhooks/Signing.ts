/**
 * Standard Webhooks signing (DESIGN section 7): `v1,` + base64 HMAC-SHA256 of `id.timestamp.body`, keyed
 * by the secret's decoded bytes. Secrets are `whsec_` + base64 of 32 random bytes.
 */
import { createHmac, randomBytes } from "node:crypto"

export const SecretPrefix = "whsec_"

/** A new signing secret. */
export const generateSecret = (): string => `${SecretPrefix}${randomBytes(32).toString("base64")}`

const keyOf = (secret: string): Buffer =>
  Buffer.from(secret.startsWith(SecretPrefix) ? secret.slice(SecretPrefix.length) : secret, "base64")

/** One signature: `v1,<base64>`. */
export const sign = (secret: string, id: string, timestamp: number, body: string): string =>
  `v1,${createHmac("sha256", keyOf(secret)).update(`${id}.${timestamp}.${body}`, "utf8").digest("base64")}`

/** The `webhook-signature` header: one signature per secret, space-separated, the current one first. */
export const header = (secrets: ReadonlyArray<string>, id: string, timestamp: number, body: string): string =>
  secrets.map((secret) => sign(secret, id, timestamp, body)).join(" ")

/** The three headers of one attempt. */
export const headers = (
  secrets: ReadonlyArray<string>,
  id: string,
  timestamp: number,
  body: string
): Record<string, string> => ({
  "webhook-id": id,
  "webhook-timestamp": String(timestamp),
  "webhook-signature": header(secrets, id, timestamp, body)
})
