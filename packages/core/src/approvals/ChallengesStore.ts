/**
 * Approval challenges (one-time codes).
 */
import { Context, type DateTime, Effect } from "effect"
import type { Challenge } from "./Approval.js"
import type { ServiceUnavailable } from "../kernel/Errors.js"
import type { ChallengeId, CustomerId } from "../kernel/Ids.js"
import type { Claim, NextDue } from "../kernel/Storage.js"

export interface ChallengesStoreService {
  /**
   * The secret keying the code hashes. Kept in the database beside the challenges (made once, at the
   * first start) and read where it is used, so every process of a deployment checks codes the same way.
   */
  readonly codeKey: Effect.Effect<Uint8Array, ServiceUnavailable>
  readonly insert: (challenge: Challenge) => Effect.Effect<void, ServiceUnavailable>
  readonly update: (challenge: Challenge) => Effect.Effect<void, ServiceUnavailable>
  /** Locked until the transaction ends, so two guesses cannot both count as the fifth. */
  readonly lock: (id: ChallengeId) => Effect.Effect<Challenge | undefined, ServiceUnavailable>
  /**
   * Holds the customer's lock until the transaction ends: their codes are issued and checked one at a
   * time, so concurrent requests on different subjects cannot together pass the customer's caps.
   */
  readonly lockCustomer: (customerId: CustomerId) => Effect.Effect<void, ServiceUnavailable>
  /** The challenges of the subject or of the customer (each once) created after `since`. */
  readonly recent: (query: {
    readonly subjectKind: Challenge["subjectKind"]
    readonly subjectId: string
    readonly customerId: CustomerId
    readonly since: DateTime.Utc
  }) => Effect.Effect<ReadonlyArray<Challenge>, ServiceUnavailable>
  /** Challenges expired at `now` whose notice is not yet redacted. */
  readonly claimUnredacted: Claim<Challenge>
  /** The earliest `expiresAt` of a challenge whose notice is not yet redacted, if any. */
  readonly nextRedactionAt: NextDue
}
export class ChallengesStore extends Context.Tag("laari/Store/Challenges")<
  ChallengesStore,
  ChallengesStoreService
>() {}
