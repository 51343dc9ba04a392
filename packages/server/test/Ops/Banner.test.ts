/**
 * The start-up lines of a first start: the seeded demo merchant's keys and its owner's one-time password
 * on a terminal, beside the owner's email; with JSON logs (no secrets shown) the email and where to sign
 * in, no password.
 */
import { describe, expect, it } from "vitest"
import * as Banner from "../../src/Ops/Banner.js"
import { DemoOwnerEmail } from "../../src/Ops/Onboarding.js"

const seeded: Banner.Seeded = {
  merchant: { id: "m-1", name: "Demo Cafe" },
  outlet: { id: 1, name: "Majeedhee Magu" },
  secretKey: "sk_test_secret",
  publishableKey: "pk_test_public",
  owner: { email: DemoOwnerEmail, password: "Xq7-one-time-Password" }
}

const text = (showSecrets: boolean, owner: Banner.Seeded["owner"] = seeded.owner) =>
  Banner.lines({
    config: {
      port: 4000,
      databaseUrl: undefined,
      dataDir: "./.data",
      baseUrl: "http://localhost:4000",
      checkoutUrl: "http://localhost:4000",
      opsToken: "t",
      clock: "system",
      maxBodyBytes: 1,
      rateLimit: 0,
      webhookAllowPrivate: false
    },
    token: { value: "t", source: "env", file: undefined },
    seeded: { ...seeded, owner },
    showSecrets,
    processes: 1
  }).join("\n")

describe("the seeded owner in the start-up lines", () => {
  it("on a terminal: the owner's email and one-time password beside the keys, to change at first sign-in", () => {
    const out = text(true)
    expect(DemoOwnerEmail).toBe("owner@demo.laari.mv")
    expect(out).toContain(
      [
        "  sandbox secret key:      sk_test_secret",
        "  sandbox publishable key: pk_test_public",
        "  dashboard owner:         owner@demo.laari.mv (http://localhost:4000/dashboard)",
        "  one-time password:       Xq7-one-time-Password (change it at first sign-in)"
      ].join("\n")
    )
  })

  it("with JSON logs the email and where, never the password; no password line when there is none", () => {
    const out = text(false)
    expect(out).toContain("  dashboard owner:         owner@demo.laari.mv (http://localhost:4000/dashboard)")
    expect(out).not.toContain("Xq7-one-time-Password")
    expect(out).not.toContain("one-time password")
    expect(text(true, { email: DemoOwnerEmail, password: null })).not.toContain("one-time password")
  })
})
