/**
 * Signing in to the dashboard (and, through its own `Door`, the operator console): email and password, then the step the account is at (a one-time password
 * to change, an authenticator to set up, its code), each through `People`, which replaces the session's
 * token at every step up; signing out; and an invitation's page, where a new member sets a password.
 *
 * Wrong passwords and codes lock out per account and per address, in every process (`RateLimits`), and
 * are answered with one message that does not tell whether the account exists.
 */
import type * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Ids, type People, Person, Reads } from "@laari/core"
import { type Context, Effect, Option } from "effect"
import QRCode from "qrcode"
import * as AuditActor from "../Http/AuditActor.js"
import * as RateLimit from "../Http/RateLimit.js"
import * as SignInThrottle from "../People/SignInThrottle.js"
import * as RateLimits from "../Platform/RateLimits.js"
import { type Kit, stagePath as nextPath, type Visit } from "./DashboardKit.js"
import * as P from "./DashboardPeopleViews.js"
import * as Session from "./DashboardSession.js"
import { d } from "./DashboardText.js"
import { respond } from "./Html.js"
import { redirect, route } from "./Routing.js"
import { csrfValid, form, throttled, visit } from "./Request.js"

/**
 * What the sign-in routes need of the pages they guard: the dashboard's `Kit`, or the operator console's,
 * with where people sign in (`console`), the session's cookie, the first section at `full`, and whether
 * invitations are accepted there (only the dashboard's teams invite).
 */
export type Door = Pick<Kit, "root" | "pages" | "people" | "provide" | "frame" | "signInPage"> & {
  readonly opened: Effect.Effect<
    (People.Opened & { readonly token: string }) | undefined,
    never,
    HttpServerRequest.HttpServerRequest
  >
  readonly console: Person.Console
  readonly cookie: string
  readonly home: string
  readonly invitations: boolean
}

/** The dashboard's door: its kit, its cookie, mandates first, invitations accepted. */
export const dashboardDoor = (kit: Kit): Door => ({
  ...kit,
  console: "dashboard",
  cookie: Session.Cookie,
  home: "/mandates",
  invitations: true
})

export const routes = (router: Context.Tag.Service<typeof HttpApiBuilder.Router>, door: Door) =>
  Effect.gen(function* () {
    const { root, pages, people, provide, frame, opened, signInPage, cookie, home } = door
    const stagePath = (base: string, stage: Person.Stage) => nextPath(base, stage, home)
    const reads = yield* Reads.Reads
    const limits = yield* RateLimits.RateLimits

    const clientOf = Effect.map(HttpServerRequest.HttpServerRequest, (request) => ({
      address: Option.getOrNull(request.remoteAddress),
      userAgent: request.headers["user-agent"]?.slice(0, 500) ?? null
    }))

    /**
     * `effect` as the signed-in person's own change, for the audit log (a new password, an authenticator,
     * a recovery code used): the person is the actor, the service names the merchant.
     */
    const as = <A, E, R>(user: Person.User, effect: Effect.Effect<A, E, R>) =>
      AuditActor.within(
        {
          merchantId: Ids.MerchantId.make("00000000-0000-0000-0000-000000000000"),
          environment: "test",
          keyId: `${AuditActor.UserPrefix}${user.id}`,
          kind: "secret",
          scopes: []
        },
        effect
      )

    /** A post of a sign-in step: throttled per address and CSRF-checked like every form. */
    const posted = <E, R>(
      body: (
        v: Visit
      ) => Effect.Effect<import("@effect/platform/HttpServerResponse").HttpServerResponse, E, R>
    ) =>
      provide(
        Effect.gen(function* () {
          const v = yield* visit
          if (yield* throttled) return v.finish(signInPage(v, d(v.lang, "busy"), 429))
          if (!(yield* csrfValid)) return v.finish(signInPage(v, d(v.lang, "expired"), 403))
          return v.finish(yield* body(v))
        })
      )

    /** A page of a sign-in step, for a session at `stage` (any other goes where it belongs). */
    const step =
      <E, R>(
        stage: Person.Stage | "any",
        body: (
          v: Visit,
          token: string,
          found: NonNullable<Effect.Effect.Success<typeof opened>>
        ) => Effect.Effect<import("@effect/platform/HttpServerResponse").HttpServerResponse, E, R>
      ) =>
      (v: Visit) =>
        Effect.gen(function* () {
          const found = yield* opened
          if (found === undefined) return signInPage(v, undefined, 401)
          if (stage !== "any" && found.session.stage !== stage)
            return redirect(stagePath(root, found.session.stage))
          return yield* body(v, found.token, found)
        })

    /** The next step after `issued`, its token in the cookie. */
    const onward = (issued: { readonly token: string; readonly session: Person.Session }) =>
      Session.start(pages, redirect(stagePath(root, issued.session.stage)), issued.token, cookie)

    /**
     * A password or second-factor guess under the sign-in lock-outs of the account and the address: a
     * wrong one waits before its answer, longer as the account's tries run out (`SignInThrottle`).
     */
    const guarded = <A, E, R>(email: string, check: Effect.Effect<A | undefined, E, R>) =>
      Effect.gen(function* () {
        const { address } = yield* clientOf
        const account = `account:${Person.normalEmail(email)}`
        const checked = yield* RateLimit.guarded(
          [
            [limits.signInByAddress, RateLimit.addressKey(address ?? "unknown")],
            [limits.signInByAccount, account]
          ],
          check
        )
        if (checked._tag === "Checked" && checked.value === undefined)
          yield* Effect.sleep(SignInThrottle.signInDelay(yield* limits.signInByAccount.remaining(account)))
        return checked
      })

    const lockedPage = (v: Visit, seconds: number) =>
      signInPage(v, d(v.lang, "locked", { seconds: String(seconds) }), 429)

    const refusedAs = <A, E extends { readonly _tag: string }, R>(effect: Effect.Effect<A, E, R>) =>
      Effect.catchIf(
        effect,
        (e): e is Extract<E, { _tag: "SignInRefused" }> => e._tag === "SignInRefused",
        () => Effect.succeed(undefined)
      )

    yield* router.post(
      route(`${root}/sign-in`),
      posted((v) =>
        Effect.gen(function* () {
          const field = yield* form
          const email = (field("email") ?? "").trim().slice(0, 254)
          const password = (field("password") ?? "").slice(0, 1024)
          const client = yield* clientOf
          const checked = yield* guarded(
            email,
            refusedAs(people.signIn({ console: door.console, email, password, ...client }))
          )
          if (checked._tag === "Locked") return lockedPage(v, checked.decision.retryAfterSeconds)
          if (checked.value === undefined)
            return respond(
              <P.SignIn frame={frame(v)} error={d(v.lang, "signInRefused")} email={email} />,
              401
            )
          return onward(checked.value)
        })
      )
    )

    yield* router.post(
      route(`${root}/sign-out`),
      posted((v) =>
        Effect.gen(function* () {
          const found = yield* opened
          // Ended in the database, so a saved copy of the cookie no longer works in any process.
          if (found !== undefined)
            yield* people.signOut(found.token).pipe(Effect.orElseSucceed(() => undefined))
          return Session.end(
            pages,
            respond(<P.SignIn frame={frame(v)} notice={d(v.lang, "signOut")} />),
            cookie
          )
        })
      )
    )

    // The second factor: a TOTP code or a recovery code.
    yield* router.get(
      route(`${root}/two-factor`),
      provide(
        Effect.flatMap(visit, (v) =>
          Effect.map(
            step("two_factor", () => Effect.succeed(respond(<P.TwoFactor frame={frame(v)} />)))(v),
            v.finish
          )
        )
      )
    )
    yield* router.post(
      route(`${root}/two-factor`),
      posted(
        step("two_factor", (v, token, found) =>
          Effect.gen(function* () {
            const code = ((yield* form)("code") ?? "").trim().slice(0, 32)
            const checked = yield* guarded(
              found.user.email,
              refusedAs(as(found.user, people.verifyTwoFactor(token, code)))
            )
            if (checked._tag === "Locked") return lockedPage(v, checked.decision.retryAfterSeconds)
            if (checked.value === undefined)
              return respond(<P.TwoFactor frame={frame(v)} error={d(v.lang, "signInRefused")} />, 401)
            return onward(checked.value)
          })
        )
      )
    )

    /**
     * Whether the session may set up an authenticator: at the `enrol` step, or signed in without one. An
     * authenticator already enrolled is not replaced from a session alone, which may have been taken.
     */
    const mayEnrol = (found: { readonly session: Person.Session; readonly user: Person.User }) =>
      found.session.stage === "enrol" || (found.session.stage === "full" && !found.user.twoFactor)

    /** The enrolment page with a new secret (each visit a new one, until one is confirmed). */
    const enrolPage = (
      v: Visit,
      token: string,
      found: { readonly user: Person.User; readonly memberships: ReadonlyArray<Person.Membership> },
      error?: string
    ) =>
      Effect.gen(function* () {
        const { secret, uri } = yield* people.beginEnrolment(token)
        const image = yield* Effect.promise(() => QRCode.toDataURL(uri, { margin: 1, width: 224 }))
        const required = Person.twoFactorRequired(door.console, found.memberships)
        return respond(
          <P.Enrol frame={frame(v)} secret={secret} image={image} required={required} error={error} />,
          error === undefined ? 200 : 401
        )
      })

    // Setting up an authenticator: at the `enrol` step, or later from the account page.
    yield* router.get(
      route(`${root}/two-factor/enrol`),
      provide(
        Effect.flatMap(visit, (v) =>
          Effect.map(
            step("any", (v, token, found) =>
              mayEnrol(found)
                ? enrolPage(v, token, found)
                : Effect.succeed(redirect(stagePath(root, found.session.stage)))
            )(v),
            v.finish
          )
        )
      )
    )
    yield* router.post(
      route(`${root}/two-factor/enrol`),
      posted(
        step("any", (v, token, found) =>
          Effect.gen(function* () {
            if (!mayEnrol(found)) return redirect(stagePath(root, found.session.stage))
            const code = ((yield* form)("code") ?? "").trim().slice(0, 12)
            const checked = yield* guarded(
              found.user.email,
              refusedAs(as(found.user, people.confirmEnrolment(token, code)))
            )
            if (checked._tag === "Locked") return lockedPage(v, checked.decision.retryAfterSeconds)
            if (checked.value === undefined)
              return yield* enrolPage(v, token, found, d(v.lang, "signInRefused"))
            const { issued, recoveryCodes } = checked.value
            return Session.start(
              pages,
              respond(<P.RecoveryCodes frame={frame(v)} codes={recoveryCodes} />),
              issued.token,
              cookie
            )
          })
        )
      )
    )

    // A new password: a one-time password's first sign-in, or the account page's form.
    yield* router.get(
      route(`${root}/password`),
      provide(
        Effect.flatMap(visit, (v) =>
          Effect.map(
            step("any", (v, _token, found) =>
              Effect.succeed(
                found.session.stage === "change_password"
                  ? respond(<P.Password frame={frame(v)} />)
                  : redirect(`${root}/account`)
              )
            )(v),
            v.finish
          )
        )
      )
    )
    yield* router.post(
      route(`${root}/password`),
      posted(
        step("any", (v, token, found) =>
          Effect.gen(function* () {
            const field = yield* form
            const current = (field("current") ?? "").slice(0, 1024)
            const next = (field("next") ?? "").slice(0, 1024)
            const again = (error: string, status: number) =>
              found.session.stage === "change_password"
                ? Effect.succeed(respond(<P.Password frame={frame(v)} error={error} />, status))
                : Effect.succeed(redirect(`${root}/account?error=${encodeURIComponent(error)}`))
            if (found.session.stage !== "change_password" && found.session.stage !== "full")
              return redirect(stagePath(root, found.session.stage))
            if (next !== (field("repeat") ?? "")) return yield* again(d(v.lang, "passwordsDiffer"), 422)
            const checked = yield* guarded(
              found.user.email,
              as(found.user, people.changePassword(token, { current, next })).pipe(
                Effect.map((issued) => ({ issued }) as const),
                Effect.catchTag("InvalidRequest", (e) =>
                  Effect.succeed({ problem: e.errors[0]?.message ?? e.message } as const)
                ),
                refusedAs
              )
            )
            if (checked._tag === "Locked") return lockedPage(v, checked.decision.retryAfterSeconds)
            if (checked.value === undefined) return yield* again(d(v.lang, "signInRefused"), 401)
            if ("problem" in checked.value) return yield* again(checked.value.problem, 422)
            const issued = checked.value.issued
            return Session.start(
              pages,
              // From the account page, back there; from a one-time password, on to the next step.
              found.session.stage === "full" && issued.session.stage === "full"
                ? redirect(`${root}/account?changed=1`)
                : redirect(stagePath(root, issued.session.stage)),
              issued.token,
              cookie
            )
          })
        )
      )
    )

    if (!door.invitations) return
    // An invitation's link: its page, and accepting it.
    const invitationPage = (v: Visit, token: string, error?: string, status = 200) =>
      Effect.gen(function* () {
        const found = yield* people.invitation(token)
        if (found === undefined)
          return respond(
            <P.Said
              frame={frame(v)}
              path={`${root}/invitations`}
              title={d(v.lang, "invitations")}
              error={d(v.lang, "invitationGone")}
            />,
            404
          )
        const merchant = (yield* reads.merchant(found.invitation.merchantId))?.name ?? ""
        return respond(
          <P.Invitation
            frame={frame(v)}
            token={token}
            merchant={merchant}
            role={found.invitation.role}
            email={found.invitation.email}
            existing={found.existing}
            error={error}
          />,
          status
        )
      })
    const tokenParam = Effect.map(HttpRouter.params, (p) => Session.tokenOf(p.token) ?? "")

    yield* router.get(
      route(`${root}/invitations/:token`),
      provide(
        Effect.gen(function* () {
          const v = yield* visit
          return v.finish(yield* invitationPage(v, yield* tokenParam))
        })
      )
    )
    yield* router.post(
      route(`${root}/invitations/:token`),
      posted((v) =>
        Effect.gen(function* () {
          const token = yield* tokenParam
          const field = yield* form
          const password = (field("password") ?? "").slice(0, 1024)
          const found = yield* people.invitation(token)
          if (found === undefined) return yield* invitationPage(v, token)
          if (!found.existing && password !== (field("repeat") ?? ""))
            return yield* invitationPage(v, token, d(v.lang, "passwordsDiffer"), 422)
          const accepted = yield* guarded(
            found.invitation.email,
            people.accept(token, password).pipe(
              Effect.map((user) => ({ user }) as const),
              Effect.catchTag("InvalidRequest", (e) =>
                Effect.succeed({ problem: e.errors[0]?.message ?? e.message } as const)
              ),
              Effect.catchTag("PersonNotFound", () => Effect.succeed({ gone: true } as const)),
              refusedAs
            )
          )
          if (accepted._tag === "Locked") return lockedPage(v, accepted.decision.retryAfterSeconds)
          if (accepted.value === undefined)
            return yield* invitationPage(v, token, d(v.lang, "signInRefused"), 401)
          if ("problem" in accepted.value) return yield* invitationPage(v, token, accepted.value.problem, 422)
          if ("gone" in accepted.value) return yield* invitationPage(v, token)
          const merchant = (yield* reads.merchant(found.invitation.merchantId))?.name ?? ""
          return respond(<P.SignIn frame={frame(v)} notice={d(v.lang, "accepted", { merchant })} />)
        })
      )
    )
  })
