/**
 * Randomness and hashing. A port, so tests can make ids predictable; the default uses the Web Crypto API,
 * which Node and browsers both have, keeping core free of `node:*`.
 */
import { Context, Effect, Layer } from "effect"

export interface CryptoService {
  readonly uuid: Effect.Effect<string>
  /** `n` uniformly random decimal digits, for one-time codes. */
  readonly digits: (n: number) => Effect.Effect<string>
  /** `n` random bytes, for identifiers with an encoding of their own (the QR `qrid`). */
  readonly bytes: (n: number) => Effect.Effect<Uint8Array>
  /** SHA-256 of the UTF-8 text, lowercase hex. */
  readonly sha256: (text: string) => Effect.Effect<string>
  /** HMAC-SHA-256 of the UTF-8 `message` keyed by `key`, lowercase hex. */
  readonly hmacSha256: (key: Uint8Array, message: string) => Effect.Effect<string>
}

export class Crypto extends Context.Tag("laari/Crypto")<Crypto, CryptoService>() {}

interface WebCrypto {
  randomUUID(): string
  getRandomValues<T extends Uint8Array | Uint32Array>(array: T): T
  subtle: {
    digest(algorithm: string, data: Uint8Array): Promise<ArrayBuffer>
    importKey(
      format: "raw",
      keyData: Uint8Array,
      algorithm: { name: "HMAC"; hash: "SHA-256" },
      extractable: false,
      usages: ReadonlyArray<"sign">
    ): Promise<unknown>
    sign(algorithm: "HMAC", key: unknown, data: Uint8Array): Promise<ArrayBuffer>
  }
}
declare const crypto: WebCrypto
declare class TextEncoder {
  encode(s: string): Uint8Array
}

/** Lowercase hex of the bytes. */
export const hex = (bytes: Uint8Array): string =>
  Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")

const randomDigit = (): number => {
  // Rejection sampling keeps the digits uniform.
  const buf = new Uint32Array(1)
  for (;;) {
    crypto.getRandomValues(buf)
    const v = buf[0]!
    if (v < 4_294_967_290) return v % 10
  }
}

// Imported once per key: a key is one deployment secret (`Store.ApiKeysStoreService.hashKey`, the code key),
// hashed with on every request; the import costs as much again as the signing. So a key's bytes must
// not change once it has been used, which no caller does.
const imported = new WeakMap<Uint8Array, Promise<unknown>>()
const importedKey = (key: Uint8Array): Promise<unknown> => {
  let k = imported.get(key)
  if (k === undefined) {
    k = crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"])
    imported.set(key, k)
  }
  return k
}

export const web: CryptoService = {
  uuid: Effect.sync(() => crypto.randomUUID()),
  digits: (n) => Effect.sync(() => Array.from({ length: n }, randomDigit).join("")),
  bytes: (n) => Effect.sync(() => crypto.getRandomValues(new Uint8Array(n))),
  sha256: (text) =>
    Effect.promise(() => crypto.subtle.digest("SHA-256", new TextEncoder().encode(text))).pipe(
      Effect.map((buf) => hex(new Uint8Array(buf)))
    ),
  hmacSha256: (key, message) =>
    Effect.promise(async () => {
      const k = await importedKey(key)
      return hex(new Uint8Array(await crypto.subtle.sign("HMAC", k, new TextEncoder().encode(message))))
    })
}

export const layerWeb: Layer.Layer<Crypto> = Layer.succeed(Crypto, web)

/** Compares two strings in time independent of where they differ (for secrets and their hashes). */
export const constantTimeEqual = (a: string, b: string): boolean => {
  let diff = a.length ^ b.length
  const n = Math.max(a.length, b.length)
  for (let i = 0; i < n; i++) diff |= (a.charCodeAt(i) | 0) ^ (b.charCodeAt(i) | 0)
  return diff === 0
}
