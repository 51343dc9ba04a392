/**
 * What the two halves of the `People` service share (`PeopleSignIn`, `PeopleTeams`): the ports, wall
 * time, the generic refusal, the public forms of stored rows, audit notes of people, and accounts made
 * for an email.
 */
import { DateTime, Effect } from "effect"
import { Audit, type Change } from "../audit/Audit.js"
import { Crypto } from "../kernel/Crypto.js"
import { InvalidRequest } from "../kernel/Errors.js"
import { Transactor } from "../kernel/Transactor.js"
import { WallClock } from "../kernel/WallClock.js"
import { MerchantsStore } from "../directory/MerchantsStore.js"
import { Credentials } from "./Credentials.js"
import { PeopleNotices } from "./PeopleNotices.js"
import * as Person from "./Person.js"
import { type Account, PeopleStore, type StoredInvitation, type StoredSession } from "./PeopleStore.js"

/** The issuer an authenticator app shows beside the account. */
export const Issuer = "laari"

/** The person, without the secrets of their sign-in. */
export const userOf = (a: Account): Person.User => ({
  id: a.id,
  email: a.email,
  mustChangePassword: a.mustChangePassword,
  twoFactor: a.twoFactor,
  operatorRole: a.operatorRole,
  createdAt: a.createdAt
})

/** The session, without its token's hash. */
export const sessionOf = (s: StoredSession): Person.Session => ({
  id: s.id,
  userId: s.userId,
  console: s.console,
  stage: s.stage,
  merchantId: s.merchantId,
  environment: s.environment,
  signedInAt: s.signedInAt,
  lastSeenAt: s.lastSeenAt,
  address: s.address,
  userAgent: s.userAgent
})

export const invitationOf = ({ tokenHash: _, ...invitation }: StoredInvitation): Person.Invitation =>
  invitation

export const notMember = () => InvalidRequest.field("email", "That person is already on this team.")
export const badEmail = () => InvalidRequest.field("email", "Enter an email address like name@example.com.")

/** A change to people, in the merchant's chain (`null`: the operator's) and in no environment. */
export const peopleChange = (
  merchantId: string | null,
  action: string,
  resource: { readonly type: string; readonly id: string },
  fields?: Readonly<Record<string, unknown>>
): Change => ({
  merchantId,
  environment: null,
  action,
  resourceType: resource.type,
  resourceId: resource.id,
  fields
})

/** The ports of the service, and what every part of it derives from them. */
export const make = Effect.gen(function* () {
  const store = yield* PeopleStore
  const credentials = yield* Credentials
  const notices = yield* PeopleNotices
  const tx = yield* Transactor
  const wall = yield* WallClock
  const crypto = yield* Crypto
  const audit = yield* Audit
  const merchants = yield* MerchantsStore

  const now = Effect.map(wall.nowMillis, (millis) => DateTime.unsafeMake(millis))
  const refused = () => Effect.fail(Person.SignInRefused.generic())

  /** A new account (not stored) with `password`, hashed, and no second factor. */
  const newAccount = (email: string, password: string, mustChangePassword: boolean, at: DateTime.Utc) =>
    Effect.gen(function* () {
      const account: Account = {
        id: Person.UserId.make(yield* crypto.uuid),
        email,
        mustChangePassword,
        twoFactor: false,
        operatorRole: null,
        createdAt: at,
        passwordHash: yield* credentials.hashPassword(password),
        totpSecret: null,
        totpPending: null,
        totpLastStep: null
      }
      return account
    })

  /** The email's account, made with a one-time password if there is none; `password` only when made. */
  const ensureAccount = (email: string, at: DateTime.Utc) =>
    Effect.gen(function* () {
      const existing = yield* store.userByEmail(email, { forUpdate: true })
      if (existing !== undefined) return { account: existing, password: undefined }
      const password = yield* credentials.oneTimePassword
      const account = yield* newAccount(email, password, true, at)
      if (yield* store.insertUser(account)) return { account, password }
      // Made by another request meanwhile: that account, which keeps its password.
      const made = yield* store.userByEmail(email, { forUpdate: true })
      if (made === undefined) return yield* Effect.dieMessage(`no account for ${email} after a conflict`)
      return { account: made, password: undefined }
    })

  const checkedEmail = (email: string) => {
    const normal = Person.normalEmail(email)
    return Person.isEmail(normal) ? Effect.succeed(normal) : Effect.fail(badEmail())
  }

  const noteCreated = (
    merchantId: string | null,
    made: { account: Account; password: string | undefined }
  ) =>
    made.password === undefined
      ? Effect.void
      : audit.note(
          peopleChange(
            merchantId,
            "user.create",
            { type: "user", id: made.account.id },
            { email: made.account.email }
          )
        )

  return {
    store,
    credentials,
    notices,
    tx,
    crypto,
    audit,
    merchants,
    now,
    refused,
    newAccount,
    ensureAccount,
    checkedEmail,
    noteCreated
  }
})

export type Parts = Effect.Effect.Success<typeof make>
