/**
 * The operator console at `{base_url}/ops/console`: the provider's staff sign in as merchants' people do
 * (`DashboardSignIn` through the console's door: its own cookie, two-factor always), then do what the
 * operator API does, through the same core services: merchants and their outlets, keys and feature
 * gates, customers, suspensions, the manual clock, and the audit log of every merchant. Each route's
 * operator permission is `ConsoleAccess`'s, checked by `ConsoleKit` before anything runs; every change
 * runs as the signed-in person, so the audit log names them. Forms post with the CSRF token and work
 * without JavaScript.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { ApiKeys, Audit, Calendar, Ids, Mandates, Merchants, People, Reads } from "@laari/core"
import { DateTime, Effect } from "effect"
import { Clockwork } from "../Background/Clockwork.js"
import { Directory } from "../Platform/Directory.js"
import * as Kit from "./ConsoleKit.js"
import { c } from "./ConsoleText.js"
import * as CV from "./ConsoleViews.js"
import * as AuditLog from "./DashboardAudit.js"
import * as P from "./DashboardPeopleViews.js"
import * as SignIn from "./DashboardSignIn.js"
import { d } from "./DashboardText.js"
import { Given } from "./Html.js"
import { form } from "./Request.js"
import { redirect } from "./Routing.js"

/** A query parameter of the request. */
const query = (name: string) =>
  Effect.map(HttpServerRequest.HttpServerRequest, (r) =>
    new URL(r.url, "http://console").searchParams.get(name)
  )

export const layer = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function* () {
    const kit = yield* Kit.make
    const { root, frame, at, shell, param } = kit
    const merchants = yield* Merchants.Merchants
    const keys = yield* ApiKeys.ApiKeys
    const mandates = yield* Mandates.Mandates
    const directory = yield* Directory
    const reads = yield* Reads.Reads
    const audit = yield* Audit.Audit
    const clockwork = yield* Clockwork
    const people = yield* People.People

    yield* SignIn.routes(router, kit.door)

    yield* at(router, "home", () => Effect.succeed(redirect(`${root}${Kit.Home}`)))

    const merchantsPage = (v: Kit.Visit, signed: Kit.Signed, error?: string, status = 200) =>
      Effect.gen(function* () {
        const list = yield* merchants.list(100)
        const notice = (yield* query("created")) === null ? undefined : c(v.lang, "merchantCreated")
        return shell(v, signed, {
          section: "merchants",
          title: "merchants",
          children: <CV.Merchants frame={frame(v)} signed={signed} merchants={list} />,
          notice,
          error,
          status
        })
      })

    yield* at(router, "merchants", (v, signed) => merchantsPage(v, signed))
    yield* at(router, "merchantCreate", (v, signed) =>
      Effect.gen(function* () {
        const field = yield* form
        const name = (field("name") ?? "").trim()
        const outlet = (field("outlet") ?? "").trim()
        return yield* merchants.create({ name, outlets: outlet === "" ? undefined : [outlet] }).pipe(
          Effect.map(({ merchant }) => redirect(`${root}/merchants/${merchant.id}?created=1`)),
          Effect.catchTag("InvalidRequest", (e) =>
            merchantsPage(v, signed, e.errors[0]?.message ?? e.message, 422)
          )
        )
      })
    )

    /** A merchant's page, with what a post on it said; `404` for an unknown id. */
    const merchantPage = (
      v: Kit.Visit,
      signed: Kit.Signed,
      id: string,
      said: { readonly notice?: string; readonly error?: string; readonly issued?: string } = {},
      status = 200
    ) =>
      Effect.gen(function* () {
        const merchant = yield* merchants.get(id)
        if (merchant === undefined)
          return shell(v, signed, {
            section: "merchants",
            title: "merchant",
            children: null,
            error: c(v.lang, "notFound"),
            status: 404
          })
        const outlets = yield* merchants.listOutlets(merchant.id)
        const list = yield* keys.list(merchant.id)
        const done = yield* query("done")
        const notice =
          said.notice ??
          (done === "created"
            ? c(v.lang, "merchantCreated")
            : done === "outlet"
              ? c(v.lang, "outletAdded")
              : done === "revoked"
                ? c(v.lang, "keyRevoked")
                : done === "features"
                  ? c(v.lang, "featuresSaved")
                  : (yield* query("created")) !== null
                    ? c(v.lang, "merchantCreated")
                    : undefined)
        return shell(v, signed, {
          section: "merchants",
          title: "merchant",
          children: (
            <>
              <p>
                <strong>
                  <Given text={merchant.name} />
                </strong>
              </p>
              <CV.MerchantPage
                frame={frame(v)}
                signed={signed}
                merchant={merchant}
                outlets={outlets}
                keys={list}
                issued={said.issued}
              />
            </>
          ),
          notice,
          error: said.error,
          status
        })
      })

    yield* at(router, "merchant", (v, signed) =>
      Effect.flatMap(param("id"), (id) => merchantPage(v, signed, id))
    )
    yield* at(router, "outletAdd", (v, signed) =>
      Effect.gen(function* () {
        const id = yield* param("id")
        const name = ((yield* form)("outlet") ?? "").trim()
        return yield* merchants.addOutlet(id, name).pipe(
          Effect.flatMap((outlet) =>
            outlet === undefined
              ? merchantPage(v, signed, id)
              : Effect.succeed(redirect(`${root}/merchants/${id}?done=outlet`))
          ),
          Effect.catchTag("InvalidRequest", (e) =>
            merchantPage(v, signed, id, { error: e.errors[0]?.message ?? e.message }, 422)
          )
        )
      })
    )
    yield* at(router, "keyIssue", (v, signed) =>
      Effect.gen(function* () {
        const id = yield* param("id")
        const field = yield* form
        if ((yield* merchants.get(id)) === undefined) return yield* merchantPage(v, signed, id)
        const environment = field("environment") === "live" ? "live" : "test"
        const kind = field("kind") === "publishable" ? "publishable" : "secret"
        const issued = yield* keys.issue({ merchantId: Ids.MerchantId.make(id), environment, kind })
        // The key is shown on this answer only, never in a URL.
        return yield* merchantPage(v, signed, id, { issued: issued.key })
      })
    )
    yield* at(router, "keyRevoke", (v, signed) =>
      Effect.gen(function* () {
        const id = yield* param("id")
        const keyId = yield* param("key")
        const merchantId = Ids.MerchantId.make(id)
        const key = (yield* keys.list(merchantId)).find((k) => k.id === keyId)
        if (key === undefined)
          return yield* merchantPage(v, signed, id, { error: c(v.lang, "notFound") }, 404)
        yield* keys.revoke(merchantId, key.id)
        return redirect(`${root}/merchants/${id}?done=revoked`)
      })
    )
    yield* at(router, "features", (v, signed) =>
      Effect.gen(function* () {
        const id = yield* param("id")
        const field = yield* form
        const merchant = yield* merchants.setFeatures(id, {
          mandatesLive: field("mandates_live") === "on",
          subscriptionsLive: field("subscriptions_live") === "on"
        })
        if (merchant === undefined) return yield* merchantPage(v, signed, id)
        return redirect(`${root}/merchants/${id}?done=features`)
      })
    )

    const customersPage = (
      v: Kit.Visit,
      signed: Kit.Signed,
      said: { readonly notice?: string; readonly error?: string } = {},
      status = 200
    ) =>
      Effect.gen(function* () {
        const phone = ((yield* query("phone")) ?? "").trim().slice(0, 32)
        const environment = (yield* query("environment")) === "live" ? "live" : "test"
        const customer = phone === "" ? undefined : yield* reads.customerByPhone(environment, phone)
        const account = customer === undefined ? undefined : yield* directory.payer(customer.id)
        const found =
          customer === undefined
            ? undefined
            : {
                id: customer.id,
                phone: customer.phone,
                name: customer.name,
                environment: customer.environment,
                balance: account?.balance ?? null
              }
        return shell(v, signed, {
          section: "customers",
          title: "customers",
          children: <CV.Customers frame={frame(v)} signed={signed} phone={phone} found={found} />,
          notice:
            said.notice ?? ((yield* query("created")) === null ? undefined : c(v.lang, "customerCreated")),
          error: said.error,
          status
        })
      })

    yield* at(router, "customers", (v, signed) => customersPage(v, signed))
    yield* at(router, "customerCreate", (v, signed) =>
      Effect.gen(function* () {
        const field = yield* form
        const environment = field("new-environment") === "live" ? "live" : "test"
        const phone = (field("new-phone") ?? "").trim().slice(0, 32)
        const name = (field("new-name") ?? "").trim().slice(0, 200)
        const balanceText = (field("new-balance") ?? "").trim()
        const balance = balanceText === "" ? 0 : Number(balanceText)
        if (!/^\+?[0-9]{5,15}$/.test(phone) || !Number.isSafeInteger(balance) || balance < 0)
          return yield* customersPage(v, signed, { error: c(v.lang, "badCustomer") }, 422)
        return yield* audit
          .recording(
            directory.createCustomer({ environment, phone, name: name === "" ? undefined : name, balance }),
            (made) => ({
              merchantId: null,
              environment,
              action: "customer.create",
              resourceType: "customer",
              resourceId: made.id,
              fields: { phone, name: name === "" ? null : name, balance }
            })
          )
          .pipe(
            Effect.map(() =>
              redirect(
                `${root}/customers?created=1&environment=${environment}&phone=${encodeURIComponent(phone)}`
              )
            ),
            Effect.catchTag("PhoneTaken", () =>
              customersPage(v, signed, { error: c(v.lang, "phoneTaken") }, 409)
            )
          )
      })
    )

    const suspensionsPage = (
      v: Kit.Visit,
      signed: Kit.Signed,
      said: { readonly notice?: string; readonly error?: string } = {},
      status = 200
    ) =>
      Effect.succeed(
        shell(v, signed, {
          section: "suspensions",
          title: "suspensions",
          children: <CV.Suspensions frame={frame(v)} signed={signed} />,
          ...said,
          status
        })
      )
    yield* at(router, "suspensions", (v, signed) => suspensionsPage(v, signed))
    yield* at(router, "suspend", (v, signed) =>
      Effect.gen(function* () {
        const id = ((yield* form)("mandate") ?? "").trim().slice(0, 100)
        if (id === "") return yield* suspensionsPage(v, signed, { error: c(v.lang, "mandateNotFound") }, 404)
        return yield* mandates.suspend(id).pipe(
          Effect.flatMap(() => suspensionsPage(v, signed, { notice: c(v.lang, "suspended") })),
          Effect.catchTag("MandateNotFound", () =>
            suspensionsPage(v, signed, { error: c(v.lang, "mandateNotFound") }, 404)
          ),
          Effect.catchTag("MandateNotSuspendable", () =>
            suspensionsPage(v, signed, { error: c(v.lang, "notSuspendable") }, 409)
          )
        )
      })
    )

    const clockPage = (
      v: Kit.Visit,
      signed: Kit.Signed,
      said: { readonly notice?: string; readonly error?: string } = {},
      status = 200
    ) =>
      Effect.map(DateTime.now, (now) =>
        shell(v, signed, {
          section: "clock",
          title: "clock",
          children: (
            <CV.Clock
              frame={frame(v)}
              signed={signed}
              now={Calendar.formatMaldives(now)}
              mode={clockwork.mode}
            />
          ),
          ...said,
          status
        })
      )
    yield* at(router, "clock", (v, signed) => clockPage(v, signed))
    yield* at(router, "clockAdvance", (v, signed) =>
      Effect.gen(function* () {
        const seconds = Number(((yield* form)("seconds") ?? "").trim())
        const advance = clockwork.advanceTo
        if (clockwork.manual === undefined)
          return yield* clockPage(v, signed, { error: c(v.lang, "notManual") }, 409)
        if (!Number.isSafeInteger(seconds) || seconds < 1)
          return yield* clockPage(v, signed, { error: c(v.lang, "badSeconds") }, 422)
        const now = yield* DateTime.now
        const target = DateTime.add(now, { seconds })
        const processed = yield* advance(target) ?? Effect.succeed(0)
        // After the advance, which runs the work it made due in transactions of its own.
        yield* audit.recording(Effect.void, () => ({
          merchantId: null,
          environment: null,
          action: "clock.advance",
          resourceType: "clock",
          resourceId: null,
          fields: { from: DateTime.formatIso(now), to: DateTime.formatIso(target), processed }
        }))
        return yield* clockPage(v, signed, {
          notice: c(v.lang, "advanced", { processed: String(processed) })
        })
      })
    )

    // Every merchant's rows and those of no merchant: the core's list with no tenant.
    yield* at(router, "audit", (v, signed) =>
      Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        const f = AuditLog.filtersOf(new URL(request.url, "http://console").searchParams)
        const rows =
          f.error === undefined
            ? yield* audit.list(f.query, { limit: AuditLog.PageSize + 1, startingAfter: f.after })
            : []
        return shell(v, signed, {
          section: "audit",
          title: "auditLog",
          children: (
            <AuditLog.AuditView
              frame={frame(v)}
              filters={f}
              rows={rows.slice(0, AuditLog.PageSize)}
              more={rows.length > AuditLog.PageSize}
              exportable={false}
            />
          ),
          error: f.error === undefined ? undefined : d(v.lang, f.error),
          status: f.error === undefined ? 200 : 400
        })
      })
    )

    yield* at(router, "account", (v, signed) =>
      Effect.gen(function* () {
        const sessions = yield* people.sessions(signed.user.id)
        const changed = (yield* query("changed")) !== null
        const error = (yield* query("error")) ?? undefined
        return shell(v, signed, {
          section: "account",
          title: "account",
          children: <P.Account frame={frame(v)} signed={signed} sessions={sessions} />,
          notice: changed ? d(v.lang, "passwordChanged") : undefined,
          error: error?.slice(0, 200)
        })
      })
    )
    yield* at(router, "sessionEnd", (_v, signed) =>
      Effect.gen(function* () {
        const id = yield* param("id")
        yield* people
          .endSession(signed.user.id, id)
          .pipe(Effect.catchTag("PersonNotFound", () => Effect.void))
        return redirect(`${root}/account`)
      })
    )
  })
)
