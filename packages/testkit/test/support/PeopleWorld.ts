/**
 * The world of the in-memory people tests: the `People` service over the memory store, the fake
 * credentials (`MemoryCredentials`) and notices, the audit log, and a wall clock the test moves. Helpers
 * make an owner signed in all the way, compute the code of an account's authenticator, and read the
 * audit log's notes.
 */
import {
  Audit,
  type AuditEvent,
  type Credentials,
  type Ids,
  People,
  PeopleLive,
  Person,
  Store,
  WallClock
} from "@laari/core"
import { DateTime, Effect, Layer } from "effect"
import * as MemoryCredentials from "../../src/MemoryCredentials.js"
import * as MemoryPeopleNotices from "../../src/MemoryPeopleNotices.js"
import { type MerchantInput, Seed } from "../../src/Seed.js"
import * as Testkit from "../../src/Testkit.js"

/** Where each world's wall clock starts. */
export const Start = DateTime.unsafeMake("2026-03-31T10:00:00Z")

let wallMillis = DateTime.toEpochMillis(Start)

/** Moves the wall clock on by `millis`. */
export const advance = (millis: number) =>
  Effect.sync(() => {
    wallMillis += millis
  })

export const wallNow = Effect.sync(() => DateTime.unsafeMake(wallMillis))

export const minutes = (n: number) => n * 60_000
export const hours = (n: number) => n * 3_600_000

/** Someone acting at the edge, so that changes are noted. */
export const who: Audit.Who = {
  actor: { kind: "user", id: "usr_edge" },
  address: "203.0.113.5",
  userAgent: "people-test",
  requestId: "req_people"
}

/** A fresh world, its wall clock at `Start`, everything run as `who`; `credentials` the fake's unless given. */
export const world = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  credentials: Layer.Layer<Credentials.Credentials> = MemoryCredentials.layer
) => {
  const ports = Testkit.ports(WallClock.layer(() => wallMillis))
  const layer = PeopleLive.layer.pipe(
    Layer.provideMerge(Audit.Audit.Default),
    Layer.provideMerge(Layer.merge(credentials, MemoryPeopleNotices.layer)),
    Layer.provideMerge(ports)
  )
  return Effect.suspend(() => {
    wallMillis = DateTime.toEpochMillis(Start)
    return Effect.provide(Audit.as(who)(effect), layer)
  })
}

export const people = People.People

let merchants = 0
export const merchant = (input: Partial<MerchantInput> = {}) =>
  Effect.flatMap(Seed, (seed) => seed.merchant({ name: `Team ${++merchants}`, ...input }))

let emails = 0
export const email = (name = "someone") => `${name}.${++emails}@example.com`

/** A password the fake credentials accept for `email`s made here. */
export const GoodPassword = "correct horse battery staple"

/** The code of the account's enrolled (or, with `pending`, pending) authenticator at the wall clock's now. */
export const codeOf = (
  userId: Person.UserId,
  options: { readonly pending?: boolean; readonly later?: number } = {}
) =>
  Effect.gen(function* () {
    const account = yield* Effect.flatMap(Store.PeopleStore, (s) => s.userById(userId))
    const sealed = options.pending ? account?.totpPending : account?.totpSecret
    const secret = sealed === null || sealed === undefined ? undefined : MemoryCredentials.unseal(sealed)
    if (secret === undefined) return yield* Effect.dieMessage(`no authenticator for ${userId}`)
    const at = DateTime.unsafeMake(wallMillis + (options.later ?? 0))
    return MemoryCredentials.codeAt(secret, at)
  })

/** A member made with a one-time password, then signed in, the password changed, enrolled if `enrol`. */
export const member = (
  merchantId: Ids.MerchantId,
  role: Person.Membership["role"],
  options: { readonly enrol?: boolean } = {}
) =>
  Effect.gen(function* () {
    const service = yield* people
    const address = email(role)
    const created = yield* service.createMember({ merchantId, email: address, role })
    const first = yield* service.signIn({
      console: "dashboard",
      email: address,
      password: created.password!,
      address: null,
      userAgent: null
    })
    let issued = yield* service.changePassword(first.token, {
      current: created.password!,
      next: GoodPassword
    })
    let recoveryCodes: ReadonlyArray<string> = []
    if (options.enrol ?? issued.session.stage === "enrol") {
      yield* service.beginEnrolment(issued.token)
      const confirmed = yield* service.confirmEnrolment(
        issued.token,
        yield* codeOf(created.user.id, { pending: true })
      )
      issued = confirmed.issued
      recoveryCodes = confirmed.recoveryCodes
    }
    return { user: created.user, email: address, token: issued.token, session: issued.session, recoveryCodes }
  })

/** A merchant and its owner, signed in at `full` with an authenticator. */
export const team = (input: Partial<MerchantInput> = {}) =>
  Effect.gen(function* () {
    const m = yield* merchant(input)
    const owner = yield* member(m.id, "owner")
    return { merchant: m, owner }
  })

/** The audit notes of the merchant's chain (`null`: the operator's), oldest first. */
export const notes = (merchantId: string | null) =>
  Effect.flatMap(Store.AuditStore, (store) =>
    Effect.map(
      store.list(merchantId === null ? {} : { tenant: { merchantId, environment: "test" } }, { limit: 1000 }),
      (rows): ReadonlyArray<AuditEvent.Event> => rows.filter((r) => r.merchantId === merchantId).reverse()
    )
  )

/** The failure's tag, or `"succeeded"`. */
export const outcome = <A, E extends { readonly _tag: string }, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.match(effect, { onFailure: (e) => e._tag, onSuccess: () => "succeeded" as const })
