/**
 * The approval service: issues one-time codes to a customer's wallet app and checks them, within the caps
 * of `Approval`, and takes spent codes out of the wallet notices.
 */
import { DateTime, Effect, Either, Schema } from "effect"
import * as Approval from "./Approval.js"
import { Crypto, constantTimeEqual } from "../kernel/Crypto.js"
import type { ChallengeId } from "../kernel/Ids.js"
import { ChallengeId as ChallengeIdSchema } from "../kernel/Ids.js"
import { Notifications } from "../kernel/Notifications.js"
import { ChallengesStore } from "./ChallengesStore.js"
import { type Customer } from "../directory/MerchantsStore.js"
import * as Work from "../kernel/Work.js"
import * as Telemetry from "../kernel/Telemetry.js"
import { Transactor } from "../kernel/Transactor.js"

export class ChallengeNotFound extends Schema.TaggedError<ChallengeNotFound>()("ChallengeNotFound", {
  message: Schema.optionalWith(Schema.String, { default: () => "Challenge not found" })
}) {}

export class ApprovalRefused extends Schema.TaggedError<ApprovalRefused>()("ApprovalRefused", {
  reason: Schema.Literal("used", "expired", "locked", "incorrect"),
  message: Schema.String
}) {}

/** A cap across codes was reached (`Approval.decideIssue` / `decideGuess`); try again after the wait. */
export class ApprovalLimited extends Schema.TaggedError<ApprovalLimited>()("ApprovalLimited", {
  limit: Schema.Literal("codes", "guesses"),
  scope: Schema.Literal("subject", "customer"),
  retryAfterSeconds: Schema.Int,
  message: Schema.String
}) {
  static of(l: Approval.Limited): ApprovalLimited {
    return new ApprovalLimited({ ...l, message: Approval.limitMessage(l) })
  }
}

export interface Subject {
  readonly kind: Approval.SubjectKind
  readonly id: string
}

export class Approvals extends Effect.Service<Approvals>()("laari/Approvals", {
  effect: Effect.gen(function* () {
    const tx = yield* Transactor
    const challenges = yield* ChallengesStore
    const notifications = yield* Notifications
    const crypto = yield* Crypto

    const hash = (id: ChallengeId, code: string) =>
      Effect.flatMap(challenges.codeKey, (key) => crypto.hmacSha256(key, Approval.hashedText(id, code)))

    const recent = (subject: Subject, customerId: Customer["id"], minutes: number, now: DateTime.Utc) =>
      challenges.recent({
        subjectKind: subject.kind,
        subjectId: subject.id,
        customerId,
        since: DateTime.subtract(now, { minutes })
      })

    /** Removes the code from the challenge's notice if it is spent; returns the challenge to store. */
    const redactIfSpent = (c: Approval.Challenge, now: DateTime.Utc) =>
      Approval.needsRedaction(c, now)
        ? Effect.as(notifications.redactCode(Approval.noticeId(c.id), Approval.redactedBody(c)), {
            ...c,
            redactedAt: now
          })
        : Effect.succeed(c)

    /**
     * Sends a fresh code to `customer`; `what` says in the notification what it approves. Call inside the
     * transaction that locked the subject: with the customer's lock taken here, the caps hold exactly.
     */
    const issue = Telemetry.fn("Approvals.issue")(function* (
      subject: Subject,
      customer: Customer,
      what: string
    ) {
      const now = yield* DateTime.now
      yield* challenges.lockCustomer(customer.id)
      const seen = yield* recent(subject, customer.id, Approval.IssueWindowMinutes, now)
      const allowed = Approval.decideIssue(
        seen,
        { subjectKind: subject.kind, subjectId: subject.id, customerId: customer.id },
        now
      )
      if (Either.isLeft(allowed)) return yield* ApprovalLimited.of(allowed.left)
      const id = ChallengeIdSchema.make(yield* crypto.uuid)
      const code = yield* crypto.digits(Approval.CodeLength)
      const challenge = Approval.issue({
        id,
        subjectKind: subject.kind,
        subjectId: subject.id,
        customerId: customer.id,
        environment: customer.environment,
        codeHash: yield* hash(id, code),
        now
      })
      yield* challenges.insert(challenge)
      yield* notifications.send({
        id: Approval.noticeId(id),
        customerId: customer.id,
        environment: customer.environment,
        kind: "one_time_code",
        title: "Your laari code",
        body: `${code} is your code to approve ${what}. It expires in ${Approval.LifetimeMinutes} minutes. Never share it.`,
        data: { code, challenge_id: challenge.id, subject_kind: subject.kind, subject_id: subject.id },
        createdAt: now,
        expiresAt: challenge.expiresAt
      })
      return challenge
    })

    /**
     * Checks `code` against the challenge for `subject`. Counts the attempt even when the guess is wrong,
     * so call it inside a transaction that locked the subject and commits in both cases, and fail
     * afterwards on `Left`.
     */
    const verify = Telemetry.fn("Approvals.verify")(function* (
      subject: Subject,
      challengeId: ChallengeId,
      code: string
    ) {
      const challenge = yield* challenges.lock(challengeId)
      if (
        challenge === undefined ||
        challenge.subjectKind !== subject.kind ||
        challenge.subjectId !== subject.id
      )
        return yield* new ChallengeNotFound()
      const now = yield* DateTime.now
      yield* challenges.lockCustomer(challenge.customerId)
      const seen = yield* recent(subject, challenge.customerId, Approval.GuessWindowMinutes, now)
      const allowed = Approval.decideGuess(seen, challenge, now)
      if (Either.isLeft(allowed))
        return Either.left<ApprovalRefused | ApprovalLimited>(ApprovalLimited.of(allowed.left))
      const matches = constantTimeEqual(yield* hash(challenge.id, code), challenge.codeHash)
      const result = Approval.verify(challenge, matches, now)
      const next = yield* redactIfSpent(result.challenge, now)
      if (next !== challenge) yield* challenges.update(next)
      return Either.match(result.outcome, {
        onLeft: (reason) =>
          Either.left<ApprovalRefused | ApprovalLimited>(
            new ApprovalRefused({ reason, message: Approval.refusalMessages[reason] })
          ),
        onRight: () => Either.right(next)
      })
    })

    /** Redacts the notices of codes that expired unused; returns how many. */
    const redactDue = Work.sweep(tx, challenges.claimUnredacted, (c, now) =>
      Effect.flatMap(redactIfSpent(c, now), (next) => challenges.update(next))
    )

    const redactExpired = Telemetry.fn("Approvals.redactExpired")((batch: number = Work.Batch) =>
      redactDue(batch)
    )

    /** Redaction of expired codes as background work, for workers and the manual clock. */
    const redactionJob = Work.job("code-redaction", redactDue, challenges.nextRedactionAt)

    return { issue, verify, redactExpired, redactionJob } as const
  })
}) {}
