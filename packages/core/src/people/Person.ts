/**
 * People who sign in: accounts, their memberships of merchants' teams, invitations, and sessions, with
 * the pure rules that decide on them (an invitation's life, a session's expiry, the stage a sign-in has
 * reached, a TOTP step used once). What is stored is `PeopleStore`'s; what runs them, `People`.
 */
import { DateTime, Schema } from "effect"
import type { Environment, MerchantId } from "../kernel/Ids.js"
import { brandedUuid } from "../kernel/Ids.js"
import type { MerchantRole, OperatorRole } from "./Role.js"

export const UserId = brandedUuid("UserId", "The person's account id (a UUID)")
export type UserId = typeof UserId.Type

/** An email address as accounts are keyed: trimmed and lower-cased. */
export const normalEmail = (email: string): string => email.trim().toLowerCase()

/** A usable address: one `@`, a dot in the domain, no spaces, at most 254 characters. */
export const isEmail = (email: string): boolean =>
  email.length <= 254 && /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)

export interface User {
  readonly id: UserId
  readonly email: string
  /** Set on an account made with a one-time password (the seeded owner, `laari users create`). */
  readonly mustChangePassword: boolean
  /** Whether a TOTP authenticator is enrolled. */
  readonly twoFactor: boolean
  /** The provider's staff: their role in the operator console; `null` for merchants' people. */
  readonly operatorRole: OperatorRole | null
  readonly createdAt: DateTime.Utc
}

export interface Membership {
  readonly userId: UserId
  readonly merchantId: MerchantId
  readonly role: MerchantRole
  readonly createdAt: DateTime.Utc
}

/** A membership as the team page shows it. */
export interface Member extends Membership {
  readonly email: string
  readonly twoFactor: boolean
}

/** An invitation's link is good for this long, and once. */
export const InvitationHours = 72

export interface Invitation {
  readonly id: string
  readonly merchantId: MerchantId
  readonly email: string
  readonly role: MerchantRole
  readonly invitedBy: UserId | null
  readonly createdAt: DateTime.Utc
  readonly expiresAt: DateTime.Utc
  readonly acceptedAt: DateTime.Utc | null
  readonly revokedAt: DateTime.Utc | null
}

export type InvitationState = "pending" | "accepted" | "revoked" | "expired"

export const invitationState = (invitation: Invitation, now: DateTime.Utc): InvitationState =>
  invitation.acceptedAt !== null
    ? "accepted"
    : invitation.revokedAt !== null
      ? "revoked"
      : DateTime.greaterThanOrEqualTo(now, invitation.expiresAt)
        ? "expired"
        : "pending"

/**
 * How far a sign-in has got: a session opens the dashboard only at `full`. Before, it opens only the step
 * it is at: a new password (a one-time password must be changed), enrolling an authenticator (owners and
 * admins must have one), or the code of the one enrolled.
 */
export type Stage = "change_password" | "enrol" | "two_factor" | "full"

/** Where a sign-in goes once the password was right. */
export const stageAfterPassword = (user: User, twoFactorRequired: boolean): Stage =>
  user.mustChangePassword
    ? "change_password"
    : user.twoFactor
      ? "two_factor"
      : twoFactorRequired
        ? "enrol"
        : "full"

/** Signed out after 30 minutes without a request. */
export const IdleSeconds = 30 * 60
/** Signed out 12 hours after signing in, however busy. */
export const AbsoluteSeconds = 12 * 60 * 60

/** Where a person is signed in: the dashboard, or the operator console. */
export type Console = "dashboard" | "ops"

export interface Session {
  /** The session's public id (listing, revoking); never the cookie's token, which is stored only hashed. */
  readonly id: string
  readonly userId: UserId
  readonly console: Console
  readonly stage: Stage
  /** The merchant the dashboard shows, and its environment; `null` in the operator console. */
  readonly merchantId: MerchantId | null
  readonly environment: Environment
  /** The first sign-in this session continues (kept across a new session id at a privilege change). */
  readonly signedInAt: DateTime.Utc
  readonly lastSeenAt: DateTime.Utc
  readonly address: string | null
  readonly userAgent: string | null
}

/** Whether `session` is still open at `now`: within the idle and the absolute limits. */
export const isLive = (session: Session, now: DateTime.Utc): boolean => {
  const at = DateTime.toEpochMillis(now)
  return (
    at - DateTime.toEpochMillis(session.lastSeenAt) < IdleSeconds * 1000 &&
    at - DateTime.toEpochMillis(session.signedInAt) < AbsoluteSeconds * 1000
  )
}

/** TOTP steps are 30 seconds; a code of the step before or after is accepted for clock drift. */
export const TotpStepSeconds = 30

/** A code's step is accepted once: only a step after the last one used. */
export const acceptsStep = (lastStep: number | null, step: number): boolean =>
  lastStep === null || step > lastStep

/** How many single-use recovery codes an enrolment gives. */
export const RecoveryCodeCount = 10

/** The one answer to a wrong email, password or code: it must not tell whether the account exists. */
export const SignInMessage = "That email, password or code is not right."

export class SignInRefused extends Schema.TaggedError<SignInRefused>()("SignInRefused", {
  message: Schema.String
}) {
  static generic(): SignInRefused {
    return new SignInRefused({ message: SignInMessage })
  }
}

/** A team change the rules forbid (the last owner removed, an admin making an owner). */
export class TeamRuleBroken extends Schema.TaggedError<TeamRuleBroken>()("TeamRuleBroken", {
  message: Schema.String
}) {}

/** No such member, invitation or session here (another merchant's is the same as none). */
export class PersonNotFound extends Schema.TaggedError<PersonNotFound>()("PersonNotFound", {
  message: Schema.String
}) {}
