/**
 * Signing in and sessions, through `People` on the memory store with the fake credentials: one refusal
 * for every wrong way in, the stages a sign-in goes through (a one-time password changed, an
 * authenticator enrolled, the second factor), a token replaced at each step up and at a switch of team,
 * a TOTP step and a recovery code accepted once, sessions that end idle, at their limit, at sign-out
 * and when the password changes.
 */
import { describe, expect, it } from "@effect/vitest"
import { Credentials, Person } from "@laari/core"
import { Effect, Layer } from "effect"
import fc from "fast-check"
import * as MemoryCredentials from "../src/MemoryCredentials.js"
import {
  advance,
  codeOf,
  email,
  GoodPassword,
  member,
  merchant,
  minutes,
  notes,
  outcome,
  people,
  team,
  world
} from "./support/PeopleWorld.js"

const signIn = (address: string, password: string, console: Person.Console = "dashboard") =>
  Effect.flatMap(people, (s) =>
    s.signIn({ console, email: address, password, address: "198.51.100.1", userAgent: "ua" })
  )

describe("People: signing in", () => {
  it.effect("a one-time password opens only the password change, which moves an owner on to enrol", () =>
    world(
      Effect.gen(function* () {
        const service = yield* people
        const m = yield* merchant()
        const address = email("owner")
        const created = yield* service.createMember({
          merchantId: m.id,
          email: `  ${address.toUpperCase()} `,
          role: "owner"
        })
        expect(created.user).toMatchObject({ email: address, mustChangePassword: true, twoFactor: false })
        expect(created.password).toMatch(/^otp-/)

        const first = yield* signIn(address, created.password!)
        expect(first.session).toMatchObject({
          userId: created.user.id,
          console: "dashboard",
          stage: "change_password",
          merchantId: m.id,
          environment: "test",
          address: "198.51.100.1",
          userAgent: "ua"
        })
        const opened = yield* service.open(first.token)
        expect(opened?.session.stage).toBe("change_password")
        expect(opened?.memberships.map((x) => [x.merchantId, x.role])).toEqual([[m.id, "owner"]])
        // Not a step this stage may take.
        expect(yield* outcome(service.beginEnrolment(first.token))).toBe("SignInRefused")

        expect(
          yield* outcome(service.changePassword(first.token, { current: "wrong", next: GoodPassword }))
        ).toBe("SignInRefused")
        const weak = yield* Effect.flip(
          service.changePassword(first.token, { current: created.password!, next: "short" })
        )
        expect(weak).toMatchObject({ _tag: "InvalidRequest", errors: [{ field: "next" }] })
        const same = yield* Effect.flip(
          service.changePassword(first.token, { current: created.password!, next: created.password! })
        )
        expect(same).toMatchObject({ _tag: "InvalidRequest", errors: [{ field: "next" }] })

        yield* advance(minutes(1))
        const changed = yield* service.changePassword(first.token, {
          current: created.password!,
          next: GoodPassword
        })
        expect(changed.session.stage).toBe("enrol")
        expect(changed.token).not.toBe(first.token)
        expect(changed.session.id).not.toBe(first.session.id)
        expect(changed.session.signedInAt).toEqual(first.session.signedInAt)
        expect(yield* service.open(first.token)).toBeUndefined()
        expect((yield* service.open(changed.token))?.user.mustChangePassword).toBe(false)
        // The old password no longer signs in; the new one does, at enrolment (an owner must have one).
        expect(yield* outcome(signIn(address, created.password!))).toBe("SignInRefused")
        expect((yield* signIn(address, GoodPassword)).session.stage).toBe("enrol")
        expect((yield* notes(m.id)).map((n) => n.action)).toEqual([
          "user.create",
          "member.create",
          "user.password_change"
        ])
      })
    )
  )

  it.effect("an unknown email, a wrong password, a non-member and a non-operator get the one refusal", () => {
    const hashes: Array<string | undefined> = []
    const counting = Layer.succeed(Credentials.Credentials, {
      ...MemoryCredentials.make,
      verifyPassword: (hash, password) =>
        Effect.zipRight(
          Effect.sync(() => hashes.push(hash)),
          MemoryCredentials.make.verifyPassword(hash, password)
        )
    })
    return world(
      Effect.gen(function* () {
        const service = yield* people
        const { owner } = yield* team()
        const loner = yield* service.createOperator({ email: email("loner"), role: "ops_support" })
        const refusals = [
          yield* Effect.flip(signIn("nobody@example.com", GoodPassword)),
          yield* Effect.flip(signIn(owner.email, "not the password at all")),
          yield* Effect.flip(signIn(loner.user.email, loner.password!)),
          yield* Effect.flip(signIn(owner.email, GoodPassword, "ops"))
        ]
        for (const r of refusals) expect(r).toEqual(Person.SignInRefused.generic())
        // The unknown address was still checked, against no hash: the time taken says nothing.
        expect(hashes).toContain(undefined)
        expect(hashes.filter((h) => h === undefined)).toHaveLength(1)
      }),
      counting
    )
  })

  it.effect(
    "a second factor: a TOTP code once per step, a recovery code once, the session replaced at full",
    () =>
      world(
        Effect.gen(function* () {
          const service = yield* people
          const { merchant: m, owner } = yield* team()
          expect(owner.recoveryCodes).toHaveLength(Person.RecoveryCodeCount)
          expect(new Set(owner.recoveryCodes).size).toBe(Person.RecoveryCodeCount)

          yield* advance(minutes(2))
          const second = yield* signIn(owner.email, GoodPassword)
          expect(second.session.stage).toBe("two_factor")
          expect((yield* service.open(second.token))?.session.stage).toBe("two_factor")
          expect(yield* outcome(service.verifyTwoFactor(second.token, "000000"))).toBe("SignInRefused")
          // A code of a step two away is refused; one of the next step is accepted for drift.
          expect(
            yield* outcome(
              service.verifyTwoFactor(second.token, yield* codeOf(owner.user.id, { later: 60_000 }))
            )
          ).toBe("SignInRefused")
          const code = yield* codeOf(owner.user.id)
          const full = yield* service.verifyTwoFactor(second.token, ` ${code.slice(0, 3)} ${code.slice(3)}\n`)
          expect(full.session.stage).toBe("full")
          expect(full.session.signedInAt).toEqual(second.session.signedInAt)
          expect(yield* service.open(second.token)).toBeUndefined()
          expect(yield* outcome(service.verifyTwoFactor(full.token, code))).toBe("SignInRefused")

          // The same code again, on a new sign-in within its step: a replay.
          const third = yield* signIn(owner.email, GoodPassword)
          expect(yield* outcome(service.verifyTwoFactor(third.token, code))).toBe("SignInRefused")
          yield* advance(30_000)
          expect(
            (yield* service.verifyTwoFactor(third.token, yield* codeOf(owner.user.id))).session.stage
          ).toBe("full")

          const recovery = owner.recoveryCodes[3]!
          const fourth = yield* signIn(owner.email, GoodPassword)
          expect((yield* service.verifyTwoFactor(fourth.token, ` ${recovery} `)).session.stage).toBe("full")
          const fifth = yield* signIn(owner.email, GoodPassword)
          expect(yield* outcome(service.verifyTwoFactor(fifth.token, recovery))).toBe("SignInRefused")
          expect((yield* service.verifyTwoFactor(fifth.token, owner.recoveryCodes[4]!)).session.stage).toBe(
            "full"
          )
          const used = (yield* notes(m.id)).filter((n) => n.action === "user.recovery_code_use")
          expect(used.map((n) => n.summary)).toMatchObject([{ remaining: 9 }, { remaining: 8 }])
          // No code, token or password is in any note.
          const written = JSON.stringify(yield* notes(m.id))
          for (const secret of [recovery, GoodPassword, code, full.token])
            expect(written).not.toContain(secret)
        })
      )
  )

  it.effect(
    "enrolment: the code of the pending secret confirms it, once; a newer enrolment replaces it",
    () =>
      world(
        Effect.gen(function* () {
          const service = yield* people
          const m = yield* merchant()
          const admin = yield* member(m.id, "admin", { enrol: false })
          expect(admin.session.stage).toBe("enrol")
          const begun = yield* service.beginEnrolment(admin.token)
          expect(begun.uri).toContain(`secret=${begun.secret}`)
          expect(begun.uri).toContain("issuer=laari")
          const stale = yield* codeOf(admin.user.id, { pending: true })
          yield* service.beginEnrolment(admin.token)
          const fresh = yield* codeOf(admin.user.id, { pending: true })
          expect(fresh).not.toBe(stale)
          expect(yield* outcome(service.confirmEnrolment(admin.token, stale))).toBe("SignInRefused")
          const done = yield* service.confirmEnrolment(admin.token, fresh)
          expect(done.issued.session.stage).toBe("full")
          expect((yield* service.open(done.issued.token))?.user.twoFactor).toBe(true)
          expect(yield* service.open(admin.token)).toBeUndefined()
          expect(yield* outcome(service.confirmEnrolment(done.issued.token, fresh))).toBe("SignInRefused")
          // The code that confirmed is used: it does not pass the second factor of the next sign-in.
          const again = yield* signIn(admin.email, GoodPassword)
          expect(yield* outcome(service.verifyTwoFactor(again.token, fresh))).toBe("SignInRefused")
          expect((yield* notes(m.id)).map((n) => n.action)).toContain("user.two_factor_enrol")
        })
      )
  )

  it.effect("a viewer needs no second factor, but may enrol from a full session", () =>
    world(
      Effect.gen(function* () {
        const service = yield* people
        const m = yield* merchant()
        const viewer = yield* member(m.id, "viewer", { enrol: false })
        expect(viewer.session.stage).toBe("full")
        const begun = yield* service.beginEnrolment(viewer.token)
        expect(begun.secret).toMatch(/^[A-Z2-7]{16}$/)
        const done = yield* service.confirmEnrolment(
          viewer.token,
          yield* codeOf(viewer.user.id, { pending: true })
        )
        expect(done.recoveryCodes).toHaveLength(10)
        expect((yield* signIn(viewer.email, GoodPassword)).session.stage).toBe("two_factor")
      })
    )
  )

  it.effect(
    "a session ends idle after 30 minutes, 12 hours after signing in however busy, and at sign-out",
    () =>
      world(
        Effect.gen(function* () {
          const service = yield* people
          const m = yield* merchant()
          const viewer = yield* member(m.id, "viewer")
          yield* advance(Person.IdleSeconds * 1000 - 1)
          expect((yield* service.open(viewer.token))?.session.lastSeenAt).toBeDefined()
          // Opened, it was seen now: idle counts again from here.
          yield* advance(Person.IdleSeconds * 1000 - 1)
          expect(yield* service.open(viewer.token)).toBeDefined()
          yield* advance(Person.IdleSeconds * 1000)
          expect(yield* service.open(viewer.token)).toBeUndefined()

          const busy = yield* signIn(viewer.email, GoodPassword)
          for (let i = 0; i < 24; i++) {
            yield* advance(minutes(29))
            expect(yield* service.open(busy.token)).toBeDefined()
          }
          // 12 hours and a minute after signing in, seen 25 minutes ago.
          yield* advance(minutes(25))
          expect(yield* service.open(busy.token)).toBeUndefined()

          const left = yield* signIn(viewer.email, GoodPassword)
          expect((yield* service.sessions(viewer.user.id)).map((s) => s.id)).toEqual([left.session.id])
          yield* service.signOut(left.token)
          yield* service.signOut(left.token)
          yield* service.signOut("not a token")
          expect(yield* service.open(left.token)).toBeUndefined()
          expect(yield* service.sessions(viewer.user.id)).toEqual([])
        })
      )
  )

  it.effect(
    "the account's sessions, newest first, each ended by its id; a password change ends the others",
    () =>
      world(
        Effect.gen(function* () {
          const service = yield* people
          const m = yield* merchant()
          const viewer = yield* member(m.id, "viewer")
          const stranger = yield* member(m.id, "viewer")
          yield* advance(minutes(1))
          const phone = yield* signIn(viewer.email, GoodPassword)
          yield* advance(minutes(1))
          const laptop = yield* signIn(viewer.email, GoodPassword)
          const listed = yield* service.sessions(viewer.user.id)
          expect(listed.map((s) => s.id)).toEqual([laptop.session.id, phone.session.id, viewer.session.id])
          expect(listed[0]).not.toHaveProperty("tokenHash")

          expect(yield* outcome(service.endSession(stranger.user.id, phone.session.id))).toBe(
            "PersonNotFound"
          )
          expect(yield* outcome(service.endSession(viewer.user.id, "not-a-session"))).toBe("PersonNotFound")
          yield* service.endSession(viewer.user.id, phone.session.id.toUpperCase())
          expect(yield* service.open(phone.token)).toBeUndefined()
          expect(yield* outcome(service.endSession(viewer.user.id, phone.session.id))).toBe("PersonNotFound")
          expect(
            (yield* notes(m.id)).filter((n) => n.action === "session.revoke").map((n) => n.resourceId)
          ).toEqual([phone.session.id])

          const changed = yield* service.changePassword(laptop.token, {
            current: GoodPassword,
            next: `${GoodPassword}!`
          })
          expect(changed.session.stage).toBe("full")
          expect((yield* service.sessions(viewer.user.id)).map((s) => s.id)).toEqual([changed.session.id])
          expect(yield* service.open(viewer.token)).toBeUndefined()
          expect(yield* service.open(stranger.token)).toBeDefined()
        })
      )
  )

  it.effect(
    "switching team: a new session on a team of the account's, enrolment first where its role needs it",
    () =>
      world(
        Effect.gen(function* () {
          const service = yield* people
          const home = yield* merchant()
          const away = yield* merchant()
          const foreign = yield* merchant()
          const viewer = yield* member(home.id, "viewer")
          yield* service.createMember({ merchantId: away.id, email: viewer.email, role: "admin" })
          yield* advance(minutes(1))
          const moved = yield* service.switchTo(viewer.token, { merchantId: away.id, environment: "live" })
          expect(moved.session).toMatchObject({ merchantId: away.id, environment: "live", stage: "enrol" })
          expect(moved.session.signedInAt).toEqual(viewer.session.signedInAt)
          expect(yield* service.open(viewer.token)).toBeUndefined()
          // Not at full: no further switch.
          expect(
            yield* outcome(service.switchTo(moved.token, { merchantId: home.id, environment: "test" }))
          ).toBe("PersonNotFound")
          yield* service.beginEnrolment(moved.token)
          const done = yield* service.confirmEnrolment(
            moved.token,
            yield* codeOf(viewer.user.id, { pending: true })
          )
          expect(
            yield* outcome(
              service.switchTo(done.issued.token, { merchantId: foreign.id, environment: "test" })
            )
          ).toBe("PersonNotFound")
          const back = yield* service.switchTo(done.issued.token, {
            merchantId: home.id,
            environment: "test"
          })
          expect(back.session).toMatchObject({ merchantId: home.id, stage: "full" })
        })
      )
  )

  it.effect("the operator console: staff only, always with a second factor", () =>
    world(
      Effect.gen(function* () {
        const service = yield* people
        const address = email("staff")
        const made = yield* service.createOperator({ email: address, role: "ops_admin" })
        expect(made.user.operatorRole).toBe("ops_admin")
        const first = yield* signIn(address, made.password!, "ops")
        expect(first.session).toMatchObject({ console: "ops", merchantId: null, stage: "change_password" })
        const changed = yield* service.changePassword(first.token, {
          current: made.password!,
          next: GoodPassword
        })
        expect(changed.session.stage).toBe("enrol")
        // No team: no dashboard.
        expect(yield* outcome(signIn(address, GoodPassword))).toBe("SignInRefused")
        // Given another role, the account keeps its password.
        const again = yield* service.createOperator({ email: address, role: "ops_risk" })
        expect(again).toMatchObject({ password: undefined, user: { operatorRole: "ops_risk" } })
        expect((yield* signIn(address, GoodPassword, "ops")).session.stage).toBe("enrol")
        expect((yield* notes(null)).map((n) => n.action)).toEqual([
          "user.create",
          "operator.role_change",
          "user.password_change",
          "operator.role_change"
        ])
      })
    )
  )

  it.effect(
    "a token is never valid again after its step up, its sign-out or a password change (property)",
    () =>
      Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(
            fc.array(
              fc.constantFrom("open", "signIn", "signOut", "verify", "changePassword", "switch", "idle"),
              {
                minLength: 1,
                maxLength: 14
              }
            ),
            (steps) => Effect.runPromise(world(sessionHistory(steps)))
          ),
          { numRuns: 40 }
        )
      )
  )
})

/** A history of session steps on one owner; every token ended once must stay ended. */
const sessionHistory = (steps: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const service = yield* people
    const { merchant: home, owner } = yield* team()
    const away = yield* merchant()
    yield* service.createMember({ merchantId: away.id, email: owner.email, role: "owner" })
    const dead = new Set<string>()
    let password = GoodPassword
    let tokens: Array<string> = [owner.token]
    let n = 0
    for (const step of steps) {
      const token = tokens[tokens.length - 1]!
      if (step === "signIn") tokens.push((yield* signIn(owner.email, password)).token)
      else if (step === "signOut") {
        yield* service.signOut(token)
        dead.add(token)
      } else if (step === "verify") {
        yield* advance(30_000)
        const r = yield* Effect.either(service.verifyTwoFactor(token, yield* codeOf(owner.user.id)))
        if (r._tag === "Right") {
          dead.add(token)
          tokens.push(r.right.token)
        }
      } else if (step === "changePassword") {
        const next = `${GoodPassword} ${++n}`
        const r = yield* Effect.either(service.changePassword(token, { current: password, next }))
        if (r._tag === "Right") {
          password = next
          for (const t of tokens) dead.add(t)
          tokens = [r.right.token]
        }
      } else if (step === "switch") {
        const r = yield* Effect.either(service.switchTo(token, { merchantId: away.id, environment: "test" }))
        if (r._tag === "Right") {
          dead.add(token)
          tokens.push(r.right.token)
        }
      } else if (step === "idle") yield* advance(minutes(5))
      for (const t of dead) expect(yield* service.open(t)).toBeUndefined()
    }
    expect(home.id).toBeDefined()
  })
