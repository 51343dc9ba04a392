/**
 * The dashboard's audit log: the merchant's rows newest first, a page at a time, narrowed by who acted,
 * the action, the resource and the Maldives days it happened on (a plain GET form, so it works without
 * JavaScript and needs no CSRF token), and the same rows as CSV (`{root}/audit/export`, every id in
 * full). On the page an id links to its object's page; an id with no page (a key's, a client's, a team
 * member's) is shown short, as a link to the rows of that actor or resource.
 */
import type * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Audit, AuditEvent, type AuditStore, Auth, Balance, Calendar } from "@laari/core"
import { type Context, DateTime, Effect, Either } from "effect"
import type { ComponentChildren } from "preact"
import * as Csv from "../Audit/Csv.js"
import type { Kit, Signed } from "./DashboardKit.js"
import { IdLink, type Kind, refundSource } from "./DashboardLinks.js"
import { d, dn, type Word } from "./DashboardText.js"
import { type Frame, Table } from "./DashboardViews.js"
import { Given, Ltr, When } from "./Html.js"
import type { Lang } from "./I18n.js"
import type { Visit } from "./Request.js"

/** Rows a page shows. */
export const PageSize = 50

/** Rows an export holds at most, read a page at a time. */
export const ExportLimit = 10_000

const ExportPage = 500

/** The form's fields, as the query names them (those of `GET /audit-events`, days for instants). */
export const Fields = [
  "actor_kind",
  "actor_id",
  "action",
  "resource_type",
  "resource_id",
  "from",
  "to"
] as const
export type Field = (typeof Fields)[number]

/** What the form held, kept to show it again and in every link of the page. */
export type Typed = { readonly [F in Field]: string }

/** The filters a request asks for: the query, or why it is not one. */
export interface Filters {
  readonly typed: Typed
  readonly query: AuditStore.AuditQuery
  /** The row the page starts after (`starting_after`). */
  readonly after: string | undefined
  readonly error: Word | undefined
}

const uuid = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi

const isUuid = (text: string) => new RegExp(`^${uuid.source}$`, "i").test(text)

/**
 * The filters of a query string. An actor not in the list, a day that is not one or a filter past 255
 * characters is an error: the page says so and reads no rows. An id is matched as the service writes it,
 * in lower case.
 */
export const filtersOf = (params: URLSearchParams): Filters => {
  const typed = Object.fromEntries(Fields.map((f) => [f, (params.get(f) ?? "").trim()])) as Record<
    Field,
    string
  >
  const given = (f: Field) => (typed[f] === "" ? undefined : typed[f])
  const id = (f: Field) => {
    const text = given(f)
    return text !== undefined && isUuid(text) ? text.toLowerCase() : text
  }
  const kind = given("actor_kind")
  const from = given("from") === undefined ? undefined : Balance.day(typed.from)
  const to = given("to") === undefined ? undefined : Balance.day(typed.to)
  const after = params.get("starting_after") ?? ""
  const error: Word | undefined =
    kind !== undefined && !AuditEvent.ActorKind.literals.some((k) => k === kind)
      ? "badActor"
      : Fields.some((f) => typed[f].length > 255)
        ? "badFilter"
        : (from !== undefined && Either.isLeft(from)) || (to !== undefined && Either.isLeft(to))
          ? "badDay"
          : undefined
  return {
    typed,
    query: {
      actorKind: kind as AuditEvent.ActorKind | undefined,
      actorId: id("actor_id"),
      action: given("action"),
      resourceType: given("resource_type"),
      resourceId: id("resource_id"),
      from: from !== undefined && Either.isRight(from) ? from.right.from : undefined,
      // The last day asked for is included: until the start of the next.
      to: to !== undefined && Either.isRight(to) ? to.right.to : undefined
    },
    after: isUuid(after) ? after.toLowerCase() : undefined,
    error
  }
}

/** `{path}` with the typed filters (the empty ones left out) and `extra`. */
export const hrefOf = (path: string, typed: Partial<Typed>, extra: Record<string, string> = {}): string => {
  const q = new URLSearchParams()
  for (const [k, v] of Object.entries({ ...typed, ...extra })) if (v !== undefined && v !== "") q.set(k, v)
  const text = q.toString()
  return text === "" ? path : `${path}?${text}`
}

/** Each resource type the dashboard has a word for, and its page where it has one. */
const types: Readonly<Record<string, { readonly word: Word; readonly page?: Kind }>> = {
  mandate: { word: "mandate", page: "mandate" },
  charge: { word: "charge", page: "charge" },
  qr_code: { word: "qrCode", page: "qrCode" },
  qr_payment: { word: "qrPayment", page: "qrPayment" },
  checkout_session: { word: "checkoutSession", page: "checkoutSession" },
  subscription: { word: "subscription", page: "subscription" },
  invoice: { word: "invoice", page: "invoice" },
  refund: { word: "refundTitle", page: "refund" },
  webhook_endpoint: { word: "webhookEndpoint", page: "endpoint" },
  api_key: { word: "apiKey" },
  oauth_client: { word: "oauthClient" },
  merchant: { word: "merchantWord" },
  customer: { word: "customer" }
}

const pageOf = (type: string): Kind | undefined => types[type]?.page

const actorWords: Record<AuditEvent.ActorKind, Word> = {
  user: "actorUser",
  api_key: "apiKey",
  oauth_client: "oauthClient",
  ops_token: "actorOps",
  cli: "actorCli"
}

/** An id with no page of its own, short: enough to tell rows apart, and no longer a UUID. */
export const short = (id: string): string => `${id.slice(0, 8)}…`

/** Text with every UUID in it shortened. */
const shortened = (text: string) => text.replace(uuid, (id) => short(id))

/** What a resource type is called; a type the dashboard has no word for, as the log spells it. */
const typeName = (lang: Lang, type: string): ComponentChildren => {
  const known = types[type]
  return known === undefined ? <code>{type}</code> : d(lang, known.word)
}

/** The page a summary's id field names: `payment_id` by its `payment_kind`, `<type>_id` by its type. */
const fieldKind = (summary: AuditEvent.Summary, key: string): Kind | undefined => {
  if (key === "payment_id") {
    const kind = summary.payment_kind
    return kind === "charge" || kind === "qr_payment" || kind === "invoice" ? refundSource[kind] : undefined
  }
  const type = key.replace(/(_id|Id)$/, "")
  return type === key ? undefined : pageOf(type.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`))
}

const Summary = (p: { readonly root: string; readonly summary: AuditEvent.Summary }) => {
  const entries = Object.entries(p.summary)
  if (entries.length === 0) return null
  return (
    <ul class="summary">
      {entries.map(([key, value]) => {
        const kind = typeof value === "string" && isUuid(value) ? fieldKind(p.summary, key) : undefined
        return (
          <li key={key}>
            <code>{key}</code>:{" "}
            {kind !== undefined ? (
              <IdLink root={p.root} kind={kind} id={value as string} />
            ) : typeof value === "string" ? (
              <Given text={shortened(value)} />
            ) : (
              <code>{String(value)}</code>
            )}
          </li>
        )
      })}
    </ul>
  )
}

const Row = (frame: Frame, path: string, e: AuditEvent.Event): ReadonlyArray<ComponentChildren> => {
  const { lang, root } = frame
  const actor = d(lang, actorWords[e.actor.kind])
  // A credential's or person's id, short, leads to their rows; the operator is one actor of its kind.
  const who = ["api_key", "oauth_client", "user"].includes(e.actor.kind) ? (
    <a href={hrefOf(path, { actor_kind: e.actor.kind, actor_id: e.actor.id })}>
      {actor} <code>{short(e.actor.id)}</code>
    </a>
  ) : (
    <a href={hrefOf(path, { actor_kind: e.actor.kind })}>{actor}</a>
  )
  const kind = pageOf(e.resourceType)
  const what =
    e.resourceId === null || e.resourceType === "merchant" ? (
      typeName(lang, e.resourceType)
    ) : kind !== undefined ? (
      <>
        {typeName(lang, e.resourceType)} <IdLink root={root} kind={kind} id={e.resourceId} />
      </>
    ) : (
      <a href={hrefOf(path, { resource_type: e.resourceType, resource_id: e.resourceId })}>
        {typeName(lang, e.resourceType)} <code>{shortened(e.resourceId)}</code>
      </a>
    )
  return [
    <When at={e.at} />,
    who,
    <a href={hrefOf(path, { action: e.action })}>
      <code class="word">{e.action}</code>
    </a>,
    what,
    <Summary root={root} summary={e.summary} />,
    e.address === null ? "" : <code class="word">{shortened(e.address)}</code>
  ]
}

const actorOptions: ReadonlyArray<AuditEvent.ActorKind> = AuditEvent.ActorKind.literals

const typeOptions = Object.keys(types)

const FilterForm = (p: { readonly frame: Frame; readonly typed: Typed }) => {
  const { lang, root } = p.frame
  const text = (name: Field, label: Word, placeholder?: string) => (
    <div>
      <label for={name}>{d(lang, label)}</label>
      <input
        id={name}
        name={name}
        type="text"
        maxlength={255}
        value={p.typed[name]}
        dir="ltr"
        placeholder={placeholder}
        autocomplete="off"
      />
    </div>
  )
  const day = (name: "from" | "to", label: Word) => (
    <div>
      <label for={name}>{d(lang, label)}</label>
      <input id={name} name={name} type="date" value={p.typed[name]} dir="ltr" />
    </div>
  )
  return (
    <form method="get" action={`${root}/audit`} class="filters" aria-label={d(lang, "filters")}>
      <div>
        <label for="actor_kind">{d(lang, "actor")}</label>
        <select id="actor_kind" name="actor_kind">
          <option value="">{d(lang, "anyone")}</option>
          {actorOptions.map((k) => (
            <option key={k} value={k} selected={p.typed.actor_kind === k}>
              {d(lang, actorWords[k])}
            </option>
          ))}
        </select>
      </div>
      {text("actor_id", "actorId")}
      {text("action", "actionColumn", "refund.create")}
      <div>
        <label for="resource_type">{d(lang, "resource")}</label>
        <select id="resource_type" name="resource_type">
          <option value="">{d(lang, "anything")}</option>
          {typeOptions.map((t) => (
            <option key={t} value={t} selected={p.typed.resource_type === t}>
              {d(lang, types[t]!.word)}
            </option>
          ))}
        </select>
      </div>
      {text("resource_id", "resourceId")}
      {day("from", "fromDay")}
      {day("to", "toDay")}
      <div class="actions">
        <button type="submit">{d(lang, "filter")}</button>
        <a href={`${root}/audit`}>{d(lang, "clearFilters")}</a>
      </div>
    </form>
  )
}

export const AuditView = (p: {
  readonly frame: Frame
  readonly filters: Filters
  readonly rows: ReadonlyArray<AuditEvent.Event>
  readonly more: boolean
  /** Whether the CSV export is offered (the operator console's page has none). */
  readonly exportable?: boolean
}) => {
  const { lang, root } = p.frame
  const path = `${root}/audit`
  const last = p.rows[p.rows.length - 1]
  return (
    <>
      <p class="note">{d(lang, "auditNote")}</p>
      <FilterForm frame={p.frame} typed={p.filters.typed} />
      {/* A form, as the settlement report's: the same filters, the rows as a file. */}
      {p.exportable === false ? null : (
        <form method="get" action={`${path}/export`} class="actions">
          {Fields.filter((f) => p.filters.typed[f] !== "").map((f) => (
            <input key={f} type="hidden" name={f} value={p.filters.typed[f]} />
          ))}
          <button type="submit" class="secondary" aria-describedby="export-note">
            {d(lang, "downloadCsv")}
          </button>
          <p id="export-note" class="note">
            {dn(lang, "exportNote", { limit: <Ltr>{ExportLimit.toLocaleString("en")}</Ltr> })}
          </p>
        </form>
      )}
      <Table
        label={d(lang, "auditLog")}
        head={(["when", "actor", "actionColumn", "resource", "changes", "address"] as const).map((w) =>
          d(lang, w)
        )}
        rows={p.rows.map((e) => Row(p.frame, path, e))}
        empty={d(lang, "noAuditEvents")}
      />
      {p.filters.after !== undefined || p.more ? (
        <nav class="actions" aria-label={d(lang, "paging")}>
          {p.filters.after !== undefined ? (
            <a href={hrefOf(path, p.filters.typed)}>{d(lang, "newest")}</a>
          ) : null}{" "}
          {p.more && last !== undefined ? (
            <a href={hrefOf(path, p.filters.typed, { starting_after: last.id })}>{d(lang, "older")}</a>
          ) : null}
        </nav>
      ) : null}
    </>
  )
}

export const routes = (router: Context.Tag.Service<typeof HttpApiBuilder.Router>, kit: Kit) =>
  Effect.gen(function* () {
    const audit = yield* Audit.Audit
    const { frame, at, section } = kit
    const filters = Effect.map(HttpServerRequest.HttpServerRequest, (request) =>
      filtersOf(new URL(request.url, "http://dashboard").searchParams)
    )

    /** The section's page; a malformed filter is said, with the form as typed and no rows (400). */
    const page = (v: Visit, p: Auth.Principal, signed: Signed, f: Filters) =>
      section(
        "audit",
        "auditLog",
        () =>
          Effect.map(
            f.error === undefined
              ? audit.list(
                  { ...f.query, tenant: Auth.tenantOf(p) },
                  { limit: PageSize + 1, startingAfter: f.after }
                )
              : Effect.succeed([]),
            (rows) => (
              <AuditView
                frame={frame(v)}
                filters={f}
                rows={rows.slice(0, PageSize)}
                more={rows.length > PageSize}
              />
            )
          ),
        () => (f.error === undefined ? {} : { error: d(v.lang, f.error) }),
        f.error === undefined ? 200 : 400
      )(v, p, signed)

    yield* at(router, "audit", (v, p, signed) => Effect.flatMap(filters, (f) => page(v, p, signed, f)))

    yield* at(router, "auditExport", (v, p, signed) =>
      Effect.gen(function* () {
        const f = yield* filters
        // A malformed filter is refused as the page refuses it, on the section's page.
        if (f.error !== undefined) return yield* page(v, p, signed, f)
        const query = { ...f.query, tenant: Auth.tenantOf(p) }
        const rows: Array<AuditEvent.Event> = []
        let after = f.after
        while (rows.length < ExportLimit) {
          const batch = yield* audit.list(query, {
            limit: Math.min(ExportPage, ExportLimit - rows.length),
            startingAfter: after
          })
          rows.push(...batch)
          if (batch.length < ExportPage) break
          after = batch[batch.length - 1]!.id
        }
        const stamp = Calendar.formatMaldives(yield* DateTime.now)
        return HttpServerResponse.text(Csv.csv(rows), {
          contentType: "text/csv; charset=utf-8",
          headers: {
            "content-disposition": `attachment; filename="audit-${p.environment}-${stamp.slice(0, 10)}.csv"`,
            "cache-control": "no-store"
          }
        })
      })
    )
  })
