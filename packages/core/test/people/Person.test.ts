/**
 * People's pure rules: emails as accounts are keyed, an invitation's life, a sign-in's stages, a
 * session's limits, TOTP steps used once, and the team rules (who may invite, give or take `owner`,
 * and that a team keeps one), each in both directions and over every pair of roles.
 */
import { describe, expect, it } from "@effect/vitest"
import { DateTime } from "effect"
import fc from "fast-check"
import * as Person from "../../src/people/Person.js"
import { type MerchantRole, merchantRoles } from "../../src/people/Role.js"

const T0 = DateTime.unsafeMake("2026-03-31T10:00:00.000Z")
const at = (millis: number) => DateTime.unsafeMake(DateTime.toEpochMillis(T0) + millis)

const user = (overrides: Partial<Person.User> = {}): Person.User => ({
  id: Person.UserId.make("0b6b3d1e-5f0e-4b8e-9a39-1d9d2a5c7e11"),
  email: "amina@example.com",
  mustChangePassword: false,
  twoFactor: false,
  operatorRole: null,
  createdAt: T0,
  ...overrides
})

const invitation = (overrides: Partial<Person.Invitation> = {}): Person.Invitation => ({
  id: "inv",
  merchantId: "m" as Person.Invitation["merchantId"],
  email: "amina@example.com",
  role: "finance",
  invitedBy: null,
  createdAt: T0,
  expiresAt: at(Person.InvitationHours * 3_600_000),
  acceptedAt: null,
  revokedAt: null,
  ...overrides
})

const session = (signedIn: number, lastSeen: number): Person.Session => ({
  id: "s",
  userId: user().id,
  console: "dashboard",
  stage: "full",
  merchantId: null,
  environment: "test",
  signedInAt: at(signedIn),
  lastSeenAt: at(lastSeen),
  address: null,
  userAgent: null
})

describe("Person", () => {
  it("keys emails trimmed and lower-cased, and knows an address from text that is none", () => {
    expect(Person.normalEmail("  Amina@Example.COM ")).toBe("amina@example.com")
    for (const good of ["a@b.mv", "first.last+tag@sub.example.com"]) expect(Person.isEmail(good)).toBe(true)
    for (const bad of ["", "a@b", "@b.mv", "a@.mv x", "a b@c.mv", "a@@b.mv", `${"a".repeat(250)}@b.mv`])
      expect(Person.isEmail(bad)).toBe(false)
    expect(Person.isEmail(`${"a".repeat(249)}@b.mv`)).toBe(true)
  })

  it("an invitation is pending until its expiry, then expired; accepted and revoked win over both", () => {
    const i = invitation()
    expect(Person.invitationState(i, T0)).toBe("pending")
    expect(Person.invitationState(i, at(72 * 3_600_000 - 1))).toBe("pending")
    expect(Person.invitationState(i, i.expiresAt)).toBe("expired")
    expect(Person.invitationState(invitation({ acceptedAt: T0, revokedAt: T0 }), i.expiresAt)).toBe(
      "accepted"
    )
    expect(Person.invitationState(invitation({ revokedAt: T0 }), i.expiresAt)).toBe("revoked")
  })

  it("a sign-in goes to the password change first, then the second factor, then enrolment where required", () => {
    expect(Person.stageAfterPassword(user({ mustChangePassword: true, twoFactor: true }), true)).toBe(
      "change_password"
    )
    expect(Person.stageAfterPassword(user({ twoFactor: true }), false)).toBe("two_factor")
    expect(Person.stageAfterPassword(user(), true)).toBe("enrol")
    expect(Person.stageAfterPassword(user(), false)).toBe("full")
    expect(Person.stageAfterPasswordChange("change_password", user(), true)).toBe("enrol")
    expect(Person.stageAfterPasswordChange("change_password", user(), false)).toBe("full")
    // A full session stays full: its second factor was passed.
    expect(Person.stageAfterPasswordChange("full", user(), true)).toBe("full")
  })

  it("a stage takes its own step; a full one may change its password or enrol, never pass a second factor", () => {
    const steps = ["change_password", "enrol", "two_factor"] as const
    for (const stage of steps)
      for (const step of steps)
        expect([stage, step, Person.mayTake(stage, step)]).toEqual([stage, step, stage === step])
    expect(steps.map((step) => Person.mayTake("full", step))).toEqual([true, true, false])
  })

  it("two-factor is required in the console, and in the dashboard by any team's owner or admin role", () => {
    const m = (role: MerchantRole): Person.Membership => ({
      userId: user().id,
      merchantId: "m" as Person.Membership["merchantId"],
      role,
      createdAt: T0
    })
    expect(Person.twoFactorRequired("ops", [])).toBe(true)
    expect(Person.twoFactorRequired("dashboard", [])).toBe(false)
    expect(Person.twoFactorRequired("dashboard", [m("viewer"), m("finance")])).toBe(false)
    expect(Person.twoFactorRequired("dashboard", [m("viewer"), m("admin")])).toBe(true)
    expect(Person.twoFactorRequired("dashboard", [m("owner")])).toBe(true)
    expect(Person.stageOnSwitch("full", user(), "admin")).toBe("enrol")
    expect(Person.stageOnSwitch("full", user({ twoFactor: true }), "owner")).toBe("full")
    expect(Person.stageOnSwitch("full", user(), "developer")).toBe("full")
    expect(Person.stageOnSwitch("two_factor", user(), "owner")).toBe("two_factor")
  })

  it("a session lives under 30 minutes idle and 12 hours from its sign-in", () => {
    const idle = Person.IdleSeconds * 1000
    const absolute = Person.AbsoluteSeconds * 1000
    expect(Person.isLive(session(0, 0), at(idle - 1))).toBe(true)
    expect(Person.isLive(session(0, 0), at(idle))).toBe(false)
    expect(Person.isLive(session(0, absolute - 60_000), at(absolute - 1))).toBe(true)
    expect(Person.isLive(session(0, absolute - 60_000), at(absolute))).toBe(false)
  })

  it("a TOTP step is accepted only after the last one used", () => {
    expect(Person.acceptsStep(null, 0)).toBe(true)
    expect(Person.acceptsStep(10, 11)).toBe(true)
    expect(Person.acceptsStep(10, 10)).toBe(false)
    expect(Person.acceptsStep(10, 9)).toBe(false)
  })

  it("inviting takes team:manage, and inviting an owner takes an owner", () => {
    expect(Person.invitationProblem(undefined, "viewer")).toBeDefined()
    for (const actor of merchantRoles)
      for (const role of merchantRoles) {
        const allowed = (actor === "owner" || actor === "admin") && (role !== "owner" || actor === "owner")
        expect([actor, role, Person.invitationProblem(actor, role) === undefined]).toEqual([
          actor,
          role,
          allowed
        ])
      }
  })

  it("a team change: team:manage to make it, an owner to give or take owner, and one owner always left", () => {
    const change = (c: Partial<Person.TeamChange>) =>
      Person.teamChangeProblem({
        actor: "owner",
        self: false,
        current: "viewer",
        next: "finance",
        owners: 1,
        ...c
      })
    expect(change({})).toBeUndefined()
    expect(change({ actor: undefined })).toBe("Only a member who manages the team can change it.")
    expect(change({ actor: "finance" })).toBe("Only a member who manages the team can change it.")
    expect(change({ actor: "admin" })).toBeUndefined()
    expect(change({ actor: "admin", next: "owner" })).toBe("Only an owner can give or take the owner role.")
    expect(change({ actor: "admin", current: "owner", next: "admin", owners: 2 })).toBe(
      "Only an owner can give or take the owner role."
    )
    expect(change({ actor: "admin", current: "owner", next: null, owners: 2 })).toBe(
      "Only an owner can give or take the owner role."
    )
    // Nothing changes: no ownership moves.
    expect(change({ actor: "admin", current: "owner", next: "owner" })).toBeUndefined()
    expect(change({ current: "owner", next: "admin", owners: 1 })).toBe(
      "A team must keep at least one owner."
    )
    expect(change({ current: "owner", next: null, owners: 1 })).toBe("A team must keep at least one owner.")
    expect(change({ current: "owner", next: "admin", owners: 2 })).toBeUndefined()
    // Leaving takes no permission, but the last owner may not leave.
    expect(change({ actor: "viewer", self: true, next: null })).toBeUndefined()
    expect(change({ actor: "viewer", self: true, next: "admin" })).toBe(
      "Only a member who manages the team can change it."
    )
    expect(change({ actor: "owner", self: true, current: "owner", next: null, owners: 1 })).toBe(
      "A team must keep at least one owner."
    )
    expect(change({ actor: "owner", self: true, current: "owner", next: null, owners: 2 })).toBeUndefined()
    expect(Person.owners([{ role: "owner" }, { role: "admin" }, { role: "owner" }])).toBe(2)
  })

  it("no allowed change leaves a team without an owner, and none by a non-owner moves ownership (property)", () => {
    const role = fc.constantFrom(...merchantRoles)
    fc.assert(
      fc.property(
        fc.record({
          actor: fc.option(role, { nil: undefined }),
          self: fc.boolean(),
          current: role,
          next: fc.option(role, { nil: null }),
          owners: fc.nat({ max: 3 })
        }),
        (c) => {
          const owners = Math.max(c.owners, c.current === "owner" ? 1 : 0)
          const allowed = Person.teamChangeProblem({ ...c, owners }) === undefined
          const after = owners - (c.current === "owner" ? 1 : 0) + (c.next === "owner" ? 1 : 0)
          if (allowed) expect(after).toBeGreaterThanOrEqual(owners === 0 ? 0 : 1)
          const movesOwnership = (c.current === "owner") !== (c.next === "owner")
          const leaving = c.self && c.next === null
          if (allowed && movesOwnership && !leaving) expect(c.actor).toBe("owner")
        }
      )
    )
  })
})
