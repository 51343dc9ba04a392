/**
 * The `Transactor`, which makes a command all or nothing: every store's writes inside it commit or roll
 * back together.
 */
import { Context, type Effect } from "effect"
import type { ServiceUnavailable } from "./Errors.js"

export interface TransactorService {
  /**
   * Runs `effect` in one transaction: committed when it succeeds, rolled back when it fails or is
   * interrupted. Nested calls join the outer transaction.
   */
  readonly withTransaction: <A, E, R>(
    effect: Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E | ServiceUnavailable, R>
  /**
   * Runs `effect` inside the current transaction as it would run outside one: each transaction it opens
   * (`withTransaction`) is a part of this one that can fail alone (a savepoint), undone when it fails and
   * kept when it succeeds, as its own transaction would have been rolled back or committed; a transaction
   * nested in that one joins it, as ever. What `KeyedCommands` runs a command in, so that a refusal keeps
   * just what the command commits when refused without a key. Outside a transaction, `effect` as it is.
   */
  readonly inParts: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | ServiceUnavailable, R>
}

export class Transactor extends Context.Tag("laari/Transactor")<Transactor, TransactorService>() {}
