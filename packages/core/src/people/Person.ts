/**
 * People who sign in: accounts, their memberships of merchants' teams, invitations, and sessions, with
 * the pure rules that decide on them (an invitation's life, a session's expiry, the stage a sign-in has
 * reached, a TOTP step used once). What is stored is `PeopleStore`'s; what runs them, `People`.
 */
import { DateTime, Schema } from "effect"
import type { Environment, MerchantId } from "../kernel/Ids.js"
import { brandedUuid } from "../kernel/Ids.js"
import { can, type MerchantRole, type OperatorRole, requiresTwoFactor } from "./Role.js"

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

/** The steps a session before `full` may be at; a `full` session may change its password or enrol again. */
export const mayTake = (stage: Stage, step: Exclude<Stage, "full">): boolean =>
  stage === step || (stage === "full" && step !== "two_factor")

/** Where a session goes once its password was changed: on from `change_password`, else where it was. */
export const stageAfterPasswordChange = (stage: Stage, user: User, twoFactorRequired: boolean): Stage =>
  stage === "change_password" ? stageAfterPassword(user, twoFactorRequired) : stage

/**
 * Whether signing in with these memberships needs a second factor: always in the operator console, and
 * in the dashboard when any of the teams has the person as a role that requires one (a session moves
 * between the teams without signing in again).
 */
export const twoFactorRequired = (console: Console, memberships: ReadonlyArray<Membership>): boolean =>
  console === "ops" || memberships.some((m) => requiresTwoFactor(m.role))

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

/**
 * Why `actor` (their role on the team; `undefined` when not on it) may not invite someone as `role`, or
 * `undefined` when they may: inviting takes `team:manage`, and inviting an owner `ownership:transfer`.
 */
export const invitationProblem = (actor: MerchantRole | undefined, role: MerchantRole): string | undefined =>
  actor === undefined || !can(actor, "team:manage")
    ? "Only a member who manages the team can invite."
    : role === "owner" && !can(actor, "ownership:transfer")
      ? "Only an owner can invite an owner."
      : undefined

/** A team change: a member's new role, or `null` for their removal. */
export interface TeamChange {
  /** The role of who asks (`undefined`: not on the team). */
  readonly actor: MerchantRole | undefined
  /** Whether they change themselves (leaving a team takes no permission). */
  readonly self: boolean
  /** The member's role now. */
  readonly current: MerchantRole
  /** The role they get, or `null` when they leave the team. */
  readonly next: MerchantRole | null
  /** How many owners the team has now. */
  readonly owners: number
}

/**
 * Why the team change may not be made, or `undefined` when it may: it takes `team:manage` (but leaving
 * takes nothing), giving or taking `owner` takes `ownership:transfer`, and a team keeps an owner.
 */
export const teamChangeProblem = (change: TeamChange): string | undefined => {
  const leaving = change.self && change.next === null
  if (change.actor === undefined || (!leaving && !can(change.actor, "team:manage")))
    return "Only a member who manages the team can change it."
  const ownership = change.current === "owner" || change.next === "owner"
  if (ownership && change.current !== change.next && !leaving && !can(change.actor, "ownership:transfer"))
    return "Only an owner can give or take the owner role."
  if (change.current === "owner" && change.next !== "owner" && change.owners <= 1)
    return "A team must keep at least one owner."
  return undefined
}

/** How many owners `team` has. */
export const owners = (team: ReadonlyArray<Pick<Membership, "role">>): number =>
  team.filter((m) => m.role === "owner").length

/**
 * The stage a session moved to another team goes on at: a `full` one needs an authenticator first where
 * the new role requires one and the account has none.
 */
export const stageOnSwitch = (stage: Stage, user: User, role: MerchantRole): Stage =>
  stage === "full" && requiresTwoFactor(role) && !user.twoFactor ? "enrol" : stage

/** A team change the rules forbid (the last owner removed, an admin making an owner). */
export class TeamRuleBroken extends Schema.TaggedError<TeamRuleBroken>()("TeamRuleBroken", {
  message: Schema.String
}) {}

/** No such member, invitation or session here (another merchant's is the same as none). */
export class PersonNotFound extends Schema.TaggedError<PersonNotFound>()("PersonNotFound", {
  message: Schema.String
}) {}
