/**
 * Webhook signing secrets at rest. They must be read back to sign,
 * so they are encrypted, not hashed: AES-256-GCM under the master key, a random 96-bit nonce each time,
 * the endpoint's id as associated data (a sealed secret copied to another row does not open there).
 * Stored as `v1:<key id>:<nonce>:<ciphertext and tag>`, base64; the key id (the first 8 bytes of the
 * key's SHA-256, hex) tells which key sealed a row, so a process starting with a new master key finds the
 * rows still under the previous one and seals them again.
 *
 * The master key is `LAARI_MASTER_KEY`; without it, a key made once and kept in `server_secrets`. The
 * previous key (`LAARI_MASTER_KEY_PREVIOUS`) and that kept key only open.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto"
import { Data } from "effect"
import { SecretPrefix } from "./Signing.js"

export interface Key {
  readonly id: string
  readonly bytes: Uint8Array
}

export interface Keyring {
  /** Seals, and opens. */
  readonly current: Key
  /** Only open: the previous master key, the kept one. */
  readonly older: ReadonlyArray<Key>
}

// The master key's format and setting live with the configuration (`Platform/MasterKey`); re-exported here.
export { KeyBytes, masterKeyConfig, parseKey } from "../Platform/MasterKey.js"

export const key = (bytes: Uint8Array): Key => ({
  id: createHash("sha256").update(bytes).digest("hex").slice(0, 16),
  bytes
})

const Version = "v1"

export class SecretUnreadable extends Data.TaggedError("SecretUnreadable")<{
  readonly endpointId: string
  readonly message: string
}> {}

const aad = (endpointId: string) => Buffer.from(`laari webhook endpoint ${endpointId}`, "utf8")

/** `secret` sealed for the endpoint `endpointId` under the ring's current key. */
export const seal = (ring: Keyring, endpointId: string, secret: string): string => {
  const nonce = randomBytes(12)
  const cipher = createCipheriv("aes-256-gcm", ring.current.bytes, nonce)
  cipher.setAAD(aad(endpointId))
  const body = Buffer.concat([cipher.update(secret, "utf8"), cipher.final(), cipher.getAuthTag()])
  return [Version, ring.current.id, nonce.toString("base64"), body.toString("base64")].join(":")
}

/** Whether `stored` is sealed under the ring's current key (else it is to be sealed again). */
export const isCurrent = (ring: Keyring, stored: string): boolean =>
  stored.startsWith(`${Version}:${ring.current.id}:`)

/**
 * The secret in `stored`. A plaintext `whsec_` secret is read as it is: a row written before secrets were
 * sealed, until the start-up pass (`Sealer.layer`: its reseal) seals it.
 */
export const open = (ring: Keyring, endpointId: string, stored: string): string => {
  if (stored.startsWith(SecretPrefix)) return stored
  const [version, keyId, nonce, body, ...rest] = stored.split(":")
  const unreadable = (message: string) => new SecretUnreadable({ endpointId, message })
  if (version !== Version || nonce === undefined || body === undefined || rest.length > 0)
    throw unreadable(`the signing secret of webhook endpoint ${endpointId} is in no known format`)
  const k = [ring.current, ...ring.older].find((k) => k.id === keyId)
  if (k === undefined)
    throw unreadable(
      `the signing secret of webhook endpoint ${endpointId} is sealed with master key ${keyId}, which laari does not have: set LAARI_MASTER_KEY_PREVIOUS to it`
    )
  const sealed = Buffer.from(body, "base64")
  try {
    const decipher = createDecipheriv("aes-256-gcm", k.bytes, Buffer.from(nonce, "base64"))
    decipher.setAAD(aad(endpointId))
    decipher.setAuthTag(sealed.subarray(sealed.length - 16))
    return Buffer.concat([
      decipher.update(sealed.subarray(0, sealed.length - 16)),
      decipher.final()
    ]).toString("utf8")
  } catch {
    throw unreadable(`the signing secret of webhook endpoint ${endpointId} does not open: it was altered`)
  }
}

/**
 * What the idempotency table keeps in place of a secret in a stored response: its SHA-256, which names
 * the secret without revealing it (32 random bytes cannot be guessed from their hash). A replay puts back
 * the endpoint's secret with that hash (`Replay`).
 */
export const fingerprint = (secret: string): string =>
  `sha256:${createHash("sha256").update(secret, "utf8").digest("base64")}`
