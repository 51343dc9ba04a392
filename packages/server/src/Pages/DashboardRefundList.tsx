/**
 * The dashboard's refunds section: the merchant's refunds newest first, a page at a time (`?offset=`),
 * each with a link to its payment. The link goes through `{root}/refunds/{id}/payment`, which reads the
 * refund and its payment by id and redirects to the page listing that payment (its mandate, QR code or
 * subscription), so a page of refunds costs one query however many payments it names.
 */
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Auth, Reads, Refunds, type Refund } from "@laari/core"
import { Effect } from "effect"
import { IdLink } from "./DashboardLinks.js"
import { d, type Word } from "./DashboardText.js"
import type { Frame } from "./DashboardViews.js"
import { Table } from "./DashboardViews.js"
import { Given, Ltr, When } from "./Html.js"
import { money } from "./I18n.js"
import { redirect } from "./Routing.js"

/** Refunds a page shows. */
export const PageSize = 50

const kindWords: Record<Refund.SourceKind, Word> = {
  charge: "kindCharge",
  qr_payment: "kindQrPayment",
  invoice: "kindInvoice"
}

export const reasonWords: Record<Refund.Reason, Word> = {
  requested_by_customer: "reasonRequested",
  duplicate: "reasonDuplicate",
  fraudulent: "reasonFraudulent"
}

/** The `offset` of the request's query: a whole number, else 0. */
const offsetOf = Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
  const raw = new URL(request.url, "http://dashboard").searchParams.get("offset") ?? ""
  return /^\d{1,6}$/.test(raw) ? Number(raw) : 0
})

const RefundList = (p: {
  readonly frame: Frame
  readonly list: ReadonlyArray<Refund.Refund>
  readonly offset: number
  readonly more: boolean
}) => {
  const { lang, root } = p.frame
  return (
    <>
      <Table
        label={d(lang, "refunds")}
        head={(["when", "amount", "reason", "reference", "payment", "id"] as const).map((w) => d(lang, w))}
        rows={p.list.map((r) => [
          <When at={r.createdAt} />,
          <Ltr>{money(r.amount)}</Ltr>,
          r.reason === null ? "" : d(lang, reasonWords[r.reason]),
          r.reference === null ? "" : <Given text={r.reference} />,
          <a href={`${root}/refunds/${r.id}/payment`}>{d(lang, kindWords[r.source.kind])}</a>,
          <IdLink root={root} kind="refund" id={r.id} />
        ])}
        empty={d(lang, "noRefunds")}
      />
      {p.offset > 0 || p.more ? (
        <nav class="actions" aria-label={d(lang, "paging")}>
          {p.offset > 0 ? (
            <a href={`${root}/refunds?offset=${Math.max(p.offset - PageSize, 0)}`}>{d(lang, "newer")}</a>
          ) : null}{" "}
          {p.more ? <a href={`${root}/refunds?offset=${p.offset + PageSize}`}>{d(lang, "older")}</a> : null}
        </nav>
      ) : null}
    </>
  )
}

export const make = (root: string) =>
  Effect.gen(function* () {
    const refunds = yield* Refunds.Refunds
    const reads = yield* Reads.Reads

    /** The section's body: a page of the tenant's refunds, one more read to know whether older ones follow. */
    const body = (frame: Frame, p: Auth.Principal) =>
      Effect.gen(function* () {
        const offset = yield* offsetOf
        const list = yield* refunds.list(Auth.tenantOf(p), { limit: PageSize + 1, offset })
        return (
          <RefundList
            frame={frame}
            list={list.slice(0, PageSize)}
            offset={offset}
            more={list.length > PageSize}
          />
        )
      })

    /** Where the refund's payment is listed, or `undefined` when the refund is not the tenant's. */
    const paymentPage = (p: Auth.Principal) =>
      Effect.gen(function* () {
        const tenant = Auth.tenantOf(p)
        const id = (yield* HttpRouter.params).id ?? ""
        const refund = yield* refunds
          .get(tenant, id)
          .pipe(Effect.catchTag("RefundNotFound", () => Effect.succeed(undefined)))
        if (refund === undefined) return undefined
        const source = refund.source
        switch (source.kind) {
          case "charge": {
            const c = yield* reads.charge(tenant, source.id)
            return c && `${root}/mandates/${c.mandateId}`
          }
          case "qr_payment": {
            const q = yield* reads.qrPayment(tenant, source.id)
            return q && `${root}/qr-codes/${q.qrCodeId}`
          }
          case "invoice": {
            const i = yield* reads.invoice(tenant, source.id)
            return i && `${root}/subscriptions/${i.subscriptionId}`
          }
        }
      }).pipe(Effect.map((to) => (to === undefined ? undefined : redirect(to))))

    return { body, paymentPage } as const
  })
