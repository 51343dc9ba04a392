import { describe, expect, it } from "@effect/vitest"
import { DateTime } from "effect"
import fc from "fast-check"
import * as Idempotency from "../src/kernel/Idempotency.js"
import type { MerchantId } from "../src/kernel/Ids.js"

const t0 = DateTime.unsafeMake("2026-03-31T10:00:00Z")
const at = (seconds: number) => DateTime.add(t0, { seconds })
const scope: Idempotency.Scope = {
  merchantId: "6f1c1f44-9a39-4c5e-8a57-0b3fe4d0a111" as MerchantId,
  environment: "test",
  method: "POST",
  path: "/mandates",
  key: "k1"
}
const response: Idempotency.StoredResponse = { status: 201, headers: {}, body: '{"id":"1"}' }
const record = (overrides: Partial<Idempotency.Record> = {}): Idempotency.Record => ({
  scope,
  fingerprint: "fp",
  response: null,
  createdAt: t0,
  ...overrides
})
const hours = 3600

describe("decide", () => {
  it.each<[string, Idempotency.Record | undefined, string, number, Idempotency.Decision["_tag"]]>([
    ["nothing recorded", undefined, "fp", 0, "Proceed"],
    ["the same request, completed", record({ response }), "fp", 10, "Replay"],
    ["a completed record at 71:59:59", record({ response }), "fp", 72 * hours - 1, "Replay"],
    ["a completed record after 72 h", record({ response }), "fp", 72 * hours, "Proceed"],
    ["another body", record({ response }), "other", 10, "Mismatch"],
    ["another body after 72 h", record({ response }), "other", 72 * hours, "Proceed"],
    // A committed record without a response was left by an older version whose command never committed.
    ["a record left without a response", record(), "fp", 1, "Proceed"],
    ["a record left without a response, another body", record(), "other", 1, "Proceed"]
  ])("%s", (_, existing, fingerprint, seconds, tag) => {
    const decision = Idempotency.decide(existing, fingerprint, at(seconds))
    expect(decision._tag).toBe(tag)
    if (decision._tag === "Replay") expect(decision.response).toEqual(response)
  })

  it("for any record and moment: the decision follows from age, fingerprint and response", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 100 * hours }),
        fc.boolean(),
        fc.boolean(),
        (seconds, completed, sameBody) => {
          const existing = record(completed ? { response } : {})
          const decision = Idempotency.decide(existing, sameBody ? "fp" : "other", at(seconds))
          const expected =
            !completed || seconds >= Idempotency.RetentionHours * hours
              ? "Proceed"
              : sameBody
                ? "Replay"
                : "Mismatch"
          expect(decision._tag).toBe(expected)
        }
      )
    )
  })
})
