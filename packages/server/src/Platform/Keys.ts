/**
 * API keys and secrets. Keys are shown once at creation and stored only as keyed hashes (HMAC-SHA-256
 * under a server secret kept in the database: core's `ApiKeys.digest`); lookups go by hash and the final
 * comparison is constant-time.
 */
// Core's modules one by one: the CLI loads this file (operator tokens), and core's index is the whole domain.
import * as Crypto from "@laari/core/kernel/Crypto"
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto"
import { Effect, Layer } from "effect"

/** Plain SHA-256: request fingerprints, and the hashes keys were stored under before keyed hashes. */
export const hash = (secret: string): string => createHash("sha256").update(secret, "utf8").digest("hex")

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
