/**
 * Second-factor approval by the customer: a six-digit one-time code sent to the wallet app, valid for
 * five minutes and five tries. Used by mandate approval and checkout payment. Pure decisions only.
 *
 * Five tries per code alone do not stop online guessing: issuing fresh codes gives fresh tries. So codes
 * issued and wrong guesses are also capped per subject (the mandate or checkout session) and per customer
 * (the phone), over rolling windows, counted from the challenges themselves.
 */
import { DateTime, Either, Schema } from "effect"
import * as Calendar from "../kernel/Calendar.js"
import type { ChallengeId, CustomerId, Environment } from "../kernel/Ids.js"

export const CodeLength = 6
export const LifetimeMinutes = 5
export const MaxAttempts = 5

/**
 * Codes issued in any rolling hour: per subject enough for a customer who lost a few codes; per
 * customer enough for a few approvals in the same hour. Beyond, issuing fresh codes cannot feed guessing.
 */
export const IssueWindowMinutes = 60
export const MaxCodesPerSubject = 5
export const MaxCodesPerCustomer = 10

/**
 * Wrong guesses across all codes in any rolling 24 hours. The per-customer cap bounds an attacker who
 * knows the phone and creates subjects at will: 20 a day is 7,300 guesses a year against 10^6 codes
 * (under 1%), while a customer who mistypes still has two codes' worth of tries per approval.
 */
export const GuessWindowMinutes = 24 * 60
export const MaxWrongGuessesPerSubject = 10
export const MaxWrongGuessesPerCustomer = 20

export const SubjectKind = Schema.Literal("mandate", "checkout", "wallet")
export type SubjectKind = typeof SubjectKind.Type

export interface Challenge {
  readonly id: ChallengeId
  readonly subjectKind: SubjectKind
  readonly subjectId: string
  readonly customerId: CustomerId
  readonly environment: Environment
  /** HMAC-SHA-256 of `challengeId:code` under the server's secret; the code itself is never stored. */
  readonly codeHash: string
  readonly attempts: number
  readonly expiresAt: DateTime.Utc
  readonly usedAt: DateTime.Utc | null
  /** When the wallet notice showing the code had the code removed (once used, locked or expired). */
  readonly redactedAt: DateTime.Utc | null
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
  redactedAt: null,
  createdAt: input.now
})

/** What the code hash covers: the code bound to its challenge, so equal codes hash differently. */
export const hashedText = (id: ChallengeId, code: string): string => `${id}:${code}`

/** The id of the notice carrying a challenge's code, derived so redaction can find it. */
export const noticeId = (id: ChallengeId): string => `code:${id}`

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

// ---------------------------------------------------------------------------------------------------
// Redaction: a code that can no longer approve anything leaves the wallet notice
// ---------------------------------------------------------------------------------------------------

/** Whether the code can no longer approve anything: used, locked or expired. */
export const isSpent = (c: Challenge, now: DateTime.Utc): boolean =>
  c.usedAt !== null || c.attempts >= MaxAttempts || DateTime.greaterThanOrEqualTo(now, c.expiresAt)

/** Whether the notice still shows a code that is spent: it is redacted now. */
export const needsRedaction = (c: Challenge, now: DateTime.Utc): boolean =>
  c.redactedAt === null && isSpent(c, now)

/** The notice's body once its code is gone. */
export const redactedBody = (c: Challenge): string =>
  c.usedAt !== null
    ? "Your code was used."
    : c.attempts >= MaxAttempts
      ? "Your code was locked after too many incorrect tries."
      : "Your code expired unused."

// ---------------------------------------------------------------------------------------------------
// Caps across codes, per subject and per customer
// ---------------------------------------------------------------------------------------------------

export type Limit = "codes" | "guesses"
export type Scope = "subject" | "customer"

/** A refusal by a cap, and when the window frees enough to try again (whole seconds, at least 1). */
export interface Limited {
  readonly limit: Limit
  readonly scope: Scope
  readonly retryAfterSeconds: number
}

/** Wrong guesses on one code: every counted attempt but the one that used it. */
export const wrongGuesses = (c: Challenge): number => c.attempts - (c.usedAt === null ? 0 : 1)

const ofSubject = (c: Challenge, kind: SubjectKind, id: string) =>
  c.subjectKind === kind && c.subjectId === id

/** Inside a rolling window of `minutes` ending at `now`. Guesses count at their code's creation. */
const inWindow = (c: Challenge, minutes: number, now: DateTime.Utc) =>
  DateTime.lessThan(now, Calendar.addMinutes(c.createdAt, minutes))

/**
 * `undefined` while what the window holds weighs less than `cap`; else the limit, with the wait until
 * enough of the oldest challenges have left the window to bring it under the cap.
 */
const capped = (
  limit: Limit,
  scope: Scope,
  window: ReadonlyArray<Challenge>,
  weight: (c: Challenge) => number,
  cap: number,
  minutes: number,
  now: DateTime.Utc
): Limited | undefined => {
  const oldestFirst = [...window].sort(
    (a, b) => DateTime.toEpochMillis(a.createdAt) - DateTime.toEpochMillis(b.createdAt)
  )
  let total = oldestFirst.reduce((n, c) => n + weight(c), 0)
  for (const c of oldestFirst) {
    if (total < cap) break
    total -= weight(c)
    if (total < cap) {
      const leaves = DateTime.toEpochMillis(Calendar.addMinutes(c.createdAt, minutes))
      const seconds = Math.ceil((leaves - DateTime.toEpochMillis(now)) / 1000)
      return { limit, scope, retryAfterSeconds: Math.max(1, seconds) }
    }
  }
  return undefined
}

/** Of several limits reached, the one that frees last: trying earlier would still be refused. */
const latest = (limits: ReadonlyArray<Limited | undefined>): Either.Either<void, Limited> => {
  const reached = limits.filter((l): l is Limited => l !== undefined)
  return reached.length === 0
    ? Either.right(undefined)
    : Either.left(reached.reduce((a, b) => (b.retryAfterSeconds > a.retryAfterSeconds ? b : a)))
}

/**
 * May a new code be issued for the subject to the customer? `recent` holds the challenges of the
 * subject and of the customer (each once) created in the last `IssueWindowMinutes`, or more.
 */
export const decideIssue = (
  recent: ReadonlyArray<Challenge>,
  to: { readonly subjectKind: SubjectKind; readonly subjectId: string; readonly customerId: CustomerId },
  now: DateTime.Utc
): Either.Either<void, Limited> => {
  const window = recent.filter((c) => inWindow(c, IssueWindowMinutes, now))
  const one = () => 1
  return latest([
    capped(
      "codes",
      "subject",
      window.filter((c) => ofSubject(c, to.subjectKind, to.subjectId)),
      one,
      MaxCodesPerSubject,
      IssueWindowMinutes,
      now
    ),
    capped(
      "codes",
      "customer",
      window.filter((c) => c.customerId === to.customerId),
      one,
      MaxCodesPerCustomer,
      IssueWindowMinutes,
      now
    )
  ])
}

/**
 * May a guess on `challenge` be checked at all? Decided before the code is compared, so past a cap even
 * the right code approves nothing. `recent` holds the challenges of its subject and of its customer
 * (each once) created in the last `GuessWindowMinutes`, or more.
 */
export const decideGuess = (
  recent: ReadonlyArray<Challenge>,
  challenge: Challenge,
  now: DateTime.Utc
): Either.Either<void, Limited> => {
  const window = recent.filter((c) => inWindow(c, GuessWindowMinutes, now))
  return latest([
    capped(
      "guesses",
      "subject",
      window.filter((c) => ofSubject(c, challenge.subjectKind, challenge.subjectId)),
      wrongGuesses,
      MaxWrongGuessesPerSubject,
      GuessWindowMinutes,
      now
    ),
    capped(
      "guesses",
      "customer",
      window.filter((c) => c.customerId === challenge.customerId),
      wrongGuesses,
      MaxWrongGuessesPerCustomer,
      GuessWindowMinutes,
      now
    )
  ])
}

const wait = (seconds: number): string => {
  const minutes = Math.ceil(seconds / 60)
  if (minutes < 90) return minutes === 1 ? "1 minute" : `${minutes} minutes`
  return `${Math.ceil(minutes / 60)} hours`
}

export const limitMessage = (l: Limited): string => {
  const whose = l.scope === "subject" ? "for this approval" : "for this phone number"
  const what = l.limit === "codes" ? "Too many codes were requested" : "Too many incorrect codes were entered"
  return `${what} ${whose}; try again in ${wait(l.retryAfterSeconds)}`
}
