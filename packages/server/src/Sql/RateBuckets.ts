/**
 * The rate limits' buckets in PostgreSQL (`rate_buckets`, migration 0017), shared by every process and
 * host on the database: with `LAARI_PROCESSES=N` or N hosts a key still gets the limit once, not N times.
 *
 * - Request limits lease their tokens. A process takes a small batch (`leaseSize`: a tenth of the bucket)
 *   from the key's row in one atomic upsert that refills the row from its level and time by the
 *   database's clock, spends them in memory, and asks again when they are gone. Only the row issues
 *   tokens, so across all processes a burst gets at most the bucket (plus its refill meanwhile); a
 *   lease's unused tokens lapse with it (`LeaseMs`), so what processes hold back is at most one lease
 *   each. One process alone spends every token it leases: it still gets the whole limit. A request
 *   touches the database once per lease; one lease at a time per key and process, the others wait for
 *   it. After a refusal the row cannot have a token before its refill: until then refusals are answered
 *   here without asking.
 * - Lock-outs (failed guesses at secrets) are rare: each attempt takes its token from the row directly,
 *   in the same one statement, before the secret is checked; a right secret gives it back.
 * - Rows of full buckets are the same as none: pruned every minute (`full_at_ms`). The table is
 *   UNLOGGED: counts need no WAL, and a database crash only refills every bucket.
 *
 * When the database does not answer within `Wait` (or fails), the limits fall back for `DownMs` to
 * buckets in this process, as they were before they were shared: never a `500` or a hang, and never no
 * limit, only each process counting on its own while the database is away.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Clock, Context, Deferred, Duration, Effect, Layer, Schedule, type Scope } from "effect"
import { ServerConfigTag } from "../Platform/Config.js"
import * as RateLimit from "../Http/RateLimit.js"
import * as RateLimits from "../Platform/RateLimits.js"

/** How long leased tokens may be spent; then they lapse, unspent. */
export const LeaseMs = 1_000

/** How long a request waits on the database for the limits before it counts in this process instead. */
export const Wait = Duration.seconds(1)

/** How long the limits count in this process after the database failed them, before asking it again. */
export const DownMs = 2_000

/** Thousandths of a token, as `RateLimit.decide` counts. */
const Unit = 1_000

/** Tokens a process leases at once: a tenth of the bucket, at least one. */
export const leaseSize = (limit: RateLimit.Limit): number => Math.max(1, Math.floor(limit.capacity / 10))

const wallClock = Clock.make()

/** The database's clock in epoch milliseconds: one clock for every host. */
const nowMs = "floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint"

/**
 * The thousandths of a token `elapsed` (an SQL expression, milliseconds) refill at `rate` (`perSecond`),
 * whole: a lock-out's rate may be a fraction, whose remainder is dropped (it refills a little slower).
 */
const refill = (sql: SqlClient.SqlClient, elapsed: string, rate: number) =>
  sql.literal(`floor(GREATEST(0, ${elapsed}) * ${Number(rate)}::float8)::bigint`)

interface Taken {
  /** Tokens issued by this take. */
  readonly granted: number
  /** The row's level after it, in thousandths of a token. */
  readonly level: number
}

/**
 * Takes up to `want` tokens from the row of (`scope`, `key`), refilled to the database's now first; a
 * missing row is a full bucket. One statement: concurrent takes queue on the row's lock.
 */
export const take = (
  sql: SqlClient.SqlClient,
  scope: string,
  key: string,
  limit: RateLimit.Limit,
  want: number
): Effect.Effect<Taken, SqlError> => {
  const full = limit.capacity * Unit
  const rate = limit.perSecond
  return Effect.map(
    sql<{ readonly granted: number; readonly level: number }>`
      INSERT INTO rate_buckets AS b (scope, key, level, at_ms, granted, full_at_ms)
      SELECT ${scope}, ${key}, ${full}::bigint - w.g * 1000, t.ms, w.g,
        t.ms + ceil(w.g * 1000 / ${rate}::float8)::bigint
      FROM (SELECT ${sql.literal(nowMs)} AS ms) t,
        (SELECT LEAST(${want}::bigint, ${limit.capacity}::bigint) AS g) w
      ON CONFLICT (scope, key) DO UPDATE SET (level, granted, at_ms, full_at_ms) = (
        SELECT n.level - w.g * 1000, w.g, n.at,
          n.at + ceil((${full}::bigint - n.level + w.g * 1000) / ${rate}::float8)::bigint
        FROM (SELECT LEAST(${full}::bigint, b.level + ${refill(sql, "EXCLUDED.at_ms - b.at_ms", rate)})
                AS level, GREATEST(b.at_ms, EXCLUDED.at_ms) AS at) n,
          LATERAL (SELECT LEAST(${want}::bigint, n.level / 1000) AS g) w)
      RETURNING granted::int AS granted, level::float8 AS level`,
    (rows) => rows[0]!
  )
}

/** The row of (`scope`, `key`) as a bucket, and the database's now; `undefined` without a row (full). */
export const peek = (
  sql: SqlClient.SqlClient,
  scope: string,
  key: string
): Effect.Effect<{ readonly bucket: RateLimit.Bucket; readonly now: number } | undefined, SqlError> =>
  Effect.map(
    sql<{ readonly level: number; readonly at: number; readonly now: number }>`
      SELECT level::float8 AS level, at_ms::float8 AS at, ${sql.literal(nowMs)}::float8 AS now
      FROM rate_buckets WHERE scope = ${scope} AND key = ${key}`,
    (rows) => (rows[0] === undefined ? undefined : { bucket: rows[0], now: rows[0].now })
  )

/**
 * Gives a token back to the row of (`scope`, `key`), refilled to the database's now first, up to the
 * bucket's capacity; no row is a full bucket already.
 */
export const give = (
  sql: SqlClient.SqlClient,
  scope: string,
  key: string,
  limit: RateLimit.Limit
): Effect.Effect<void, SqlError> => {
  const full = limit.capacity * Unit
  const rate = limit.perSecond
  return Effect.asVoid(sql`
    UPDATE rate_buckets AS b SET (level, at_ms, full_at_ms) = (
      SELECT g.level, n.at, n.at + ceil((${full}::bigint - g.level) / ${rate}::float8)::bigint
      FROM (SELECT LEAST(${full}::bigint, b.level + ${refill(sql, `${nowMs} - b.at_ms`, rate)})
              AS level, GREATEST(b.at_ms, ${sql.literal(nowMs)}) AS at) n,
        LATERAL (SELECT LEAST(${full}::bigint, n.level + 1000) AS level) g)
    WHERE b.scope = ${scope} AND b.key = ${key}`)
}

/** Deletes the rows of buckets full again, which are the same as none. */
export const prune = (sql: SqlClient.SqlClient): Effect.Effect<void, SqlError> =>
  Effect.asVoid(sql`DELETE FROM rate_buckets WHERE full_at_ms < ${sql.literal(nowMs)}`)

// ---------------------------------------------------------------------------------------------------------
// Falling back while the database is away.

/** Runs statements for the limits, or their fallback while the database is away. */
export interface Guard {
  readonly run: <A>(statement: Effect.Effect<A, SqlError>, fallback: Effect.Effect<A>) => Effect.Effect<A>
  /** Whether the limits count in this process now. */
  readonly down: () => boolean
}

export const makeGuard = (): Guard => {
  let downUntil = 0
  const fail = (cause: unknown) =>
    Effect.suspend(() => {
      const was = Date.now() < downUntil
      downUntil = Date.now() + DownMs
      return was
        ? Effect.void
        : Effect.logWarning(
            `rate limits: PostgreSQL did not answer; counting in this process for ${DownMs} ms`,
            cause
          )
    })
  return {
    down: () => Date.now() < downUntil,
    run: (statement, fallback) =>
      Effect.suspend(() =>
        Date.now() < downUntil
          ? fallback
          : statement.pipe(
              // Never in a transaction of the request's: a take commits at once, holding its row for
              // one statement, and no rollback gives tokens back.
              Effect.mapInputContext((context: Context.Context<never>) =>
                Context.omit(SqlClient.TransactionConnection)(context)
              ),
              Effect.timeoutFail({
                duration: Wait,
                onTimeout: () => `no answer within ${Duration.format(Wait)}`
              }),
              // Wall time: a manual clock (`LAARI_CLOCK=manual`) never moves by itself.
              Effect.withClock(wallClock),
              Effect.catchAll((cause) => Effect.zipRight(fail(cause), fallback))
            )
      )
  }
}

// ---------------------------------------------------------------------------------------------------------
// Request limits: tokens leased from the shared row, spent here.

/** How a lease ended, told to the requests that waited for it. */
type Outcome = "answered" | "unreachable" | "lost"

/** What this process holds of one key's bucket. */
interface Held {
  /** Leased tokens left. */
  tokens: number
  /** When they lapse (wall milliseconds). */
  expires: number
  /** The row's level after the last lease (thousandths), and when it answered: for the headers. */
  level: number
  at: number
  /** Until then the row has no token to give: refused without asking. */
  refusedUntil: number
  /** The lease under way, if any; `waiting` requests wait for it. */
  leasing: Deferred.Deferred<Outcome> | undefined
  waiting: number
}

/** Whether `held` is the same as nothing held at `now`. */
const idle = (held: Held, now: number) =>
  held.leasing === undefined && (held.tokens === 0 || now >= held.expires) && now >= held.refusedUntil

/** Milliseconds until a row at `level` holds a whole token again. */
const untilToken = (limit: RateLimit.Limit, level: number) =>
  level >= Unit ? 0 : Math.ceil((Unit - level) / limit.perSecond)

/**
 * A request limit over the rows of `scope`, leasing its tokens; while the database is away (`guard`) it
 * counts in buckets of its own.
 */
export const limiter = (
  sql: SqlClient.SqlClient,
  scope: string,
  limit: RateLimit.Limit,
  guard: Guard = makeGuard(),
  maxKeys: number = RateLimit.MaxKeys
): RateLimits.Limiter => {
  const size = leaseSize(limit)
  const fallback = RateLimit.makeBuckets(limit, maxKeys)
  const local = (key: string) => Effect.sync(() => fallback.take(key, Date.now()))
  /** Kept in order of last use; idle keys and those past `maxKeys` are dropped, oldest first. */
  const holding = new Map<string, Held>()

  const heldOf = (key: string, now: number): Held => {
    const held = holding.get(key) ?? {
      tokens: 0,
      expires: 0,
      level: limit.capacity * Unit,
      at: now,
      refusedUntil: 0,
      leasing: undefined,
      waiting: 0
    }
    holding.delete(key)
    holding.set(key, held)
    for (const [oldest, h] of holding) {
      if (oldest === key || (holding.size <= maxKeys && !idle(h, now))) break
      holding.delete(oldest)
    }
    return held
  }

  /** Spends one of the held tokens: the row's level and what is held here make the headers. */
  const spend = (held: Held, now: number) => {
    held.tokens--
    return RateLimit.decide(limit, { level: held.level + (held.tokens + 1) * Unit, at: held.at }, now)
      .decision
  }

  const refuse = (held: Held, now: number) =>
    RateLimit.decide(limit, { level: held.level, at: held.at }, now).decision

  const lease = (key: string, held: Held, started: number) =>
    Effect.flatMap(Deferred.make<Outcome>(), (leasing) => {
      held.leasing = leasing
      const end = (outcome: Outcome) =>
        Effect.suspend(() => {
          if (held.leasing === leasing) held.leasing = undefined
          return Deferred.succeed(leasing, outcome)
        })
      const want = Math.min(limit.capacity, Math.max(size, held.waiting + 1))
      return guard
        .run(
          Effect.map(take(sql, scope, key, limit, want), (taken): Taken | undefined => taken),
          Effect.succeed(undefined)
        )
        .pipe(
          Effect.flatMap((taken) => {
            if (taken === undefined) return Effect.zipRight(end("unreachable"), local(key))
            const now = Date.now()
            held.level = taken.level
            held.at = now
            held.tokens = taken.granted
            // Measured from before the statement, which ran later: never longer than the lease's life, and
            // never a refusal past the row's own refill.
            held.expires = started + LeaseMs
            if (taken.granted === 0) held.refusedUntil = started + untilToken(limit, taken.level)
            return Effect.as(end("answered"), taken.granted === 0 ? refuse(held, now) : spend(held, now))
          }),
          // Interrupted: the requests waiting lease again themselves.
          Effect.ensuring(end("lost"))
        )
    })

  return RateLimit.limiterOf((key) =>
    Effect.gen(function* () {
      for (;;) {
        const now = Date.now()
        if (guard.down()) return fallback.take(key, now)
        const held = heldOf(key, now)
        if (held.tokens > 0 && now < held.expires) return spend(held, now)
        if (now < held.refusedUntil) return refuse(held, now)
        if (held.leasing === undefined) return yield* lease(key, held, now)
        held.waiting++
        const outcome = yield* Deferred.await(held.leasing).pipe(
          Effect.ensuring(Effect.sync(() => held.waiting--))
        )
        if (outcome === "unreachable") return fallback.take(key, Date.now())
      }
    })
  )
}

// ---------------------------------------------------------------------------------------------------------
// Lock-outs: the row itself.

/**
 * A lock-out over the rows of `scope`: an attempt takes its token in one upsert, so attempts at once, in
 * any process, are counted one by one and never all let through; a right secret gives it back.
 */
const sharedLockout = (
  sql: SqlClient.SqlClient,
  guard: Guard,
  scope: string,
  limit: RateLimit.Limit,
  fallback: RateLimits.Lockout
): RateLimits.Lockout => ({
  attempt: (key) =>
    guard.run(
      Effect.map(take(sql, scope, key, limit, 1), (taken) =>
        taken.granted === 1
          ? undefined
          : // The row's level, as of now: what `Retry-After` waits for.
            RateLimit.decide(limit, { level: taken.level, at: 0 }, 0).decision
      ),
      fallback.attempt(key)
    ),
  giveBack: (key) => guard.run(give(sql, scope, key, limit), fallback.giveBack(key)),
  remaining: (key) =>
    guard.run(
      Effect.map(peek(sql, scope, key), (row) =>
        row === undefined
          ? limit.capacity
          : RateLimit.tokensLeft(RateLimit.decide(limit, row.bucket, row.now).decision)
      ),
      fallback.remaining(key)
    )
})

/**
 * Every limit in PostgreSQL, at `LAARI_RATE_LIMIT` = `rate` (`0`: no request limits, the lock-outs all
 * the same); the rows pruned while the scope lasts.
 */
export const shared = (
  sql: SqlClient.SqlClient,
  rate: number
): Effect.Effect<RateLimits.RateLimitsService, never, Scope.Scope> =>
  Effect.gen(function* () {
    const guard = makeGuard()
    yield* prune(sql).pipe(
      Effect.catchAll((e) => Effect.logWarning("rate limits: pruning rate_buckets failed", e)),
      Effect.repeat(Schedule.spaced("1 minute")),
      Effect.delay("1 minute"),
      Effect.withClock(wallClock),
      Effect.forkScoped
    )
    return {
      ...(rate === 0
        ? { perKey: RateLimit.perKey(0), perAddress: RateLimit.perAddress(0) }
        : {
            perKey: limiter(sql, "key", RateLimit.keyLimit(rate), guard),
            perAddress: limiter(sql, "address", RateLimit.AddressLimit, guard)
          }),
      opsGuesses: sharedLockout(
        sql,
        guard,
        "ops-guess",
        RateLimit.GuessesPerAddress,
        RateLimit.makeLockout(RateLimit.GuessesPerAddress)
      ),
      secretGuessesByAddress: sharedLockout(
        sql,
        guard,
        "secret-guess-address",
        RateLimit.GuessesPerAddress,
        RateLimit.makeLockout(RateLimit.GuessesPerAddress)
      ),
      secretGuessesByClient: sharedLockout(
        sql,
        guard,
        "secret-guess-client",
        RateLimit.GuessesPerClient,
        RateLimit.makeLockout(RateLimit.GuessesPerClient)
      ),
      signInByAccount: sharedLockout(
        sql,
        guard,
        "sign-in-account",
        RateLimit.SignInsPerAccount,
        RateLimit.makeLockout(RateLimit.SignInsPerAccount)
      ),
      signInByAddress: sharedLockout(
        sql,
        guard,
        "sign-in-address",
        RateLimit.SignInsPerAddress,
        RateLimit.makeLockout(RateLimit.SignInsPerAddress)
      )
    }
  })

/** The limits shared in PostgreSQL with `DATABASE_URL`; in this process's memory on PGlite. */
export const layer: Layer.Layer<RateLimits.RateLimits, never, SqlClient.SqlClient | ServerConfigTag> =
  Layer.scoped(
    RateLimits.RateLimits,
    Effect.gen(function* () {
      const config = yield* ServerConfigTag
      if (config.databaseUrl === undefined) return RateLimit.inMemory(config.rateLimit)
      return yield* shared(yield* SqlClient.SqlClient, config.rateLimit)
    })
  )
