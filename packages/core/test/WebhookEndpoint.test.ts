/**
 * The Standard Webhooks signature as sent: the published example vector, one signature per secret in
 * order, and each header checked against an HMAC computed here by node:crypto.
 */
import { createHmac } from "node:crypto"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import fc from "fast-check"
import * as Crypto from "../src/kernel/Crypto.js"
import * as WebhookEndpoint from "../src/webhooks/WebhookEndpoint.js"

/** A signature as a receiver checks it, computed without the code under test. */
const expected = (secret: string, id: string, timestamp: number, body: string) =>
  `v1,${createHmac("sha256", Buffer.from(secret.replace(/^whsec_/, ""), "base64"))
    .update(`${id}.${timestamp}.${body}`, "utf8")
    .digest("base64")}`

describe("WebhookEndpoint.signedHeaders", () => {
  it.effect("matches the Standard Webhooks example", () =>
    Effect.gen(function* () {
      const headers = yield* WebhookEndpoint.signedHeaders(
        Crypto.web,
        ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"],
        "msg_p5jXN8AQM9LWM0D4loKWxJek",
        1_614_265_330,
        '{"test": 2432232314}'
      )
      expect(headers).toEqual({
        "webhook-id": "msg_p5jXN8AQM9LWM0D4loKWxJek",
        "webhook-timestamp": "1614265330",
        "webhook-signature": "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
      })
    })
  )

  it.effect(
    "one signature per secret, the current first, each a receiver's HMAC; with or without whsec_",
    () =>
      Effect.gen(function* () {
        const samples = fc.sample(
          fc.record({
            secrets: fc.array(
              fc
                .uint8Array({ minLength: 1, maxLength: 32 })
                .chain((b) =>
                  fc.constantFrom(
                    `whsec_${Buffer.from(b).toString("base64")}`,
                    Buffer.from(b).toString("base64")
                  )
                ),
              { minLength: 1, maxLength: 3 }
            ),
            id: fc.string({ minLength: 1 }),
            timestamp: fc.integer({ min: 0, max: 4_000_000_000 }),
            body: fc.string()
          }),
          { numRuns: 30, seed: 43 }
        )
        for (const { secrets, id, timestamp, body } of samples) {
          const headers = yield* WebhookEndpoint.signedHeaders(Crypto.web, secrets, id, timestamp, body)
          expect(headers).toEqual({
            "webhook-id": id,
            "webhook-timestamp": String(timestamp),
            "webhook-signature": secrets.map((s) => expected(s, id, timestamp, body)).join(" ")
          })
        }
      })
  )
})
