/**
 * People's accounts, sign-in and teams: the service the dashboard, the operator console, the seed and
 * the CLI call. A session is known by a random token (the cookie's), stored only as its keyed hash; at
 * sign-in, at every step up (password changed, second factor passed) and at a merchant switch the token
 * is replaced, and the old one ends. Every change is in the audit log (`Audit.note`), as the actor the
 * caller runs it under (`Audit.as`).
 *
 * The service's interface; its implementation is `PeopleLive.ts`.
 */
import { Context, type Effect } from "effect"
import type { InvalidRequest, ServiceUnavailable } from "../kernel/Errors.js"
import type { Environment, MerchantId } from "../kernel/Ids.js"
import type {
  Console,
  Invitation,
  Member,
  Membership,
  PersonNotFound,
  Session,
  SignInRefused,
  TeamRuleBroken,
  User,
  UserId
} from "./Person.js"
import type { MerchantRole, OperatorRole } from "./Role.js"

/** A session and the token that opens it: the token goes into a cookie, once, and nowhere else. */
export interface Issued {
  readonly token: string
  readonly session: Session
}

/** What a live session opens: the session, its person, and the teams they belong to. */
export interface Opened {
  readonly session: Session
  readonly user: User
  readonly memberships: ReadonlyArray<Membership>
}

/** An account made for someone with a password to change at first sign-in. */
export interface Created {
  readonly user: User
  /** The one-time password; `undefined` when the email already had an account (it keeps its own). */
  readonly password: string | undefined
}

export interface PeopleService {
  /** Adds `email` to the merchant's team with `role`, making the account (one-time password) if new. */
  readonly createMember: (input: {
    readonly merchantId: MerchantId
    readonly email: string
    readonly role: MerchantRole
  }) => Effect.Effect<Created, InvalidRequest | ServiceUnavailable>
  /** Makes a member of the provider's staff (or gives an account that role), one-time password if new. */
  readonly createOperator: (input: {
    readonly email: string
    readonly role: OperatorRole
  }) => Effect.Effect<Created, InvalidRequest | ServiceUnavailable>

  /**
   * Checks email and password and opens a session at the stage they reach (`stageAfterPassword`): in the
   * dashboard only for a member of some team (the first merchant, test environment), in the operator
   * console only for staff (always two-factor). Every refusal is the same `SignInRefused`.
   */
  readonly signIn: (input: {
    readonly console: Console
    readonly email: string
    readonly password: string
    readonly address: string | null
    readonly userAgent: string | null
  }) => Effect.Effect<Issued, SignInRefused | ServiceUnavailable>
  /** The live session `token` opens (its last-seen time moved to now), or `undefined`. */
  readonly open: (token: string) => Effect.Effect<Opened | undefined, ServiceUnavailable>
  /** Ends the session `token` opens (signing out). */
  readonly signOut: (token: string) => Effect.Effect<void, ServiceUnavailable>

  /**
   * Sets a new password (`Credentials.passwordProblem` first) after checking the current one; ends every
   * other session of the account and replaces this one, at its next stage.
   */
  readonly changePassword: (
    token: string,
    input: { readonly current: string; readonly next: string }
  ) => Effect.Effect<Issued, SignInRefused | InvalidRequest | ServiceUnavailable>
  /** A new TOTP secret for the session's account to enrol: shown with its URI until it is confirmed. */
  readonly beginEnrolment: (
    token: string
  ) => Effect.Effect<{ readonly secret: string; readonly uri: string }, SignInRefused | ServiceUnavailable>
  /**
   * Confirms the secret `beginEnrolment` gave with a code from it: two-factor on, ten recovery codes (shown
   * once, stored hashed), and the session replaced at `full`.
   */
  readonly confirmEnrolment: (
    token: string,
    code: string
  ) => Effect.Effect<
    { readonly issued: Issued; readonly recoveryCodes: ReadonlyArray<string> },
    SignInRefused | ServiceUnavailable
  >
  /** The second factor at `two_factor`: a TOTP code (each step once) or an unused recovery code (used up). */
  readonly verifyTwoFactor: (
    token: string,
    code: string
  ) => Effect.Effect<Issued, SignInRefused | ServiceUnavailable>
  /** Moves the dashboard to another merchant the account belongs to, or another environment: a new session id. */
  readonly switchTo: (
    token: string,
    target: { readonly merchantId: MerchantId; readonly environment: Environment }
  ) => Effect.Effect<Issued, PersonNotFound | ServiceUnavailable>

  /** The account's live sessions, newest first. */
  readonly sessions: (userId: UserId) => Effect.Effect<ReadonlyArray<Session>, ServiceUnavailable>
  /** Ends one of the account's sessions by its public id. */
  readonly endSession: (
    userId: UserId,
    sessionId: string
  ) => Effect.Effect<void, PersonNotFound | ServiceUnavailable>

  /** The merchant's team, owners first, then by email. */
  readonly members: (merchantId: MerchantId) => Effect.Effect<ReadonlyArray<Member>, ServiceUnavailable>
  /**
   * Invites `email` with `role`: the link's token is returned once (and sent through the notification
   * channel, `PeopleNotices`); only an owner may invite an owner.
   */
  readonly invite: (input: {
    readonly merchantId: MerchantId
    readonly email: string
    readonly role: MerchantRole
    readonly by: UserId
    /** The link the token completes, for the notice: `{base}/dashboard/invitations/<token>`. */
    readonly link: (token: string) => string
  }) => Effect.Effect<
    { readonly invitation: Invitation; readonly token: string },
    InvalidRequest | TeamRuleBroken | ServiceUnavailable
  >
  /** The merchant's invitations not yet accepted, newest first, with what became of each. */
  readonly invitations: (
    merchantId: MerchantId
  ) => Effect.Effect<ReadonlyArray<Invitation>, ServiceUnavailable>
  readonly revokeInvitation: (
    merchantId: MerchantId,
    invitationId: string
  ) => Effect.Effect<void, PersonNotFound | ServiceUnavailable>
  /** The pending invitation a link's token names, and whether its email already has an account. */
  readonly invitation: (
    token: string
  ) => Effect.Effect<
    { readonly invitation: Invitation; readonly existing: boolean } | undefined,
    ServiceUnavailable
  >
  /**
   * Accepts the invitation (once, within 72 hours): a new account sets its password here; an existing one
   * proves it with its password. The membership is made; the person then signs in.
   */
  readonly accept: (
    token: string,
    password: string
  ) => Effect.Effect<User, PersonNotFound | SignInRefused | InvalidRequest | ServiceUnavailable>
  /** Changes a member's role: only an owner gives or takes `owner`, and a team keeps at least one owner. */
  readonly setRole: (input: {
    readonly merchantId: MerchantId
    readonly userId: UserId
    readonly role: MerchantRole
    readonly by: UserId
  }) => Effect.Effect<void, PersonNotFound | TeamRuleBroken | ServiceUnavailable>
  /** Takes a member off the team (their sessions on it end); never the last owner. */
  readonly removeMember: (input: {
    readonly merchantId: MerchantId
    readonly userId: UserId
    readonly by: UserId
  }) => Effect.Effect<void, PersonNotFound | TeamRuleBroken | ServiceUnavailable>
}

export class People extends Context.Tag("laari/People")<People, PeopleService>() {}
