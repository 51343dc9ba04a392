/**
 * The dashboard's detail pages of objects no section lists on a page of their own: a charge, a QR
 * payment, a checkout session, an invoice (with its failed attempts), a refund and an event (as it was
 * delivered). Each is found under the key's tenant only: another merchant's id, or an unknown one, is
 * "nothing of yours" with 404. Every id on them links to its own page (`DashboardLinks`).
 */
import type * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Auth, Checkout, EventLog, Reads, type Refund, Refunds } from "@laari/core"
import { type Context, DateTime, Effect } from "effect"
import type { ComponentChildren } from "preact"
import type { RouteName } from "./DashboardAccess.js"
import type { Kit } from "./DashboardKit.js"
import { FailedAttempts, Facts, failure } from "./DashboardFacts.js"
import { eventObject, IdLink, refundSource } from "./DashboardLinks.js"
import { reasonWords } from "./DashboardRefundList.js"
import { d, type Word } from "./DashboardText.js"
import { type Section, Table } from "./DashboardViews.js"
import { Given, Ltr, When } from "./Html.js"
import { type Lang, money, status } from "./I18n.js"
import type { Visit } from "./Request.js"

/** Refunds a payment's page lists. */
const RefundsShown = 50

/** A payment's refunds, each linked to its page. */
const RefundsOf = (p: {
  readonly lang: Lang
  readonly root: string
  readonly list: ReadonlyArray<Refund.Refund>
}) => (
  <>
    <h2>{d(p.lang, "refunds")}</h2>
    <Table
      label={d(p.lang, "refunds")}
      head={(["when", "amount", "reason", "id"] as const).map((w) => d(p.lang, w))}
      rows={p.list.map((r) => [
        <When at={r.createdAt} />,
        <Ltr>{money(r.amount)}</Ltr>,
        r.reason === null ? "" : d(p.lang, reasonWords[r.reason]),
        <IdLink root={p.root} kind="refund" id={r.id} />
      ])}
      empty={d(p.lang, "noRefunds")}
    />
  </>
)

/** A refund link while something of the payment remains (`href` its confirmation page). */
const refundAction = (lang: Lang, paid: { amount: number; amountRefunded: number }, href: string) =>
  paid.amount - paid.amountRefunded > 0 ? <a href={href}>{d(lang, "refund")}</a> : null

const money_ = (amount: number) => <Ltr>{money(amount)}</Ltr>

/** Each detail page's route (`DashboardAccess`) by the path it sits under. */
const RouteOfPath = {
  charges: "charge",
  "qr-payments": "qrPayment",
  "checkout-sessions": "checkoutSession",
  invoices: "invoice",
  refunds: "refund",
  events: "event"
} as const satisfies Record<string, RouteName>

export const routes = (router: Context.Tag.Service<typeof HttpApiBuilder.Router>, kit: Kit) =>
  Effect.gen(function* () {
    const { root, at, section, idParam } = kit
    const reads = yield* Reads.Reads
    const refunds = yield* Refunds.Refunds
    const checkout = yield* Checkout.Checkout
    const tenant = Auth.tenantOf
    const none = () => Effect.succeed(null)

    /**
     * The page at `{root}/{path}/:id` of what `find` finds under the tenant, in `name`'s section; nothing
     * found is a 404 saying so. The route's permission is checked (`at`) before anything is read.
     */
    const detail = <A, E, E2>(
      path: keyof typeof RouteOfPath,
      name: Section,
      title: Word,
      find: (p: Auth.Principal, id: string) => Effect.Effect<A | undefined, E>,
      body: (v: Visit, p: Auth.Principal, found: A) => Effect.Effect<ComponentChildren, E2>
    ) =>
      at(router, RouteOfPath[path], (v, p, signed) =>
        Effect.gen(function* () {
          const found = yield* find(p, yield* idParam)
          if (found === undefined)
            return yield* section(
              name,
              title,
              none,
              () => ({ error: d(v.lang, "notFound") }),
              404
            )(v, p, signed)
          return yield* section(name, title, (v, p) => body(v, p, found))(v, p, signed)
        })
      )

    /** A lookup whose "not found" is its own error, as `undefined`. */
    const orNone = <A, E extends { readonly _tag: string }, R>(
      effect: Effect.Effect<A, E, R>,
      tag: E["_tag"]
    ) =>
      effect.pipe(
        Effect.catchIf(
          (e: E) => e._tag === tag,
          () => Effect.succeed(undefined)
        )
      )

    yield* detail(
      "charges",
      "mandates",
      "charge",
      (p, id) => reads.charge(tenant(p), id),
      (v, p, c) =>
        Effect.map(refunds.list(tenant(p), { chargeId: c.id, limit: RefundsShown, offset: 0 }), (list) => (
          <>
            <Facts
              label={d(v.lang, "details")}
              rows={[
                [d(v.lang, "id"), <code>{c.id}</code>],
                [d(v.lang, "mandate"), <IdLink root={root} kind="mandate" id={c.mandateId} />],
                [d(v.lang, "amount"), money_(c.amount)],
                [d(v.lang, "fee"), money_(c.fee)],
                [d(v.lang, "net"), money_(c.netAmount)],
                [d(v.lang, "reference"), <Given text={c.reference} />],
                [d(v.lang, "description"), c.description === "" ? null : <Given text={c.description} />],
                [d(v.lang, "period"), <Ltr>{c.periodKey}</Ltr>],
                [d(v.lang, "refunded"), money_(c.amountRefunded)],
                [d(v.lang, "created"), <When at={c.createdAt} />]
              ]}
            />
            <p>{refundAction(v.lang, c, `${root}/mandates/${c.mandateId}/charges/${c.id}/refund`)}</p>
            <RefundsOf lang={v.lang} root={root} list={list} />
          </>
        ))
    )

    yield* detail(
      "qr-payments",
      "qr-codes",
      "qrPayment",
      (p, id) => reads.qrPayment(tenant(p), id),
      (v, p, q) =>
        Effect.map(refunds.list(tenant(p), { qrPaymentId: q.id, limit: RefundsShown, offset: 0 }), (list) => (
          <>
            <Facts
              label={d(v.lang, "details")}
              rows={[
                [d(v.lang, "id"), <code>{q.id}</code>],
                [d(v.lang, "qrCode"), <IdLink root={root} kind="qrCode" id={q.qrCodeId} />],
                [d(v.lang, "amount"), money_(q.amount)],
                [d(v.lang, "fee"), money_(q.fee)],
                [d(v.lang, "net"), money_(q.netAmount)],
                [d(v.lang, "reference"), <Given text={q.reference} />],
                [d(v.lang, "refunded"), money_(q.amountRefunded)],
                [d(v.lang, "created"), <When at={q.createdAt} />]
              ]}
            />
            <p>{refundAction(v.lang, q, `${root}/qr-codes/${q.qrCodeId}/payments/${q.id}/refund`)}</p>
            <RefundsOf lang={v.lang} root={root} list={list} />
          </>
        ))
    )

    yield* detail(
      "checkout-sessions",
      "checkout-sessions",
      "checkoutSession",
      (p, id) => orNone(checkout.get(tenant(p), id), "CheckoutSessionNotFound"),
      (v, _, s) =>
        Effect.succeed(
          <Facts
            label={d(v.lang, "details")}
            rows={[
              [d(v.lang, "id"), <code>{s.id}</code>],
              [d(v.lang, "reference"), <Given text={s.reference} />],
              [d(v.lang, "titleColumn"), <Given text={s.title} />],
              [d(v.lang, "mode"), status(v.lang, s.mode)],
              [d(v.lang, "status"), status(v.lang, s.status)],
              [d(v.lang, "amount"), money_(s.amount)],
              [d(v.lang, "plan"), s.price === null ? null : <Given text={s.price.name} />],
              [
                d(v.lang, "subscription"),
                s.subscriptionId === null ? null : (
                  <IdLink root={root} kind="subscription" id={s.subscriptionId} />
                )
              ],
              [d(v.lang, "created"), <When at={s.createdAt} />],
              [d(v.lang, "expires"), s.completedAt === null ? <When at={s.expiresAt} /> : null],
              [d(v.lang, "completed"), s.completedAt === null ? null : <When at={s.completedAt} />]
            ]}
          />
        )
    )

    yield* detail(
      "invoices",
      "subscriptions",
      "invoice",
      (p, id) => reads.invoice(tenant(p), id),
      (v, p, i) =>
        Effect.gen(function* () {
          const list = yield* refunds.list(tenant(p), { invoiceId: i.id, limit: RefundsShown, offset: 0 })
          const failures = yield* reads.invoiceFailures(tenant(p), i.subscriptionId, 200)
          return (
            <>
              <Facts
                label={d(v.lang, "details")}
                rows={[
                  [d(v.lang, "id"), <code>{i.id}</code>],
                  [
                    d(v.lang, "subscription"),
                    <IdLink root={root} kind="subscription" id={i.subscriptionId} />
                  ],
                  [d(v.lang, "period"), <Ltr>{i.periodKey}</Ltr>],
                  [d(v.lang, "status"), status(v.lang, i.status)],
                  [d(v.lang, "amount"), money_(i.amount)],
                  [d(v.lang, "attempts"), String(i.attemptCount)],
                  [d(v.lang, "why"), i.failureReason === null ? null : failure(v.lang, i.failureReason)],
                  [d(v.lang, "nextRetry"), i.nextRetryAt === null ? null : <When at={i.nextRetryAt} />],
                  [d(v.lang, "paid"), i.paidAt === null ? null : <When at={i.paidAt} />],
                  [d(v.lang, "refunded"), i.amountRefunded === 0 ? null : money_(i.amountRefunded)]
                ]}
              />
              {i.status === "PAID" ? (
                <p>
                  {refundAction(
                    v.lang,
                    i,
                    `${root}/subscriptions/${i.subscriptionId}/invoices/${i.id}/refund`
                  )}
                </p>
              ) : null}
              <h2>{d(v.lang, "failedAttempts")}</h2>
              <FailedAttempts lang={v.lang} root={root} list={failures.filter((f) => f.object.id === i.id)} />
              {i.status === "PAID" ? <RefundsOf lang={v.lang} root={root} list={list} /> : null}
            </>
          )
        })
    )

    yield* detail(
      "refunds",
      "refunds",
      "refundTitle",
      (p, id) => orNone(refunds.get(tenant(p), id), "RefundNotFound"),
      (v, _, r) =>
        Effect.succeed(
          <Facts
            label={d(v.lang, "details")}
            rows={[
              [d(v.lang, "id"), <code>{r.id}</code>],
              [d(v.lang, "amount"), money_(r.amount)],
              [d(v.lang, "reason"), r.reason === null ? null : d(v.lang, reasonWords[r.reason])],
              [d(v.lang, "reference"), r.reference === null ? null : <Given text={r.reference} />],
              [d(v.lang, "description"), r.description === null ? null : <Given text={r.description} />],
              [
                d(v.lang, "payment"),
                <IdLink root={root} kind={refundSource[r.source.kind]} id={r.source.id} />
              ],
              [d(v.lang, "created"), <When at={r.createdAt} />]
            ]}
          />
        )
    )

    yield* detail(
      "events",
      "events",
      "eventTitle",
      (p, id) => reads.event(tenant(p), id),
      (v, _, e) => {
        const event = EventLog.parsed(e).envelope
        const object = eventObject(event.data.object)
        return Effect.succeed(
          <>
            <Facts
              label={d(v.lang, "details")}
              rows={[
                [d(v.lang, "id"), <code>{event.id}</code>],
                [d(v.lang, "type"), <code>{event.type}</code>],
                [d(v.lang, "when"), <When at={DateTime.unsafeMake(event.created * 1000)} />],
                [d(v.lang, "object"), <IdLink root={root} kind={object.kind} id={object.id} />]
              ]}
            />
            <h2>{d(v.lang, "asDelivered")}</h2>
            <pre class="envelope" dir="ltr">
              <code>{JSON.stringify(event, null, 2)}</code>
            </pre>
          </>
        )
      }
    )
  })
