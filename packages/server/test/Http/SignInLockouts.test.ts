/**
 * The sign-in lock-outs (`RateLimits.signInByAccount`, `signInByAddress`): five failures per account and
 * twenty per address, then one a minute and one every half minute, counted apart from each other and
 * from the secret guesses, a right password's try given back; in this process's memory (PGlite's) and
 * in `rate_buckets` on both backends (the same statements). Then two separate pools on one PostgreSQL
 * database, as two server processes hold them, share one account's count: the sign-in page is not
 * there to drive over HTTP, so the shared buckets are driven through the port. And the page's slowing
 * down before the lock (`SignInThrottle`).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { Context, Duration, Effect, Layer } from "effect"
import * as RateLimit from "../../src/Http/RateLimit.js"
import * as SignInThrottle from "../../src/People/SignInThrottle.js"
import type * as RateLimits from "../../src/Platform/RateLimits.js"
import * as Database from "../../src/Sql/Database.js"
import * as RateBuckets from "../../src/Sql/RateBuckets.js"
import * as TestDatabase from "../support/TestDatabase.js"

/** Failures under `key` until the first refusal: how many got through. */
const triesUntilLocked = (lockout: RateLimits.Lockout, key: string, most = 100) =>
  Effect.gen(function* () {
    for (let i = 0; i < most; i++) if ((yield* lockout.attempt(key)) !== undefined) return i
    return most
  })

/** What every store of the lock-outs must do, `limits` fresh. */
const behaves = (limits: RateLimits.RateLimitsService, unique: string) =>
  Effect.gen(function* () {
    const account = `ana+${unique}@example.mv`
    const address = `198.51.100.${unique.length}`
    expect(yield* limits.signInByAccount.remaining(account)).toBe(5)
    for (let i = 0; i < 5; i++) {
      expect(yield* limits.signInByAccount.attempt(account)).toBeUndefined()
      expect(yield* limits.signInByAccount.remaining(account)).toBe(4 - i)
    }
    const locked = yield* limits.signInByAccount.attempt(account)
    expect(locked?.allowed).toBe(false)
    expect(locked?.limit).toBe(5)
    // One try a minute: the next comes within a minute, not within a second.
    expect(locked?.retryAfterSeconds).toBeGreaterThan(50)
    expect(locked?.retryAfterSeconds).toBeLessThanOrEqual(60)
    expect(yield* limits.signInByAccount.remaining(account)).toBe(0)
    // Another account, the address's count and the secret guesses' are their own.
    expect(yield* limits.signInByAccount.attempt(`other+${account}`)).toBeUndefined()
    expect(yield* limits.opsGuesses.attempt(account)).toBeUndefined()
    expect(yield* limits.signInByAddress.remaining(account)).toBe(20)
    // A right password gives its try back: one more, then locked again.
    yield* limits.signInByAccount.giveBack(account)
    expect(yield* limits.signInByAccount.remaining(account)).toBe(1)
    expect(yield* limits.signInByAccount.attempt(account)).toBeUndefined()
    expect((yield* limits.signInByAccount.attempt(account))?.allowed).toBe(false)

    expect(yield* triesUntilLocked(limits.signInByAddress, address)).toBe(20)
    const byAddress = yield* limits.signInByAddress.attempt(address)
    expect(byAddress?.limit).toBe(20)
    expect(byAddress?.retryAfterSeconds).toBeGreaterThan(20)
    expect(byAddress?.retryAfterSeconds).toBeLessThanOrEqual(30)
    expect(yield* limits.signInByAccount.remaining(address)).toBe(5)
  })

describe("sign-in lock-outs in this process's memory", () => {
  it.effect("five per account, twenty per address, each apart", () =>
    behaves(RateLimit.inMemory(100), "memory")
  )

  it("refill slower than one a second: a fraction of a token a second", () => {
    const limit = RateLimit.SignInsPerAccount
    let bucket: RateLimit.Bucket | undefined
    for (let i = 0; i < 5; i++) bucket = RateLimit.decide(limit, bucket, 0).bucket
    expect(RateLimit.decide(limit, bucket, 59_000).decision.allowed).toBe(false)
    expect(RateLimit.decide(limit, bucket, 60_000).decision.allowed).toBe(true)
    expect(RateLimit.decide(limit, bucket, 120_000).decision.remaining).toBe(1)
    expect(RateLimit.decide(limit, bucket, 30_000).decision.retryAfterSeconds).toBe(30)
  })
})

TestDatabase.eachBackend("sign-in lock-outs in rate_buckets", (it) => {
  it.effect("five per account, twenty per address, each apart", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* behaves(yield* RateBuckets.shared(sql, 100), "sql")
      const rows = yield* sql<{ readonly scope: string; readonly n: number }>`
        SELECT scope, count(*)::int AS n FROM rate_buckets
        WHERE scope LIKE 'sign-in-%' GROUP BY scope ORDER BY scope`
      expect(rows.map((r) => r.scope)).toEqual(["sign-in-account", "sign-in-address"])
    }).pipe(Effect.scoped)
  )

  it.effect("a fractional refill is a whole number of thousandths, and the row is full again after", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const limit = RateLimit.SignInsPerAccount
      const taken = yield* RateBuckets.take(sql, "sign-in-test", "k", limit, 5)
      expect(taken).toEqual({ granted: 5, level: 0 })
      const [row] = yield* sql<{ readonly level: string; readonly full: string; readonly at: string }>`
        SELECT level::text AS level, full_at_ms::text AS full, at_ms::text AS at
        FROM rate_buckets WHERE scope = 'sign-in-test'`
      // Five tokens at one a minute: full five minutes on.
      expect(Number(row!.full) - Number(row!.at)).toBe(300_000)
      yield* sql`UPDATE rate_buckets SET at_ms = at_ms - 90500 WHERE scope = 'sign-in-test'`
      const again = yield* RateBuckets.take(sql, "sign-in-test", "k", limit, 1)
      // 90.5 s at 1/60 a second: 1.508 tokens, one taken, 0.508 (whole thousandths) left.
      expect(again.granted).toBe(1)
      expect(again.level).toBeGreaterThanOrEqual(508)
      expect(again.level).toBeLessThanOrEqual(509)
      yield* RateBuckets.give(sql, "sign-in-test", "k", limit)
      const peeked = yield* RateBuckets.peek(sql, "sign-in-test", "k")
      expect(peeked!.bucket.level).toBeGreaterThanOrEqual(1508)
      expect(peeked!.bucket.level).toBeLessThan(1600)
    })
  )
})

const url = TestDatabase.postgresUrl

describe.skipIf(url === undefined)("sign-in lock-outs from two pools on one PostgreSQL database", () => {
  it.scopedLive(
    "failures at either count once: the account locks after five in all, in both",
    () =>
      Effect.gen(function* () {
        const databaseUrl = yield* TestDatabase.createDatabase(url!)
        yield* Effect.provide(
          Effect.asVoid(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT 1`)),
          Database.layer({ databaseUrl })
        )
        const pool = () =>
          Effect.map(Layer.build(Database.clientLayer({ databaseUrl, maxConnections: 2 })), (c) =>
            Context.get(c, SqlClient.SqlClient)
          )
        const [one, two] = [yield* pool(), yield* pool()]
        expect(one).not.toBe(two)
        const [a, b] = [yield* RateBuckets.shared(one, 100), yield* RateBuckets.shared(two, 100)]
        const account = "owner@example.mv"
        for (let i = 0; i < 5; i++)
          expect(yield* (i % 2 === 0 ? a : b).signInByAccount.attempt(account)).toBeUndefined()
        for (const limits of [a, b]) {
          expect((yield* limits.signInByAccount.attempt(account))?.allowed).toBe(false)
          expect(yield* limits.signInByAccount.remaining(account)).toBe(0)
        }
        // Attempts at once from both, on another account: five get through, never ten.
        const answers = yield* Effect.all(
          Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a : b).signInByAccount.attempt("b@example.mv")),
          { concurrency: 20 }
        )
        expect(answers.filter((d) => d === undefined).length).toBe(5)
        // Twenty per address in all, from both.
        let passed = 0
        for (let i = 0; i < 30; i++)
          if ((yield* (i % 2 === 0 ? a : b).signInByAddress.attempt("203.0.113.7")) === undefined) passed++
        expect(passed).toBe(20)
      }),
    60_000
  )
})

describe("slowed before locked", () => {
  it("no wait for the first two failures, then 1 s, 2 s, 4 s", () => {
    // `remaining` is what the account's lock-out has left after the failure.
    expect([4, 3, 2, 1, 0].map((left) => SignInThrottle.signInDelayMs(left))).toEqual([
      0, 0, 1_000, 2_000, 4_000
    ])
    expect(SignInThrottle.signInDelayMs(5)).toBe(0)
    expect(SignInThrottle.signInDelayMs(-1)).toBe(4_000)
    expect(SignInThrottle.signInDelayMs(7, 10)).toBe(1_000)
    expect(SignInThrottle.signInDelayMs(0, 10)).toBe(4_000)
    expect(Duration.toMillis(SignInThrottle.signInDelay(2))).toBe(1_000)
  })
})
