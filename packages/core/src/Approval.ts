/**
 * Second-factor approval by the customer: a six-digit one-time code sent to the wallet app, valid for
 * five minutes and five tries. Used by mandate approval (and later checkout). Pure decisions only.
 */
import { DateTime, Either, Schema } from "effect"
import * as Calendar from "./Calendar.js"
import type { ChallengeId, CustomerId, Environment } from "./Ids.js"

export const CodeLength = 6
export const LifetimeMinutes = 5
export const MaxAttempts = 5

export const SubjectKind = Schema.Literal("mandate", "checkout")
export type SubjectKind = typeof SubjectKind.Type

export interface Challenge {
  readonly id: ChallengeId
  readonly subjectKind: SubjectKind
  readonly subjectId: string
  readonly customerId: CustomerId
  readonly environment: Environment
  /** SHA-256 of the code; the code itself is never stored. */
  readonly codeHash: string
  readonly attempts: number
  readonly expiresAt: DateTime.Utc
  readonly usedAt: DateTime.Utc | null
  readonly createdAt: DateTime.Utc
}

export const issue = (input: {
  id: ChallengeId
  subjectKind: SubjectKind
  subjectId: string
  customerId: CustomerId
  environment: Environment
  codeHash: string
  now: DateTime.Utc
}): Challenge => ({
  id: input.id,
  subjectKind: input.subjectKind,
  subjectId: input.subjectId,
  customerId: input.customerId,
  environment: input.environment,
  codeHash: input.codeHash,
  attempts: 0,
  expiresAt: Calendar.addMinutes(input.now, LifetimeMinutes),
  usedAt: null,
  createdAt: input.now
})

export type Refusal = "used" | "expired" | "locked" | "incorrect"

export const refusalMessages: Record<Refusal, string> = {
  used: "This code has already been used",
  expired: "This code has expired; request a new one",
  locked: "Too many incorrect codes; request a new one",
  incorrect: "The code is incorrect"
}

/**
 * Checks a guess. Always returns the challenge to store: a wrong guess counts an attempt, a right one
 * uses the challenge up.
 */
export const verify = (
  c: Challenge,
  codeMatches: boolean,
  now: DateTime.Utc
): { readonly challenge: Challenge; readonly outcome: Either.Either<void, Refusal> } => {
  if (c.usedAt !== null) return { challenge: c, outcome: Either.left("used") }
  if (DateTime.greaterThanOrEqualTo(now, c.expiresAt))
    return { challenge: c, outcome: Either.left("expired") }
  if (c.attempts >= MaxAttempts) return { challenge: c, outcome: Either.left("locked") }
  const counted = { ...c, attempts: c.attempts + 1 }
  return codeMatches
    ? { challenge: { ...counted, usedAt: now }, outcome: Either.right(undefined) }
    : { challenge: counted, outcome: Either.left(counted.attempts >= MaxAttempts ? "locked" : "incorrect") }
}
