/**
 * The approval service: issues one-time codes to a customer's wallet app and checks them.
 */
import { DateTime, Effect, Either, Schema } from "effect"
import * as Approval from "./Approval.js"
import { Crypto, constantTimeEqual } from "./Crypto.js"
import type { ChallengeId } from "./Ids.js"
import { ChallengeId as ChallengeIdSchema } from "./Ids.js"
import { Notifications } from "./Notifications.js"
import { ChallengesStore, type Customer } from "./Store.js"

export class ChallengeNotFound extends Schema.TaggedError<ChallengeNotFound>()("ChallengeNotFound", {
  message: Schema.optionalWith(Schema.String, { default: () => "Challenge not found" })
}) {}

export class ApprovalRefused extends Schema.TaggedError<ApprovalRefused>()("ApprovalRefused", {
  reason: Schema.Literal("used", "expired", "locked", "incorrect"),
  message: Schema.String
}) {}

export interface Subject {
  readonly kind: Approval.SubjectKind
  readonly id: string
}

export class Approvals extends Effect.Service<Approvals>()("laari/Approvals", {
  effect: Effect.gen(function* () {
    const challenges = yield* ChallengesStore
    const notifications = yield* Notifications
    const crypto = yield* Crypto

    /** Sends a fresh code to `customer`; `what` says in the notification what it approves. */
    const issue = (subject: Subject, customer: Customer, what: string) =>
      Effect.gen(function* () {
        const now = yield* DateTime.now
        const code = yield* crypto.digits(Approval.CodeLength)
        const challenge = Approval.issue({
          id: ChallengeIdSchema.make(yield* crypto.uuid),
          subjectKind: subject.kind,
          subjectId: subject.id,
          customerId: customer.id,
          environment: customer.environment,
          codeHash: yield* crypto.sha256(code),
          now
        })
        yield* challenges.insert(challenge)
        yield* notifications.send({
          id: yield* crypto.uuid,
          customerId: customer.id,
          environment: customer.environment,
          kind: "one_time_code",
          title: "Your laari code",
          body: `${code} is your code to approve ${what}. It expires in ${Approval.LifetimeMinutes} minutes. Never share it.`,
          data: { code, challenge_id: challenge.id, subject_kind: subject.kind, subject_id: subject.id },
          createdAt: now
        })
        return challenge
      })

    /**
     * Checks `code` against the challenge for `subject`. Counts the attempt even when the guess is wrong,
     * so call it inside a transaction that commits in both cases and fail afterwards on `Left`.
     */
    const verify = (subject: Subject, challengeId: ChallengeId, code: string) =>
      Effect.gen(function* () {
        const challenge = yield* challenges.lock(challengeId)
        if (
          challenge === undefined ||
          challenge.subjectKind !== subject.kind ||
          challenge.subjectId !== subject.id
        )
          return yield* new ChallengeNotFound()
        const now = yield* DateTime.now
        const matches = constantTimeEqual(yield* crypto.sha256(code), challenge.codeHash)
        const result = Approval.verify(challenge, matches, now)
        if (result.challenge !== challenge) yield* challenges.update(result.challenge)
        return Either.match(result.outcome, {
          onLeft: (reason) =>
            Either.left(new ApprovalRefused({ reason, message: Approval.refusalMessages[reason] })),
          onRight: () => Either.right(result.challenge)
        })
      })

    return { issue, verify } as const
  })
}) {}
