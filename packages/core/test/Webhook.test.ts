import { describe, expect, it } from "@effect/vitest"
import { DateTime, Duration, Either, ParseResult, Schema } from "effect"
import fc from "fast-check"
import * as EventType from "../src/kernel/EventType.js"
import * as Webhook from "../src/webhooks/Webhook.js"
import * as WebhookEndpoint from "../src/webhooks/WebhookEndpoint.js"

const t0 = DateTime.unsafeMake("2026-07-01T00:00:00Z")
const plus = (t: DateTime.Utc, d: Duration.DurationInput) => DateTime.addDuration(t, d)
const ms = (t: DateTime.Utc) => DateTime.toEpochMillis(t)

describe("Webhook.nextRetryAt", () => {
  it("follows the schedule: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h, then nothing", () => {
    const waits = [5, 300, 1_800, 7_200, 18_000, 36_000, 50_400, 72_000, 86_400]
    for (const [i, seconds] of waits.entries())
      expect(ms(Webhook.nextRetryAt(i + 1, t0, false)!) - ms(t0)).toBe(seconds * 1000)
    expect(Webhook.MaxAttempts).toBe(10)
    expect(Webhook.nextRetryAt(10, t0, false)).toBeNull()
    expect(Webhook.nextRetryAt(11, t0, false)).toBeNull()
    expect(Webhook.nextRetryAt(0, t0, false)).toBeNull()
  })

  it("spans about three days from the first attempt to the last", () => {
    let at = t0
    for (let attempt = 1; attempt < Webhook.MaxAttempts; attempt++)
      at = Webhook.nextRetryAt(attempt, at, false)!
    const hours = (ms(at) - ms(t0)) / 3_600_000
    expect(hours).toBeGreaterThan(72)
    expect(hours).toBeLessThan(80)
  })

  it("never retries a resend", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 12 }), (attempt) => {
        expect(Webhook.nextRetryAt(attempt, t0, true)).toBeNull()
      })
    )
  })
})

describe("Webhook.afterAttempt", () => {
  const failed: Webhook.Outcome = { succeeded: false, summary: "HTTP 500" }
  const ok: Webhook.Outcome = { succeeded: true, summary: "HTTP 200" }

  it("a success ends any failing streak", () => {
    expect(Webhook.afterAttempt(t0, ok, plus(t0, "5 days"))).toEqual({ failingSince: null, disable: null })
    expect(Webhook.afterAttempt(null, ok, t0)).toEqual({ failingSince: null, disable: null })
  })

  it("a first failure starts a streak without disabling", () => {
    expect(Webhook.afterAttempt(null, failed, t0)).toEqual({ failingSince: t0, disable: null })
  })

  it("disables exactly when the streak has lasted three days, naming the last failure", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10 * 86_400_000 }), (elapsed) => {
        const change = Webhook.afterAttempt(t0, failed, plus(t0, Duration.millis(elapsed)))
        expect(change.failingSince).toEqual(t0)
        if (elapsed >= 3 * 86_400_000)
          expect(change.disable).toMatch(/every delivery failed for 3 days.*HTTP 500$/)
        else expect(change.disable).toBeNull()
      })
    )
  })
})

describe("Webhook.signingSecrets", () => {
  const secrets = {
    secret: "whsec_new",
    previousSecret: "whsec_old",
    previousSecretExpiresAt: plus(t0, "1 hour")
  }
  it("signs with both until the previous secret expires, the new one first", () => {
    expect(Webhook.signingSecrets(secrets, t0)).toEqual(["whsec_new", "whsec_old"])
    expect(Webhook.signingSecrets(secrets, plus(t0, "59 minutes"))).toEqual(["whsec_new", "whsec_old"])
    expect(Webhook.signingSecrets(secrets, plus(t0, "1 hour"))).toEqual(["whsec_new"])
    expect(
      Webhook.signingSecrets({ secret: "whsec_new", previousSecret: null, previousSecretExpiresAt: null }, t0)
    ).toEqual(["whsec_new"])
    // Half a previous secret is none: no expiry without the secret, no secret without an expiry.
    expect(Webhook.signingSecrets({ ...secrets, previousSecret: null }, t0)).toEqual(["whsec_new"])
    expect(Webhook.signingSecrets({ ...secrets, previousSecretExpiresAt: null }, t0)).toEqual(["whsec_new"])
  })
})

describe("Webhook.EnabledEvents", () => {
  const decode = Schema.decodeUnknownEither(Webhook.EnabledEvents)
  const types = fc.uniqueArray(fc.constantFrom(...EventType.Types), { minLength: 1 })

  it("accepts any set of known event types, and * alone", () => {
    fc.assert(
      fc.property(types, (list) => {
        expect(Either.isRight(decode(list))).toBe(true)
      })
    )
    expect(Either.isRight(decode(["*"]))).toBe(true)
  })

  it("refuses unknown types, repeats, an empty list and * with anything else", () => {
    fc.assert(
      fc.property(types, fc.string(), (list, other) => {
        fc.pre(!(EventType.Types as ReadonlyArray<string>).includes(other) && other !== "*")
        expect(Either.isLeft(decode([...list, other]))).toBe(true)
        expect(Either.isLeft(decode([...list, list[0]!]))).toBe(true)
        expect(Either.isLeft(decode([...list, "*"]))).toBe(true)
      })
    )
    expect(Either.isLeft(decode([]))).toBe(true)
  })

  it("says what is wrong with a list", () => {
    const message = (input: unknown) =>
      Either.match(decode(input), {
        onLeft: (e) => ParseResult.TreeFormatter.formatErrorSync(e),
        onRight: () => "decoded"
      })
    expect(message([])).toContain('must list at least one event type, or "*"')
    expect(message([...EventType.Types, "*"])).toContain(
      `must list at most ${EventType.Types.length} event types`
    )
    expect(message([EventType.Types[0], EventType.Types[0]])).toContain("must not repeat an event type")
    expect(message([EventType.Types[0], "*"])).toContain('"*" must be the only entry')
  })

  it("subscribes an endpoint to what it lists, or to everything with *", () => {
    fc.assert(
      fc.property(types, fc.constantFrom(...EventType.Types), (list, type) => {
        expect(Webhook.subscribes(list, type)).toBe(list.includes(type))
        expect(Webhook.subscribes(["*"], type)).toBe(true)
      })
    )
  })
})

describe("Webhook.verdict", () => {
  const answer = (status: number | null, error: string | null = null): Webhook.Response => ({
    status,
    body: null,
    error,
    durationMs: 3
  })

  it("a 2xx is delivered, with nothing after it, whatever the attempt", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 200, max: 299 }),
        fc.integer({ min: 1, max: 12 }),
        fc.boolean(),
        (status, attempt, resend) => {
          expect(Webhook.verdict({ attempt, resend }, answer(status), t0)).toEqual({
            succeeded: true,
            summary: `HTTP ${status}`,
            next: null,
            result: "delivered"
          })
        }
      )
    )
  })

  it("anything else fails: retried by the schedule, or given up after the last attempt and a resend", () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.constant(null), fc.integer({ min: 100, max: 199 }), fc.integer({ min: 300, max: 599 })),
        fc.integer({ min: 1, max: 12 }),
        fc.boolean(),
        (status, attempt, resend) => {
          const error = status === null ? "connection refused" : `HTTP ${status}`
          const v = Webhook.verdict({ attempt, resend }, answer(status, error), t0)
          const next = Webhook.nextRetryAt(attempt, t0, resend)
          expect(v).toEqual({
            succeeded: false,
            summary: error,
            next,
            result: next === null ? "gave_up" : "failed"
          })
        }
      )
    )
  })
})

describe("Webhook signatures", () => {
  it("the signed content and the header are as Standard Webhooks writes them", () => {
    expect(Webhook.signedContent("msg_1", 42, "{}")).toBe("msg_1.42.{}")
    expect(Webhook.signature(new Uint8Array([0, 1, 2, 255]))).toBe("v1,AAEC/w==")
    expect(Webhook.headers("msg_1", 42, ["v1,a", "v1,b"])).toEqual({
      "webhook-id": "msg_1",
      "webhook-timestamp": "42",
      "webhook-signature": "v1,a v1,b"
    })
  })

  it("a secret that is not base64 is a defect, not a key", () => {
    expect(() => WebhookEndpoint.signingKey("whsec_not base64!")).toThrow()
    expect(WebhookEndpoint.signingKey("whsec_AAAA")).toEqual(new Uint8Array(3))
  })
})

describe("Webhook errors", () => {
  it("say what was not found, and how many endpoints a merchant may have", () => {
    expect(new Webhook.WebhookEndpointNotFound().message).toBe("Webhook endpoint not found")
    expect(new Webhook.EventNotFound().message).toBe("Event not found")
    expect(new Webhook.EndpointLimitReached().message).toBe(
      "A merchant can have at most 16 webhook endpoints in each environment; delete one before registering another"
    )
  })
})
