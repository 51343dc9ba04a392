/**
 * Rate limits and lock-outs shared in PostgreSQL (`Sql/RateBuckets`): two limiters on one
 * database, as two processes have them, spend one bucket between them, and one alone still gets it whole;
 * while the database does not answer they count in their own process, within a bounded wait. Then over
 * HTTP with two real server processes on one database: a burst of one key, or of one client address,
 * spread over both gets the bucket once (in-process buckets would give it twice), and wrong client
 * secrets spread over both lock out after as many guesses as on one. Needs `DATABASE_URL`.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { Auth } from "@laari/core"
import { Context, Duration, Effect, Exit, Layer, Scope } from "effect"
import { afterAll, beforeAll, it as vit } from "vitest"
import * as RateLimit from "../../src/Http/RateLimit.js"
import * as RateLimits from "../../src/Platform/RateLimits.js"
import * as Database from "../../src/Sql/Database.js"
import * as RateBuckets from "../../src/Sql/RateBuckets.js"
import * as F from "../support/Fixtures.js"
import * as FromAddress from "../support/FromAddress.js"
import * as ServerProcess from "../support/ServerProcess.js"
import * as TcpProxy from "../support/TcpProxy.js"
import * as TestDatabase from "../support/TestDatabase.js"
import * as TestServer from "../support/TestServer.js"

const url = TestDatabase.postgresUrl
if (url === undefined)
  console.warn("SharedLimits.pg.test: DATABASE_URL is not set; the shared rate limits are NOT tested")

/** Whether one take of `limiter` for `key` was allowed. */
const allowed = (limiter: RateLimits.Limiter, key: string) =>
  Effect.match(limiter(key), { onFailure: () => false, onSuccess: () => true })

/** Runs `f` and gives its result with the milliseconds it took. */
const timed = <A, E, R>(f: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.timed(f), ([duration, a]) => ({ a, ms: Duration.toMillis(duration) }))

describe.skipIf(url === undefined)("limits shared in PostgreSQL, two limiters on one database", () => {
  const database = Layer.orDie(TestDatabase.postgres(url!))

  /** A bucket that refills slowly, so that what a burst gets hardly depends on how fast it runs. */
  const slow: RateLimit.Limit = { capacity: 50, perSecond: 1 }

  it.scopedLive(
    "a key's bucket is spent once between both: at most capacity plus refill, where each its own would allow twice",
    () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const [a, b] = [RateBuckets.limiter(sql, "test", slow), RateBuckets.limiter(sql, "test", slow)]
        // Turn by turn, so each leases, spends and leases again (leases of 5).
        const { a: count, ms } = yield* timed(
          Effect.reduce(
            Array.from({ length: 150 }, (_, i) => i),
            0,
            (n, i) => Effect.map(allowed(i % 2 === 0 ? a : b, "k1"), (ok) => n + (ok ? 1 : 0))
          )
        )
        // What the two hold back unspent is at most a lease each.
        expect(count).toBeGreaterThanOrEqual(50 - 2 * RateBuckets.leaseSize(slow))
        expect(count, `${count} allowed in ${ms} ms`).toBeLessThanOrEqual(50 + Math.floor(ms / 1000))
      }).pipe(Effect.provide(database)),
    60_000
  )

  it.scopedLive("one limiter alone gets the whole bucket, also from a burst at once", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const a = RateBuckets.limiter(sql, "test", slow)
      const { a: answers, ms } = yield* timed(
        Effect.all(
          Array.from({ length: 80 }, () => allowed(a, "k2")),
          { concurrency: "unbounded" }
        )
      )
      const count = answers.filter(Boolean).length
      expect(count).toBeGreaterThanOrEqual(50)
      expect(count).toBeLessThanOrEqual(50 + Math.floor(ms / 1000))
    }).pipe(Effect.provide(database))
  )

  it.scopedLive("a take commits on its own, also inside a request's transaction that rolls back", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const a = RateBuckets.limiter(sql, "test", { capacity: 1, perSecond: 1 })
      yield* sql
        .withTransaction(Effect.zipRight(allowed(a, "k3"), Effect.fail("rolled back")))
        .pipe(Effect.ignore)
      const rows = yield* sql<{ readonly granted: number }>`
        SELECT granted FROM rate_buckets WHERE scope = 'test' AND key = 'k3'`
      expect(rows).toEqual([{ granted: 1 }])
    }).pipe(Effect.provide(database))
  )

  it.scopedLive(
    "lock-outs: failures counted by either lock the key out in both after the limit's guesses",
    () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const [a, b] = [yield* RateBuckets.shared(sql, 100), yield* RateBuckets.shared(sql, 100)]
        const guesses = RateLimit.GuessesPerAddress.capacity
        for (let i = 0; i < guesses; i++) {
          const lockout = (i % 2 === 0 ? a : b).secretGuessesByAddress
          expect(yield* lockout.attempt("203.0.113.1")).toBeUndefined()
        }
        for (const limits of [a, b]) {
          const locked = yield* limits.secretGuessesByAddress.attempt("203.0.113.1")
          expect(locked?.allowed).toBe(false)
          expect(locked?.retryAfterSeconds).toBeGreaterThanOrEqual(1)
          // Another address, and the operator token's lock-out, are apart.
          expect(yield* limits.secretGuessesByAddress.attempt("203.0.113.2")).toBeUndefined()
          expect(yield* limits.opsGuesses.attempt("203.0.113.1")).toBeUndefined()
        }
        // A try given back (a right secret) is another try, in the other process too.
        yield* a.secretGuessesByAddress.giveBack("203.0.113.1")
        expect(yield* b.secretGuessesByAddress.attempt("203.0.113.1")).toBeUndefined()
        expect((yield* a.secretGuessesByAddress.attempt("203.0.113.1"))?.allowed).toBe(false)
      }).pipe(Effect.provide(database))
  )

  it.scopedLive(
    "lock-outs hold with LAARI_RATE_LIMIT=0, and attempts sent at once from two processes get the limit once",
    () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const [a, b] = [yield* RateBuckets.shared(sql, 0), yield* RateBuckets.shared(sql, 0)]
        // The request limits are off...
        expect(yield* allowed(a.perKey, "off")).toBe(true)
        // ...the guesses are not: 40 at once, half at each process, get 10 tries (and the refill meanwhile).
        const started = Date.now()
        const answers = yield* Effect.all(
          Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? a : b).opsGuesses.attempt("203.0.113.9")),
          { concurrency: 20 }
        )
        const seconds = Math.ceil((Date.now() - started) / 1000)
        const tried = answers.filter((d) => d === undefined).length
        expect(tried).toBeGreaterThanOrEqual(RateLimit.GuessesPerAddress.capacity)
        expect(tried).toBeLessThanOrEqual(RateLimit.GuessesPerAddress.capacity + seconds)
      }).pipe(Effect.provide(database))
  )

  it.scopedLive(
    "while the database does not answer, each limiter counts on its own within the bounded wait, and shares again after",
    () =>
      Effect.gen(function* () {
        const server = new URL(url!)
        const proxy = yield* TcpProxy.make({ host: server.hostname, port: Number(server.port || 5432) })
        const direct = yield* TestDatabase.createDatabase(url!)
        yield* Effect.provide(
          Effect.asVoid(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT 1`)),
          Database.layer({ databaseUrl: direct })
        )
        const proxied = new URL(direct)
        proxied.host = `127.0.0.1:${proxy.port}`
        const context = yield* Layer.build(
          Database.clientLayer({ databaseUrl: proxied.toString(), bounds: { connectTimeout: "1 second" } })
        )
        const sql = Context.get(context, SqlClient.SqlClient)
        const limits = yield* RateBuckets.shared(sql, 10)
        const rows = Effect.provide(
          Effect.flatMap(
            SqlClient.SqlClient,
            (s) => s<{ readonly n: number }>`SELECT count(*)::int AS n FROM rate_buckets`
          ),
          Database.clientLayer({ databaseUrl: direct })
        )
        expect(yield* allowed(limits.perKey, "before")).toBe(true)
        expect((yield* rows)[0]!.n).toBe(1)

        // A network that goes silent: the first take waits at most `Wait`, the next ones not at all.
        yield* proxy.freeze
        const first = yield* timed(allowed(limits.perKey, "frozen"))
        expect(first.a).toBe(true)
        expect(first.ms).toBeLessThan(3_000)
        // Still a limit, this process's: 10 of 15 (and its refill, 10 a second).
        const rest = yield* timed(
          Effect.all(Array.from({ length: 14 }, () => allowed(limits.perKey, "frozen")))
        )
        const kept = rest.a.filter(Boolean).length
        expect(kept).toBeGreaterThanOrEqual(9)
        expect(kept).toBeLessThanOrEqual(9 + Math.floor((10 * rest.ms) / 1000))
        expect(rest.ms).toBeLessThan(500)
        // Lock-outs too, without waiting.
        const guesses = yield* timed(
          Effect.gen(function* () {
            for (let i = 0; i < RateLimit.GuessesPerAddress.capacity; i++)
              yield* limits.opsGuesses.attempt("a")
            return yield* limits.opsGuesses.attempt("a")
          })
        )
        expect(guesses.a?.allowed).toBe(false)
        expect(guesses.ms).toBeLessThan(500)

        // A stopped server is refused at once; back, it is asked again once the fallback's time is up.
        yield* proxy.stop
        expect((yield* timed(allowed(limits.perKey, "stopped"))).ms).toBeLessThan(1_500)
        yield* proxy.start
        yield* Effect.sleep(RateBuckets.DownMs + 100)
        expect(yield* allowed(limits.perKey, "after")).toBe(true)
        expect((yield* rows)[0]!.n).toBe(2)
      }),
    60_000
  )
})

// ---------------------------------------------------------------------------------------------------------
// Two real server processes on one database.

/** One request to `base` from the local address `from` (another client address to the server). */
const call = (
  base: string,
  from: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string
) => FromAddress.request(new URL(base).port, from, method, path, headers, body)

/**
 * `n` requests at once, the i-th by `send(i)`: each answer's status and when it came, in milliseconds
 * from the first send.
 */
const burst = async (n: number, send: (i: number) => Promise<{ readonly status: number }>) => {
  const started = Date.now()
  return Promise.all(
    Array.from({ length: n }, (_, i) => send(i).then((r) => ({ status: r.status, at: Date.now() - started })))
  )
}

/**
 * A fresh bucket's rule over a burst: the k-th allowed answer comes no sooner than the bucket allows k,
 * `capacity` at once and `perSecond` more each second; every answer is the allowed one or a `429`.
 * (In-process buckets would answer `capacity` at each process at once.) How many were allowed.
 */
const expectWithin = (
  answers: ReadonlyArray<{ readonly status: number; readonly at: number }>,
  limit: RateLimit.Limit
) => {
  expect(answers.filter((a) => a.status !== 404 && a.status !== 429)).toEqual([])
  const times = answers
    .filter((a) => a.status === 404)
    .map((a) => a.at)
    .sort((x, y) => x - y)
  for (const [i, at] of times.entries())
    expect(i + 1, `allowed ${i + 1} by ${at} ms: ${JSON.stringify(answers)}`).toBeLessThanOrEqual(
      limit.capacity + Math.floor((limit.perSecond * at) / 1000)
    )
  return times.length
}

const unknownSession = "/checkout/sessions/00000000-0000-4000-8000-000000000000"
const unknownApproval = "/approvals/mandates/00000000-0000-4000-8000-000000000000"

describe.skipIf(url === undefined)("two server processes on one PostgreSQL database", () => {
  /** `LAARI_RATE_LIMIT`: low, so that a burst on a slow machine still outruns the refill. */
  const rate = 1
  const keyLimit = RateLimit.keyLimit(rate)
  let servers: ReadonlyArray<ServerProcess.ServerProcess> = []
  let drop: (() => Promise<void>) | undefined
  const clients = () => servers.map((s) => ({ ...TestServer.client(s.baseUrl), close: async () => {} }))

  beforeAll(async () => {
    const scope = Effect.runSync(Scope.make())
    drop = () => Effect.runPromise(Scope.close(scope, Exit.void))
    const databaseUrl = await Effect.runPromise(Scope.extend(TestDatabase.createDatabase(url!), scope))
    const env = {
      DATABASE_URL: databaseUrl,
      LAARI_OPS_TOKEN: TestServer.OpsToken,
      LAARI_PROCESSES: "1",
      LAARI_RATE_LIMIT: String(rate)
    }
    // One after the other: the second finds the schema migrated.
    const first = await ServerProcess.start({ env })
    servers = [first, await ServerProcess.start({ env })]
  }, 240_000)
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()))
    await drop?.()
  }, 60_000)

  vit(
    "a burst of one key spread over both is allowed the bucket once (plus refill), not once per process",
    async () => {
      const [one, two] = clients()
      const m = await F.merchant(one!)
      const answers = await burst(30, (i) =>
        (i % 2 === 0 ? one! : two!).request("GET", unknownSession, { key: m.test })
      )
      expect(expectWithin(answers, keyLimit)).toBeGreaterThanOrEqual(keyLimit.capacity)
    },
    60_000
  )

  vit(
    "one process alone still gets the whole bucket: leases strand nothing",
    async () => {
      const answers = await burst(30, () => call(servers[0]!.baseUrl, "127.0.0.23", "GET", unknownApproval))
      expect(expectWithin(answers, RateLimit.AddressLimit)).toBeGreaterThanOrEqual(
        RateLimit.AddressLimit.capacity
      )
    },
    60_000
  )

  vit(
    "a burst from one client address at the approvals, spread over both, is allowed the bucket once",
    async () => {
      const answers = await burst(60, (i) =>
        call(servers[i % 2]!.baseUrl, "127.0.0.21", "GET", unknownApproval)
      )
      expect(expectWithin(answers, RateLimit.AddressLimit)).toBeGreaterThanOrEqual(
        RateLimit.AddressLimit.capacity - 2 * RateBuckets.leaseSize(RateLimit.AddressLimit)
      )
    },
    60_000
  )

  vit(
    "wrong client secrets spread over both lock out after as many guesses as on one",
    async () => {
      const [one] = clients()
      const m = await F.merchant(one!)
      const created = await one!.ops("POST", `/ops/merchants/${m.id}/oauth-clients`, {
        environment: "test",
        scopes: Auth.allScopes
      })
      const { client_id, client_secret } = created.body
      const wrong = `${client_secret.slice(0, -4)}0000`
      const form = new URLSearchParams({ grant_type: "client_credentials", client_id, client_secret: wrong })
      const headers = { "content-type": "application/x-www-form-urlencoded" }
      // Turn by turn at each process: a failure counts, a refusal (locked out) does not.
      const started = Date.now()
      const statuses: Array<number> = []
      for (let i = 0; i < 30; i++)
        statuses.push(
          (
            await call(
              servers[i % 2]!.baseUrl,
              "127.0.0.22",
              "POST",
              "/oauth/token",
              headers,
              form.toString()
            )
          ).status
        )
      const seconds = Math.floor((Date.now() - started) / 1000)
      const guesses = RateLimit.GuessesPerAddress
      expect(statuses.filter((s) => s !== 401 && s !== 429)).toEqual([])
      expect(statuses.slice(0, guesses.capacity)).toEqual(Array(guesses.capacity).fill(401))
      // As on one process: 10, and one more a second. Counted apart, the two would take 20 and more.
      expect(statuses.filter((s) => s === 401).length, `${statuses} in ${seconds} s`).toBeLessThanOrEqual(
        guesses.capacity + seconds * guesses.perSecond
      )
    },
    60_000
  )
})
