/**
 * What every dashboard page shares: the signed-in person (a session token in an HttpOnly cookie, opened
 * through `People` on every request, so an ended session is refused in every process), the permission of
 * each page and action (`DashboardAccess`, checked on the server before anything is read), the CSRF check
 * on posts, and the frame and shell of a page. `Dashboard` and its section modules register their routes
 * through one `Kit` (`at`).
 */
import * as AuditActor from "../Http/AuditActor.js"
import type * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Auth, People, type Person, Reads, Role } from "@laari/core"
import { type Context, Effect } from "effect"
import { ServerConfigTag } from "../Platform/Config.js"
import * as Access from "./DashboardAccess.js"
import * as Session from "./DashboardSession.js"
import { d, type Word } from "./DashboardText.js"
import * as P from "./DashboardPeopleViews.js"
import * as V from "./DashboardViews.js"
import * as Refunds from "./DashboardRefunds.js"
import { respond } from "./Html.js"
import * as Paths from "./Paths.js"
import { redirect, route } from "./Routing.js"
import { csrfValid, Pages, throttled, visit } from "./Request.js"

/** The first page of every list. */
export const Page = { limit: 50, offset: 0 } as const

/** A table's column headings. */
export const heads = (lang: Parameters<typeof d>[0], words: ReadonlyArray<Word>) =>
  words.map((w) => d(lang, w))

export type Visit = Effect.Effect.Success<typeof visit>
export type Signed = Access.Signed

/** What a page is built from: the visit, the tenant's principal, and the person. */
export type Build<E, R> = (
  v: Visit,
  principal: Auth.Principal,
  signed: Signed
) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>

/** Where a session that has not reached `full` goes next; at `full`, `home` (the first section). */
export const stagePath = (root: string, stage: Person.Stage, home = "/mandates"): string =>
  stage === "change_password"
    ? `${root}/password`
    : stage === "enrol"
      ? `${root}/two-factor/enrol`
      : stage === "two_factor"
        ? `${root}/two-factor`
        : `${root}${home}`

export const make = Effect.gen(function* () {
  const config = yield* ServerConfigTag
  const pages = yield* Pages
  const people = yield* People.People
  const reads = yield* Reads.Reads
  const root = `${Paths.prefixOf(config.baseUrl)}/dashboard`
  const assets = Paths.prefixOf(config.checkoutUrl)
  const provide = Effect.provideService(Pages, pages)

  const frame = (v: Visit): V.Frame => ({ lang: v.lang, root, assets, csrf: v.csrf })

  /** The cookie's live dashboard session, at whatever stage; an ended or expired one is nobody. */
  const opened = Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const token = Session.tokenOf(request.cookies[Session.Cookie])
    if (token === undefined) return undefined
    const found = yield* people.open(token).pipe(Effect.orElseSucceed(() => undefined))
    if (found === undefined || found.session.console !== "dashboard") return undefined
    return { ...found, token }
  })

  /** The signed-in person on the session's merchant, once past every sign-in step; else why not. */
  const signedIn = Effect.map(opened, (found): Signed | Person.Stage | undefined => {
    if (found === undefined) return undefined
    if (found.session.stage !== "full") return found.session.stage
    const membership = found.memberships.find((m) => m.merchantId === found.session.merchantId)
    if (membership === undefined) return undefined
    return {
      principal: {
        merchantId: membership.merchantId,
        environment: found.session.environment,
        keyId: `${AuditActor.UserPrefix}${found.user.id}`,
        kind: "secret",
        // What a person may do is their role's permissions, checked per route (`at`), not key scopes.
        scopes: Auth.allScopes
      },
      user: found.user,
      role: membership.role,
      session: found.session,
      memberships: found.memberships,
      token: found.token
    }
  })

  const signInPage = (v: Visit, error?: string, status = 200) =>
    respond(<P.SignIn frame={frame(v)} error={error} />, status)

  /** The shell's refusal of a route whose permission the role lacks: `403`, naming the permission. */
  const refused = (v: Visit, signed: Signed, permission: Role.Permission) =>
    shell(v, signed, {
      section: "account",
      title: "forbidden",
      children: null,
      error: d(v.lang, "lacksPermission", { permission }),
      status: 403
    })

  /**
   * A dashboard route from `DashboardAccess.Routes`: signed out, the sign-in page; part-way through signing
   * in, that step's page; a role without the route's permission, the refusal; a post needs the CSRF token.
   */
  const handle = <E, R>(name: Access.RouteName, build: Build<E, R>) =>
    provide(
      Effect.gen(function* () {
        const { method, permission } = Access.Routes[name]
        const post = method === "POST"
        const v = yield* visit
        if (post && (yield* throttled)) return v.finish(signInPage(v, d(v.lang, "busy"), 429))
        if (post && !(yield* csrfValid)) return v.finish(signInPage(v, d(v.lang, "expired"), 403))
        const signed = yield* signedIn
        if (signed === undefined) return v.finish(signInPage(v, undefined, post ? 401 : 200))
        if (typeof signed === "string") return v.finish(redirect(stagePath(root, signed)))
        if (!Role.can(signed.role, permission)) return v.finish(yield* refused(v, signed, permission))
        // Its changes are the signed-in person's in the audit log.
        return v.finish(yield* AuditActor.within(signed.principal, build(v, signed.principal, signed)))
      })
    )

  /** Registers the route `name` of `DashboardAccess.Routes` on `router`, with its permission. */
  const at = <E,>(
    router: Context.Tag.Service<typeof HttpApiBuilder.Router>,
    name: Access.RouteName,
    build: Build<E, HttpRouter.HttpRouter.Provided | Pages>
  ) => {
    const { method, path } = Access.Routes[name]
    const r = route(`${root}${path}`)
    return method === "GET" ? router.get(r, handle(name, build)) : router.post(r, handle(name, build))
  }

  /** A page of the dashboard in its section's frame, with the signed-in merchant's name. */
  const shell: Refunds.Shell = (v, signed, { title, status, ...page }) =>
    Effect.map(
      Effect.forEach(signed.memberships, (m) =>
        Effect.map(
          reads.merchant(m.merchantId),
          (found) => [m.merchantId as string, found?.name ?? ""] as const
        )
      ),
      (names) =>
        respond(
          <V.Shell
            frame={frame(v)}
            signed={signed}
            merchant={new Map(names).get(signed.principal.merchantId) ?? ""}
            merchants={new Map(names)}
            {...page}
            title={d(v.lang, title)}
          />,
          status ?? 200
        )
    )

  /** A section's page: its body in the frame, with the notice of a refund just made. */
  const section =
    <E, R>(
      name: V.Section,
      title: Word,
      body: (
        v: Visit,
        principal: Auth.Principal,
        signed: Signed
      ) => Effect.Effect<preact.ComponentChildren, E, R>,
      messages: (v: Visit) => { readonly notice?: string; readonly error?: string } = () => ({}),
      status = 200
    ) =>
    (v: Visit, principal: Auth.Principal, signed: Signed) =>
      Effect.gen(function* () {
        const children = yield* body(v, principal, signed)
        // After a refund, the payment's page (`?refunded=`) tells of it.
        const notice = Refunds.notice(v.lang, (yield* HttpServerRequest.HttpServerRequest).url)
        const page = { section: name, title, children, notice, ...messages(v), status }
        return yield* shell(v, signed, page)
      })

  const idParam = Effect.map(HttpRouter.params, (p) => p.id ?? "")

  return { root, pages, people, provide, frame, opened, signInPage, handle, at, shell, section, idParam }
})

export type Kit = Effect.Effect.Success<typeof make>
