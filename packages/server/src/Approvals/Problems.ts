/**
 * The HTTP answers of the approvals' errors (one-time codes). An endpoint lists the ones it can fail with
 * (`addError`); an error is answered by the schemas its endpoint lists.
 */
import { Approvals } from "@laari/core"
import * as Problem from "../Http/Problem.js"

export const ChallengeNotFound = Problem.plain(
  Approvals.ChallengeNotFound,
  "ChallengeNotFound",
  404,
  "No such approval in progress",
  "CHALLENGE_NOT_FOUND"
)

const approvalRefusal = Problem.perStatus(Approvals.ApprovalRefused, "ApprovalRefused", Problem.byReason)

export const ApprovalRefused = {
  Unprocessable: approvalRefusal(422, "The code is incorrect, used or expired", [
    "INCORRECT",
    "USED",
    "EXPIRED"
  ]),
  Locked: approvalRefusal(429, "Too many incorrect codes for this approval", ["LOCKED"])
}

/** `TOO_MANY_CODES` for one mandate or session, `..._FOR_PHONE` across a phone's approvals. */
export const approvalLimitCode = (e: Pick<Approvals.ApprovalLimited, "limit" | "scope">) =>
  `TOO_MANY_${e.limit === "codes" ? "CODES" : "GUESSES"}${e.scope === "customer" ? "_FOR_PHONE" : ""}`

export const ApprovalLimited = Problem.coded(
  Approvals.ApprovalLimited,
  approvalLimitCode,
  "ApprovalLimited",
  429,
  "Too many codes sent or wrong codes tried for this approval or phone; retry after `Retry-After` seconds",
  ["TOO_MANY_CODES", "TOO_MANY_CODES_FOR_PHONE", "TOO_MANY_GUESSES", "TOO_MANY_GUESSES_FOR_PHONE"]
)
