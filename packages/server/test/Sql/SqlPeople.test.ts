/**
 * The `People` service over the SQL store on PGlite and (with DATABASE_URL) PostgreSQL, with the
 * testkit's fake credentials: the whole way in, from an account made for someone to a team change, and
 * what concurrent requests may not both do: pass the second factor with one code, demote the last two
 * owners, accept one invitation twice. Each race is made real by a pause where the losing request would
 * slip through if the store did not hold it back (after reading the account, after locking the team).
 */
import { expect } from "@effect/vitest"
import { Audit, Credentials, type Ids, People, PeopleNotices, Person, Store } from "@laari/core"
import { Seed } from "@laari/testkit"
import * as MemoryCredentials from "@laari/testkit/MemoryCredentials"
import { DateTime, type Duration, Effect, Layer } from "effect"
import * as SqlPeople from "../../src/Sql/People.js"
import * as TestDatabase from "../support/TestDatabase.js"

const GoodPassword = "correct horse battery staple"
const who: Audit.Who = {
  actor: { kind: "user", id: "usr_sql" },
  address: null,
  userAgent: null,
  requestId: null
}
const link = (token: string) => `https://laari.test/dashboard/invitations/${token}`

/** Invitations' messages as queued; kept apart from the database, which is enough for these tests. */
const queued: Array<PeopleNotices.InvitationNotice> = []
const notices = Layer.succeed(PeopleNotices.PeopleNotices, {
  invitation: (notice) => Effect.sync(() => queued.push(notice))
})

interface Pauses {
  /** In `totpStep`: after the session's account was read, before its step is used. */
  readonly totp?: Duration.DurationInput
  /** After the team was locked, before it is read for the change. */
  readonly team?: Duration.DurationInput
}

/** `effect` with `People` over the database, paused where `pauses` says. */
const withPeople = <A, E, R>(effect: Effect.Effect<A, E, R>, pauses: Pauses = {}) => {
  const slowCredentials = Layer.succeed(Credentials.Credentials, {
    ...MemoryCredentials.make,
    totpStep: (sealed, code, now) =>
      Effect.zipRight(Effect.sleep(pauses.totp ?? 0), MemoryCredentials.make.totpStep(sealed, code, now))
  })
  const slowStore = Layer.effect(
    Store.PeopleStore,
    Effect.map(Store.PeopleStore, (store) => ({
      ...store,
      lockTeam: (merchantId: Ids.MerchantId) =>
        Effect.zipLeft(store.lockTeam(merchantId), Effect.sleep(pauses.team ?? 0))
    }))
  )
  return Effect.provide(
    effect,
    SqlPeople.serviceLayer(slowCredentials, notices).pipe(Layer.provide(slowStore))
  )
}

const freshEmail = (name: string) =>
  Effect.map(
    Effect.sync(() => crypto.randomUUID().slice(0, 8)),
    (id) => `${name}.${id}@example.com`
  )

/** A merchant with an owner signed in at `full` (password changed, authenticator enrolled). */
const ownedTeam = Effect.gen(function* () {
  const people = yield* People.People
  const merchant = yield* Effect.flatMap(Seed.Seed, (seed) => seed.merchant({ name: "Lagoon Books" }))
  const owner = yield* member(merchant.id, "owner")
  return { people, merchant, owner }
})

/** The code of the account's authenticator (pending, or enrolled) now. */
const codeOf = (userId: Person.UserId, pending = false, later = 0) =>
  Effect.gen(function* () {
    const account = yield* Effect.flatMap(Store.PeopleStore, (s) => s.userById(userId))
    const sealed = pending ? account?.totpPending : account?.totpSecret
    const secret = sealed == null ? undefined : MemoryCredentials.unseal(sealed)
    if (secret === undefined) return yield* Effect.dieMessage(`no authenticator for ${userId}`)
    return MemoryCredentials.codeAt(secret, DateTime.unsafeMake(Date.now() + later))
  })

const member = (merchantId: Ids.MerchantId, role: Person.Membership["role"]) =>
  Effect.gen(function* () {
    const people = yield* People.People
    const email = yield* freshEmail(role)
    const created = yield* people.createMember({ merchantId, email, role })
    const first = yield* people.signIn({
      console: "dashboard",
      email,
      password: created.password!,
      address: null,
      userAgent: null
    })
    let issued = yield* people.changePassword(first.token, { current: created.password!, next: GoodPassword })
    let recoveryCodes: ReadonlyArray<string> = []
    if (issued.session.stage === "enrol") {
      yield* people.beginEnrolment(issued.token)
      const confirmed = yield* people.confirmEnrolment(issued.token, yield* codeOf(created.user.id, true))
      issued = confirmed.issued
      recoveryCodes = confirmed.recoveryCodes
    }
    return { user: created.user, email, token: issued.token, session: issued.session, recoveryCodes }
  })

const signIn = (email: string) =>
  Effect.flatMap(People.People, (people) =>
    people.signIn({
      console: "dashboard",
      email,
      password: GoodPassword,
      address: "192.0.2.1",
      userAgent: "sql"
    })
  )

const outcome = <A, E extends { readonly _tag: string }, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.match(effect, { onFailure: (e) => e._tag, onSuccess: () => "succeeded" as const })

TestDatabase.eachBackend("SQL people", (it) => {
  it.effect(
    "the whole way in: a one-time password, a new one, an authenticator, an invitation, a team change",
    () =>
      withPeople(
        Effect.gen(function* () {
          const { people, merchant, owner } = yield* ownedTeam
          expect(owner.session).toMatchObject({ stage: "full", merchantId: merchant.id })
          const opened = yield* people.open(owner.token)
          expect(opened?.user).toMatchObject({
            email: owner.email,
            twoFactor: true,
            mustChangePassword: false
          })

          yield* people.signOut(owner.token)
          expect(yield* people.open(owner.token)).toBeUndefined()
          const again = yield* signIn(owner.email)
          expect(again.session.stage).toBe("two_factor")
          // The enrolment used this step's code: the next step's, accepted for drift, passes.
          const full = yield* people.verifyTwoFactor(again.token, yield* codeOf(owner.user.id, false, 30_000))
          expect(full.session).toMatchObject({ stage: "full", signedInAt: again.session.signedInAt })
          expect(yield* people.open(again.token)).toBeUndefined()

          const invited = yield* people.invite({
            merchantId: merchant.id,
            email: yield* freshEmail("finance"),
            role: "finance",
            by: owner.user.id,
            link
          })
          expect(queued.at(-1)).toMatchObject({
            invitationId: invited.invitation.id,
            merchantName: "Lagoon Books",
            link: link(invited.token)
          })
          expect((yield* people.invitation(invited.token))?.existing).toBe(false)
          const finance = yield* people.accept(invited.token, GoodPassword)
          expect(yield* outcome(people.accept(invited.token, GoodPassword))).toBe("PersonNotFound")
          const signedIn = yield* signIn(finance.email)
          expect(signedIn.session).toMatchObject({ stage: "full", merchantId: merchant.id })

          yield* people.setRole({
            merchantId: merchant.id,
            userId: finance.id,
            role: "viewer",
            by: owner.user.id
          })
          expect((yield* people.members(merchant.id)).map((m) => [m.email, m.role])).toEqual([
            [owner.email, "owner"],
            [finance.email, "viewer"]
          ])
          yield* people.removeMember({ merchantId: merchant.id, userId: finance.id, by: owner.user.id })
          expect(yield* people.open(signedIn.token)).toBeUndefined()
          const noted = yield* Effect.flatMap(Store.AuditStore, (store) =>
            store.list({ tenant: { merchantId: merchant.id, environment: "test" } }, { limit: 100 })
          )
          expect(noted.map((e) => e.action).reverse()).toEqual([
            "user.create",
            "member.create",
            "user.password_change",
            "user.two_factor_enrol",
            "member.invite",
            "user.create",
            "invitation.accept",
            "member.role_change",
            "member.remove"
          ])
          expect(JSON.stringify(noted)).not.toContain(invited.token)
        }).pipe(Audit.as(who))
      )
  )

  it.effect("two sign-ins giving the same TOTP code at once: exactly one passes", () =>
    withPeople(
      Effect.gen(function* () {
        const { people, owner } = yield* ownedTeam
        const [a, b] = [yield* signIn(owner.email), yield* signIn(owner.email)]
        const code = yield* codeOf(owner.user.id, false, 30_000)
        const outcomes = yield* Effect.all(
          [outcome(people.verifyTwoFactor(a.token, code)), outcome(people.verifyTwoFactor(b.token, code))],
          {
            concurrency: "unbounded"
          }
        )
        expect([...outcomes].sort()).toEqual(["SignInRefused", "succeeded"])
      }),
      { totp: "150 millis" }
    )
  )

  it.effect("two sign-ins giving the same recovery code at once: exactly one passes", () =>
    withPeople(
      Effect.gen(function* () {
        const { people, owner } = yield* ownedTeam
        const [c, d] = [yield* signIn(owner.email), yield* signIn(owner.email)]
        const code = owner.recoveryCodes[0]!
        const outcomes = yield* Effect.all(
          [outcome(people.verifyTwoFactor(c.token, code)), outcome(people.verifyTwoFactor(d.token, code))],
          { concurrency: "unbounded" }
        )
        expect([...outcomes].sort()).toEqual(["SignInRefused", "succeeded"])
      }),
      { totp: "150 millis" }
    )
  )

  it.effect("one session stepped up twice at once (a TOTP code and a recovery code): one new session", () =>
    withPeople(
      Effect.gen(function* () {
        const { people, owner } = yield* ownedTeam
        const session = yield* signIn(owner.email)
        const outcomes = yield* Effect.all(
          [
            people.verifyTwoFactor(session.token, yield* codeOf(owner.user.id, false, 30_000)),
            people.verifyTwoFactor(session.token, owner.recoveryCodes[1]!)
          ].map((attempt) => Effect.either(attempt)),
          { concurrency: "unbounded" }
        )
        const won = outcomes.flatMap((o) => (o._tag === "Right" ? [o.right] : []))
        expect(won).toHaveLength(1)
        const open = (yield* people.sessions(owner.user.id)).map((s) => s.id)
        expect(open.filter((id) => id !== owner.session.id)).toEqual([won[0]!.session.id])
        // The loser's writes rolled back with it: had the recovery code lost, it is still unused.
        const unused = yield* Effect.flatMap(Store.PeopleStore, (s) => s.unusedRecoveryCodes(owner.user.id))
        expect(unused).toBe(outcomes[1]!._tag === "Right" ? 9 : 10)
      }),
      { totp: "150 millis" }
    )
  )

  it.effect("the last two owners each stepping down at once: one is refused, an owner is left", () =>
    withPeople(
      Effect.gen(function* () {
        const { people, merchant, owner } = yield* ownedTeam
        const second = yield* member(merchant.id, "admin")
        yield* people.setRole({
          merchantId: merchant.id,
          userId: second.user.id,
          role: "owner",
          by: owner.user.id
        })
        const stepDown = (userId: Person.UserId) =>
          outcome(people.setRole({ merchantId: merchant.id, userId, role: "admin", by: userId }))
        const outcomes = yield* Effect.all([stepDown(owner.user.id), stepDown(second.user.id)], {
          concurrency: "unbounded"
        })
        expect([...outcomes].sort()).toEqual(["TeamRuleBroken", "succeeded"])
        expect(Person.owners(yield* people.members(merchant.id))).toBe(1)

        // And removals: the remaining owner and the other, each removing the other at once.
        const owners = (yield* people.members(merchant.id)).filter((m) => m.role === "owner")
        const other = owners[0]!.userId === owner.user.id ? second.user.id : owner.user.id
        yield* people.setRole({
          merchantId: merchant.id,
          userId: other,
          role: "owner",
          by: owners[0]!.userId
        })
        const removals = yield* Effect.all(
          [
            outcome(
              people.removeMember({ merchantId: merchant.id, userId: owner.user.id, by: second.user.id })
            ),
            outcome(
              people.removeMember({ merchantId: merchant.id, userId: second.user.id, by: owner.user.id })
            )
          ],
          { concurrency: "unbounded" }
        )
        // The loser is no longer on the team it would change.
        expect([...removals].sort()).toEqual(["TeamRuleBroken", "succeeded"])
        expect(Person.owners(yield* people.members(merchant.id))).toBe(1)
      }),
      { team: "150 millis" }
    )
  )

  it.effect("two acceptances of one invitation at once: one account and membership", () =>
    withPeople(
      Effect.gen(function* () {
        const { people, merchant, owner } = yield* ownedTeam
        const invited = yield* people.invite({
          merchantId: merchant.id,
          email: yield* freshEmail("twice"),
          role: "support",
          by: owner.user.id,
          link
        })
        const outcomes = yield* Effect.all(
          [
            outcome(people.accept(invited.token, GoodPassword)),
            outcome(people.accept(invited.token, `${GoodPassword}!`))
          ],
          { concurrency: "unbounded" }
        )
        expect([...outcomes].sort()).toEqual(["PersonNotFound", "succeeded"])
        expect(yield* people.members(merchant.id)).toHaveLength(2)
      })
    )
  )
})
