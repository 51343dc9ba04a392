/**
 * Idempotency records: a key's claim, its stored response and the purge past the retention
 * (`KeyedCommands` runs the protocol over them).
 */
import { Context, type DateTime, type Effect } from "effect"
import type { ServiceUnavailable } from "./Errors.js"
import type { Claiming, Scope, StoredResponse } from "./Idempotency.js"

export interface IdempotencyStoreService extends Claiming {
  /** Stores the response; in the same transaction as the claim and the command. */
  readonly complete: (scope: Scope, response: StoredResponse) => Effect.Effect<void, ServiceUnavailable>
  /** Deletes records older than the retention. */
  readonly purge: (now: DateTime.Utc) => Effect.Effect<number, ServiceUnavailable>
}

export class IdempotencyStore extends Context.Tag("laari/IdempotencyStore")<
  IdempotencyStore,
  IdempotencyStoreService
>() {}
