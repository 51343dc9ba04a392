/**
 * What every page of the operator console shares: the signed-in member of staff (the token of an `ops`
 * session in its own HttpOnly cookie, opened through `People` on every request), the operator permission
 * of each page and action (`ConsoleAccess`, checked before anything runs), the CSRF check on posts, and
 * the shell of a page. `Console` registers its routes through one kit (`at`).
 */
import type * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Auth, Ids, People, type Person, Role } from "@laari/core"
import { type Context, Effect } from "effect"
import type { ComponentChildren } from "preact"
import * as AuditActor from "../Http/AuditActor.js"
import { ServerConfigTag } from "../Platform/Config.js"
import * as Access from "./ConsoleAccess.js"
import { c, type Word } from "./ConsoleText.js"
import * as CV from "./ConsoleViews.js"
import * as P from "./DashboardPeopleViews.js"
import * as Session from "./DashboardSession.js"
import type { Door } from "./DashboardSignIn.js"
import { d } from "./DashboardText.js"
import type * as V from "./DashboardViews.js"
import { respond } from "./Html.js"
import * as Paths from "./Paths.js"
import { csrfValid, Pages, throttled, visit } from "./Request.js"
import { redirect, route } from "./Routing.js"
import { stagePath } from "./DashboardKit.js"

/** The console's cookie: an `ops` session's token, apart from the dashboard's. */
export const Cookie = "laari_console"

/** The first section a signed-in member of staff lands on. */
export const Home = "/merchants"

export type Visit = Effect.Effect.Success<typeof visit>
export type Signed = Access.Signed

export type Build<E, R> = (
  v: Visit,
  signed: Signed
) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>

export const make = Effect.gen(function* () {
  const config = yield* ServerConfigTag
  const pages = yield* Pages
  const people = yield* People.People
  const root = `${Paths.prefixOf(config.baseUrl)}/ops/console`
  const assets = Paths.prefixOf(config.checkoutUrl)
  const provide = Effect.provideService(Pages, pages)

  const frame = (v: Visit): V.Frame => ({
    lang: v.lang,
    root,
    assets,
    csrf: v.csrf,
    title: c(v.lang, "console"),
    home: Home
  })

  /** The cookie's live console session, at whatever stage; a dashboard session is nobody here. */
  const opened = Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const token = Session.tokenOf(request.cookies[Cookie])
    if (token === undefined) return undefined
    const found = yield* people.open(token).pipe(Effect.orElseSucceed(() => undefined))
    if (found === undefined || found.session.console !== "ops") return undefined
    return { ...found, token }
  })

  /** The member of staff once past every sign-in step; else the step they are at, or nobody. */
  const signedIn = Effect.map(opened, (found): Signed | Person.Stage | undefined => {
    if (found === undefined) return undefined
    if (found.session.stage !== "full") return found.session.stage
    const role = found.user.operatorRole
    // A role taken away ends what the session may open at once.
    if (role === null) return undefined
    return {
      caller: {
        // The console acts across merchants: the caller's tenant is never read, only its key id.
        merchantId: Ids.MerchantId.make("00000000-0000-0000-0000-000000000000"),
        environment: "test",
        keyId: `${AuditActor.UserPrefix}${found.user.id}`,
        kind: "secret",
        scopes: Auth.allScopes
      },
      user: found.user,
      role,
      session: found.session,
      token: found.token
    }
  })

  const signInPage = (v: Visit, error?: string, status = 200) =>
    respond(<P.SignIn frame={frame(v)} error={error} />, status)

  /** A page in the console's shell. */
  const shell = (
    v: Visit,
    signed: Signed,
    page: {
      readonly section: CV.Section
      readonly title: Word
      readonly children: ComponentChildren
      readonly notice?: ComponentChildren | undefined
      readonly error?: string | undefined
      readonly status?: number
    }
  ) =>
    respond(
      <CV.Shell
        frame={frame(v)}
        signed={signed}
        section={page.section}
        title={c(v.lang, page.title)}
        notice={page.notice}
        error={page.error}
      >
        {page.children}
      </CV.Shell>,
      page.status ?? 200
    )

  /** The refusal of a route whose permission the role lacks: `403`, naming the permission. */
  const refused = (v: Visit, signed: Signed, permission: Role.OperatorPermission) =>
    shell(v, signed, {
      section: "account",
      title: "forbidden",
      children: null,
      error: c(v.lang, "lacksPermission", { permission }),
      status: 403
    })

  /**
   * A console route from `ConsoleAccess.Routes`: signed out, the sign-in page; part-way through signing
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
        if (typeof signed === "string") return v.finish(redirect(stagePath(root, signed, Home)))
        if (!Role.operatorCan(signed.role, permission)) return v.finish(refused(v, signed, permission))
        // Its changes are the member of staff's in the audit log.
        return v.finish(yield* AuditActor.within(signed.caller, build(v, signed)))
      })
    )

  /** Registers the route `name` of `ConsoleAccess.Routes` on `router`, with its permission. */
  const at = <E,>(
    router: Context.Tag.Service<typeof HttpApiBuilder.Router>,
    name: Access.RouteName,
    build: Build<E, HttpRouter.HttpRouter.Provided | Pages>
  ) => {
    const { method, path } = Access.Routes[name]
    const r = route(`${root}${path}`)
    return method === "GET" ? router.get(r, handle(name, build)) : router.post(r, handle(name, build))
  }

  /** The sign-in routes' view of the console: `ops` sessions, its cookie, no invitations. */
  const door: Door = {
    root,
    pages,
    people,
    provide,
    frame,
    opened,
    signInPage,
    console: "ops",
    cookie: Cookie,
    home: Home,
    invitations: false
  }

  const param = (name: string) => Effect.map(HttpRouter.params, (p) => p[name] ?? "")

  return { root, frame, door, at, shell, param }
})

export type Kit = Effect.Effect.Success<typeof make>
