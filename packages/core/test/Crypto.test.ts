import { createHmac } from "node:crypto"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import fc from "fast-check"
import * as Crypto from "../src/kernel/Crypto.js"

describe("Crypto.web", () => {
  it.effect("HMAC-SHA-256 is node:crypto's, for each key, however often a key is used", () =>
    Effect.gen(function* () {
      const keys = [new Uint8Array(32), yield* Crypto.web.bytes(32), yield* Crypto.web.bytes(16)]
      for (const message of ["", "sk_test_abc", "Māle ދިވެހި"])
        for (const key of [...keys, ...keys])
          expect(yield* Crypto.web.hmacSha256(key, message)).toBe(
            createHmac("sha256", key).update(message, "utf8").digest("hex")
          )
    })
  )

  it("constantTimeEqual is string equality", () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (a, b) => {
        expect(Crypto.constantTimeEqual(a, b)).toBe(a === b)
        expect(Crypto.constantTimeEqual(a, a)).toBe(true)
      })
    )
  })
})
