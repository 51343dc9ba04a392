/**
 * Idempotency keys: a retry of a create, charge, revoke, deactivate or cancel replays the first response.
 *
 * A key is scoped to (merchant, environment, method, path) and remembered for 72 hours. The first request
 * reserves the key in its own short transaction; the response is stored in the same transaction as the
 * command it answers, so a stored response always describes work that committed. A reservation whose
 * request failed with a 5xx is released; one left by a crash is taken over once it is stale, which is
 * safe because its command cannot have committed without its response.
 */
import { Context, DateTime, type Effect } from "effect"
import type { ServiceUnavailable } from "./Errors.js"
import type { Environment, MerchantId } from "./Ids.js"

export const RetentionHours = 72
/** A reservation this old with no response belongs to a request that died. */
export const StaleAfterSeconds = 60

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
  | { readonly _tag: "InFlight" }
  | { readonly _tag: "Mismatch" }

/** What to do with a request whose key is already recorded as `existing` (`undefined`: not recorded). */
export const decide = (existing: Record | undefined, fingerprint: string, now: DateTime.Utc): Decision => {
  if (existing === undefined || isExpired(existing, now)) return { _tag: "Proceed" }
  if (existing.fingerprint !== fingerprint) return { _tag: "Mismatch" }
  if (existing.response !== null) return { _tag: "Replay", response: existing.response }
  return isStale(existing, now) ? { _tag: "Proceed" } : { _tag: "InFlight" }
}

export const isExpired = (r: Record, now: DateTime.Utc): boolean =>
  DateTime.greaterThanOrEqualTo(now, DateTime.add(r.createdAt, { hours: RetentionHours }))

export const isStale = (r: Record, now: DateTime.Utc): boolean =>
  r.response === null &&
  DateTime.greaterThanOrEqualTo(now, DateTime.add(r.createdAt, { seconds: StaleAfterSeconds }))

export const messages = {
  mismatch: "This Idempotency-Key was already used with a different request",
  inFlight: "A request with this Idempotency-Key is still being processed"
} as const

export interface IdempotencyStoreService {
  /**
   * Reserves `scope` for a new request: returns `undefined` when this call now owns the key, or the
   * record already there (after which `decide` says what to do). Runs in its own transaction.
   */
  readonly reserve: (
    scope: Scope,
    fingerprint: string,
    now: DateTime.Utc
  ) => Effect.Effect<Record | undefined, ServiceUnavailable>
  /**
   * Replaces `previous`, an expired or stale reservation, with a fresh one owned by this call. `false`
   * when another request replaced it first (compare-and-set on `previous.createdAt`).
   */
  readonly takeOver: (
    previous: Record,
    fingerprint: string,
    now: DateTime.Utc
  ) => Effect.Effect<boolean, ServiceUnavailable>
  /** Stores the response; call inside the command's transaction. */
  readonly complete: (scope: Scope, response: StoredResponse) => Effect.Effect<void, ServiceUnavailable>
  /** Forgets a reservation whose request failed, so the client may retry. */
  readonly release: (scope: Scope) => Effect.Effect<void, ServiceUnavailable>
  /** Deletes records older than the retention. */
  readonly purge: (now: DateTime.Utc) => Effect.Effect<number, ServiceUnavailable>
}

export class IdempotencyStore extends Context.Tag("laari/IdempotencyStore")<
  IdempotencyStore,
  IdempotencyStoreService
>() {}
