/**
 * People's accounts, teams, invitations and sessions in memory (core's `PeopleStore`), as the SQL store
 * keeps them: an email has one account, an account is on a team once, tokens and codes are found by
 * their keyed hashes. The `MemoryDb` transaction the caller runs in is every lock: nothing else runs
 * until it ends, so the conditional writes are trivially one racer's.
 */
import { DateTime, Effect, HashMap, Option } from "effect"
import type { Person, Store } from "@laari/core"
import type { MemoryDbService, Row, Tables } from "./MemoryDb.js"
import { insertRow, newestFirst } from "./MemoryRows.js"

const membershipKey = (merchantId: string, userId: string) => `${merchantId}:${userId}`
const codeKey = (userId: string, codeHash: string) => `${userId}:${codeHash}`

const values = <A>(table: HashMap.HashMap<string, Row<A>>): Array<Row<A>> => Array.from(HashMap.values(table))

const oldestFirst = <A extends { readonly createdAt: DateTime.Utc }>(rows: Iterable<Row<A>>): Array<A> =>
  newestFirst(rows).reverse()

const account = (t: Tables, id: string): Store.Account | undefined =>
  Option.getOrUndefined(HashMap.get(t.users, id.toLowerCase()))?.value

/** `t` with the account `id` changed by `f` (nothing for no such account). */
const changeUser = (t: Tables, id: string, f: (a: Store.Account) => Store.Account): Tables => {
  const row = Option.getOrUndefined(HashMap.get(t.users, id))
  return row === undefined ? t : { ...t, users: HashMap.set(t.users, id, { ...row, value: f(row.value) }) }
}

const isPending = (i: Store.StoredInvitation, now: DateTime.Utc) =>
  i.acceptedAt === null && i.revokedAt === null && DateTime.lessThan(now, i.expiresAt)

/** Whether `which` names the open session `s` of `userId`. */
const named = (s: Store.StoredSession, userId: string, which: Store.SessionsToEnd = {}) =>
  s.userId === userId &&
  s.endedAt === null &&
  s.id !== which.except &&
  (which.merchantId === undefined || s.merchantId === which.merchantId) &&
  (which.console === undefined || s.console === which.console)

const endSessionsWhere = (
  t: Tables,
  now: DateTime.Utc,
  end: (s: Store.StoredSession) => boolean
): Tables => ({
  ...t,
  userSessions: HashMap.map(t.userSessions, (row) =>
    end(row.value) ? { ...row, value: { ...row.value, endedAt: now } } : row
  )
})

export const people = (db: MemoryDbService): Store.PeopleStoreService => ({
  insertUser: (a) =>
    db.modify((t) => {
      // The SQL table's unique email and its check on the email's form.
      if (a.email !== a.email.trim().toLowerCase()) throw new Error(`account ${a.id}: email not normal`)
      if (values(t.users).some((row) => row.value.email === a.email)) return [false, t]
      return [true, insertRow(t, "users", a.id, a)]
    }),
  userById: (id) => Effect.map(db.get, (t) => account(t, id)),
  userByEmail: (email) =>
    Effect.map(db.get, (t) => values(t.users).find((row) => row.value.email === email)?.value),
  setPassword: (id, passwordHash, mustChangePassword) =>
    db.update((t) => changeUser(t, id, (a) => ({ ...a, passwordHash, mustChangePassword }))),
  setOperatorRole: (id, operatorRole) => db.update((t) => changeUser(t, id, (a) => ({ ...a, operatorRole }))),
  setPendingTotp: (id, sealed) => db.update((t) => changeUser(t, id, (a) => ({ ...a, totpPending: sealed }))),
  confirmTotp: (id, sealed, step) =>
    db.modify((t) => {
      const found = account(t, id)
      if (found === undefined || found.totpPending !== sealed) return [false, t]
      return [
        true,
        changeUser(t, id, (a) => ({
          ...a,
          twoFactor: true,
          totpSecret: sealed,
          totpPending: null,
          totpLastStep: step
        }))
      ]
    }),
  useTotpStep: (id, step) =>
    db.modify((t) => {
      const found = account(t, id)
      if (found === undefined || (found.totpLastStep !== null && step <= found.totpLastStep))
        return [false, t]
      return [true, changeUser(t, id, (a) => ({ ...a, totpLastStep: step }))]
    }),

  replaceRecoveryCodes: (id, codeHashes) =>
    db.update((t) => {
      let codes = HashMap.filter(t.recoveryCodes, (c) => c.userId !== id)
      for (const codeHash of codeHashes)
        codes = HashMap.set(codes, codeKey(id, codeHash), { userId: id, codeHash, usedAt: null })
      return { ...t, recoveryCodes: codes }
    }),
  useRecoveryCode: (id, codeHash, now) =>
    db.modify((t) => {
      const key = codeKey(id, codeHash)
      const found = Option.getOrUndefined(HashMap.get(t.recoveryCodes, key))
      if (found === undefined || found.usedAt !== null) return [false, t]
      return [true, { ...t, recoveryCodes: HashMap.set(t.recoveryCodes, key, { ...found, usedAt: now }) }]
    }),
  unusedRecoveryCodes: (id) =>
    Effect.map(
      db.get,
      (t) =>
        Array.from(HashMap.values(t.recoveryCodes)).filter((c) => c.userId === id && c.usedAt === null).length
    ),

  memberships: (userId) =>
    Effect.map(db.get, (t) =>
      oldestFirst(values(t.memberships).filter((row) => row.value.userId === userId))
    ),
  lockTeam: (merchantId) =>
    Effect.map(db.get, (t) =>
      oldestFirst(values(t.memberships).filter((row) => row.value.merchantId === merchantId.toLowerCase()))
    ),
  members: (merchantId) =>
    Effect.map(db.get, (t) =>
      values(t.memberships)
        .filter((row) => row.value.merchantId === merchantId.toLowerCase())
        .flatMap((row): Array<Person.Member> => {
          const user = account(t, row.value.userId)
          return user === undefined ? [] : [{ ...row.value, email: user.email, twoFactor: user.twoFactor }]
        })
        .sort(
          (a, b) =>
            Number(b.role === "owner") - Number(a.role === "owner") ||
            (a.email < b.email ? -1 : a.email > b.email ? 1 : 0)
        )
    ),
  addMembership: (m) =>
    db.modify((t) => {
      // The SQL table's foreign keys.
      if (account(t, m.userId) === undefined) throw new Error(`membership: no account ${m.userId}`)
      if (!HashMap.has(t.merchants, m.merchantId)) throw new Error(`membership: no merchant ${m.merchantId}`)
      const key = membershipKey(m.merchantId, m.userId)
      if (HashMap.has(t.memberships, key)) return [false, t]
      return [true, insertRow(t, "memberships", key, m)]
    }),
  setRole: (merchantId, userId, role) =>
    db.update((t) => {
      const key = membershipKey(merchantId, userId)
      const row = Option.getOrUndefined(HashMap.get(t.memberships, key))
      return row === undefined
        ? t
        : { ...t, memberships: HashMap.set(t.memberships, key, { ...row, value: { ...row.value, role } }) }
    }),
  removeMembership: (merchantId, userId) =>
    db.update((t) => ({
      ...t,
      memberships: HashMap.remove(t.memberships, membershipKey(merchantId, userId))
    })),

  insertInvitation: (i) =>
    db.update((t) => {
      if (values(t.invitations).some((row) => row.value.tokenHash === i.tokenHash))
        throw new Error(`invitation ${i.id}: its token hash is taken`)
      return insertRow(t, "invitations", i.id, i)
    }),
  invitationByToken: (tokenHash) =>
    Effect.map(db.get, (t) => values(t.invitations).find((row) => row.value.tokenHash === tokenHash)?.value),
  invitations: (merchantId) =>
    Effect.map(db.get, (t) =>
      newestFirst(
        values(t.invitations).filter(
          (row) => row.value.merchantId === merchantId.toLowerCase() && row.value.acceptedAt === null
        )
      ).map(({ tokenHash: _, ...invitation }) => invitation)
    ),
  acceptInvitation: (id, now) =>
    db.modify((t) => {
      const row = Option.getOrUndefined(HashMap.get(t.invitations, id))
      if (row === undefined || !isPending(row.value, now)) return [false, t]
      return [
        true,
        {
          ...t,
          invitations: HashMap.set(t.invitations, id, { ...row, value: { ...row.value, acceptedAt: now } })
        }
      ]
    }),
  revokeInvitation: (merchantId, id, now) =>
    db.modify((t) => {
      const key = id.toLowerCase()
      const row = Option.getOrUndefined(HashMap.get(t.invitations, key))
      if (
        row === undefined ||
        row.value.merchantId !== merchantId.toLowerCase() ||
        row.value.acceptedAt !== null ||
        row.value.revokedAt !== null
      )
        return [false, t]
      return [
        true,
        {
          ...t,
          invitations: HashMap.set(t.invitations, key, { ...row, value: { ...row.value, revokedAt: now } })
        }
      ]
    }),

  insertSession: (s) =>
    db.update((t) => {
      if (values(t.userSessions).some((row) => row.value.tokenHash === s.tokenHash))
        throw new Error(`session ${s.id}: its token hash is taken`)
      if (account(t, s.userId) === undefined) throw new Error(`session ${s.id}: no account ${s.userId}`)
      return insertRow(t, "userSessions", s.id, s)
    }),
  sessionByToken: (tokenHash) =>
    Effect.map(db.get, (t) => values(t.userSessions).find((row) => row.value.tokenHash === tokenHash)?.value),
  touchSession: (id, now) =>
    db.update((t) => {
      const row = Option.getOrUndefined(HashMap.get(t.userSessions, id))
      return row === undefined
        ? t
        : {
            ...t,
            userSessions: HashMap.set(t.userSessions, id, {
              ...row,
              value: { ...row.value, lastSeenAt: now }
            })
          }
    }),
  endSession: (id, now, userId) =>
    db.modify((t) => {
      const key = id.toLowerCase()
      const row = Option.getOrUndefined(HashMap.get(t.userSessions, key))
      if (
        row === undefined ||
        row.value.endedAt !== null ||
        (userId !== undefined && row.value.userId !== userId)
      )
        return [false, t]
      return [
        true,
        {
          ...t,
          userSessions: HashMap.set(t.userSessions, key, { ...row, value: { ...row.value, endedAt: now } })
        }
      ]
    }),
  endSessions: (userId, now, which) =>
    db.update((t) => endSessionsWhere(t, now, (s) => named(s, userId, which))),
  openSessions: (userId) =>
    Effect.map(db.get, (t) =>
      values(t.userSessions)
        .filter((row) => row.value.userId === userId && row.value.endedAt === null)
        .sort(
          (a, b) =>
            DateTime.toEpochMillis(b.value.signedInAt) - DateTime.toEpochMillis(a.value.signedInAt) ||
            b.seq - a.seq
        )
        .map((row) => row.value)
    )
})
