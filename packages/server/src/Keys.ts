/**
 * API keys and secrets. Keys are shown once at creation and stored only as keyed hashes (HMAC-SHA-256
 * under a server secret kept in the database: core's `ApiKeys.digest`); lookups go by hash and the final
 * comparison is constant-time.
 */
// Core's modules one by one: the CLI loads this file (operator tokens), and core's index is the whole domain.
import * as Auth from "@laari/core/Auth"
import * as Crypto from "@laari/core/Crypto"
import type * as Ids from "@laari/core/Ids"
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto"
import { Effect, Layer } from "effect"

/** Plain SHA-256: request fingerprints, and the hashes keys were stored under before keyed hashes. */
export const hash = (secret: string): string => createHash("sha256").update(secret, "utf8").digest("hex")

/** A key's stored hash: HMAC-SHA-256 under `secret`, prefixed so it can never equal a plain `hash`. */
export const keyedHash = (secret: Uint8Array, key: string): string =>
  `h1:${createHmac("sha256", secret).update(key, "utf8").digest("hex")}`

/** `sk_test_` + 48 hex characters (192 random bits). */
export const generate = (kind: Auth.KeyKind, environment: Ids.Environment): string =>
  `${Auth.keyPrefix(kind, environment)}${randomBytes(24).toString("hex")}`

/** What is kept for display: the prefix and the first four characters of the secret part. */
export const displayPrefix = (key: string): string => key.slice(0, 12)

/** Constant-time equality of two secrets, via their hashes so lengths never leak. */
export const secretsEqual = (a: string, b: string): boolean =>
  timingSafeEqual(Buffer.from(hash(a), "hex"), Buffer.from(hash(b), "hex"))

export const generateOpsToken = (): string => `ops_${randomBytes(24).toString("hex")}`

/**
 * Core's `Crypto` with node:crypto's hashes: the same results as `Crypto.web`, computed synchronously,
 * an order of magnitude faster than Web Crypto's promises on the path every request takes (its key's
 * hash, `ApiKeys.digest`).
 */
export const nodeCrypto: Crypto.CryptoService = {
  ...Crypto.web,
  sha256: (text) => Effect.sync(() => hash(text)),
  hmacSha256: (key, message) =>
    Effect.sync(() => createHmac("sha256", key).update(message, "utf8").digest("hex"))
}

export const cryptoLayer: Layer.Layer<Crypto.Crypto> = Layer.succeed(Crypto.Crypto, nodeCrypto)
