/**
 * Signing in and sessions, the half of `People` a page calls with a session's token: the password, a
 * new password, enrolling an authenticator, the second factor, moving between teams, the account's
 * sessions. A token is replaced at every step up, and the old one ends: only the request that ends it
 * gets the new one.
 */
import { DateTime, Effect } from "effect"
import { InvalidRequest, type ServiceUnavailable } from "../kernel/Errors.js"
import type { Issued, PeopleService } from "./People.js"
import { Issuer, type Parts, peopleChange, sessionOf, userOf } from "./PeopleParts.js"
import * as Person from "./Person.js"
import type { StoredSession } from "./PeopleStore.js"

/** A code as typed, without the spaces an app shows it with or a person adds (`123 456`). */
const typed = (code: string): string => code.replace(/\s+/g, "")

type SignIn = Pick<
  PeopleService,
  | "signIn"
  | "open"
  | "signOut"
  | "changePassword"
  | "beginEnrolment"
  | "confirmEnrolment"
  | "verifyTwoFactor"
  | "switchTo"
  | "sessions"
  | "endSession"
>

export const make = (parts: Parts): SignIn => {
  const { store, credentials, tx, crypto, audit, now, refused } = parts

  /** The open, live session the token opens at `at`, or `undefined`. */
  const live = (token: string, at: DateTime.Utc) =>
    Effect.map(Effect.flatMap(credentials.digest(token), store.sessionByToken), (s) =>
      s !== undefined && s.endedAt === null && Person.isLive(s, at) ? s : undefined
    )

  /** A new session with a new token. */
  const issue = (session: Omit<Person.Session, "id">) =>
    Effect.gen(function* () {
      const token = yield* credentials.newToken
      const stored: StoredSession = {
        ...session,
        id: yield* crypto.uuid,
        tokenHash: yield* credentials.digest(token),
        endedAt: null
      }
      yield* store.insertSession(stored)
      return { token, session: sessionOf(stored) } satisfies Issued
    })

  /**
   * `old` ended and a new session in its place, changed by `patch`, continuing its sign-in; `lost` when
   * another request ended it first.
   */
  const replace = <E>(
    old: StoredSession,
    patch: Partial<Pick<Person.Session, "stage" | "merchantId" | "environment">>,
    at: DateTime.Utc,
    lost: () => E
  ): Effect.Effect<Issued, E | ServiceUnavailable> =>
    Effect.flatMap(
      store.endSession(old.id, at),
      (ended): Effect.Effect<Issued, E | ServiceUnavailable> =>
        ended ? issue({ ...sessionOf(old), ...patch, lastSeenAt: at }) : Effect.fail(lost())
    )

  /**
   * The live session the token opens, at a step it may take, and its account; `SignInRefused` otherwise.
   */
  const at = (token: string, step: Exclude<Person.Stage, "full">, moment: DateTime.Utc) =>
    Effect.gen(function* () {
      const s = yield* live(token, moment)
      if (s === undefined || !Person.mayTake(s.stage, step)) return yield* refused()
      const account = yield* store.userById(s.userId, { forUpdate: true })
      if (account === undefined) return yield* refused()
      return { session: s, account }
    })

  /** Whether the account's sign-in in `console` needs a second factor. */
  const required = (console: Person.Console, userId: Person.UserId) =>
    Effect.map(store.memberships(userId), (ms) => Person.twoFactorRequired(console, ms))

  const signIn: PeopleService["signIn"] = (input) =>
    Effect.gen(function* () {
      const account = yield* store.userByEmail(Person.normalEmail(input.email))
      // Unknown accounts are checked against no hash, which costs what a real check does.
      const right = yield* credentials.verifyPassword(account?.passwordHash, input.password)
      if (account === undefined || !right) return yield* refused()
      const memberships = yield* store.memberships(account.id)
      const first = memberships[0]
      if (input.console === "dashboard" ? first === undefined : account.operatorRole === null)
        return yield* refused()
      const moment = yield* now
      const stage = Person.stageAfterPassword(
        userOf(account),
        Person.twoFactorRequired(input.console, memberships)
      )
      return yield* tx.withTransaction(
        issue({
          userId: account.id,
          console: input.console,
          stage,
          merchantId: input.console === "dashboard" ? (first?.merchantId ?? null) : null,
          environment: "test",
          signedInAt: moment,
          lastSeenAt: moment,
          address: input.address,
          userAgent: input.userAgent
        })
      )
    })

  const open: PeopleService["open"] = (token) =>
    Effect.gen(function* () {
      const moment = yield* now
      const s = yield* live(token, moment)
      if (s === undefined) return undefined
      const account = yield* store.userById(s.userId)
      if (account === undefined) return undefined
      yield* store.touchSession(s.id, moment)
      return {
        session: sessionOf({ ...s, lastSeenAt: moment }),
        user: userOf(account),
        memberships: yield* store.memberships(s.userId)
      }
    })

  const signOut: PeopleService["signOut"] = (token) =>
    Effect.gen(function* () {
      const s = yield* Effect.flatMap(credentials.digest(token), store.sessionByToken)
      if (s !== undefined && s.endedAt === null) yield* store.endSession(s.id, yield* now)
    })

  const changePassword: PeopleService["changePassword"] = (token, input) =>
    tx.withTransaction(
      Effect.gen(function* () {
        const moment = yield* now
        const { session, account } = yield* at(token, "change_password", moment)
        if (!(yield* credentials.verifyPassword(account.passwordHash, input.current))) return yield* refused()
        const problem = credentials.passwordProblem(input.next, account.email)
        if (problem !== undefined) return yield* InvalidRequest.field("next", problem)
        if (input.next === input.current)
          return yield* InvalidRequest.field("next", "Choose a password other than the current one.")
        yield* store.setPassword(account.id, yield* credentials.hashPassword(input.next), false)
        // Whoever else holds a session of the account is out: a changed password is a lost one's cure.
        yield* store.endSessions(account.id, moment, { except: session.id })
        const stage = Person.stageAfterPasswordChange(
          session.stage,
          { ...userOf(account), mustChangePassword: false },
          yield* required(session.console, account.id)
        )
        const issued = yield* replace(session, { stage }, moment, Person.SignInRefused.generic)
        yield* audit.note(
          peopleChange(session.merchantId, "user.password_change", { type: "user", id: account.id })
        )
        return issued
      })
    )

  const beginEnrolment: PeopleService["beginEnrolment"] = (token) =>
    tx.withTransaction(
      Effect.gen(function* () {
        const { account } = yield* at(token, "enrol", yield* now)
        const { secret, sealed } = yield* credentials.newTotpSecret
        yield* store.setPendingTotp(account.id, sealed)
        return { secret, uri: credentials.totpUri(secret, account.email, Issuer) }
      })
    )

  const confirmEnrolment: PeopleService["confirmEnrolment"] = (token, code) =>
    tx.withTransaction(
      Effect.gen(function* () {
        const moment = yield* now
        const { session, account } = yield* at(token, "enrol", moment)
        const pending = account.totpPending
        if (pending === null) return yield* refused()
        const step = yield* credentials.totpStep(pending, typed(code), moment)
        if (step === undefined || !(yield* store.confirmTotp(account.id, pending, step)))
          return yield* refused()
        const recoveryCodes = yield* credentials.newRecoveryCodes
        const hashes = yield* Effect.forEach(recoveryCodes, credentials.digest)
        yield* store.replaceRecoveryCodes(account.id, hashes, moment)
        const issued = yield* replace(session, { stage: "full" }, moment, Person.SignInRefused.generic)
        yield* audit.note(
          peopleChange(session.merchantId, "user.two_factor_enrol", { type: "user", id: account.id })
        )
        return { issued, recoveryCodes }
      })
    )

  const verifyTwoFactor: PeopleService["verifyTwoFactor"] = (token, code) =>
    tx.withTransaction(
      Effect.gen(function* () {
        const moment = yield* now
        const s = yield* live(token, moment)
        if (s === undefined || s.stage !== "two_factor") return yield* refused()
        // Not locked: the conditional writes below are what keep a code to one request.
        const account = yield* store.userById(s.userId)
        if (account === undefined || account.totpSecret === null) return yield* refused()
        const given = typed(code)
        const step = yield* credentials.totpStep(account.totpSecret, given, moment)
        if (step !== undefined) {
          // A code of a step already used is a replay: refused, whichever request used it.
          if (
            !Person.acceptsStep(account.totpLastStep, step) ||
            !(yield* store.useTotpStep(account.id, step))
          )
            return yield* refused()
        } else {
          const used = yield* store.useRecoveryCode(account.id, yield* credentials.digest(given), moment)
          if (!used) return yield* refused()
          yield* audit.note(
            peopleChange(
              s.merchantId,
              "user.recovery_code_use",
              { type: "user", id: account.id },
              {
                remaining: yield* store.unusedRecoveryCodes(account.id)
              }
            )
          )
        }
        return yield* replace(s, { stage: "full" }, moment, Person.SignInRefused.generic)
      })
    )

  const switchTo: PeopleService["switchTo"] = (token, target) =>
    tx.withTransaction(
      Effect.gen(function* () {
        const moment = yield* now
        const lost = () => new Person.PersonNotFound({ message: "No such team of yours." })
        const s = yield* live(token, moment)
        if (s === undefined || s.console !== "dashboard" || s.stage !== "full")
          return yield* Effect.fail(lost())
        const membership = (yield* store.memberships(s.userId)).find(
          (m) => m.merchantId === target.merchantId.toLowerCase()
        )
        const account = yield* store.userById(s.userId)
        if (membership === undefined || account === undefined) return yield* Effect.fail(lost())
        const stage = Person.stageOnSwitch(s.stage, userOf(account), membership.role)
        return yield* replace(
          s,
          { merchantId: membership.merchantId, environment: target.environment, stage },
          moment,
          lost
        )
      })
    )

  const sessions: PeopleService["sessions"] = (userId) =>
    Effect.gen(function* () {
      const moment = yield* now
      const open = yield* store.openSessions(userId)
      return open.filter((s) => Person.isLive(s, moment)).map(sessionOf)
    })

  const endSession: PeopleService["endSession"] = (userId, sessionId) =>
    tx.withTransaction(
      Effect.gen(function* () {
        const found = (yield* store.openSessions(userId)).find((s) => s.id === sessionId.toLowerCase())
        if (found === undefined || !(yield* store.endSession(found.id, yield* now, userId)))
          return yield* new Person.PersonNotFound({ message: "No such session." })
        yield* audit.note(peopleChange(found.merchantId, "session.revoke", { type: "session", id: found.id }))
      })
    )

  return {
    signIn,
    open,
    signOut,
    changePassword,
    beginEnrolment,
    confirmEnrolment,
    verifyTwoFactor,
    switchTo,
    sessions,
    endSession
  }
}
