/**
 * An API key as stored, both ways: the default scopes, the shown prefix and stored hash, and which stored
 * key a presented key stands for (its prefix must agree with the stored kind and environment).
 */
import { describe, expect, it } from "@effect/vitest"
import { DateTime } from "effect"
import fc from "fast-check"
import * as ApiKey from "../src/directory/ApiKey.js"
import * as Auth from "../src/kernel/Auth.js"
import type { MerchantId } from "../src/kernel/Ids.js"

const stored = (overrides: Partial<ApiKey.StoredKey> = {}): ApiKey.StoredKey => ({
  id: "key_1",
  merchantId: "6f1c1f44-9a39-4c5e-8a57-0b3fe4d0a111" as MerchantId,
  environment: "test",
  kind: "secret",
  scopes: ["qr:write"],
  keyHash: "h1:abc",
  keyPrefix: "sk_test_AbCd",
  createdAt: DateTime.unsafeMake("2026-07-01T00:00:00Z"),
  revokedAt: null,
  ...overrides
})

describe("ApiKey defaults and display", () => {
  it("a secret key gets every scope, a publishable one only checkout:write", () => {
    expect(ApiKey.defaultScopes("secret")).toEqual(Auth.allScopes)
    expect(ApiKey.defaultScopes("publishable")).toEqual(["checkout:write"])
  })

  it("shows the prefix and four characters of the secret; stores the hash marked as keyed", () => {
    expect(ApiKey.displayPrefix("sk_test_AbCdEfGh")).toBe("sk_test_AbCd")
    expect(ApiKey.keyedDigest("00ff")).toBe("h1:00ff")
  })
})

describe("ApiKey.verdictOf", () => {
  const kinds = fc.constantFrom("secret" as const, "publishable" as const)
  const environments = fc.constantFrom("test" as const, "live" as const)

  it("valid exactly when a live stored key of the prefix's kind and environment has the same hash", () => {
    fc.assert(
      fc.property(
        kinds,
        environments,
        kinds,
        environments,
        fc.boolean(),
        fc.boolean(),
        (kind, environment, storedKind, storedEnvironment, sameHash, revoked) => {
          const key = `${Auth.keyPrefix(kind, environment)}AbCdEfGh`
          const found = stored({
            kind: storedKind,
            environment: storedEnvironment,
            revokedAt: revoked ? DateTime.unsafeMake("2026-07-02T00:00:00Z") : null
          })
          const verdict = ApiKey.verdictOf(key, sameHash ? found.keyHash : "h1:other", found)
          const issued = kind === storedKind && environment === storedEnvironment && sameHash
          expect(verdict._tag).toBe(!issued ? "Unknown" : revoked ? "Revoked" : "Valid")
          expect(ApiKey.principalOf(key, sameHash ? found.keyHash : "h1:other", found)).toEqual(
            issued && !revoked
              ? {
                  merchantId: found.merchantId,
                  environment: storedEnvironment,
                  keyId: "key_1",
                  kind,
                  scopes: ["qr:write"]
                }
              : undefined
          )
        }
      )
    )
  })

  it("a key of no known shape, or found as no key, is unknown", () => {
    expect(ApiKey.verdictOf("whsec_abc", "h1:abc", stored())).toEqual({ _tag: "Unknown" })
    expect(ApiKey.verdictOf("sk_test_AbCd", "h1:abc", undefined)).toEqual({ _tag: "Unknown" })
    expect(ApiKey.verdictOf("sk_test_AbCd", "h1:abc", stored({ revokedAt: DateTime.unsafeMake(0) }))).toEqual(
      {
        _tag: "Revoked"
      }
    )
    expect(ApiKey.verdictOf("sk_test_AbCd", "h1:abc", stored())).toEqual({
      _tag: "Valid",
      principal: {
        merchantId: "6f1c1f44-9a39-4c5e-8a57-0b3fe4d0a111",
        environment: "test",
        keyId: "key_1",
        kind: "secret",
        scopes: ["qr:write"]
      }
    })
  })
})
