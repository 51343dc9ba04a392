/**
 * Rate limits: a token bucket per API key on the merchant API (`LAARI_RATE_LIMIT`
 * requests per second, bursts of as many; the REST API and GraphQL spend one bucket) and one per client
 * address on the customer's endpoints (the approvals API and the hosted pages' forms), which take no
 * key. `0` turns both off (an operator whose gateway limits rates), never the lock-outs below.
 *
 * A limited request's response carries the IETF draft headers `RateLimit-Limit`, `RateLimit-Remaining`
 * and `RateLimit-Reset`; over the limit it is a `429` `{ message }` with `Retry-After` as well. The headers
 * are added by a pre-response handler set where the decision is made, so they reach whatever response
 * goes out: the handler's, or the `429` HttpApi encodes from the middleware's failure.
 *
 * Failed guesses at a secret (an OAuth client's, the operator token) lock their address, and an OAuth
 * client, out for a while (`Lockout`): a security control, on whatever the rate limit.
 *
 * Where the buckets are kept is the `RateLimits` port (`Platform/RateLimits`): in this process (`inMemory`,
 * PGlite, one process) or in PostgreSQL, shared by every process and host (`Sql/RateBuckets`), so that
 * `LAARI_PROCESSES=N` or N hosts do not give a key N times the limit. The decisions (`decide`) are the
 * same pure ones for both.
 */
import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Clock, Effect, Layer, Option } from "effect"
import { ServerConfigTag } from "../Platform/Config.js"
import {
  type Decision,
  type Limiter,
  type Lockout,
  RateLimited,
  RateLimits,
  type RateLimitsService
} from "../Platform/RateLimits.js"
import * as Problems from "./Problems.js"

// ---------------------------------------------------------------------------------------------------------
// The bucket: pure decisions over explicit times.

/**
 * Up to `capacity` requests at once (a whole number, at least 1), refilled at `perSecond`: a whole number
 * for request limits; a lock-out may refill slower than one a second, a fraction (1/60: one a minute).
 */
export interface Limit {
  readonly capacity: number
  readonly perSecond: number
}

/** Thousandths of a token: with whole limits and millisecond times every refill is a whole number. */
const Unit = 1000

/** A bucket's level (in thousandths of a token) at `at` (epoch milliseconds). */
export interface Bucket {
  readonly level: number
  readonly at: number
}

/** The level at `now`; a key without a bucket has a full one. A clock that went back refills nothing. */
const levelAt = (limit: Limit, bucket: Bucket | undefined, now: number): number =>
  bucket === undefined
    ? limit.capacity * Unit
    : Math.min(limit.capacity * Unit, bucket.level + Math.max(0, now - bucket.at) * limit.perSecond)

/** Whether the bucket is full at `now`, and so the same as no bucket at all. */
const isFull = (limit: Limit, bucket: Bucket, now: number): boolean =>
  levelAt(limit, bucket, now) === limit.capacity * Unit

/** Whole seconds until the level reaches `target`: whole milliseconds of refill, rounded up to seconds. */
const secondsUntil = (limit: Limit, level: number, target: number): number =>
  level >= target ? 0 : Math.ceil(Math.ceil((target - level) / limit.perSecond) / 1000)

/** Takes a token from the bucket at `now` if it holds one; the decision and the bucket after it. */
export const decide = (
  limit: Limit,
  bucket: Bucket | undefined,
  now: number
): { readonly decision: Decision; readonly bucket: Bucket } => {
  const level = levelAt(limit, bucket, now)
  const allowed = level >= Unit
  const after = allowed ? level - Unit : level
  return {
    decision: {
      allowed,
      limit: limit.capacity,
      remaining: Math.floor(after / Unit),
      retryAfterSeconds: secondsUntil(limit, after, Unit),
      resetSeconds: secondsUntil(limit, after, limit.capacity * Unit)
    },
    bucket: { level: after, at: now }
  }
}

/** The headers of a decision: `RateLimit-*`, and `Retry-After` on a refusal. */
export const headers = (d: Decision): Record<string, string> => ({
  "ratelimit-limit": String(d.limit),
  "ratelimit-remaining": String(d.remaining),
  "ratelimit-reset": String(d.resetSeconds),
  ...(d.allowed ? {} : { "retry-after": String(d.retryAfterSeconds) })
})

export const refusalMessage = (d: Decision): string =>
  `Too many requests; retry after ${d.retryAfterSeconds} seconds`

// ---------------------------------------------------------------------------------------------------------
// The buckets of many keys, bounded.

export interface Buckets {
  readonly take: (key: string, now: number) => Decision
  /** Gives a token back to `key`'s bucket (up to its capacity). */
  readonly give: (key: string, now: number) => void
  /** The decision a take would get, taking nothing. */
  readonly peek: (key: string, now: number) => Decision
  /** How many buckets are kept. */
  readonly size: () => number
}

/**
 * Buckets by key, at most `maxKeys` of them. The map is kept in order of last use; after each take the
 * least recently used buckets are dropped while they are full (a full bucket is the same as none) or
 * while there are more than `maxKeys`. Memory so follows the keys active within a bucket's refill time,
 * and never exceeds `maxKeys` buckets however many keys or addresses call; past that only the least
 * recently used keys lose what they had spent.
 */
export const makeBuckets = (limit: Limit, maxKeys: number): Buckets => {
  const buckets = new Map<string, Bucket>()
  return {
    take: (key, now) => {
      const { decision, bucket } = decide(limit, buckets.get(key), now)
      buckets.delete(key)
      buckets.set(key, bucket)
      for (const [oldest, b] of buckets) {
        if (oldest === key || (buckets.size <= maxKeys && !isFull(limit, b, now))) break
        buckets.delete(oldest)
      }
      return decision
    },
    give: (key, now) => {
      const bucket = buckets.get(key)
      if (bucket !== undefined)
        buckets.set(key, {
          level: Math.min(limit.capacity * Unit, levelAt(limit, bucket, now) + Unit),
          at: now
        })
    },
    peek: (key, now) => decide(limit, buckets.get(key), now).decision,
    size: () => buckets.size
  }
}

// ---------------------------------------------------------------------------------------------------------
// Lock-out after failed guesses.

/** The whole tokens a bucket holds, from the decision a take would get. */
export const tokensLeft = (wouldTake: Decision): number => (wouldTake.allowed ? wouldTake.remaining + 1 : 0)

/** A lock-out (`Lockout`, the port's) in this process's memory, a bucket per key. */
export const makeLockout = (
  limit: Limit,
  maxKeys: number = MaxKeys,
  clock: Clock.Clock = wallClock
): Lockout => {
  const buckets = makeBuckets(limit, maxKeys)
  return {
    attempt: (key) =>
      Effect.map(clock.currentTimeMillis, (now) => {
        const decision = buckets.take(key, now)
        return decision.allowed ? undefined : decision
      }),
    giveBack: (key) => Effect.map(clock.currentTimeMillis, (now) => buckets.give(key, now)),
    remaining: (key) => Effect.map(clock.currentTimeMillis, (now) => tokensLeft(buckets.peek(key, now)))
  }
}

/** What `guarded` ends with: locked out by a decision, or the check's answer. */
export type Guarded<A> =
  | { readonly _tag: "Locked"; readonly decision: Decision }
  | { readonly _tag: "Checked"; readonly value: A | undefined }

/**
 * `check` of a secret under every lock-out of `tries` (a lock-out and its key): a try is taken from each
 * first; the first that refuses gives the others theirs back and ends it `Locked`. A check that finds
 * the secret right (a value), or that could not be made (it fails: no guess was judged), gives every try
 * back; a wrong secret (`undefined`) keeps them.
 */
export const guarded = <A, E, R>(
  tries: ReadonlyArray<readonly [Lockout, string]>,
  check: Effect.Effect<A | undefined, E, R>
): Effect.Effect<Guarded<A>, E, R> =>
  Effect.gen(function* () {
    const taken: Array<readonly [Lockout, string]> = []
    const giveBack = Effect.suspend(() =>
      Effect.forEach(taken, ([lockout, key]) => lockout.giveBack(key), { discard: true })
    )
    for (const [lockout, key] of tries) {
      const refused = yield* lockout.attempt(key)
      if (refused !== undefined) {
        yield* giveBack
        return { _tag: "Locked", decision: refused } as const
      }
      taken.push([lockout, key])
    }
    const value = yield* Effect.onError(check, () => giveBack)
    if (value !== undefined) yield* giveBack
    return { _tag: "Checked", value } as const
  })

/**
 * Failed guesses per client address: 10 at once, then one a second (the 85 guesses a second seen
 * against `/oauth/token` become one). Whatever `LAARI_RATE_LIMIT` says.
 */
export const GuessesPerAddress: Limit = { capacity: 10, perSecond: 1 }

/**
 * Failed guesses per OAuth client from all addresses together: a ceiling on guessing spread over many
 * addresses. One address can never reach it (its own lock comes after 10, and it refills no faster than
 * the ceiling does), so a stranger who knows a `client_id` locks only their own address out, and the
 * client keeps working from its own; only guesses from ten addresses and more lock the client out, for
 * seconds.
 */
export const GuessesPerClient: Limit = { capacity: 100, perSecond: 1 }

/**
 * Failed sign-ins per account (its normalised email, whether an account has it or not): five, then one
 * a minute. Someone who mistypes gets five goes and a short wait; a guesser, 1,440 a day at most, each
 * slowed further by the page (`People/SignInThrottle`). The right password gives its try back.
 */
export const SignInsPerAccount: Limit = { capacity: 5, perSecond: 1 / 60 }

/**
 * Failed sign-ins per client address, whatever the account: twenty (an office behind one address makes
 * some mistakes), then one every half minute, so one address trying many accounts gets few goes at each.
 */
export const SignInsPerAddress: Limit = { capacity: 20, perSecond: 1 / 30 }

// ---------------------------------------------------------------------------------------------------------
// In requests.

const off: Limiter = () => Effect.void

/**
 * Wall time, not the fiber's clock: with `LAARI_CLOCK=manual` the fiber's clock moves only when the
 * operator moves it, and the buckets would never refill.
 */
const wallClock = Clock.make()

/** More keys than any merchant base has; as buckets (a couple of hundred bytes each) ~10 MB at most. */
export const MaxKeys = 50_000

/** The limiter of a way to take a token: sets the decision's headers, and fails over the limit. */
export const limiterOf =
  (take: (key: string) => Effect.Effect<Decision>): Limiter =>
  (key) =>
    Effect.flatMap(take(key), (decision) => {
      const set = HttpApp.appendPreResponseHandler((_request, response) =>
        Effect.succeed(HttpServerResponse.setHeaders(response, headers(decision)))
      )
      return decision.allowed
        ? set
        : Effect.zipRight(set, Effect.fail(new RateLimited({ message: refusalMessage(decision) })))
    })

export const makeLimiter = (
  limit: Limit,
  maxKeys: number = MaxKeys,
  clock: Clock.Clock = wallClock
): Limiter => {
  const buckets = makeBuckets(limit, maxKeys)
  return limiterOf((key) => Effect.map(clock.currentTimeMillis, (now) => buckets.take(key, now)))
}

/** Per API key: `rate` requests per second with bursts of as many (Stripe's shape); `0` is off. */
export const perKey = (rate: number): Limiter => (rate === 0 ? off : makeLimiter(keyLimit(rate)))

/**
 * Per client address on the customer endpoints. A person on the approval page makes a few requests a
 * minute; many share an address behind a carrier's NAT, so the limit leaves room for a crowd and stops
 * only floods: 10 a second, bursts of 20. Guesses at one-time codes are capped by the approvals
 * themselves. Off with the rest when `LAARI_RATE_LIMIT` is `0`.
 */
export const AddressLimit: Limit = { capacity: 20, perSecond: 10 }

export const perAddress = (rate: number): Limiter => (rate === 0 ? off : makeLimiter(AddressLimit))

/** The limit per API key of `LAARI_RATE_LIMIT` = `rate` (not `0`). */
export const keyLimit = (rate: number): Limit => ({ capacity: rate, perSecond: rate })

/** Every limit in this process's memory: right for one process (PGlite); `rate` `0` turns off the rates. */
export const inMemory = (rate: number): RateLimitsService => ({
  perKey: perKey(rate),
  perAddress: perAddress(rate),
  opsGuesses: makeLockout(GuessesPerAddress),
  secretGuessesByAddress: makeLockout(GuessesPerAddress),
  secretGuessesByClient: makeLockout(GuessesPerClient),
  signInByAccount: makeLockout(SignInsPerAccount),
  signInByAddress: makeLockout(SignInsPerAddress)
})

/** `inMemory` at the configured `LAARI_RATE_LIMIT`. */
export const memoryLayer: Layer.Layer<RateLimits, never, ServerConfigTag> = Layer.effect(
  RateLimits,
  Effect.map(ServerConfigTag, (config) => inMemory(config.rateLimit))
)

/**
 * The bucket key of a client address: an IPv4 address (also when mapped into IPv6) as it is, an IPv6
 * address by its /64 network, which one client usually holds whole.
 */
export const addressKey = (address: string): string => {
  const bare = address.split("%")[0]!.toLowerCase()
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/.exec(bare)
  if (mapped !== null) return mapped[1]!
  if (!bare.includes(":")) return bare
  const [head = "", tail] = bare.split("::")
  const front = head === "" ? [] : head.split(":")
  const back = tail === undefined || tail === "" ? [] : tail.split(":")
  const groups =
    tail === undefined
      ? front
      : [...front, ...Array(Math.max(0, 8 - front.length - back.length)).fill("0"), ...back]
  return `${groups
    .slice(0, 4)
    .map((g) => Number.parseInt(g, 16).toString(16))
    .join(":")}::/64`
}

/** The customer endpoints' limit by client address (the socket's; forwarding headers are not trusted). */
export class AddressRateLimit extends HttpApiMiddleware.Tag<AddressRateLimit>()(
  "laari/server/AddressRateLimit",
  {
    failure: Problems.RateLimitedProblem
  }
) {}

export const AddressRateLimitLive = Layer.effect(
  AddressRateLimit,
  Effect.map(RateLimits, (limits) =>
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
      limits.perAddress(addressKey(Option.getOrElse(request.remoteAddress, () => "unknown")))
    )
  )
)
