/**
 * Storage ports every repository shares: the `Transactor` that makes a command all or nothing, the
 * duplicate-reference refusal and a page of a listing.
 */
import { Context, Effect, Schema } from "effect"
import type { ServiceUnavailable } from "./Errors.js"

export interface TransactorService {
  /**
   * Runs `effect` in one transaction: committed when it succeeds, rolled back when it fails or is
   * interrupted. Nested calls join the outer transaction.
   */
  readonly withTransaction: <A, E, R>(
    effect: Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E | ServiceUnavailable, R>
}

export class Transactor extends Context.Tag("laari/Transactor")<Transactor, TransactorService>() {}

/** A unique constraint refused the write: the merchant already has a resource with that reference. */
export class DuplicateReference extends Schema.TaggedError<DuplicateReference>()("DuplicateReference", {
  reference: Schema.String
}) {}

export interface Page {
  readonly limit: number
  readonly offset: number
}
