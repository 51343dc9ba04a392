/**
 * Rate limits: the token bucket as properties over explicit times, the limiter on an
 * injected clock, and over HTTP on embedded PGlite the per-key and per-address limits and their headers.
 * Also here: a publishable key may create checkout sessions and nothing else.
 */
import { HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { describe, it as effect } from "@effect/vitest"
import { Effect, Exit, FiberRef, Option, TestClock } from "effect"
import fc from "fast-check"
import { afterAll, beforeAll, expect, it } from "vitest"
import * as RateLimit from "../../src/Http/RateLimit.js"
import * as RateLimits from "../../src/Platform/RateLimits.js"
import * as F from "../support/Fixtures.js"
import * as TestServer from "../support/TestServer.js"

const T0 = 1_750_000_000_000

const limitArb = fc.record({
  capacity: fc.integer({ min: 1, max: 30 }),
  perSecond: fc.integer({ min: 1, max: 30 })
})
/** Milliseconds between requests: often none (bursts), sometimes long (idle). */
const gapsArb = fc.array(
  fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 300 }), fc.integer({ min: 0, max: 5000 })),
  { minLength: 1, maxLength: 150 }
)

/** The instants of requests `gaps` apart, from `T0`. */
const timesOf = (gaps: ReadonlyArray<number>) => {
  const times: Array<number> = []
  let t = T0
  for (const g of gaps) {
    t += g
    times.push(t)
  }
  return times
}

/** Runs requests at `times` through one bucket; the decisions and the bucket after the last. */
const run = (limit: RateLimit.Limit, times: ReadonlyArray<number>, start?: RateLimit.Bucket) => {
  let bucket = start
  const decisions: Array<RateLimits.Decision> = []
  for (const t of times) {
    const next = RateLimit.decide(limit, bucket, t)
    decisions.push(next.decision)
    bucket = next.bucket
  }
  return { decisions, bucket }
}

/** How many of `n` requests at one instant `t` are allowed, starting from `bucket`. */
const burstAt = (limit: RateLimit.Limit, bucket: RateLimit.Bucket | undefined, t: number, n: number) =>
  run(
    limit,
    Array.from({ length: n }, () => t),
    bucket
  ).decisions.filter((d) => d.allowed).length

/** Takes until refused at `t` (at most capacity + 1 takes); the bucket then. */
const exhaustAt = (limit: RateLimit.Limit, bucket: RateLimit.Bucket | undefined, t: number) => {
  for (;;) {
    const next = RateLimit.decide(limit, bucket, t)
    bucket = next.bucket
    if (!next.decision.allowed) return { decision: next.decision, bucket }
  }
}

describe("the token bucket", () => {
  it("never allows more than capacity + rate × t in any window of t", () => {
    fc.assert(
      fc.property(limitArb, gapsArb, (limit, gaps) => {
        const times = timesOf(gaps)
        const { decisions } = run(limit, times)
        const allowedAt = times.filter((_, i) => decisions[i]!.allowed)
        for (let i = 0; i < allowedAt.length; i++)
          for (let j = i; j < allowedAt.length; j++) {
            // In whole thousandths: (j - i + 1) requests against capacity + perSecond × ms / 1000.
            const window = allowedAt[j]! - allowedAt[i]!
            expect((j - i + 1) * 1000).toBeLessThanOrEqual(limit.capacity * 1000 + limit.perSecond * window)
          }
      })
    )
  })

  it("allows a full burst of capacity at once, and refuses the request beyond it", () => {
    fc.assert(
      fc.property(limitArb, fc.integer({ min: 1, max: 20 }), (limit, extra) => {
        const { decisions } = run(
          limit,
          Array.from({ length: limit.capacity + extra }, () => T0)
        )
        expect(decisions.map((d) => d.allowed)).toEqual([
          ...Array(limit.capacity).fill(true),
          ...Array(extra).fill(false)
        ])
        expect(decisions.map((d) => d.remaining)).toEqual([
          ...Array.from({ length: limit.capacity }, (_, i) => limit.capacity - 1 - i),
          ...Array(extra).fill(0)
        ])
      })
    )
  })

  it("allows every request of traffic that keeps to the rate", () => {
    fc.assert(
      fc.property(
        limitArb,
        fc.array(fc.integer({ min: 0, max: 2000 }), { maxLength: 100 }),
        (limit, slack) => {
          const spacing = Math.ceil(1000 / limit.perSecond)
          const { decisions } = run(limit, timesOf([0, ...slack.map((s) => spacing + s)]))
          expect(decisions.every((d) => d.allowed)).toBe(true)
        }
      )
    )
  })

  it("remaining is exactly how many more requests the same instant allows", () => {
    fc.assert(
      fc.property(limitArb, gapsArb, (limit, gaps) => {
        const times = timesOf(gaps)
        const { decisions, bucket } = run(limit, times)
        const last = decisions.at(-1)!
        expect(burstAt(limit, bucket, times.at(-1)!, limit.capacity + 1)).toBe(last.remaining)
      })
    )
  })

  it("Retry-After is the whole seconds until a request is allowed again, and Reset until the bucket is full", () => {
    fc.assert(
      fc.property(limitArb, gapsArb, (limit, gaps) => {
        const times = timesOf(gaps)
        const t = times.at(-1)!
        const refused = exhaustAt(limit, run(limit, times).bucket, t)
        const { retryAfterSeconds, resetSeconds } = refused.decision
        expect(retryAfterSeconds).toBeGreaterThanOrEqual(1)
        expect(RateLimit.decide(limit, refused.bucket, t + retryAfterSeconds * 1000).decision.allowed).toBe(
          true
        )
        // Rounded up, not more: a second earlier the request is still refused.
        expect(
          RateLimit.decide(limit, refused.bucket, t + (retryAfterSeconds - 1) * 1000).decision.allowed
        ).toBe(false)
        expect(resetSeconds).toBeGreaterThanOrEqual(retryAfterSeconds)
        expect(burstAt(limit, refused.bucket, t + resetSeconds * 1000, limit.capacity + 1)).toBe(
          limit.capacity
        )
        expect(burstAt(limit, refused.bucket, t + (resetSeconds - 1) * 1000, limit.capacity)).toBeLessThan(
          limit.capacity
        )
      })
    )
  })

  it("a clock that goes back refills nothing", () => {
    const limit = { capacity: 2, perSecond: 1 }
    const { bucket } = run(limit, [T0, T0])
    expect(RateLimit.decide(limit, bucket, T0 - 60_000).decision.allowed).toBe(false)
  })

  it("headers: RateLimit-* always, Retry-After only on a refusal", () => {
    const limit = { capacity: 5, perSecond: 5 }
    const { decisions } = run(limit, [T0, T0, T0, T0, T0, T0])
    expect(RateLimit.headers(decisions[0]!)).toEqual({
      "ratelimit-limit": "5",
      "ratelimit-remaining": "4",
      "ratelimit-reset": "1"
    })
    expect(RateLimit.headers(decisions[5]!)).toEqual({
      "ratelimit-limit": "5",
      "ratelimit-remaining": "0",
      "ratelimit-reset": "1",
      "retry-after": "1"
    })
    expect(RateLimit.refusalMessage(decisions[5]!)).toBe("Too many requests; retry after 1 seconds")
  })
})

describe("the buckets of many keys", () => {
  it("decide exactly as one unbounded bucket per key while there is room: dropping full buckets changes nothing", () => {
    fc.assert(
      fc.property(
        // Small buckets, few keys and mostly short gaps, so buckets are often spent when another key calls.
        fc.record({ capacity: fc.integer({ min: 1, max: 5 }), perSecond: fc.integer({ min: 1, max: 5 }) }),
        fc.array(
          fc.record({
            key: fc.integer({ min: 0, max: 4 }),
            gap: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 200 }), fc.integer({ min: 0, max: 3000 }))
          }),
          { maxLength: 200 }
        ),
        (limit, requests) => {
          const buckets = RateLimit.makeBuckets(limit, 5)
          const model = new Map<number, RateLimit.Bucket>()
          let t = T0
          for (const { key, gap } of requests) {
            t += gap
            const expected = RateLimit.decide(limit, model.get(key), t)
            model.set(key, expected.bucket)
            expect(buckets.take(String(key), t)).toEqual(expected.decision)
          }
        }
      )
    )
  })

  it("never keep more than maxKeys, however many keys call", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 20 }),
        fc.array(fc.record({ key: fc.nat(1000), gap: fc.integer({ min: 0, max: 50 }) }), { maxLength: 300 }),
        (maxKeys, requests) => {
          const buckets = RateLimit.makeBuckets({ capacity: 3, perSecond: 1 }, maxKeys)
          let t = T0
          for (const { key, gap } of requests) {
            t += gap
            buckets.take(String(key), t)
            expect(buckets.size()).toBeLessThanOrEqual(maxKeys)
          }
        }
      )
    )
  })

  it("drop idle buckets, and keep those still refilling", () => {
    const buckets = RateLimit.makeBuckets({ capacity: 2, perSecond: 1 }, 100)
    buckets.take("a", T0)
    buckets.take("b", T0)
    buckets.take("b", T0)
    expect(buckets.size()).toBe(2)
    // At T0 + 1 s "a" is full again and dropped; "b" still owes a token and stays, refused at once.
    buckets.take("c", T0 + 1000)
    expect(buckets.size()).toBe(2)
    expect(buckets.take("b", T0 + 1000).remaining).toBe(0)
    expect(buckets.take("b", T0 + 1000).allowed).toBe(false)
    // Long after, everything is full: only the last key's bucket is left.
    buckets.take("d", T0 + 60_000)
    expect(buckets.size()).toBe(1)
  })
})

describe("client addresses", () => {
  it("IPv4 as it is, also mapped into IPv6; IPv6 by its /64 network", () => {
    expect(RateLimit.addressKey("203.0.113.7")).toBe("203.0.113.7")
    expect(RateLimit.addressKey("::ffff:203.0.113.7")).toBe("203.0.113.7")
    expect(RateLimit.addressKey("2001:db8:0:1::1")).toBe("2001:db8:0:1::/64")
    expect(RateLimit.addressKey("2001:DB8:0:1:ffff:1:2:3")).toBe("2001:db8:0:1::/64")
    expect(RateLimit.addressKey("2001:0db8:0000:0001:0000:0000:0000:0009")).toBe("2001:db8:0:1::/64")
    expect(RateLimit.addressKey("2001:db8:0:2::1")).toBe("2001:db8:0:2::/64")
    expect(RateLimit.addressKey("2001:db8::1")).toBe("2001:db8:0:0::/64")
    expect(RateLimit.addressKey("::1")).toBe("0:0:0:0::/64")
    expect(RateLimit.addressKey("fe80::1%eth0")).toBe("fe80:0:0:0::/64")
  })
})

describe("the limiter in a request", () => {
  /** The headers the request's pre-response handlers put on a response. */
  const responseHeaders = Effect.gen(function* () {
    const handler = Option.getOrThrow(yield* FiberRef.get(HttpApp.currentPreResponseHandlers))
    const request = HttpServerRequest.fromWeb(new Request("http://laari.test/"))
    const response = yield* handler(request, HttpServerResponse.empty())
    return response.headers
  })

  effect.effect(
    "fails with RateLimited over the limit, sets the headers, and allows again once refilled",
    () =>
      Effect.gen(function* () {
        const limiter = RateLimit.makeLimiter({ capacity: 2, perSecond: 1 }, 10, yield* Effect.clock)
        expect(Exit.isSuccess(yield* Effect.exit(limiter("k")))).toBe(true)
        expect(Exit.isSuccess(yield* Effect.exit(limiter("k")))).toBe(true)
        const refused = yield* Effect.flip(limiter("k"))
        expect(refused).toBeInstanceOf(RateLimits.RateLimited)
        expect(refused.message).toBe("Too many requests; retry after 1 seconds")
        yield* TestClock.adjust("999 millis")
        expect(Exit.isFailure(yield* Effect.exit(limiter("k")))).toBe(true)
        expect(Exit.isSuccess(yield* Effect.exit(limiter("other")))).toBe(true)
        yield* TestClock.adjust("1 millis")
        expect(Exit.isSuccess(yield* Effect.exit(limiter("k")))).toBe(true)
      })
  )

  effect.effect("the response of a refused request carries Retry-After and RateLimit-*", () =>
    Effect.gen(function* () {
      const limiter = RateLimit.makeLimiter({ capacity: 1, perSecond: 1 }, 10, yield* Effect.clock)
      yield* limiter("k")
      expect(yield* Effect.exit(limiter("k"))).toMatchObject({ _tag: "Failure" })
      expect(yield* responseHeaders).toMatchObject({
        "ratelimit-limit": "1",
        "ratelimit-remaining": "0",
        "ratelimit-reset": "1",
        "retry-after": "1"
      })
    })
  )

  effect.effect("off (0) limits nothing and sets no headers", () =>
    Effect.gen(function* () {
      const limiter = RateLimit.perKey(0)
      for (let i = 0; i < 1000; i++) yield* limiter("k")
      expect(yield* FiberRef.get(HttpApp.currentPreResponseHandlers)).toEqual(Option.none())
    })
  )
})

// ---------------------------------------------------------------------------------------------------------
// Over HTTP.

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Fires `n` requests at once; the responses and the milliseconds from the first send to the last answer. */
const burst = async (n: number, send: () => Promise<TestServer.Response>) => {
  const started = Date.now()
  const responses = await Promise.all(Array.from({ length: n }, send))
  return { responses, elapsedMs: Date.now() - started }
}

const expectRefusal = (res: TestServer.Response, limit: number) => {
  expect(res.status).toBe(429)
  const retryAfter = Number(res.headers.get("retry-after"))
  expect(Number.isInteger(retryAfter) && retryAfter >= 1).toBe(true)
  expect(res.body).toEqual({
    message: `Too many requests; retry after ${retryAfter} seconds`,
    code: "RATE_LIMITED"
  })
  expect(res.headers.get("ratelimit-limit")).toBe(String(limit))
  expect(res.headers.get("ratelimit-remaining")).toBe("0")
  expect(Number(res.headers.get("ratelimit-reset"))).toBeGreaterThanOrEqual(retryAfter)
  return retryAfter
}

const unknownSession = "/checkout/sessions/00000000-0000-4000-8000-000000000000"
const unknownMandateApproval = "/approvals/mandates/00000000-0000-4000-8000-000000000000"

describe("rate limits over HTTP on embedded PGlite", () => {
  let limited: TestServer.TestServer
  let unlimited: TestServer.TestServer
  beforeAll(async () => {
    ;[limited, unlimited] = await Promise.all([
      TestServer.start({ config: { rateLimit: 5 } }),
      TestServer.start({ config: { rateLimit: 0 } })
    ])
  }, 120_000)
  afterAll(async () => {
    await Promise.all([limited?.close(), unlimited?.close()])
  })

  it("per key: a burst past the limit gets 429 with Retry-After and RateLimit-*; other keys are unaffected; after Retry-After it works again", async () => {
    const m = await F.merchant(limited)
    const other = await F.merchant(limited)
    const secondKey = await m.key("test", ["checkout:write"])
    const get = (key: string) => () => limited.request("GET", unknownSession, { key })

    // A fresh key's bucket is full: the first request leaves 4 of 5.
    const started = Date.now()
    const first = await get(m.test)()
    expect(first.status).toBe(404)
    expect(first.headers.get("ratelimit-limit")).toBe("5")
    expect(first.headers.get("ratelimit-remaining")).toBe("4")
    expect(first.headers.get("ratelimit-reset")).toBe("1")
    expect(first.headers.get("retry-after")).toBeNull()

    const { responses } = await burst(30, get(m.test))
    const elapsedMs = Date.now() - started
    const allowed = responses.filter((r) => r.status !== 429)
    const refused = responses.filter((r) => r.status === 429)
    for (const r of allowed) expect(r.status).toBe(404)
    // The 4 tokens left, and at most 5 a second more from the first request to the last answer.
    expect(allowed.length).toBeGreaterThanOrEqual(4)
    expect((allowed.length + 1) * 1000).toBeLessThanOrEqual(5 * 1000 + 5 * elapsedMs)
    expect(refused.length).toBeGreaterThan(0)
    const retryAfter = Math.max(...refused.map((r) => expectRefusal(r, 5)))

    // Other keys, of the same merchant or another, have buckets of their own.
    for (const key of [secondKey, m.live, other.test]) {
      const res = await get(key)()
      expect(res.status).toBe(404)
      expect(res.headers.get("ratelimit-remaining")).toBe("4")
    }

    // Every decision was made before its answer arrived, and from any level a token comes within
    // 1000 / 5 ms ≤ Retry-After; the few milliseconds more only absorb timer rounding.
    await sleep(retryAfter * 1000 + 20)
    const again = await get(m.test)()
    expect(again.status).toBe(404)
    expect(again.headers.get("ratelimit-limit")).toBe("5")
  })

  it("per key: the operator API is not limited", async () => {
    const { responses } = await burst(20, () => limited.ops("GET", "/ops/clock"))
    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(200))
  })

  it("per address: the customer's approval endpoints are limited (bursts of 20, 10 a second)", async () => {
    const { responses, elapsedMs } = await burst(60, () => limited.request("GET", unknownMandateApproval))
    const allowed = responses.filter((r) => r.status !== 429)
    const refused = responses.filter((r) => r.status === 429)
    for (const r of allowed) {
      expect(r.status).toBe(404)
      expect(r.headers.get("ratelimit-limit")).toBe("20")
    }
    expect(allowed.length).toBeGreaterThanOrEqual(20)
    expect(allowed.length * 1000).toBeLessThanOrEqual(20 * 1000 + 10 * elapsedMs)
    expect(refused.length).toBeGreaterThan(0)
    for (const r of refused) expectRefusal(r, 20)
    // The POST endpoints share the address's bucket, already spent by the burst.
    const posts = await burst(40, () =>
      limited.request("POST", `${unknownMandateApproval}/challenge`, { body: { phone: "+960 7000000" } })
    )
    expect(posts.responses.some((r) => r.status === 429)).toBe(true)

    // The address's budget is not a key's: the merchant API from the same address still answers.
    const m = await F.merchant(limited)
    expect((await limited.request("GET", unknownSession, { key: m.test })).status).toBe(404)
  })

  it("with LAARI_RATE_LIMIT=0 nothing is limited and no RateLimit headers are sent", async () => {
    const m = await F.merchant(unlimited)
    const keyed = await burst(40, () => unlimited.request("GET", unknownSession, { key: m.test }))
    expect(keyed.responses.map((r) => r.status)).toEqual(Array(40).fill(404))
    const approvals = await burst(40, () => unlimited.request("GET", unknownMandateApproval))
    expect(approvals.responses.map((r) => r.status)).toEqual(Array(40).fill(404))
    for (const r of [...keyed.responses, ...approvals.responses]) {
      expect(r.headers.get("ratelimit-limit")).toBeNull()
      expect(r.headers.get("retry-after")).toBeNull()
    }
  })

  it("a publishable key creates checkout sessions, but reading or cancelling one needs a secret key (403)", async () => {
    const m = await F.merchant(unlimited)
    const created = await unlimited.request("POST", "/checkout/sessions", {
      key: m.publishable,
      body: { reference: F.unique("order"), title: "Order", amount: 1000 }
    })
    expect(created.status, created.text).toBe(200)
    const id: string = created.body.id
    const secretNeeded = {
      message: "A publishable key cannot use this endpoint; use a secret key",
      code: "FORBIDDEN"
    }

    const read = await unlimited.request("GET", `/checkout/sessions/${id}`, { key: m.publishable })
    expect(read.status).toBe(403)
    expect(read.body).toEqual(secretNeeded)
    const cancel = await unlimited.request("POST", `/checkout/sessions/${id}/cancel`, { key: m.publishable })
    expect(cancel.status).toBe(403)
    expect(cancel.body).toEqual(secretNeeded)

    // The refused cancel changed nothing; the secret key reads and cancels.
    const bySecret = await unlimited.request("GET", `/checkout/sessions/${id}`, { key: m.test })
    expect(bySecret.status).toBe(200)
    expect(bySecret.body.status).toBe("OPEN")
    const cancelled = await unlimited.request("POST", `/checkout/sessions/${id}/cancel`, { key: m.test })
    expect(cancelled.status, cancelled.text).toBe(200)
    expect(cancelled.body.status).toBe("CANCELLED")
  })
})
