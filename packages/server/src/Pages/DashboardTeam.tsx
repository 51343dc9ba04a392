/**
 * The dashboard's people sections: the team (members, roles, invitations, the permission matrix), the
 * signed-in person's account (sessions, password, two-factor) with the merchant switcher's post, and the
 * merchant's API keys. Each route's permission is `DashboardAccess`'s, checked before it runs.
 */
import type * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { ApiKeys, Ids, Person, Role } from "@laari/core"
import { type Context, DateTime, Effect, Schema } from "effect"
import * as Notify from "../Notify/Delivery.js"
import { ServerConfigTag } from "../Platform/Config.js"
import type { Kit, Signed, Visit } from "./DashboardKit.js"
import * as P from "./DashboardPeopleViews.js"
import * as Session from "./DashboardSession.js"
import { d } from "./DashboardText.js"
import { problemOf, redirect } from "./Routing.js"
import { form } from "./Request.js"

export const routes = (router: Context.Tag.Service<typeof HttpApiBuilder.Router>, kit: Kit) =>
  Effect.gen(function* () {
    const { root, people, pages, frame, at, section, idParam } = kit
    const keys = yield* ApiKeys.ApiKeys
    const base = (yield* ServerConfigTag).baseUrl.replace(/\/+$/, "")
    const notify = yield* Notify.Notify
    const linkOf = (token: string) => `${base}/dashboard/invitations/${token}`

    const query = Effect.map(
      HttpServerRequest.HttpServerRequest,
      (request) => new URL(request.url, "http://dashboard").searchParams
    )

    /** The team page, with what a post on it said. */
    const teamPage = (messages: { readonly notice?: string; readonly error?: string }, status = 200) =>
      section(
        "team",
        "team",
        (v, p, signed) =>
          Effect.gen(function* () {
            const members = yield* people.members(p.merchantId)
            const invitations = Role.can(signed.role, "team:manage")
              ? yield* people.invitations(p.merchantId)
              : []
            const now = yield* DateTime.now
            return (
              <P.Team
                frame={frame(v)}
                signed={signed}
                members={members}
                invitations={invitations}
                now={now}
              />
            )
          }),
        () => messages,
        status
      )

    yield* at(router, "team", (v, p, signed) =>
      Effect.flatMap(query, (q) =>
        teamPage(q.get("transferred") === null ? {} : { notice: d(v.lang, "ownershipTransferred") })(
          v,
          p,
          signed
        )
      )
    )

    const roleOf = (value: string | undefined) => Schema.decodeUnknownOption(Role.MerchantRole)(value)

    yield* at(router, "invite", (v, p, signed) =>
      Effect.gen(function* () {
        const field = yield* form
        const email = (field("email") ?? "").trim().slice(0, 254)
        const role = roleOf(field("role"))
        if (role._tag === "None") return yield* teamPage({ error: d(v.lang, "badRole") }, 422)(v, p, signed)
        const invited = yield* Effect.either(
          people.invite({
            merchantId: p.merchantId,
            email,
            role: role.value,
            by: signed.user.id,
            link: linkOf
          })
        )
        if (invited._tag === "Left")
          return yield* teamPage({ error: problemOf(invited.left).text }, 422)(v, p, signed)
        const to = invited.right.invitation.email
        // Without a notification channel nothing sends the link: the inviter is shown it, once.
        const notice =
          notify.channel === undefined
            ? d(v.lang, "invitedByHand", { email: to, link: linkOf(invited.right.token) })
            : d(v.lang, "invited", { email: to })
        return yield* teamPage({ notice })(v, p, signed)
      })
    )

    yield* at(router, "invitationRevoke", (v, p, signed) =>
      Effect.gen(function* () {
        const done = yield* Effect.either(people.revokeInvitation(p.merchantId, yield* idParam))
        if (done._tag === "Left")
          return yield* teamPage({ error: problemOf(done.left).text }, 404)(v, p, signed)
        return yield* teamPage({ notice: d(v.lang, "invitationRevoked") })(v, p, signed)
      })
    )

    /** A member's id from the path: a UUID, else nobody (a 404 from the service). */
    const memberId = Effect.map(idParam, (id) =>
      Person.UserId.make(Ids.isUuid(id) ? id : "00000000-0000-0000-0000-000000000000")
    )

    yield* at(router, "memberRole", (v, p, signed) =>
      Effect.gen(function* () {
        const role = roleOf((yield* form)("role"))
        if (role._tag === "None") return yield* teamPage({ error: d(v.lang, "badRole") }, 422)(v, p, signed)
        const done = yield* Effect.either(
          people.setRole({
            merchantId: p.merchantId,
            userId: yield* memberId,
            role: role.value,
            by: signed.user.id
          })
        )
        if (done._tag === "Left")
          return yield* teamPage({ error: problemOf(done.left).text }, statusOf(done.left))(v, p, signed)
        return yield* teamPage({ notice: d(v.lang, "roleChanged") })(v, p, signed)
      })
    )

    yield* at(router, "memberRemove", (v, p, signed) =>
      Effect.gen(function* () {
        const done = yield* Effect.either(
          people.removeMember({ merchantId: p.merchantId, userId: yield* memberId, by: signed.user.id })
        )
        if (done._tag === "Left")
          return yield* teamPage({ error: problemOf(done.left).text }, statusOf(done.left))(v, p, signed)
        return yield* teamPage({ notice: d(v.lang, "memberRemoved") })(v, p, signed)
      })
    )

    // Ownership passes to another member; the owner who gave it stays on as an admin.
    yield* at(router, "ownershipTransfer", (v, p, signed) =>
      Effect.gen(function* () {
        const to = yield* memberId
        const done = yield* Effect.either(
          Effect.zipRight(
            people.setRole({ merchantId: p.merchantId, userId: to, role: "owner", by: signed.user.id }),
            to === signed.user.id
              ? Effect.void
              : people.setRole({
                  merchantId: p.merchantId,
                  userId: signed.user.id,
                  role: "admin",
                  by: signed.user.id
                })
          )
        )
        if (done._tag === "Left")
          return yield* teamPage({ error: problemOf(done.left).text }, statusOf(done.left))(v, p, signed)
        return redirect(`${root}/team?transferred=1`)
      })
    )

    /** The account page: sessions, two-factor, the password form. */
    const accountPage = (messages: (v: Visit) => { readonly notice?: string; readonly error?: string }) =>
      section(
        "account",
        "account",
        (v, _p, signed) =>
          Effect.map(people.sessions(signed.user.id), (sessions) => (
            <P.Account frame={frame(v)} signed={signed} sessions={sessions} />
          )),
        messages
      )

    yield* at(router, "account", (v, p, signed) =>
      Effect.gen(function* () {
        const q = yield* query
        const error = q.get("error")
        return yield* accountPage((v) =>
          q.get("changed") !== null
            ? { notice: d(v.lang, "passwordChanged") }
            : q.get("ended") !== null
              ? { notice: d(v.lang, "sessionEnded") }
              : // Only the password form's own refusals come back here, as text the service wrote.
                error !== null && error.length <= 200
                ? { error }
                : {}
        )(v, p, signed)
      })
    )

    yield* at(router, "sessionEnd", (_v, _p, signed) =>
      Effect.gen(function* () {
        yield* people
          .endSession(signed.user.id, yield* idParam)
          .pipe(Effect.catchTag("PersonNotFound", () => Effect.void))
        return redirect(`${root}/account?ended=1`)
      })
    )

    yield* at(router, "switchTo", (_v, _p, signed: Signed) =>
      Effect.gen(function* () {
        const [merchantId, environment] = ((yield* form)("to") ?? "").split(":")
        const env = Schema.decodeUnknownOption(Ids.Environment)(environment)
        if (merchantId === undefined || !Ids.isUuid(merchantId) || env._tag === "None")
          return redirect(`${root}/mandates`)
        const issued = yield* Effect.either(
          people.switchTo(signed.token, {
            merchantId: Ids.MerchantId.make(merchantId),
            environment: env.value
          })
        )
        if (issued._tag === "Left") return redirect(`${root}/mandates`)
        // A new session id for the new privileges: the old token ends with the switch.
        return Session.start(pages, redirect(`${root}/mandates`), issued.right.token)
      })
    )

    /** The merchant's keys of the environment shown, with a new key's text once. */
    const keysPage = (created?: string, notice?: string) =>
      section(
        "keys",
        "apiKeys",
        (v, p) =>
          Effect.map(keys.list(p.merchantId), (all) => (
            <P.Keys
              frame={frame(v)}
              keys={all.filter((k) => k.environment === p.environment)}
              created={created}
            />
          )),
        () => (notice === undefined ? {} : { notice })
      )

    yield* at(router, "keys", keysPage())

    yield* at(router, "keyCreate", (v, p, signed) =>
      Effect.gen(function* () {
        const issued = yield* keys.issue({
          merchantId: p.merchantId,
          environment: p.environment,
          kind: "secret"
        })
        return yield* keysPage(issued.key, d(v.lang, "keyCreated"))(v, p, signed)
      })
    )

    yield* at(router, "keyRevoke", (v, p, signed) =>
      Effect.gen(function* () {
        const id = yield* idParam
        const own = (yield* keys.list(p.merchantId)).find(
          (k) => k.id === id && k.environment === p.environment
        )
        if (own !== undefined) yield* keys.revoke(p.merchantId, own.id)
        return yield* keysPage(undefined, d(v.lang, own === undefined ? "notFound" : "keyRevoked"))(
          v,
          p,
          signed
        )
      })
    )
  })

/** A team rule broken is the person's mistake (`409`); no such member, `404`. */
const statusOf = (e: { readonly _tag: string }): number =>
  e._tag === "PersonNotFound" ? 404 : e._tag === "TeamRuleBroken" ? 409 : 422
