/**
 * OAuth credentials, both ways: their shapes, which text is an access token and of which environment, and
 * when a token found by its hash stands for a grant.
 */
import { describe, expect, it } from "@effect/vitest"
import { DateTime } from "effect"
import fc from "fast-check"
import * as OAuthClient from "../src/directory/OAuthClient.js"
import type { MerchantId } from "../src/kernel/Ids.js"

const hex = (n: number) => fc.stringMatching(new RegExp(`^[0-9a-f]{${n}}$`))
const t0 = DateTime.unsafeMake("2026-07-01T00:00:00Z")

describe("OAuthClient credentials", () => {
  it("are prefixed by what they are and their environment", () => {
    expect(OAuthClient.clientIdOf("test", "ab")).toBe("lci_test_ab")
    expect(OAuthClient.clientSecretOf("live", "cd")).toBe("lcs_live_cd")
    expect(OAuthClient.accessTokenOf("live", "ef")).toBe("lat_live_ef")
  })

  it("an access token is lat_, its environment and 48 hex digits; anything else is none", () => {
    fc.assert(
      fc.property(fc.constantFrom("test" as const, "live" as const), hex(48), (environment, digits) => {
        expect(OAuthClient.accessTokenEnvironment(OAuthClient.accessTokenOf(environment, digits))).toBe(
          environment
        )
      })
    )
    const digits = "0123456789abcdef".repeat(3)
    for (const text of [
      `lat_test_${digits.slice(1)}`,
      `lat_test_${digits}0`,
      `lat_test_${digits.toUpperCase()}`,
      `lat_prod_${digits}`,
      `xlat_test_${digits}`,
      `lat_test_${digits}\n`,
      `lat_test_${digits}zz`,
      `lcs_test_${digits}`,
      "lat_test_",
      ""
    ])
      expect(OAuthClient.accessTokenEnvironment(text), text).toBeUndefined()
  })
})

describe("OAuthClient.grantOf", () => {
  const client: OAuthClient.Client = {
    id: "cl_1",
    clientId: "lci_test_ab",
    merchantId: "6f1c1f44-9a39-4c5e-8a57-0b3fe4d0a111" as MerchantId,
    environment: "test",
    name: null,
    scopes: ["qr:write", "payments:write"],
    secretHash: "h1:secret",
    createdAt: t0,
    revokedAt: null
  }
  const token: OAuthClient.Token = {
    id: "tok_1",
    client: "cl_1",
    tokenHash: "h1:token",
    scopes: ["qr:write"],
    expiresAt: DateTime.add(t0, { hours: 1 }),
    revokedAt: null,
    createdAt: t0
  }

  it("a grant exactly when the hash matches, neither is revoked and the token has not expired", () => {
    fc.assert(
      fc.property(
        fc.boolean(),
        fc.boolean(),
        fc.boolean(),
        fc.integer({ min: 0, max: 7_200 }),
        (sameHash, tokenRevoked, clientRevoked, seconds) => {
          const found = {
            token: { ...token, revokedAt: tokenRevoked ? t0 : null },
            client: { ...client, revokedAt: clientRevoked ? t0 : null }
          }
          const grant = OAuthClient.grantOf(
            found,
            sameHash ? "h1:token" : "h1:other",
            DateTime.add(t0, { seconds })
          )
          const valid = sameHash && !tokenRevoked && !clientRevoked && seconds < 3_600
          expect(grant).toEqual(
            valid
              ? { tokenId: "tok_1", client: found.client, scopes: ["qr:write"], expiresAt: token.expiresAt }
              : undefined
          )
        }
      )
    )
    expect(OAuthClient.grantOf(undefined, "h1:token", t0)).toBeUndefined()
  })
})
