/**
 * The rules of a customer notice's delivery, both ways: the schedule, the give-up time, a code never
 * sent after it expired, and what an attempt's response comes to.
 */
import { describe, expect, it } from "@effect/vitest"
import { DateTime, Duration } from "effect"
import fc from "fast-check"
import type { CustomerId } from "../src/kernel/Ids.js"
import type { Notification } from "../src/kernel/Notifications.js"
import * as Notice from "../src/notices/Notice.js"
import type { Response } from "../src/webhooks/Webhook.js"

const t0 = DateTime.unsafeMake("2026-07-01T00:00:00Z")
const ms = (t: DateTime.Utc) => DateTime.toEpochMillis(t)
const at = (millis: number) => DateTime.unsafeMake(ms(t0) + millis)
const day = 86_400_000

const attempts = fc.integer({ min: 1, max: 40 })
/** A moment within (and a little past) the delivery window of a notice made at `t0`. */
const elapsed = fc.integer({ min: 0, max: day + 2 * 3_600_000 })
/** An expiry, when there is one, up to ten minutes after `t0` (a code lives five). */
const expiries = fc.option(fc.integer({ min: 1, max: 600_000 }), { nil: null })

const response = (status: number | null): Response => ({
  status,
  body: null,
  error:
    status !== null && status < 300 && status >= 200
      ? null
      : status === null
        ? "timed out"
        : `HTTP ${status}`,
  durationMs: 1
})
const succeeding = fc.integer({ min: 200, max: 299 }).map(response)
const failing = fc
  .oneof(fc.constant(null), fc.integer({ min: 100, max: 199 }), fc.integer({ min: 300, max: 599 }))
  .map(response)

const limitsOf = (expiresIn: number | null): Notice.Limits => ({
  expiresAt: expiresIn === null ? null : at(expiresIn),
  giveUpAt: Notice.giveUpAt(t0)
})

describe("Notice schedule", () => {
  it("waits 5 s, 15 s, 30 s, 1, 2, 5, 10, 30 min, then hourly; gives up a day after the notice", () => {
    const waits = [5, 15, 30, 60, 120, 300, 600, 1_800, 3_600, 3_600, 3_600]
    expect(waits.map((_, i) => Duration.toSeconds(Notice.delayAfter(i + 1)))).toEqual(waits)
    expect(ms(Notice.giveUpAt(t0)) - ms(t0)).toBe(day)
  })

  it("never shortens the wait as attempts go on, and never waits more than an hour", () => {
    fc.assert(
      fc.property(attempts, (attempt) => {
        const wait = Duration.toMillis(Notice.delayAfter(attempt))
        expect(Duration.toMillis(Notice.delayAfter(attempt + 1))).toBeGreaterThanOrEqual(wait)
        expect(wait).toBeGreaterThan(0)
        expect(wait).toBeLessThanOrEqual(3_600_000)
      })
    )
  })
})

describe("Notice.afterFailure", () => {
  it("retries exactly when the next try comes before the expiry and not after the give-up time", () => {
    fc.assert(
      fc.property(attempts, elapsed, expiries, (attempt, since, expiresIn) => {
        const limits = limitsOf(expiresIn)
        const next = ms(at(since)) + Duration.toMillis(Notice.delayAfter(attempt))
        const after = Notice.afterFailure(attempt, at(since), limits)
        const beforeExpiry = limits.expiresAt === null || next < ms(limits.expiresAt)
        const withinWindow = next <= ms(limits.giveUpAt)
        expect(after._tag === "Retry").toBe(beforeExpiry && withinWindow)
        if (after._tag === "Retry") expect(ms(after.at)).toBe(next)
        // Expiry wins over giving up: a code is dropped, not failed.
        expect(after._tag === "Expired").toBe(!beforeExpiry)
        expect(after._tag === "GaveUp").toBe(beforeExpiry && !withinWindow)
      })
    )
  })

  it("never schedules a code at or after its expiry", () => {
    fc.assert(
      fc.property(attempts, elapsed, fc.integer({ min: 1, max: 600_000 }), (attempt, since, expiresIn) => {
        const after = Notice.afterFailure(attempt, at(since), limitsOf(expiresIn))
        if (after._tag === "Retry") expect(ms(after.at)).toBeLessThan(ms(at(expiresIn)))
      })
    )
  })
})

describe("Notice.sendable", () => {
  it("is true exactly before the expiry, and always without one", () => {
    fc.assert(
      fc.property(elapsed, expiries, (since, expiresIn) => {
        expect(Notice.sendable(limitsOf(expiresIn), at(since))).toBe(expiresIn === null || since < expiresIn)
      })
    )
  })
})

describe("Notice.verdict", () => {
  it("delivers on any 2xx, whenever it arrives, with nothing after", () => {
    fc.assert(
      fc.property(succeeding, attempts, elapsed, expiries, (r, attempt, since, expiresIn) => {
        expect(Notice.verdict({ ...limitsOf(expiresIn), attempt }, r, at(since))).toEqual({
          result: "delivered",
          next: null
        })
      })
    )
  })

  // The property below meets a give-up only in some runs (no expiry and a failure late in the day).
  it("gives up on a failure whose next try would come after the give-up time", () => {
    const limits = limitsOf(null)
    expect(Notice.verdict({ ...limits, attempt: 40 }, response(500), at(day))).toEqual({
      result: "gave_up",
      next: null
    })
  })

  it("on anything else follows afterFailure: failed with the retry's time, else expired or gave_up", () => {
    fc.assert(
      fc.property(failing, attempts, elapsed, expiries, (r, attempt, since, expiresIn) => {
        const limits = limitsOf(expiresIn)
        const verdict = Notice.verdict({ ...limits, attempt }, r, at(since))
        const after = Notice.afterFailure(attempt, at(since), limits)
        expect(verdict.result).toBe(
          after._tag === "Retry" ? "failed" : after._tag === "Expired" ? "expired" : "gave_up"
        )
        expect(verdict.next === null ? null : ms(verdict.next)).toBe(
          after._tag === "Retry" ? ms(after.at) : null
        )
        expect(Notice.Results).toContain(verdict.result)
      })
    )
  })
})

describe("Notice.stored and withPhone", () => {
  const notification: Notification = {
    id: "n1",
    customerId: "c1" as CustomerId,
    environment: "live",
    kind: "one_time_code",
    title: "Your code",
    body: "123456 is your code",
    data: { code: "123456" },
    createdAt: DateTime.unsafeMake("2026-07-01T00:00:01.900Z"),
    expiresAt: DateTime.unsafeMake("2026-07-01T00:05:01.900Z")
  }

  it("stores the document in its order, Unix seconds rounded down, the phone still null", () => {
    expect(Notice.stored(notification)).toBe(
      JSON.stringify({
        id: "n1",
        type: "one_time_code",
        created: 1_782_864_001,
        expires: 1_782_864_301,
        livemode: true,
        customer: { id: "c1", phone: null },
        title: "Your code",
        body: "123456 is your code",
        data: { code: "123456" }
      })
    )
  })

  it("a notice without an expiry has none; a test notice is not livemode", () => {
    const document = JSON.parse(Notice.stored({ ...notification, environment: "test", expiresAt: undefined }))
    expect(document.expires).toBeNull()
    expect(document.livemode).toBe(false)
  })

  it("sends the stored text with the phone, changing nothing else", () => {
    const text = Notice.stored(notification)
    const sent = Notice.withPhone(text, "+9607771234")
    expect(JSON.parse(sent)).toEqual({ ...JSON.parse(text), customer: { id: "c1", phone: "+9607771234" } })
    expect(Notice.withPhone(text, null)).toBe(text)
  })
})
