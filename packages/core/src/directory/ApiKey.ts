/**
 * A merchant's API key as stored: never the key itself, only its keyed hash and a prefix to show it by.
 * The pure rules: which scopes a key gets by default, how its hash is written, and whether a stored key
 * found by hash stands for the key presented (`principalOf`).
 */
import type { Principal, Scope } from "../kernel/Auth.js"
import { allScopes, type KeyKind, parseKeyPrefix } from "../kernel/Auth.js"
import { constantTimeEqual } from "../kernel/Crypto.js"
import type { DateTime } from "effect"
import type { Environment, MerchantId } from "../kernel/Ids.js"

/** A key to store: only its hash, and a prefix to show it by. */
export interface NewKey {
  readonly id: string
  readonly merchantId: MerchantId
  readonly environment: Environment
  readonly kind: KeyKind
  readonly scopes: ReadonlyArray<Scope>
  readonly keyHash: string
  /** The first characters of the key (e.g. `sk_test_AbCd`), to show it by. */
  readonly keyPrefix: string
}

export interface StoredKey extends NewKey {
  readonly createdAt: DateTime.Utc
  readonly revokedAt: DateTime.Utc | null
}

/** Secret keys get every scope unless told otherwise; publishable keys only `checkout:write`. */
export const defaultScopes = (kind: KeyKind): ReadonlyArray<Scope> =>
  kind === "secret" ? allScopes : ["checkout:write"]

/** What is kept for display: the prefix and the first four characters of the secret part. */
export const displayPrefix = (key: string): string => key.slice(0, 12)

/** A keyed hash as stored: prefixed so it can never equal a plain SHA-256 (how keys were once stored). */
export const keyedDigest = (hmacHex: string): string => `h1:${hmacHex}`

/**
 * What a presented key is: a live key's principal, a key that was issued and then revoked (the caller
 * is told to use another, not to check what they copied), or unknown (never issued, or not shaped as one).
 */
export type Verdict =
  | { readonly _tag: "Valid"; readonly principal: Principal }
  | { readonly _tag: "Revoked" }
  | { readonly _tag: "Unknown" }

const unknown: Verdict = { _tag: "Unknown" }
const revoked: Verdict = { _tag: "Revoked" }

/**
 * The verdict on `key`, given the stored key its hash `digest` found: unknown when there is no such key,
 * its prefix lies about kind or environment, or the hashes differ; revoked only for the very key issued.
 */
export const verdictOf = (key: string, digest: string, found: StoredKey | undefined): Verdict => {
  const shape = parseKeyPrefix(key)
  if (
    shape === undefined ||
    found === undefined ||
    found.kind !== shape.kind ||
    found.environment !== shape.environment ||
    !constantTimeEqual(found.keyHash, digest)
  )
    return unknown
  if (found.revokedAt !== null) return revoked
  return {
    _tag: "Valid",
    principal: {
      merchantId: found.merchantId,
      environment: found.environment,
      keyId: found.id,
      kind: found.kind,
      scopes: found.scopes
    }
  }
}

/** The principal `key` stands for: none when it is unknown or revoked (`verdictOf`). */
export const principalOf = (
  key: string,
  digest: string,
  found: StoredKey | undefined
): Principal | undefined => {
  const verdict = verdictOf(key, digest, found)
  // Stryker disable next-line ConditionalExpression: only a `Valid` verdict has a principal, so reading it off another gives `undefined` too
  return verdict._tag === "Valid" ? verdict.principal : undefined
}
