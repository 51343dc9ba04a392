/**
 * The merchant dashboard's views (English): sign-in, the sections' tables and the webhook endpoint
 * forms. Values the merchant or its customers wrote are text, escaped by preact, in `dir="auto"`.
 */
import { Role } from "@laari/core"
import type { CheckoutSession, Invoice, Mandate, QrCode, Subscription, Webhook } from "@laari/core"
import { EventType } from "@laari/core"
import { DateTime } from "effect"
import type { ComponentChildren } from "preact"
import { Csrf, Given, Ltr, Messages, Page, When } from "./Html.js"
import { IdLink } from "./DashboardLinks.js"
import { type RouteName, Routes, type Signed } from "./DashboardAccess.js"
import { d, type Word } from "./DashboardText.js"
import { type Lang, money, status } from "./I18n.js"

export interface Frame {
  readonly lang: Lang
  /** `{base}/dashboard` (or the operator console's `{base}/ops/console`). */
  readonly root: string
  readonly assets: string
  readonly csrf: string
  /** The sign-in page's title, when not the merchant dashboard's. */
  readonly title?: string | undefined
  /** The first section's path under `root`, when not `/mandates`. */
  readonly home?: string | undefined
}

export const Sections = [
  ["mandates", "mandates"],
  ["qr-codes", "qrCodes"],
  ["checkout-sessions", "checkoutSessions"],
  ["subscriptions", "subscriptions"],
  ["balance", "balance"],
  ["refunds", "refunds"],
  ["events", "events"],
  ["webhooks", "webhooks"],
  ["audit", "auditLog"],
  ["team", "team"],
  ["keys", "apiKeys"],
  ["account", "account"]
] as const satisfies ReadonlyArray<readonly [string, Word]>
export type Section = (typeof Sections)[number][0]

/** Each section's list route: the nav shows a section only to a role that may open it. */
const sectionRoute = (section: Section): RouteName =>
  section === "qr-codes" ? "qrCodes" : section === "checkout-sessions" ? "checkoutSessions" : section

/**
 * A signed-in page (the dashboard's or the operator console's): a card with who is signed in, the
 * sections (`top`) and the sign-out button, then the page's own card.
 */
export const SignedInPage = (p: {
  readonly frame: Frame
  readonly path: string
  readonly title: string
  readonly top: ComponentChildren
  readonly notice?: ComponentChildren | undefined
  readonly error?: string | undefined
  readonly children: ComponentChildren
}) => (
  <Page lang={p.frame.lang} title={p.title} path={p.path} assets={p.frame.assets} wide>
    <section class="card">
      {p.top}
      <form method="post" action={`${p.frame.root}/sign-out`}>
        <Csrf token={p.frame.csrf} />
        <div class="actions">
          <button type="submit" class="secondary">
            {d(p.frame.lang, "signOut")}
          </button>
        </div>
      </form>
    </section>
    <section class="card" aria-labelledby="heading">
      <h1 id="heading">{p.title}</h1>
      <Messages notice={p.notice} error={p.error} />
      {p.children}
    </section>
  </Page>
)

export const Shell = (p: {
  readonly frame: Frame
  readonly signed: Signed
  /** The signed-in merchant's name. */
  readonly merchant: string
  /** The names of the merchants the person belongs to, by id (the switcher). */
  readonly merchants: ReadonlyMap<string, string>
  readonly section: Section
  readonly title: string
  readonly notice?: ComponentChildren | undefined
  readonly error?: string | undefined
  readonly children: ComponentChildren
}) => (
  <SignedInPage
    frame={p.frame}
    path={`${p.frame.root}/${p.section}`}
    title={p.title}
    notice={p.notice}
    error={p.error}
    top={
      <>
        <p>
          <span class={p.signed.principal.environment === "live" ? "badge live" : "badge"}>
            {d(p.frame.lang, p.signed.principal.environment === "live" ? "live" : "test")}
          </span>{" "}
          <strong>
            <Given text={p.merchant} />
          </strong>{" "}
          · {d(p.frame.lang, "dashboard")} · <Given text={p.signed.user.email} /> ({p.signed.role})
        </p>
        <Switcher frame={p.frame} signed={p.signed} names={p.merchants} />
        <nav class="sections" aria-label={d(p.frame.lang, "sections")}>
          {Sections.filter(([id]) => Role.can(p.signed.role, Routes[sectionRoute(id)].permission)).map(
            ([id, label]) => (
              <a key={id} href={`${p.frame.root}/${id}`} aria-current={id === p.section ? "page" : undefined}>
                {d(p.frame.lang, label)}
              </a>
            )
          )}
        </nav>
      </>
    }
  >
    {p.children}
  </SignedInPage>
)

/** The merchant and environment the dashboard shows, and the others the person may switch to. */
const Switcher = (p: {
  readonly frame: Frame
  readonly signed: Signed
  readonly names: ReadonlyMap<string, string>
}) => {
  const current = `${p.signed.principal.merchantId}:${p.signed.principal.environment}`
  const choices = p.signed.memberships.flatMap((m) =>
    (["test", "live"] as const).map((environment) => ({
      value: `${m.merchantId}:${environment}`,
      label: `${p.names.get(m.merchantId) ?? m.merchantId.slice(0, 8)} · ${d(p.frame.lang, environment)}`
    }))
  )
  return (
    <form method="post" action={`${p.frame.root}/switch`} class="inline">
      <Csrf token={p.frame.csrf} />
      <label for="switch-to">{d(p.frame.lang, "showing")}</label>{" "}
      <select id="switch-to" name="to">
        {choices.map((c) => (
          <option key={c.value} value={c.value} selected={c.value === current}>
            {c.label}
          </option>
        ))}
      </select>{" "}
      <button type="submit" class="secondary">
        {d(p.frame.lang, "switch")}
      </button>
    </form>
  )
}

/**
 * A table with a caption for screen readers. On a phone each row is a block of labelled lines (the
 * stylesheet's `table.stack`), so no column is cut off; the heading of each cell is its `data-label`.
 */
export const Table = (p: {
  readonly label: string
  readonly head: ReadonlyArray<string>
  readonly rows: ReadonlyArray<ReadonlyArray<ComponentChildren>>
  readonly empty: string
}) =>
  p.rows.length === 0 ? (
    <p class="note">{p.empty}</p>
  ) : (
    <table aria-label={p.label} class="stack">
      <thead>
        <tr>
          {p.head.map((h) => (
            <th key={h} scope="col">
              {h}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {p.rows.map((cells, i) => (
          <tr key={i}>
            {cells.map((c, j) => (
              <td key={j} data-label={p.head[j]}>
                <span>{c}</span>
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  )

export const mandateRows = (lang: Lang, root: string, list: ReadonlyArray<Mandate.Mandate>) =>
  list.map((m) => [
    <a href={`${root}/mandates/${m.id}`}>
      <Given text={m.reference} />
    </a>,
    <Given text={m.title} />,
    status(lang, m.status),
    <Ltr>{money(m.perChargeCap)}</Ltr>,
    m.periodCap === null ? "" : <Ltr>{money(m.periodCap)}</Ltr>,
    <When at={m.createdAt} />
  ])

/**
 * What has gone back of a payment, and a link to refund the rest (`{base}/{id}/refund`, a confirmation
 * page) while something remains; `refundable` false (an unpaid invoice): no link.
 */
const refundCells = (
  lang: Lang,
  base: string,
  p: { readonly id: string; readonly amount: number; readonly amountRefunded: number },
  label: string,
  refundable = true
) => [
  p.amountRefunded === 0 ? "" : <Ltr>{money(p.amountRefunded)}</Ltr>,
  refundable && p.amount - p.amountRefunded > 0 ? (
    <a href={`${base}/${p.id}/refund`} aria-label={`${d(lang, "refund")}: ${label}`}>
      {d(lang, "refund")}
    </a>
  ) : (
    ""
  )
]

export const chargeColumns: ReadonlyArray<Word> = [
  "when",
  "amount",
  "fee",
  "reference",
  "period",
  "refunded",
  "actions",
  "id"
]

/** A mandate's charges; `base` is `{root}/mandates/{id}/charges`, `root` the dashboard's. */
export const chargeRows = (lang: Lang, root: string, base: string, list: ReadonlyArray<Mandate.Charge>) =>
  list.map((c) => [
    <When at={c.createdAt} />,
    <Ltr>{money(c.amount)}</Ltr>,
    <Ltr>{money(c.fee)}</Ltr>,
    <Given text={c.reference} />,
    <Ltr>{c.periodKey}</Ltr>,
    ...refundCells(lang, base, c, c.reference),
    <IdLink root={root} kind="charge" id={c.id} />
  ])

/**
 * QR codes, each title a link to the code's page (its payments, and the code itself); `root` is the
 * dashboard's. A dynamic code has no stored image: its page draws it.
 */
export const qrRows = (lang: Lang, root: string, list: ReadonlyArray<QrCode.QrCode>, imageBase: string) =>
  list.map((c) => [
    c.type === "STATIC" ? (
      <img src={`${imageBase}/qr/${c.id}.png`} alt={`QR code ${c.qrid}`} width={96} height={96} />
    ) : (
      <a href={`${root}/qr-codes/${c.id}`} aria-label={`${d(lang, "showCode")}: ${c.title}`}>
        {d(lang, "showCode")}
      </a>
    ),
    <a href={`${root}/qr-codes/${c.id}`}>
      <Given text={c.title} />
    </a>,
    status(lang, c.type),
    status(lang, c.status),
    c.amount === null ? "" : <Ltr>{money(c.amount)}</Ltr>,
    <a href={`${root}/qr-codes/${c.id}`} class="id">
      <code>{c.qrid}</code>
    </a>
  ])

export const qrPaymentColumns: ReadonlyArray<Word> = [
  "when",
  "amount",
  "fee",
  "reference",
  "refunded",
  "actions",
  "id"
]

/** A QR code's payments; `base` is `{root}/qr-codes/{id}/payments`, `root` the dashboard's. */
export const qrPaymentRows = (lang: Lang, root: string, base: string, list: ReadonlyArray<QrCode.Payment>) =>
  list.map((q) => [
    <When at={q.createdAt} />,
    <Ltr>{money(q.amount)}</Ltr>,
    <Ltr>{money(q.fee)}</Ltr>,
    <Given text={q.reference} />,
    ...refundCells(lang, base, q, `${q.reference} ${money(q.amount)}`),
    <IdLink root={root} kind="qrPayment" id={q.id} />
  ])

export const sessionRows = (lang: Lang, root: string, list: ReadonlyArray<CheckoutSession.CheckoutSession>) =>
  list.map((s) => [
    <a href={`${root}/checkout-sessions/${s.id}`}>
      <Given text={s.reference} />
    </a>,
    status(lang, s.mode),
    status(lang, s.status),
    <Ltr>{money(s.amount)}</Ltr>,
    <When at={s.createdAt} />
  ])

export const subscriptionRows = (lang: Lang, root: string, list: ReadonlyArray<Subscription.Subscription>) =>
  list.map((s) => [
    <a href={`${root}/subscriptions/${s.id}`}>
      <Given text={s.reference} />
    </a>,
    <Given text={s.planName} />,
    status(lang, s.status),
    <Ltr>{money(s.amount)}</Ltr>,
    <When at={s.nextBillingAt} />
  ])

export const invoiceColumns: ReadonlyArray<Word> = [
  "period",
  "status",
  "amount",
  "attempts",
  "nextRetry",
  "paid",
  "refunded",
  "actions"
]

/** A subscription's invoices, each period a link to the invoice's page; `base` is `{root}/subscriptions/{id}/invoices`. */
export const invoiceRows = (lang: Lang, root: string, base: string, list: ReadonlyArray<Invoice.Invoice>) =>
  list.map((i) => [
    <a href={`${root}/invoices/${i.id}`}>
      <Ltr>{i.periodKey}</Ltr>
    </a>,
    status(lang, i.status),
    <Ltr>{money(i.amount)}</Ltr>,
    String(i.attemptCount),
    <When at={i.nextRetryAt} />,
    <When at={i.paidAt} />,
    ...refundCells(lang, base, i, i.periodKey, i.status === "PAID")
  ])

/** Events carry Unix seconds. */
export const eventRows = (
  root: string,
  list: ReadonlyArray<{ readonly id: string; readonly type: string; readonly created: number }>
) =>
  list.map((e) => [
    <When at={DateTime.unsafeMake(e.created * 1000)} />,
    e.type,
    <IdLink root={root} kind="event" id={e.id} />
  ])

export const EndpointForm = (p: {
  readonly frame: Frame
  readonly action: string
  readonly endpoint?: Webhook.Endpoint | undefined
  readonly submit: string
}) => {
  const e = p.endpoint
  const all = e === undefined || e.enabledEvents.includes("*")
  return (
    <form method="post" action={p.action}>
      <Csrf token={p.frame.csrf} />
      <label for="url">{d(p.frame.lang, "endpointUrl")}</label>
      <input id="url" name="url" type="url" required maxlength={2048} value={e?.url} />
      <label for="description">{d(p.frame.lang, "description")}</label>
      <input id="description" name="description" type="text" maxlength={500} value={e?.description ?? ""} />
      <fieldset>
        <legend>{d(p.frame.lang, "eventsToSend")}</legend>
        <label>
          <input type="checkbox" name="events" value="*" checked={all} /> {d(p.frame.lang, "allEvents")}
        </label>
        {EventType.Types.map((type) => (
          <label key={type}>
            <input
              type="checkbox"
              name="events"
              value={type}
              checked={!all && e?.enabledEvents.includes(type)}
            />{" "}
            {type}
          </label>
        ))}
      </fieldset>
      {e === undefined ? null : (
        <>
          <label for="status">{d(p.frame.lang, "status")}</label>
          <select id="status" name="status">
            <option value="ENABLED" selected={e.status === "ENABLED"}>
              {d(p.frame.lang, "enabled")}
            </option>
            <option value="DISABLED" selected={e.status === "DISABLED"}>
              {d(p.frame.lang, "disabled")}
            </option>
          </select>
        </>
      )}
      <div class="actions">
        <button type="submit">{p.submit}</button>
      </div>
    </form>
  )
}

export const endpointRows = (lang: Lang, root: string, list: ReadonlyArray<Webhook.Endpoint>) =>
  list.map((e) => [
    <a href={`${root}/webhooks/${e.id}`}>
      <Given text={e.url} />
    </a>,
    e.enabledEvents.join(", "),
    status(lang, e.status),
    <Given text={e.statusReason} />
  ])

export const deliveryRows = (frame: Frame, endpointId: string, list: ReadonlyArray<Webhook.Attempt>) =>
  list.map((a) => [
    <When at={a.attemptedAt ?? a.dueAt} />,
    <a href={`${frame.root}/events/${a.eventId}`}>{a.eventType}</a>,
    String(a.attempt),
    status(frame.lang, a.status),
    a.responseStatus === null ? (a.error ?? "") : String(a.responseStatus),
    a.durationMs === null ? "" : `${a.durationMs} ms`,
    <form method="post" action={`${frame.root}/webhooks/${endpointId}/resend`} class="inline">
      <Csrf token={frame.csrf} />
      <input type="hidden" name="event_id" value={a.eventId} />
      <button
        type="submit"
        class="secondary"
        aria-label={`${d(frame.lang, "resend")} ${a.eventId} (${a.attempt})`}
      >
        {d(frame.lang, "resend")}
      </button>
    </form>
  ])

export const SecretOnce = (p: { readonly lang: Lang; readonly secret: string }) => (
  <div class="notice" role="status">
    <p>{d(p.lang, "secretOnce")}</p>
    <p>
      <code class="secret" id="secret">
        {p.secret}
      </code>
    </p>
  </div>
)
