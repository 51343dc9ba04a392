/**
 * Idempotency keys: a retry of a create, charge, revoke, deactivate or cancel replays the first response.
 *
 * A key is scoped to (merchant, environment, method, path) and remembered for 72 hours. The key is
 * claimed, the command run and its response stored in ONE transaction that holds the key's row from the
 * claim to the commit. A duplicate sent while the first is running waits for that row (a bounded wait,
 * then "in flight") and then replays what committed; if the first request rolled back, the duplicate
 * runs instead. No reservation outlives its transaction, so there is nothing to take over and no way for
 * two executions under one key to both commit.
 *
 * `run` is that protocol, written once for every caller (the API's keyed endpoints, the dashboard's refund
 * form); what a caller stores of its outcome, and what it rolls back, stays the caller's.
 */
import { DateTime, Effect, Schema } from "effect"
import type { ServiceUnavailable } from "./Errors.js"
import type { Environment, MerchantId } from "./Ids.js"

export const RetentionHours = 72

export interface Scope {
  readonly merchantId: MerchantId
  readonly environment: Environment
  readonly method: string
  readonly path: string
  readonly key: string
}

export interface StoredResponse {
  readonly status: number
  readonly headers: { readonly [name: string]: string }
  readonly body: string
}

export interface Record {
  readonly scope: Scope
  /** Hash of what was sent, so the same key with another body is caught. */
  readonly fingerprint: string
  readonly response: StoredResponse | null
  readonly createdAt: DateTime.Utc
}

export type Decision =
  | { readonly _tag: "Proceed" }
  | { readonly _tag: "Replay"; readonly response: StoredResponse }
  | { readonly _tag: "Mismatch" }

/**
 * What to do with a request whose key is already recorded as `existing` (`undefined`: not recorded).
 * `existing` is a committed record that the caller's transaction holds. A record without a response can
 * only be one left by an older version of the service, whose command cannot have committed: proceed.
 */
export const decide = (existing: Record | undefined, fingerprint: string, now: DateTime.Utc): Decision => {
  if (existing === undefined || existing.response === null || isExpired(existing, now))
    return { _tag: "Proceed" }
  if (existing.fingerprint !== fingerprint) return { _tag: "Mismatch" }
  return { _tag: "Replay", response: existing.response }
}

export const isExpired = (r: Record, now: DateTime.Utc): boolean =>
  DateTime.greaterThanOrEqualTo(now, DateTime.add(r.createdAt, { hours: RetentionHours }))

export const messages = {
  mismatch: "This Idempotency-Key was already used with a different request",
  inFlight: "A request with this Idempotency-Key is still being processed"
} as const

/** A request with this key is still running (the store's bounded wait passed). */
export class KeyInFlight extends Schema.TaggedError<KeyInFlight>()("IdempotencyKeyInFlight", {
  message: Schema.optionalWith(Schema.String, { default: () => messages.inFlight })
}) {}

/** The key was used with another request, or is not a usable key. */
export class KeyReused extends Schema.TaggedError<KeyReused>()("IdempotencyKeyReused", {
  message: Schema.optionalWith(Schema.String, { default: () => messages.mismatch })
}) {}

/** What claiming a key inside a transaction found. */
export type Claim =
  /** The key was free: this transaction now holds a fresh record (fingerprint, no response). */
  | { readonly _tag: "Claimed" }
  /** A committed record, now held by this transaction until it ends; `decide` says what to do. */
  | { readonly _tag: "Held"; readonly record: Record }
  /** Another transaction still holds the key after the store's bounded wait. */
  | { readonly _tag: "Busy" }

/** What `run` needs of the store (`IdempotencyStore`): a key's claim, and a stale record replaced. */
export interface Claiming {
  /**
   * Call inside the command's transaction, before the command. Takes the key for this transaction, or
   * holds the record already there; waits, within a bound, while another transaction holds the key.
   */
  readonly claim: (
    scope: Scope,
    fingerprint: string,
    now: DateTime.Utc
  ) => Effect.Effect<Claim, ServiceUnavailable>
  /** Replaces a held record that `decide` let this request proceed over (expired, or without a response). */
  readonly replace: (
    scope: Scope,
    fingerprint: string,
    now: DateTime.Utc
  ) => Effect.Effect<void, ServiceUnavailable>
}

/** What a keyed command came to: the response a first run stored, or this run's own value. */
export type Outcome<A> =
  | { readonly _tag: "Replayed"; readonly response: StoredResponse }
  | { readonly _tag: "Ran"; readonly value: A }

/**
 * Runs `command` under `scope`'s key, inside the caller's transaction: the key is claimed; still held
 * by another transaction past the store's bounded wait, `KeyInFlight`; a record already there is
 * replayed, refused under another request (`KeyReused`), or, expired or without a response, replaced
 * before the command runs. Storing the response (`complete`, before the commit) is the caller's: only it
 * knows how its outcome is answered, and which outcomes roll back instead.
 */
export const run = <A, E, R>(
  store: Claiming,
  scope: Scope,
  fingerprint: string,
  now: DateTime.Utc,
  command: Effect.Effect<A, E, R>
): Effect.Effect<Outcome<A>, E | KeyInFlight | KeyReused | ServiceUnavailable, R> =>
  Effect.flatMap(
    store.claim(scope, fingerprint, now),
    (claim): Effect.Effect<Outcome<A>, E | KeyInFlight | KeyReused | ServiceUnavailable, R> => {
      if (claim._tag === "Busy") return Effect.fail(new KeyInFlight())
      const ran = Effect.map(command, (value): Outcome<A> => ({ _tag: "Ran", value }))
      if (claim._tag === "Claimed") return ran
      const decision = decide(claim.record, fingerprint, now)
      if (decision._tag === "Replay") return Effect.succeed({ _tag: "Replayed", response: decision.response })
      if (decision._tag === "Mismatch") return Effect.fail(new KeyReused())
      return Effect.zipRight(store.replace(scope, fingerprint, now), ran)
    }
  )
