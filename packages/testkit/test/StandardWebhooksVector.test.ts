/**
 * Core's webhook signing reproduces the Standard Webhooks test vector (`StandardWebhooksVector`, the
 * fixture the server's signing tests use too): through `Crypto`'s HMAC, as `Deliveries` and `Notices`
 * sign.
 */
import { describe, expect, it } from "@effect/vitest"
import { Crypto, Webhook, WebhookEndpoint } from "@laari/core"
import { Effect, Either, Encoding } from "effect"
import * as vector from "../src/fixtures/StandardWebhooksVector.js"

describe("Webhook signatures", () => {
  it.effect("reproduce the Standard Webhooks test vector through Crypto's HMAC", () =>
    Effect.gen(function* () {
      const sign = (timestamp: number) =>
        Effect.map(
          Crypto.web.hmacSha256(
            WebhookEndpoint.signingKey(vector.secret),
            Webhook.signedContent(vector.id, timestamp, vector.body)
          ),
          (hex) => Webhook.signature(Either.getOrThrow(Encoding.decodeHex(hex)))
        )
      const signature = yield* sign(vector.timestamp)
      expect(signature).toBe(vector.signature)
      expect(yield* sign(vector.timestamp + 1)).not.toBe(vector.signature)
      expect(Webhook.headers(vector.id, vector.timestamp, [signature, "v1,b"])).toEqual({
        "webhook-id": vector.id,
        "webhook-timestamp": "1614265330",
        "webhook-signature": `${vector.signature} v1,b`
      })
    })
  )
})
