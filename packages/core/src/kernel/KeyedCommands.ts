/**
 * A command run once per idempotency key, for every front end that takes one (the API's keyed endpoints,
 * the dashboard's refund form): the transaction, the claim (`Idempotency.run`), the command and the
 * stored answer, so no front end holds the idempotency store or the transactor itself. What a caller
 * stores of its outcome, and how it answers a replay, stays the caller's.
 *
 * A command that fails (a refusal) leaves what it leaves without a key, and the answer stored for it:
 * each transaction it opens is a savepoint of this one (`Transactor.inParts`), so one it fails is undone
 * (a refused refund's row) and one it commits on the way to a refusal stays (a refused charge's event),
 * while the claim and the answer commit.
 */
import { DateTime, Effect, type Either } from "effect"
import type { ServiceUnavailable } from "./Errors.js"
import * as Idempotency from "./Idempotency.js"
import * as Telemetry from "./Telemetry.js"
import { IdempotencyStore } from "./IdempotencyStore.js"
import { Transactor } from "./Transactor.js"

/** What a first run keeps under its key (`response`, replayed to a retry) and gives its caller (`result`). */
export interface Kept<B> {
  readonly response: Idempotency.StoredResponse
  readonly result: B
}

/** How a caller answers each outcome, inside the transaction; a failure rolls it back, the claim included. */
export interface Answers<A, B, E, R> {
  /** After the command ran (its value, or its failure): what to store, and what to return. */
  readonly ran: (value: A) => Effect.Effect<Kept<B>, E, R>
  /** A retry: the first run's stored response, answered again. */
  readonly replayed: (response: Idempotency.StoredResponse) => Effect.Effect<B, E, R>
}

export class KeyedCommands extends Effect.Service<KeyedCommands>()("laari/KeyedCommands", {
  effect: Effect.gen(function* () {
    const store = yield* IdempotencyStore
    const tx = yield* Transactor

    /**
     * Runs `command` once under `scope`'s key, in one transaction with the claim and the stored answer:
     * a duplicate waits for the first run's transaction and replays what it committed, or fails
     * `KeyInFlight` past the store's bounded wait; the same key with another `fingerprint` is `KeyReused`.
     * `ahead` runs first in the transaction (what the command will lock, taken before the key's row).
     * The command's outcome goes to `answers.ran`, a failure with the writes of the transactions it
     * failed undone, so a refusal stored under the key commits without them.
     */
    const once = Telemetry.fn("KeyedCommands.once")(function* <A, E, R, B, E2, R2>(
      request: {
        readonly scope: Idempotency.Scope
        readonly fingerprint: string
        readonly ahead?: Effect.Effect<void> | undefined
      },
      command: Effect.Effect<A, E, R>,
      answers: Answers<Either.Either<A, E | ServiceUnavailable>, B, E2, R2>
    ) {
      // Read before the transaction opens: the claim is dated when the request came, not after a wait for
      // `ahead`'s locks or for the key's row.
      const now = yield* DateTime.now
      return yield* tx.withTransaction(
        Effect.gen(function* () {
          if (request.ahead !== undefined) yield* request.ahead
          const ran = yield* Idempotency.run(
            store,
            request.scope,
            request.fingerprint,
            now,
            Effect.either(tx.inParts(command))
          )
          if (ran._tag === "Replayed") return yield* answers.replayed(ran.response)
          const kept = yield* answers.ran(ran.value)
          yield* store.complete(request.scope, kept.response)
          return kept.result
        })
      )
    })

    /**
     * Replaces the answer stored under `scope`'s key with the one `outcome` comes to: a first run answered
     * before its outcome was known (a payment pending in the wallet provider's core), now known. `outcome`
     * runs in the same transaction, so a settlement and the answer stored for it commit together. The
     * key's row was committed by that first run (the purge takes rows days old), so storing the answer
     * is the write alone, held with the outcome's writes (`complete`): it waits for the row like a
     * duplicate's claim, and past the store's bounded wait the transaction fails, the outcome's writes
     * with it (a settlement the resolver then makes, a retry under the key finding it).
     */
    const rewriteWith = <A, E, R>(
      scope: Idempotency.Scope,
      outcome: Effect.Effect<{ readonly response: Idempotency.StoredResponse; readonly result: A }, E, R>
    ) =>
      tx.withTransaction(
        Effect.gen(function* () {
          const kept = yield* outcome
          yield* store.complete(scope, kept.response)
          return kept.result
        })
      )

    /** `rewriteWith` of an answer already known. */
    const rewrite = (scope: Idempotency.Scope, response: Idempotency.StoredResponse) =>
      rewriteWith(scope, Effect.succeed({ response, result: undefined }))

    return { once, rewrite, rewriteWith } as const
  })
}) {}
