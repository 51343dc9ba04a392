/**
 * Teams, through `People` on the memory store: invitations (checked, queued with their link in the
 * same transaction, 72 hours and once, accepted by a new account or proven by an existing one), accounts
 * made for someone, roles changed and members removed by the rules (only an owner gives or takes
 * `owner`, a team keeps an owner), with properties over random histories of team changes.
 */
import { describe, expect, it } from "@effect/vitest"
import { type Ids, Person, Role } from "@laari/core"
import { DateTime, Effect } from "effect"
import fc from "fast-check"
import { MemoryPeopleNotices } from "../src/MemoryPeopleNotices.js"
import {
  advance,
  email,
  GoodPassword,
  hours,
  member,
  merchant,
  notes,
  outcome,
  people,
  Start,
  team,
  wallNow,
  world
} from "./support/PeopleWorld.js"

const link = (token: string) => `https://laari.test/dashboard/invitations/${token}`

const invite = (
  merchantId: Ids.MerchantId,
  by: Person.UserId,
  role: Role.MerchantRole,
  to = email("invited")
) => Effect.flatMap(people, (s) => s.invite({ merchantId, email: to, role, by, link }))

const queued = Effect.flatMap(MemoryPeopleNotices, (n) => n.queued)

describe("People: teams", () => {
  it.effect(
    "an invitation: checked, queued with its link and merchant, its token returned once and kept hashed",
    () =>
      world(
        Effect.gen(function* () {
          const service = yield* people
          const { merchant: m, owner } = yield* team({ name: "Reef Cafe" })
          const viewer = yield* member(m.id, "viewer")
          const admin = yield* member(m.id, "admin")
          const outsider = (yield* team()).owner

          const bad = yield* Effect.flip(invite(m.id, owner.user.id, "finance", "not an address"))
          expect(bad).toMatchObject({ _tag: "InvalidRequest", errors: [{ field: "email" }] })
          const already = yield* Effect.flip(
            invite(m.id, owner.user.id, "finance", viewer.email.toUpperCase())
          )
          expect(already).toMatchObject({ _tag: "InvalidRequest", errors: [{ field: "email" }] })
          expect(yield* outcome(invite(m.id, viewer.user.id, "viewer"))).toBe("TeamRuleBroken")
          expect(yield* outcome(invite(m.id, outsider.user.id, "viewer"))).toBe("TeamRuleBroken")
          expect(yield* outcome(invite(m.id, admin.user.id, "owner"))).toBe("TeamRuleBroken")
          expect(yield* queued).toEqual([])

          const address = email("finance")
          const made = yield* invite(m.id, admin.user.id, "finance", ` ${address.toUpperCase()}`)
          expect(made.invitation).toMatchObject({
            merchantId: m.id,
            email: address,
            role: "finance",
            invitedBy: admin.user.id
          })
          expect(made.invitation.createdAt).toEqual(yield* wallNow)
          expect(
            DateTime.toEpochMillis(made.invitation.expiresAt) -
              DateTime.toEpochMillis(made.invitation.createdAt)
          ).toBe(hours(Person.InvitationHours))
          expect(made.token.length).toBeGreaterThanOrEqual(32)
          expect(yield* queued).toEqual([
            {
              invitationId: made.invitation.id,
              merchantId: m.id,
              merchantName: "Reef Cafe",
              email: address,
              role: "finance",
              link: link(made.token),
              expiresAt: made.invitation.expiresAt
            }
          ])
          expect(yield* service.invitation(made.token)).toEqual({
            invitation: made.invitation,
            existing: false
          })
          expect(yield* service.invitation(`${made.token}x`)).toBeUndefined()
          expect((yield* service.invitations(m.id)).map((i) => i.id)).toEqual([made.invitation.id])
          // Owners may invite owners.
          yield* invite(m.id, owner.user.id, "owner")
          const invited = (yield* notes(m.id)).filter((n) => n.action === "member.invite")
          expect(invited.map((n) => n.summary)).toMatchObject([
            { email: address, role: "finance" },
            { role: "owner" }
          ])
          expect(JSON.stringify(invited)).not.toContain(made.token)
        })
      )
  )

  it.effect("accepting: a new account sets a good password, once, within 72 hours, unless revoked", () =>
    world(
      Effect.gen(function* () {
        const service = yield* people
        const { merchant: m, owner } = yield* team()
        const made = yield* invite(m.id, owner.user.id, "finance")
        const weak = yield* Effect.flip(service.accept(made.token, "short"))
        expect(weak).toMatchObject({ _tag: "InvalidRequest", errors: [{ field: "password" }] })
        // Refused, it is still pending: nothing of that attempt stayed.
        expect(yield* service.invitation(made.token)).toBeDefined()
        const user = yield* service.accept(made.token, GoodPassword)
        expect(user).toMatchObject({
          email: made.invitation.email,
          mustChangePassword: false,
          twoFactor: false
        })
        expect(yield* outcome(service.accept(made.token, GoodPassword))).toBe("PersonNotFound")
        expect(yield* service.invitation(made.token)).toBeUndefined()
        expect(yield* service.invitations(m.id)).toEqual([])
        expect((yield* service.members(m.id)).map((x) => [x.email, x.role])).toEqual([
          [owner.email, "owner"],
          [made.invitation.email, "finance"]
        ])
        const signedIn = yield* service.signIn({
          console: "dashboard",
          email: made.invitation.email,
          password: GoodPassword,
          address: null,
          userAgent: null
        })
        expect(signedIn.session).toMatchObject({ stage: "full", merchantId: m.id })

        const late = yield* invite(m.id, owner.user.id, "viewer")
        yield* advance(hours(72))
        expect(yield* service.invitation(late.token)).toBeUndefined()
        expect(yield* outcome(service.accept(late.token, GoodPassword))).toBe("PersonNotFound")

        const revoked = yield* invite(m.id, owner.user.id, "viewer")
        expect(yield* outcome(service.revokeInvitation(m.id, "not-an-id"))).toBe("PersonNotFound")
        expect(yield* outcome(service.revokeInvitation((yield* merchant()).id, revoked.invitation.id))).toBe(
          "PersonNotFound"
        )
        yield* service.revokeInvitation(m.id, revoked.invitation.id)
        expect(yield* outcome(service.revokeInvitation(m.id, revoked.invitation.id))).toBe("PersonNotFound")
        expect(yield* outcome(service.accept(revoked.token, GoodPassword))).toBe("PersonNotFound")
        const states = (yield* service.invitations(m.id)).map((i) => Person.invitationState(i, Start))
        expect(states).toEqual(["revoked", "pending"])
        expect((yield* notes(m.id)).map((n) => n.action)).toEqual(
          expect.arrayContaining(["user.create", "invitation.accept", "invitation.revoke"])
        )
      })
    )
  )

  it.effect(
    "accepting with an account: its own password proves it, and it joins with its password kept",
    () =>
      world(
        Effect.gen(function* () {
          const service = yield* people
          const home = yield* team()
          const { merchant: m, owner } = yield* team()
          const made = yield* invite(m.id, owner.user.id, "developer", home.owner.email)
          expect((yield* service.invitation(made.token))?.existing).toBe(true)
          expect(yield* outcome(service.accept(made.token, "someone else's password"))).toBe("SignInRefused")
          expect(yield* service.invitation(made.token)).toBeDefined()
          const user = yield* service.accept(made.token, GoodPassword)
          expect(user.id).toBe(home.owner.user.id)
          const opened = yield* service.open(home.owner.token)
          expect(opened?.memberships.map((x) => [x.merchantId, x.role])).toEqual([
            [home.merchant.id, "owner"],
            [m.id, "developer"]
          ])
        })
      )
  )

  it.effect("two acceptances of one invitation at once: one account, one membership", () =>
    world(
      Effect.gen(function* () {
        const service = yield* people
        const { merchant: m, owner } = yield* team()
        const made = yield* invite(m.id, owner.user.id, "support")
        const outcomes = yield* Effect.all(
          [
            outcome(service.accept(made.token, GoodPassword)),
            outcome(service.accept(made.token, `${GoodPassword}?`))
          ],
          { concurrency: "unbounded" }
        )
        expect([...outcomes].sort()).toEqual(["PersonNotFound", "succeeded"])
        expect(yield* service.members(m.id)).toHaveLength(2)
      })
    )
  )

  it.effect("accounts made for someone: a one-time password when new, the account's own kept when not", () =>
    world(
      Effect.gen(function* () {
        const service = yield* people
        const { merchant: m, owner } = yield* team()
        const other = yield* merchant()
        expect(
          yield* outcome(service.createMember({ merchantId: m.id, email: "nope", role: "viewer" }))
        ).toBe("InvalidRequest")
        expect(
          yield* outcome(
            service.createMember({
              merchantId: "not-a-merchant" as Ids.MerchantId,
              email: email(),
              role: "viewer"
            })
          )
        ).toBe("InvalidRequest")
        const again = yield* Effect.flip(
          service.createMember({ merchantId: m.id, email: owner.email, role: "viewer" })
        )
        expect(again).toMatchObject({ _tag: "InvalidRequest", errors: [{ field: "email" }] })
        const joined = yield* service.createMember({
          merchantId: other.id,
          email: owner.email,
          role: "finance"
        })
        expect(joined).toMatchObject({ password: undefined, user: { id: owner.user.id, twoFactor: true } })
        const signedIn = yield* service.signIn({
          console: "dashboard",
          email: owner.email,
          password: GoodPassword,
          address: null,
          userAgent: null
        })
        // The first team is the oldest membership.
        expect(signedIn.session).toMatchObject({ merchantId: m.id, stage: "two_factor" })
      })
    )
  )

  it.effect("roles: only an owner gives or takes owner, a team keeps one, and the change is noted", () =>
    world(
      Effect.gen(function* () {
        const service = yield* people
        const { merchant: m, owner } = yield* team()
        const admin = yield* member(m.id, "admin")
        const viewer = yield* member(m.id, "viewer")
        const setRole = (userId: Person.UserId, role: Role.MerchantRole, by: Person.UserId) =>
          outcome(service.setRole({ merchantId: m.id, userId, role, by }))

        expect(yield* setRole(viewer.user.id, "finance", viewer.user.id)).toBe("TeamRuleBroken")
        expect(yield* setRole(viewer.user.id, "owner", admin.user.id)).toBe("TeamRuleBroken")
        expect(yield* setRole(owner.user.id, "admin", admin.user.id)).toBe("TeamRuleBroken")
        expect(yield* setRole(owner.user.id, "admin", owner.user.id)).toBe("TeamRuleBroken")
        expect(yield* setRole((yield* team()).owner.user.id, "viewer", owner.user.id)).toBe("PersonNotFound")
        expect(yield* setRole(viewer.user.id, "finance", admin.user.id)).toBe("succeeded")
        expect(yield* setRole(viewer.user.id, "finance", admin.user.id)).toBe("succeeded")
        expect(yield* setRole(admin.user.id, "owner", owner.user.id)).toBe("succeeded")
        // Two owners now: either may step down, but not both.
        expect(yield* setRole(owner.user.id, "viewer", owner.user.id)).toBe("succeeded")
        expect(yield* setRole(admin.user.id, "viewer", admin.user.id)).toBe("TeamRuleBroken")
        const changes = (yield* notes(m.id)).filter((n) => n.action === "member.role_change")
        expect(changes.map((n) => [n.resourceId, n.summary])).toEqual([
          [viewer.user.id, { from: "viewer", to: "finance" }],
          [admin.user.id, { from: "admin", to: "owner" }],
          [owner.user.id, { from: "owner", to: "viewer" }]
        ])
      })
    )
  )

  it.effect("a role that needs two-factor ends the member's sessions there until they enrol", () =>
    world(
      Effect.gen(function* () {
        const service = yield* people
        const { merchant: m, owner } = yield* team()
        const viewer = yield* member(m.id, "viewer")
        yield* service.setRole({ merchantId: m.id, userId: viewer.user.id, role: "admin", by: owner.user.id })
        expect(yield* service.open(viewer.token)).toBeUndefined()
        const again = yield* service.signIn({
          console: "dashboard",
          email: viewer.email,
          password: GoodPassword,
          address: null,
          userAgent: null
        })
        expect(again.session.stage).toBe("enrol")
      })
    )
  )

  it.effect("removal: never the last owner; the member's sessions on that team end, others stay", () =>
    world(
      Effect.gen(function* () {
        const service = yield* people
        const { merchant: m, owner } = yield* team()
        const other = yield* team()
        const finance = yield* member(m.id, "finance")
        const admin = yield* member(m.id, "admin")
        yield* service.createMember({ merchantId: other.merchant.id, email: finance.email, role: "viewer" })
        const elsewhere = yield* service.signIn({
          console: "dashboard",
          email: finance.email,
          password: GoodPassword,
          address: null,
          userAgent: null
        })
        const moved = yield* service.switchTo(elsewhere.token, {
          merchantId: other.merchant.id,
          environment: "test"
        })
        const remove = (userId: Person.UserId, by: Person.UserId) =>
          outcome(service.removeMember({ merchantId: m.id, userId, by }))

        expect(yield* remove(owner.user.id, owner.user.id)).toBe("TeamRuleBroken")
        expect(yield* remove(owner.user.id, admin.user.id)).toBe("TeamRuleBroken")
        expect(yield* remove(admin.user.id, finance.user.id)).toBe("TeamRuleBroken")
        expect(yield* remove(finance.user.id, admin.user.id)).toBe("succeeded")
        expect(yield* remove(finance.user.id, admin.user.id)).toBe("PersonNotFound")
        expect(yield* service.open(finance.token)).toBeUndefined()
        expect((yield* service.open(moved.token))?.session.merchantId).toBe(other.merchant.id)
        // Leaving takes no permission.
        expect(yield* remove(admin.user.id, admin.user.id)).toBe("succeeded")
        expect((yield* service.members(m.id)).map((x) => x.email)).toEqual([owner.email])
        expect((yield* notes(m.id)).filter((n) => n.action === "member.remove")).toHaveLength(2)
      })
    )
  )

  it.effect(
    "any history of invitations, acceptances, role changes and removals keeps an owner (property)",
    () =>
      Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(fc.array(teamStep, { minLength: 1, maxLength: 25 }), (steps) =>
            Effect.runPromise(world(teamHistory(steps)))
          ),
          { numRuns: 40 }
        )
      )
  )
})

const roles = fc.constantFrom(...Role.merchantRoles)

type TeamStep =
  | { readonly _tag: "Invite"; readonly by: number; readonly role: Role.MerchantRole }
  | { readonly _tag: "Accept"; readonly invitation: number }
  | {
      readonly _tag: "SetRole"
      readonly by: number
      readonly member: number
      readonly role: Role.MerchantRole
    }
  | { readonly _tag: "Remove"; readonly by: number; readonly member: number }

const pick = fc.nat({ max: 7 })
const teamStep: fc.Arbitrary<TeamStep> = fc.oneof(
  fc.record({ _tag: fc.constant("Invite" as const), by: pick, role: roles }),
  fc.record({ _tag: fc.constant("Accept" as const), invitation: pick }),
  fc.record({ _tag: fc.constant("SetRole" as const), by: pick, member: pick, role: roles }),
  fc.record({ _tag: fc.constant("Remove" as const), by: pick, member: pick })
)

/** Runs the steps on a team of one owner, checking after each that an owner is left and no admin made one. */
const teamHistory = (steps: ReadonlyArray<TeamStep>) =>
  Effect.gen(function* () {
    const service = yield* people
    const { merchant: m, owner } = yield* team()
    const accounts: Array<Person.UserId> = [owner.user.id]
    const tokens: Array<string> = []
    const at = <A>(xs: ReadonlyArray<A>, i: number) => xs[i % Math.max(xs.length, 1)]
    for (const step of steps) {
      const before = yield* service.members(m.id)
      const roleOf = (userId: Person.UserId | undefined) => before.find((x) => x.userId === userId)?.role
      if (step._tag === "Invite") {
        const by = at(accounts, step.by)!
        const r = yield* Effect.either(invite(m.id, by, step.role))
        if (r._tag === "Right") tokens.push(r.right.token)
        // Only an owner invites an owner.
        if (step.role === "owner" && r._tag === "Right") expect(roleOf(by)).toBe("owner")
      } else if (step._tag === "Accept") {
        const token = at(tokens, step.invitation)
        if (token === undefined) continue
        const r = yield* Effect.either(service.accept(token, GoodPassword))
        if (r._tag === "Right" && !accounts.includes(r.right.id)) accounts.push(r.right.id)
      } else if (step._tag === "SetRole") {
        const by = at(accounts, step.by)!
        const target = at(accounts, step.member)!
        const r = yield* Effect.either(
          service.setRole({ merchantId: m.id, userId: target, role: step.role, by })
        )
        // Only an owner makes an owner, or unmakes one.
        if (r._tag === "Right" && (step.role === "owner") !== (roleOf(target) === "owner"))
          expect(roleOf(by)).toBe("owner")
      } else {
        const by = at(accounts, step.by)!
        const target = at(accounts, step.member)!
        yield* Effect.either(service.removeMember({ merchantId: m.id, userId: target, by }))
      }
      const after = yield* service.members(m.id)
      expect(Person.owners(after)).toBeGreaterThanOrEqual(1)
    }
  })
