/**
 * People's storage: accounts (with their password hash and TOTP state), memberships of merchants'
 * teams, invitations and sessions (each known by its token's keyed hash only), and recovery codes (their
 * keyed hashes). What `People` reads and writes, in the transactions it opens.
 *
 * The writes that must happen once however many requests race for them are conditional here (a TOTP
 * step recorded only past the last, a recovery code or an invitation used only while unused, a session
 * ended only while open): each answers whether it took, and only one racer's does.
 */
import { Context, type DateTime, type Effect } from "effect"
import type { ServiceUnavailable } from "../kernel/Errors.js"
import type { MerchantId } from "../kernel/Ids.js"
import type { Console, Invitation, Member, Membership, Session, User, UserId } from "./Person.js"
import type { MerchantRole, OperatorRole } from "./Role.js"

/** An account as stored: the person, and the secrets of their sign-in (never shown). */
export interface Account extends User {
  /** The password's memory-hard hash (`Credentials.hashPassword`). */
  readonly passwordHash: string
  /** The enrolled TOTP secret, sealed; `null` without two-factor. */
  readonly totpSecret: string | null
  /** A secret being enrolled, sealed, until a code from it confirms it. */
  readonly totpPending: string | null
  /** The last TOTP step accepted: a code of it or of an earlier step is refused. */
  readonly totpLastStep: number | null
}

/** A session as stored: its token's keyed hash, and when it ended (`null`: still open). */
export interface StoredSession extends Session {
  readonly tokenHash: string
  readonly endedAt: DateTime.Utc | null
}

/** An invitation as stored: its link token's keyed hash. */
export interface StoredInvitation extends Invitation {
  readonly tokenHash: string
}

/** Which of an account's open sessions `endSessions` ends. */
export interface SessionsToEnd {
  /** This one stays open (the session that asked). */
  readonly except?: string | undefined
  /** Only the dashboard's sessions on this merchant (a member removed from its team). */
  readonly merchantId?: MerchantId | undefined
  readonly console?: Console | undefined
}

export interface PeopleStoreService {
  /** Stores a new account; `false` (and nothing stored) when its email already has one. */
  readonly insertUser: (account: Account) => Effect.Effect<boolean, ServiceUnavailable>
  /** The account, locked until the transaction ends with `forUpdate`. */
  readonly userById: (
    id: UserId,
    options?: { readonly forUpdate?: boolean }
  ) => Effect.Effect<Account | undefined, ServiceUnavailable>
  /** The account of the email as accounts are keyed (`normalEmail`). */
  readonly userByEmail: (
    email: string,
    options?: { readonly forUpdate?: boolean }
  ) => Effect.Effect<Account | undefined, ServiceUnavailable>
  readonly setPassword: (
    id: UserId,
    passwordHash: string,
    mustChangePassword: boolean
  ) => Effect.Effect<void, ServiceUnavailable>
  readonly setOperatorRole: (id: UserId, role: OperatorRole | null) => Effect.Effect<void, ServiceUnavailable>
  /** Keeps `sealed` as the secret being enrolled (replacing one not yet confirmed). */
  readonly setPendingTotp: (id: UserId, sealed: string) => Effect.Effect<void, ServiceUnavailable>
  /**
   * Makes the pending secret `sealed` the enrolled one (two-factor on) with `step` as its last step used;
   * `false` when `sealed` is no longer the pending secret (a newer enrolment began, or it was confirmed).
   */
  readonly confirmTotp: (
    id: UserId,
    sealed: string,
    step: number
  ) => Effect.Effect<boolean, ServiceUnavailable>
  /** Records `step` as used if it is after the last step used; `false` (nothing changed) otherwise. */
  readonly useTotpStep: (id: UserId, step: number) => Effect.Effect<boolean, ServiceUnavailable>

  /** Replaces the account's recovery codes with these keyed hashes, all unused. */
  readonly replaceRecoveryCodes: (
    id: UserId,
    codeHashes: ReadonlyArray<string>,
    now: DateTime.Utc
  ) => Effect.Effect<void, ServiceUnavailable>
  /** Uses up the account's unused code of that hash; `false` when it has none (unknown or used). */
  readonly useRecoveryCode: (
    id: UserId,
    codeHash: string,
    now: DateTime.Utc
  ) => Effect.Effect<boolean, ServiceUnavailable>
  /** How many of the account's recovery codes are unused. */
  readonly unusedRecoveryCodes: (id: UserId) => Effect.Effect<number, ServiceUnavailable>

  /** The account's memberships, oldest first. */
  readonly memberships: (userId: UserId) => Effect.Effect<ReadonlyArray<Membership>, ServiceUnavailable>
  /**
   * The merchant's team, locked until the transaction ends: a team change decided on it (the last owner
   * kept) is decided on the team as it is, one change at a time. Oldest first.
   */
  readonly lockTeam: (merchantId: MerchantId) => Effect.Effect<ReadonlyArray<Membership>, ServiceUnavailable>
  /** The merchant's team with each member's email and two-factor, owners first, then by email. */
  readonly members: (merchantId: MerchantId) => Effect.Effect<ReadonlyArray<Member>, ServiceUnavailable>
  /** Adds the membership; `false` (nothing changed) when the account is already on the team. */
  readonly addMembership: (membership: Membership) => Effect.Effect<boolean, ServiceUnavailable>
  readonly setRole: (
    merchantId: MerchantId,
    userId: UserId,
    role: MerchantRole
  ) => Effect.Effect<void, ServiceUnavailable>
  readonly removeMembership: (
    merchantId: MerchantId,
    userId: UserId
  ) => Effect.Effect<void, ServiceUnavailable>

  readonly insertInvitation: (invitation: StoredInvitation) => Effect.Effect<void, ServiceUnavailable>
  /** The invitation whose token has this keyed hash, whatever became of it. */
  readonly invitationByToken: (
    tokenHash: string
  ) => Effect.Effect<StoredInvitation | undefined, ServiceUnavailable>
  /** The merchant's invitations not accepted, newest first. */
  readonly invitations: (
    merchantId: MerchantId
  ) => Effect.Effect<ReadonlyArray<Invitation>, ServiceUnavailable>
  /** Marks the invitation accepted if it is still pending at `now`; `false` otherwise (one racer wins). */
  readonly acceptInvitation: (id: string, now: DateTime.Utc) => Effect.Effect<boolean, ServiceUnavailable>
  /** Revokes the merchant's invitation if neither accepted nor revoked; `false` otherwise. */
  readonly revokeInvitation: (
    merchantId: MerchantId,
    id: string,
    now: DateTime.Utc
  ) => Effect.Effect<boolean, ServiceUnavailable>

  readonly insertSession: (session: StoredSession) => Effect.Effect<void, ServiceUnavailable>
  /** The session whose token has this keyed hash, ended or not. */
  readonly sessionByToken: (tokenHash: string) => Effect.Effect<StoredSession | undefined, ServiceUnavailable>
  /** Moves the session's last-seen time to `now`. */
  readonly touchSession: (id: string, now: DateTime.Utc) => Effect.Effect<void, ServiceUnavailable>
  /**
   * Ends the session if it is open (and the account's, with `userId`); `false` when it was not (already
   * ended, or no such session): of two requests replacing one session, one ends it.
   */
  readonly endSession: (
    id: string,
    now: DateTime.Utc,
    userId?: UserId
  ) => Effect.Effect<boolean, ServiceUnavailable>
  /** Ends the account's open sessions that `which` names. */
  readonly endSessions: (
    userId: UserId,
    now: DateTime.Utc,
    which?: SessionsToEnd
  ) => Effect.Effect<void, ServiceUnavailable>
  /** The account's open sessions (idle or past their limit included), newest sign-in first. */
  readonly openSessions: (userId: UserId) => Effect.Effect<ReadonlyArray<StoredSession>, ServiceUnavailable>
}

export class PeopleStore extends Context.Tag("laari/Store/People")<PeopleStore, PeopleStoreService>() {}
