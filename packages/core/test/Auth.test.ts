import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import * as Auth from "../src/kernel/Auth.js"
import type { MerchantId } from "../src/kernel/Ids.js"

const principal = (overrides: Partial<Auth.Principal> = {}): Auth.Principal => ({
  merchantId: "6f1c1f44-9a39-4c5e-8a57-0b3fe4d0a111" as MerchantId,
  environment: "test",
  keyId: "key_1",
  kind: "secret",
  scopes: ["mandates:write"],
  ...overrides
})

describe("Auth.check", () => {
  it("a secret key with the scope may; without it, the missing scope is named", () => {
    expect(Auth.check(principal(), "mandates:write")).toBeUndefined()
    expect(Auth.check(principal(), "payments:write")).toBe("missing-scope")
    expect(Auth.check(principal({ scopes: Auth.allScopes }), "qr:write")).toBeUndefined()
    expect(Auth.check(principal({ scopes: [] }), "mandates:write")).toBe("missing-scope")
  })

  it("a publishable key is refused unless the endpoint allows it, and then still needs the scope", () => {
    const pk = principal({ kind: "publishable", scopes: ["checkout:write"] })
    expect(Auth.check(pk, "checkout:write")).toBe("publishable-key")
    expect(Auth.check(pk, "checkout:write", { publishableAllowed: true })).toBeUndefined()
    expect(Auth.check(pk, "qr:write", { publishableAllowed: true })).toBe("missing-scope")
  })

  it("mandates:write and payments:write are separate scopes", () => {
    expect(Auth.allScopes).toEqual([
      "mandates:write",
      "payments:write",
      "qr:write",
      "subscriptions:write",
      "checkout:write",
      "webhooks:write",
      "audit:read"
    ])
  })
})

describe("key prefixes", () => {
  it("carry kind and environment", () => {
    expect(Auth.keyPrefix("secret", "test")).toBe("sk_test_")
    expect(Auth.keyPrefix("secret", "live")).toBe("sk_live_")
    expect(Auth.keyPrefix("publishable", "test")).toBe("pk_test_")
    expect(Auth.keyPrefix("publishable", "live")).toBe("pk_live_")
  })

  it("parse back from any well-formed key", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("secret" as const, "publishable" as const),
        fc.constantFrom("test" as const, "live" as const),
        fc.stringMatching(/^[A-Za-z0-9]{1,40}$/),
        (kind, environment, rest) => {
          expect(Auth.parseKeyPrefix(Auth.keyPrefix(kind, environment) + rest)).toEqual({ kind, environment })
        }
      )
    )
  })

  it.each([
    "sk_prod_abc",
    "sk_test_",
    "sk_test_abc-def",
    "xk_test_abc",
    "xsk_test_abc",
    "sk_live abc",
    "SK_TEST_abc",
    "whsec_abc",
    ""
  ])("rejects %j", (key) => {
    expect(Auth.parseKeyPrefix(key)).toBeUndefined()
  })

  it("tenantOf keeps merchant and environment only", () => {
    expect(Auth.tenantOf(principal({ environment: "live" }))).toEqual({
      merchantId: "6f1c1f44-9a39-4c5e-8a57-0b3fe4d0a111",
      environment: "live"
    })
  })
})

describe("Auth.Forbidden", () => {
  it("names the key kind or the missing scope", () => {
    expect(Auth.Forbidden.of("publishable-key", "qr:write")).toMatchObject({
      _tag: "Forbidden",
      message: "A publishable key cannot use this endpoint; use a secret key"
    })
    expect(Auth.Forbidden.of("missing-scope", "qr:write")).toMatchObject({
      _tag: "Forbidden",
      message: "This key lacks the qr:write scope"
    })
  })
})
