/**
 * Every rate limit and lock-out of the service, wherever their buckets are kept: the port through which
 * the edge, the pages, OAuth and GraphQL take a token without naming the store. In this process
 * (`Http/RateLimit.memoryLayer`: PGlite, one process) or in PostgreSQL, shared by every process and host
 * (`Sql/RateBuckets`), so that `LAARI_PROCESSES=N` or N hosts do not give a key N times the limit.
 */
import { Context, type Effect, Schema } from "effect"

/** What a bucket answered a take. */
export interface Decision {
  readonly allowed: boolean
  /** The bucket's capacity (`RateLimit-Limit`). */
  readonly limit: number
  /** Whole requests left after this one (`RateLimit-Remaining`). */
  readonly remaining: number
  /** Seconds, rounded up, until the next request would be allowed: `0` if now, at least 1 on a refusal. */
  readonly retryAfterSeconds: number
  /** Seconds, rounded up, until the bucket is full again (`RateLimit-Reset`). */
  readonly resetSeconds: number
}

/** `429` past a rate limit; the `Retry-After` and `RateLimit-*` headers are set by the limiter. */
export class RateLimited extends Schema.TaggedError<RateLimited>()("RateLimited", {
  message: Schema.String
}) {}

/** Takes a token for a key in the current request: sets its headers, and fails over the limit. */
export type Limiter = (key: string) => Effect.Effect<void, RateLimited>

/**
 * Failed guesses at a secret (an OAuth client's secret, the operator token) by key: while the key's
 * bucket is empty every attempt under it is refused, the right secret too, until it refills. An attempt
 * takes its token before the secret is checked, in one step (one statement on PostgreSQL), so guesses
 * sent at once cannot all pass a check made before any of them failed; a right secret gives it back.
 * Only failures count so, as with one-time codes: a client that knows its secret is never slowed down
 * by its own traffic.
 */
export interface Lockout {
  /** Takes a try under `key`: `undefined` when it may go ahead, the refusal's decision while locked out. */
  readonly attempt: (key: string) => Effect.Effect<Decision | undefined>
  /** Gives back the try an `attempt` took: the secret was right, or the attempt was refused elsewhere. */
  readonly giveBack: (key: string) => Effect.Effect<void>
  /** The whole tries left under `key` now, taking none (a sign-in page slows down as they run out). */
  readonly remaining: (key: string) => Effect.Effect<number>
}

export interface RateLimitsService {
  /** The merchant API by API key (or OAuth client), REST and GraphQL alike. */
  readonly perKey: Limiter
  /** The customer endpoints by client address: the approvals API and the hosted pages' forms. */
  readonly perAddress: Limiter
  /** Wrong operator tokens (`/ops`, `/metrics`) by client address. */
  readonly opsGuesses: Lockout
  /** Wrong OAuth client secrets by client address. */
  readonly secretGuessesByAddress: Lockout
  /** Wrong OAuth client secrets by client id (`client:<id>`), from any address. */
  readonly secretGuessesByClient: Lockout
  /** Failed sign-ins (dashboard and operator console) by account: the normalised email, known or not. */
  readonly signInByAccount: Lockout
  /** Failed sign-ins by client address (`addressKey`), whatever the account. */
  readonly signInByAddress: Lockout
}

export class RateLimits extends Context.Tag("laari/server/RateLimits")<RateLimits, RateLimitsService>() {}
