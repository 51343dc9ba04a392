/**
 * The people part of the store contract: accounts (one an email) come back exactly as stored; the
 * writes one racer wins (a TOTP step past the last, a recovery code unused, an invitation pending, a
 * session open) answer whether they took and take once; teams list owners first, then by email; a
 * session ends alone, or with the account's others as `endSessions` names them. Ids that are no UUID
 * find nothing rather than failing. Every test makes its own merchant and accounts.
 */
import { describe, expect } from "@effect/vitest"
import { Person, Store } from "@laari/core"
import { Effect } from "effect"
import { freshMerchant, hour, type It, minute, plain, plus, T0, uuid } from "../support/Helpers.js"

let emails = 0
/** A unique address, as accounts are keyed. */
const freshEmail = (name = "person") =>
  Effect.map(uuid, (id) => `${name}.${++emails}.${id.slice(0, 8)}@example.com`)

const newAccount = (overrides: Partial<Store.Account> = {}) =>
  Effect.gen(function* () {
    const account: Store.Account = {
      id: Person.UserId.make(yield* uuid),
      email: yield* freshEmail(),
      mustChangePassword: false,
      twoFactor: false,
      operatorRole: null,
      createdAt: T0,
      passwordHash: "hash-of-a-password",
      totpSecret: null,
      totpPending: null,
      totpLastStep: null,
      ...overrides
    }
    return account
  })

const storedAccount = (overrides: Partial<Store.Account> = {}) =>
  Effect.gen(function* () {
    const account = yield* newAccount(overrides)
    expect(yield* Effect.flatMap(Store.PeopleStore, (s) => s.insertUser(account))).toBe(true)
    return account
  })

const newSession = (userId: Person.UserId, overrides: Partial<Store.StoredSession> = {}) =>
  Effect.gen(function* () {
    const session: Store.StoredSession = {
      id: yield* uuid,
      userId,
      console: "dashboard",
      stage: "full",
      merchantId: null,
      environment: "test",
      signedInAt: T0,
      lastSeenAt: T0,
      address: "203.0.113.9",
      userAgent: "contract/1.0",
      tokenHash: `token:${yield* uuid}`,
      endedAt: null,
      ...overrides
    }
    yield* Effect.flatMap(Store.PeopleStore, (s) => s.insertSession(session))
    return session
  })

const newInvitation = (merchantId: Store.Merchant["id"], overrides: Partial<Store.StoredInvitation> = {}) =>
  Effect.gen(function* () {
    const invitation: Store.StoredInvitation = {
      id: yield* uuid,
      merchantId,
      email: yield* freshEmail("invited"),
      role: "finance",
      invitedBy: null,
      createdAt: T0,
      expiresAt: plus(T0, Person.InvitationHours * hour),
      acceptedAt: null,
      revokedAt: null,
      tokenHash: `invitation:${yield* uuid}`,
      ...overrides
    }
    yield* Effect.flatMap(Store.PeopleStore, (s) => s.insertInvitation(invitation))
    return invitation
  })

export const tests = (it: It): void => {
  describe("people", () => {
    it.effect("an account comes back exactly as stored, by id and by email; an email has one account", () =>
      Effect.gen(function* () {
        const store = yield* Store.PeopleStore
        const account = yield* storedAccount({ operatorRole: "ops_risk", mustChangePassword: true })
        expect(plain(yield* store.userById(account.id))).toEqual(plain(account))
        expect(plain(yield* store.userByEmail(account.email))).toEqual(plain(account))
        expect(
          plain(
            yield* Effect.flatMap(Store.Transactor, (tx) =>
              tx.withTransaction(store.userByEmail(account.email, { forUpdate: true }))
            )
          )
        ).toEqual(plain(account))
        const twin = yield* newAccount({ email: account.email })
        expect(yield* store.insertUser(twin)).toBe(false)
        expect(yield* store.userById(twin.id)).toBeUndefined()
        expect(yield* store.userById("not-a-uuid" as Person.UserId)).toBeUndefined()
        expect(yield* store.userByEmail("nobody\u0000@example.com")).toBeUndefined()

        // An address as `normalEmail` keys it, beyond ASCII too.
        const accented = yield* storedAccount({
          email: Person.normalEmail(`Zoë.İlhan.${yield* uuid}@Example.com`)
        })
        expect((yield* store.userByEmail(accented.email))?.id).toBe(accented.id)

        yield* store.setPassword(account.id, "another-hash", false)
        yield* store.setOperatorRole(account.id, null)
        expect(yield* store.userById(account.id)).toMatchObject({
          passwordHash: "another-hash",
          mustChangePassword: false,
          operatorRole: null
        })
      })
    )

    it.effect("a pending TOTP secret is confirmed once, and each step is used once, in order", () =>
      Effect.gen(function* () {
        const store = yield* Store.PeopleStore
        const account = yield* storedAccount()
        yield* store.setPendingTotp(account.id, "sealed-1")
        yield* store.setPendingTotp(account.id, "sealed-2")
        expect(yield* store.confirmTotp(account.id, "sealed-1", 100)).toBe(false)
        expect(yield* store.userById(account.id)).toMatchObject({ twoFactor: false, totpPending: "sealed-2" })
        expect(yield* store.confirmTotp(account.id, "sealed-2", 100)).toBe(true)
        expect(yield* store.confirmTotp(account.id, "sealed-2", 100)).toBe(false)
        expect(yield* store.userById(account.id)).toMatchObject({
          twoFactor: true,
          totpSecret: "sealed-2",
          totpPending: null,
          totpLastStep: 100
        })
        expect(yield* store.useTotpStep(account.id, 100)).toBe(false)
        expect(yield* store.useTotpStep(account.id, 99)).toBe(false)
        expect(yield* store.useTotpStep(account.id, 101)).toBe(true)
        expect(yield* store.useTotpStep(account.id, 101)).toBe(false)
        expect((yield* store.userById(account.id))?.totpLastStep).toBe(101)
      })
    )

    it.effect("a recovery code is used once; new codes replace the old", () =>
      Effect.gen(function* () {
        const store = yield* Store.PeopleStore
        const account = yield* storedAccount()
        const other = yield* storedAccount()
        yield* store.replaceRecoveryCodes(account.id, ["c1", "c2", "c3"], T0)
        yield* store.replaceRecoveryCodes(other.id, ["c1"], T0)
        expect(yield* store.unusedRecoveryCodes(account.id)).toBe(3)
        expect(yield* store.useRecoveryCode(account.id, "c2", T0)).toBe(true)
        expect(yield* store.useRecoveryCode(account.id, "c2", T0)).toBe(false)
        expect(yield* store.useRecoveryCode(account.id, "c9", T0)).toBe(false)
        expect(yield* store.unusedRecoveryCodes(account.id)).toBe(2)
        // Another account's code of the same hash is its own.
        expect(yield* store.unusedRecoveryCodes(other.id)).toBe(1)
        yield* store.replaceRecoveryCodes(account.id, ["c2", "c4"], T0)
        expect(yield* store.unusedRecoveryCodes(account.id)).toBe(2)
        expect(yield* store.useRecoveryCode(account.id, "c1", T0)).toBe(false)
        expect(yield* store.useRecoveryCode(account.id, "c2", T0)).toBe(true)
      })
    )

    it.effect(
      "a team: one membership an account, owners first then by email, roles changed, members removed",
      () =>
        Effect.gen(function* () {
          const store = yield* Store.PeopleStore
          const merchant = yield* freshMerchant()
          const other = yield* freshMerchant()
          const zed = yield* storedAccount({ email: `zed.${yield* uuid}@example.com`, twoFactor: false })
          const amy = yield* storedAccount({ email: `amy.${yield* uuid}@example.com` })
          const bob = yield* storedAccount({ email: `bob.${yield* uuid}@example.com` })
          const join = (userId: Person.UserId, role: Person.Membership["role"], at: number, m = merchant) =>
            store.addMembership({ userId, merchantId: m.id, role, createdAt: plus(T0, at * minute) })
          expect(yield* join(bob.id, "viewer", 1)).toBe(true)
          expect(yield* join(zed.id, "owner", 2)).toBe(true)
          expect(yield* join(amy.id, "finance", 3)).toBe(true)
          expect(yield* join(amy.id, "owner", 4)).toBe(false)
          expect(yield* join(amy.id, "admin", 5, other)).toBe(true)

          const members = yield* store.members(merchant.id)
          expect(members.map((m) => [m.email, m.role])).toEqual([
            [zed.email, "owner"],
            [amy.email, "finance"],
            [bob.email, "viewer"]
          ])
          expect(plain(members[0])).toEqual(
            plain({
              userId: zed.id,
              merchantId: merchant.id,
              role: "owner",
              createdAt: plus(T0, 2 * minute),
              email: zed.email,
              twoFactor: false
            })
          )
          const locked = yield* Effect.flatMap(Store.Transactor, (tx) =>
            tx.withTransaction(store.lockTeam(merchant.id))
          )
          expect(locked.map((m) => m.userId)).toEqual([bob.id, zed.id, amy.id])
          expect((yield* store.memberships(amy.id)).map((m) => [m.merchantId, m.role])).toEqual([
            [merchant.id, "finance"],
            [other.id, "admin"]
          ])

          yield* store.setRole(merchant.id, amy.id, "owner")
          yield* store.removeMembership(merchant.id, bob.id)
          expect((yield* store.members(merchant.id)).map((m) => [m.email, m.role])).toEqual([
            [amy.email, "owner"],
            [zed.email, "owner"]
          ])
          expect((yield* store.memberships(amy.id)).find((m) => m.merchantId === other.id)?.role).toBe(
            "admin"
          )
          expect(yield* store.memberships(bob.id)).toEqual([])
          expect(yield* store.members("nope" as Store.Merchant["id"])).toEqual([])
          expect(yield* store.lockTeam("nope" as Store.Merchant["id"])).toEqual([])
        })
    )

    it.effect("an invitation is found by its token's hash, accepted once while pending, revoked once", () =>
      Effect.gen(function* () {
        const store = yield* Store.PeopleStore
        const merchant = yield* freshMerchant()
        const older = yield* newInvitation(merchant.id)
        const newer = yield* newInvitation(merchant.id, { createdAt: plus(T0, minute), role: "owner" })
        expect(plain(yield* store.invitationByToken(older.tokenHash))).toEqual(plain(older))
        expect(yield* store.invitationByToken("no such hash")).toBeUndefined()
        expect((yield* store.invitations(merchant.id)).map((i) => i.id)).toEqual([newer.id, older.id])
        expect(yield* store.invitations(merchant.id)).not.toContainEqual(
          expect.objectContaining({ tokenHash: expect.anything() })
        )

        // Not at or after its expiry.
        expect(yield* store.acceptInvitation(older.id, older.expiresAt)).toBe(false)
        expect(yield* store.acceptInvitation(older.id, plus(T0, hour))).toBe(true)
        expect(yield* store.acceptInvitation(older.id, plus(T0, hour))).toBe(false)
        expect((yield* store.invitationByToken(older.tokenHash))?.acceptedAt).toEqual(plus(T0, hour))
        expect((yield* store.invitations(merchant.id)).map((i) => i.id)).toEqual([newer.id])
        expect(yield* store.revokeInvitation(merchant.id, older.id, plus(T0, hour))).toBe(false)

        const elsewhere = yield* freshMerchant()
        expect(yield* store.revokeInvitation(elsewhere.id, newer.id, plus(T0, hour))).toBe(false)
        expect(yield* store.revokeInvitation(merchant.id, "not-a-uuid", plus(T0, hour))).toBe(false)
        expect(yield* store.revokeInvitation(merchant.id, newer.id, plus(T0, hour))).toBe(true)
        expect(yield* store.revokeInvitation(merchant.id, newer.id, plus(T0, hour))).toBe(false)
        expect(yield* store.acceptInvitation(newer.id, plus(T0, hour))).toBe(false)
        // Revoked but not accepted: still listed, with what became of it.
        expect(
          (yield* store.invitations(merchant.id)).map((i) => [i.id, Person.invitationState(i, T0)])
        ).toEqual([[newer.id, "revoked"]])
      })
    )

    it.effect(
      "a session is found by its token's hash, touched, and ended once; the account's others as named",
      () =>
        Effect.gen(function* () {
          const store = yield* Store.PeopleStore
          const merchant = yield* freshMerchant()
          const other = yield* freshMerchant()
          const account = yield* storedAccount()
          const stranger = yield* storedAccount()
          const here = yield* newSession(account.id, {
            merchantId: merchant.id,
            signedInAt: plus(T0, minute)
          })
          const there = yield* newSession(account.id, {
            merchantId: other.id,
            signedInAt: plus(T0, 2 * minute)
          })
          const ops = yield* newSession(account.id, {
            console: "ops",
            stage: "two_factor",
            signedInAt: plus(T0, 3 * minute)
          })
          const theirs = yield* newSession(stranger.id, { merchantId: merchant.id })

          expect(plain(yield* store.sessionByToken(here.tokenHash))).toEqual(plain(here))
          expect(yield* store.sessionByToken("no such hash")).toBeUndefined()
          expect((yield* store.openSessions(account.id)).map((s) => s.id)).toEqual([
            ops.id,
            there.id,
            here.id
          ])
          yield* store.touchSession(here.id, plus(T0, 10 * minute))
          expect((yield* store.sessionByToken(here.tokenHash))?.lastSeenAt).toEqual(plus(T0, 10 * minute))

          // Another account's session is not this one's to end.
          expect(yield* store.endSession(theirs.id, T0, account.id)).toBe(false)
          expect(yield* store.endSession("not-a-uuid", T0)).toBe(false)
          expect(yield* store.endSession(here.id, plus(T0, hour), account.id)).toBe(true)
          expect(yield* store.endSession(here.id, plus(T0, hour))).toBe(false)
          expect((yield* store.sessionByToken(here.tokenHash))?.endedAt).toEqual(plus(T0, hour))

          const more = yield* newSession(account.id, {
            merchantId: merchant.id,
            signedInAt: plus(T0, 4 * minute)
          })
          yield* store.endSessions(account.id, plus(T0, hour), {
            merchantId: merchant.id,
            console: "dashboard"
          })
          expect((yield* store.openSessions(account.id)).map((s) => s.id)).toEqual([ops.id, there.id])
          expect((yield* store.sessionByToken(more.tokenHash))?.endedAt).toEqual(plus(T0, hour))
          yield* store.endSessions(account.id, plus(T0, hour), { except: there.id })
          expect((yield* store.openSessions(account.id)).map((s) => s.id)).toEqual([there.id])
          yield* store.endSessions(account.id, plus(T0, hour))
          expect(yield* store.openSessions(account.id)).toEqual([])
          expect((yield* store.openSessions(stranger.id)).map((s) => s.id)).toEqual([theirs.id])
        })
    )
  })
}
