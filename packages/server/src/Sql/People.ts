/**
 * People's accounts, teams, invitations, recovery codes and sessions (migration `0026_people`): core's
 * `PeopleStore`. The writes only one of several racing requests may make are single conditional
 * statements (`UPDATE ... WHERE <still so> RETURNING`): under READ COMMITTED the second waits for the
 * first's row lock, then finds the condition false. A team is locked through its merchant's row, so
 * every change decided on a team's owners is decided on the team as the last one left it.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import {
  type Audit,
  type Credentials,
  type Crypto,
  Ids,
  type People,
  type PeopleNotices,
  PeopleLive,
  type Person,
  Store,
  type WallClock
} from "@laari/core"
import { type DateTime, Effect, Layer } from "effect"
import {
  all,
  Column,
  type Fields,
  isStorable,
  lockClause,
  one,
  repository,
  rows,
  toDate
} from "./Repository.js"

const users = rows<Store.Account>({
  id: Column.as("id"),
  email: Column.as("email"),
  mustChangePassword: Column.as("must_change_password"),
  twoFactor: Column.as("two_factor"),
  operatorRole: Column.as("operator_role"),
  createdAt: Column.date("created_at"),
  passwordHash: Column.as("password_hash"),
  totpSecret: Column.as("totp_secret"),
  totpPending: Column.as("totp_pending"),
  totpLastStep: Column.intOrNull("totp_last_step")
})

const membershipFields: Fields<Person.Membership> = {
  userId: Column.as("user_id"),
  merchantId: Column.as("merchant_id"),
  role: Column.as("role"),
  createdAt: Column.date("created_at")
}

const memberships = rows(membershipFields)

/** A membership joined with its account's email and two-factor. */
const members = rows<Person.Member>({
  ...membershipFields,
  email: Column.as("email"),
  twoFactor: Column.as("two_factor")
})

const invitations = rows<Store.StoredInvitation>({
  id: Column.as("id"),
  merchantId: Column.as("merchant_id"),
  email: Column.as("email"),
  role: Column.as("role"),
  invitedBy: Column.as("invited_by"),
  createdAt: Column.date("created_at"),
  expiresAt: Column.date("expires_at"),
  acceptedAt: Column.dateOrNull("accepted_at"),
  revokedAt: Column.dateOrNull("revoked_at"),
  tokenHash: Column.as("token_hash")
})

const sessions = rows<Store.StoredSession>({
  id: Column.as("id"),
  userId: Column.as("user_id"),
  console: Column.as("console"),
  stage: Column.as("stage"),
  merchantId: Column.as("merchant_id"),
  environment: Column.as("environment"),
  signedInAt: Column.date("signed_in_at"),
  lastSeenAt: Column.date("last_seen_at"),
  address: Column.as("address"),
  userAgent: Column.as("user_agent"),
  tokenHash: Column.as("token_hash"),
  endedAt: Column.dateOrNull("ended_at")
})

/** Whether the update of a `RETURNING` statement took. */
const took = (found: ReadonlyArray<unknown>): boolean => found.length > 0

export const makePeople = Effect.map(SqlClient.SqlClient, (sql) => {
  // Ids come from requests (a link, a form): one that is no UUID names no row, rather than failing the cast.
  const ifUuid = <A, E>(id: string, none: A, f: () => Effect.Effect<A, E>): Effect.Effect<A, E> =>
    Ids.isUuid(id) ? f() : Effect.succeed(none)
  const ifText = <A, E>(text: string, none: A, f: () => Effect.Effect<A, E>): Effect.Effect<A, E> =>
    isStorable(text) ? f() : Effect.succeed(none)
  const account = Effect.map(one(users.fromRow))

  return repository({
    insertUser: (a: Store.Account) =>
      sql`INSERT INTO users ${sql.insert(users.toRow(a))} ON CONFLICT ON CONSTRAINT users_email DO NOTHING
        RETURNING id`.pipe(Effect.map(took)),
    userById: (id: Person.UserId, options?: { readonly forUpdate?: boolean }) =>
      ifUuid(id, undefined, () =>
        sql`SELECT * FROM users WHERE id = ${id} ${sql.literal(lockClause(options))}`.pipe(account)
      ),
    userByEmail: (email: string, options?: { readonly forUpdate?: boolean }) =>
      ifText(email, undefined, () =>
        sql`SELECT * FROM users WHERE email = ${email} ${sql.literal(lockClause(options))}`.pipe(account)
      ),
    setPassword: (id: Person.UserId, passwordHash: string, mustChangePassword: boolean) =>
      sql`UPDATE users SET password_hash = ${passwordHash}, must_change_password = ${mustChangePassword}
        WHERE id = ${id}`.pipe(Effect.asVoid),
    setOperatorRole: (id: Person.UserId, role: string | null) =>
      sql`UPDATE users SET operator_role = ${role} WHERE id = ${id}`.pipe(Effect.asVoid),
    setPendingTotp: (id: Person.UserId, sealed: string) =>
      sql`UPDATE users SET totp_pending = ${sealed} WHERE id = ${id}`.pipe(Effect.asVoid),
    confirmTotp: (id: Person.UserId, sealed: string, step: number) =>
      sql`UPDATE users SET two_factor = true, totp_secret = totp_pending, totp_pending = NULL,
          totp_last_step = ${step}
        WHERE id = ${id} AND totp_pending = ${sealed} RETURNING id`.pipe(Effect.map(took)),
    useTotpStep: (id: Person.UserId, step: number) =>
      sql`UPDATE users SET totp_last_step = ${step}
        WHERE id = ${id} AND (totp_last_step IS NULL OR totp_last_step < ${step}) RETURNING id`.pipe(
        Effect.map(took)
      ),

    replaceRecoveryCodes: (id: Person.UserId, codeHashes: ReadonlyArray<string>, now: DateTime.Utc) =>
      Effect.zipRight(
        sql`DELETE FROM recovery_codes WHERE user_id = ${id}`,
        codeHashes.length === 0
          ? Effect.void
          : sql`INSERT INTO recovery_codes ${sql.insert(
              codeHashes.map((codeHash) => ({ user_id: id, code_hash: codeHash, created_at: toDate(now) }))
            )}`.pipe(Effect.asVoid)
      ),
    useRecoveryCode: (id: Person.UserId, codeHash: string, now: DateTime.Utc) =>
      ifText(codeHash, false, () =>
        sql`UPDATE recovery_codes SET used_at = ${toDate(now)}
          WHERE user_id = ${id} AND code_hash = ${codeHash} AND used_at IS NULL RETURNING code_hash`.pipe(
          Effect.map(took)
        )
      ),
    unusedRecoveryCodes: (id: Person.UserId) =>
      sql<{ readonly n: unknown }>`SELECT count(*) AS n FROM recovery_codes
        WHERE user_id = ${id} AND used_at IS NULL`.pipe(Effect.map((found) => Number(found[0]?.n ?? 0))),

    memberships: (userId: Person.UserId) =>
      ifUuid(userId, [], () =>
        sql`SELECT * FROM memberships WHERE user_id = ${userId}
          ORDER BY created_at, merchant_id`.pipe(Effect.map(all(memberships.fromRow)))
      ),
    lockTeam: (merchantId: Ids.MerchantId) =>
      ifUuid(merchantId, [], () =>
        // NO KEY UPDATE: team changes queue on the merchant, while the foreign-key checks of rows naming
        // it (KEY SHARE) and its readers go on.
        Effect.zipRight(
          sql`SELECT id FROM merchants WHERE id = ${merchantId} FOR NO KEY UPDATE`,
          sql`SELECT * FROM memberships WHERE merchant_id = ${merchantId}
            ORDER BY created_at, user_id`.pipe(Effect.map(all(memberships.fromRow)))
        )
      ),
    members: (merchantId: Ids.MerchantId) =>
      ifUuid(merchantId, [], () =>
        sql`SELECT m.*, u.email, u.two_factor FROM memberships m JOIN users u ON u.id = m.user_id
          WHERE m.merchant_id = ${merchantId}
          ORDER BY (m.role = 'owner') DESC, u.email COLLATE "C"`.pipe(Effect.map(all(members.fromRow)))
      ),
    addMembership: (m: Person.Membership) =>
      sql`INSERT INTO memberships ${sql.insert(memberships.toRow(m))} ON CONFLICT DO NOTHING
        RETURNING user_id`.pipe(Effect.map(took)),
    setRole: (merchantId: Ids.MerchantId, userId: Person.UserId, role: string) =>
      sql`UPDATE memberships SET role = ${role}
        WHERE merchant_id = ${merchantId} AND user_id = ${userId}`.pipe(Effect.asVoid),
    removeMembership: (merchantId: Ids.MerchantId, userId: Person.UserId) =>
      sql`DELETE FROM memberships WHERE merchant_id = ${merchantId} AND user_id = ${userId}`.pipe(
        Effect.asVoid
      ),

    insertInvitation: (i: Store.StoredInvitation) =>
      sql`INSERT INTO invitations ${sql.insert(invitations.toRow(i))}`.pipe(Effect.asVoid),
    invitationByToken: (tokenHash: string) =>
      ifText(tokenHash, undefined, () =>
        sql`SELECT * FROM invitations WHERE token_hash = ${tokenHash}`.pipe(
          Effect.map(one(invitations.fromRow))
        )
      ),
    invitations: (merchantId: Ids.MerchantId) =>
      ifUuid(merchantId, [], () =>
        sql`SELECT * FROM invitations WHERE merchant_id = ${merchantId} AND accepted_at IS NULL
          ORDER BY created_at DESC, id`.pipe(Effect.map(all((row) => invitationOf(invitations.fromRow(row)))))
      ),
    acceptInvitation: (id: string, now: DateTime.Utc) =>
      ifUuid(id, false, () =>
        sql`UPDATE invitations SET accepted_at = ${toDate(now)}
          WHERE id = ${id} AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > ${toDate(now)}
          RETURNING id`.pipe(Effect.map(took))
      ),
    revokeInvitation: (merchantId: Ids.MerchantId, id: string, now: DateTime.Utc) =>
      ifUuid(id, false, () =>
        ifUuid(merchantId, false, () =>
          sql`UPDATE invitations SET revoked_at = ${toDate(now)}
            WHERE id = ${id} AND merchant_id = ${merchantId} AND accepted_at IS NULL AND revoked_at IS NULL
            RETURNING id`.pipe(Effect.map(took))
        )
      ),

    insertSession: (s: Store.StoredSession) =>
      sql`INSERT INTO user_sessions ${sql.insert(sessions.toRow(s))}`.pipe(Effect.asVoid),
    sessionByToken: (tokenHash: string) =>
      ifText(tokenHash, undefined, () =>
        sql`SELECT * FROM user_sessions WHERE token_hash = ${tokenHash}`.pipe(
          Effect.map(one(sessions.fromRow))
        )
      ),
    touchSession: (id: string, now: DateTime.Utc) =>
      sql`UPDATE user_sessions SET last_seen_at = ${toDate(now)} WHERE id = ${id}`.pipe(Effect.asVoid),
    endSession: (id: string, now: DateTime.Utc, userId?: Person.UserId) =>
      ifUuid(id, false, () =>
        sql`UPDATE user_sessions SET ended_at = ${toDate(now)}
          WHERE id = ${id} AND ended_at IS NULL ${userId === undefined ? sql`` : sql`AND user_id = ${userId}`}
          RETURNING id`.pipe(Effect.map(took))
      ),
    endSessions: (userId: Person.UserId, now: DateTime.Utc, which: Store.SessionsToEnd = {}) => {
      const where = [sql`user_id = ${userId}`, sql`ended_at IS NULL`]
      if (which.except !== undefined) where.push(sql`id <> ${which.except}`)
      if (which.merchantId !== undefined) where.push(sql`merchant_id = ${which.merchantId}`)
      if (which.console !== undefined) where.push(sql`console = ${which.console}`)
      return sql`UPDATE user_sessions SET ended_at = ${toDate(now)} WHERE ${sql.and(where)}`.pipe(
        Effect.asVoid
      )
    },
    openSessions: (userId: Person.UserId) =>
      ifUuid(userId, [], () =>
        sql`SELECT * FROM user_sessions WHERE user_id = ${userId} AND ended_at IS NULL
          ORDER BY signed_in_at DESC, id`.pipe(Effect.map(all(sessions.fromRow)))
      )
  })
})

/** An invitation without its token's hash, as lists show it. */
const invitationOf = ({ tokenHash: _, ...invitation }: Store.StoredInvitation): Person.Invitation =>
  invitation

export const peopleLayer: Layer.Layer<Store.PeopleStore, never, SqlClient.SqlClient> = Layer.effect(
  Store.PeopleStore,
  makePeople
)

/**
 * The `People` service over this store and the database's other ports (transactions, merchants), with
 * the audit log and wall time from the context, and the host's `Credentials` and `PeopleNotices`.
 */
export const serviceLayer = <E1, R1, E2, R2>(
  credentials: Layer.Layer<Credentials.Credentials, E1, R1>,
  notices: Layer.Layer<PeopleNotices.PeopleNotices, E2, R2>
): Layer.Layer<
  People.People,
  E1 | E2,
  | R1
  | R2
  | Store.PeopleStore
  | Store.Transactor
  | Store.MerchantsStore
  | WallClock.WallClock
  | Crypto.Crypto
  | Audit.Audit
> => PeopleLive.layer.pipe(Layer.provide(Layer.merge(credentials, notices)))
