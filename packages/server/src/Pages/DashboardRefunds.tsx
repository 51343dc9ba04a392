/**
 * The dashboard's refund step: from a mandate's charge, a QR payment or a paid invoice, a confirmation page (the
 * payment, what went back, what remains) with the amount and reason, and its post, which calls the core
 * `Refunds` service under the key's tenant. The page carries a random token made when it was rendered;
 * the post claims it as an idempotency key in the refund's own transaction, so a double submit of one
 * confirmation refunds once and the second gets the first's answer.
 */
import * as HttpRouter from "@effect/platform/HttpRouter"
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import {
  Auth,
  type Errors,
  type Idempotency,
  KeyedCommands,
  Mandates,
  Money,
  QrCodes,
  Reads,
  Refund,
  Refunds,
  Subscriptions
} from "@laari/core"
import { randomUUID } from "node:crypto"
import { type DateTime, Effect, Either, Schema } from "effect"
import type { ComponentChildren } from "preact"
import * as Keys from "../Platform/Keys.js"
import { type RouteName, Routes, type Signed } from "./DashboardAccess.js"
import { d, dn, type Word } from "./DashboardText.js"
import { type Frame, type Section, Table } from "./DashboardViews.js"
import { Csrf, Given, Ltr, When } from "./Html.js"
import { type Lang, money, parseMvr } from "./I18n.js"
import { problemOf, redirect } from "./Routing.js"
import { form, type Visit } from "./Request.js"

/** The dashboard page a refund page sits in, as `Dashboard` renders it. */
export type Shell = (
  v: Visit,
  signed: Signed,
  page: {
    readonly section: Section
    readonly title: Word
    readonly children: ComponentChildren
    readonly notice?: ComponentChildren | undefined
    readonly error?: string | undefined
    readonly status?: number | undefined
  }
) => Effect.Effect<HttpServerResponse.HttpServerResponse, Errors.ServiceUnavailable>

/** What a refund page refunds, whatever its kind. */
interface Payment {
  readonly source: Refund.Source
  readonly amount: number
  readonly amountRefunded: number
  readonly createdAt: DateTime.Utc | null
  /** Its reference (a charge) or period (an invoice). */
  readonly label: string
  /** The payment's page, where a refund returns. */
  readonly back: string
}

export type Kind = "charges" | "invoices" | "qr-payments"

/** What every kind of payment records alike. */
interface Paid {
  readonly id: string
  readonly amount: number
  readonly amountRefunded: number
}

/** What a kind of payment shows differently: what it paid (`owner`), its time and its label. */
interface Shown {
  readonly owner: string
  readonly kind: Refund.SourceKind
  readonly createdAt: DateTime.Utc | null
  readonly label: string
}

/** Each kind of payment: its section and title, and its routes (`DashboardAccess`). */
const kinds = {
  charges: { section: "mandates", title: "refundCharge", get: "refundCharge", post: "refundChargeSubmit" },
  invoices: {
    section: "subscriptions",
    title: "refundInvoice",
    get: "refundInvoice",
    post: "refundInvoiceSubmit"
  },
  "qr-payments": {
    section: "qr-codes",
    title: "refundQrPayment",
    get: "refundQrPayment",
    post: "refundQrPaymentSubmit"
  }
} as const satisfies Record<Kind, { section: Section; title: Word; get: RouteName; post: RouteName }>

/** The routes of `kind`'s refund: its page and its post. */
export const routesOf = (kind: Kind) => kinds[kind]

export const Kinds = Object.keys(kinds) as ReadonlyArray<Kind>

/** The refund route of `kind` under the dashboard's root: under the page that lists the payment. */
export const path = (root: string, kind: Kind) => `${root}${Routes[kinds[kind].post].path}`

const reasons: ReadonlyArray<readonly [Refund.Reason, Word]> = [
  ["requested_by_customer", "reasonRequested"],
  ["duplicate", "reasonDuplicate"],
  ["fraudulent", "reasonFraudulent"]
]

const refusals: Record<Refund.RefusalCode, { readonly word: Word; readonly status: number }> = {
  REFUND_AMOUNT_INVALID: { word: "refusedAmountInvalid", status: 422 },
  REFUND_EXCEEDS_PAYMENT: { word: "refusedExceeds", status: 422 },
  PAYMENT_NOT_REFUNDABLE: { word: "refusedNotRefundable", status: 409 },
  PAYMENT_ALREADY_REFUNDED: { word: "refusedAlready", status: 409 },
  INSUFFICIENT_MERCHANT_BALANCE: { word: "refusedBalance", status: 402 }
}

/** What the form held, kept when it is shown again. */
interface Typed {
  readonly amount: string
  readonly reason: string
  readonly token: string
}

const Confirm = (p: {
  readonly frame: Frame
  readonly payment: Payment
  readonly action: string
  readonly typed: Typed
}) => {
  const { lang } = p.frame
  const left = p.payment.amount - p.payment.amountRefunded
  return (
    <>
      <Table
        label={d(lang, "refund")}
        head={(["when", "reference", "amount", "refunded", "remaining"] as const).map((w) => d(lang, w))}
        rows={[
          [
            <When at={p.payment.createdAt} />,
            <Given text={p.payment.label} />,
            <Ltr>{money(p.payment.amount)}</Ltr>,
            <Ltr>{money(p.payment.amountRefunded)}</Ltr>,
            <Ltr>{money(left)}</Ltr>
          ]
        ]}
        empty=""
      />
      <p class="note">{d(lang, "refundNote")}</p>
      <form method="post" action={p.action}>
        <Csrf token={p.frame.csrf} />
        <input type="hidden" name="token" value={p.typed.token} />
        <label for="amount">{d(lang, "refundAmount")}</label>
        <input
          id="amount"
          name="amount"
          type="text"
          inputmode="decimal"
          required
          maxlength={12}
          value={p.typed.amount}
          dir="ltr"
          aria-describedby="amount-note"
        />
        <p id="amount-note" class="note">
          {dn(lang, "refundAmountNote", { example: <Ltr>25.50</Ltr> })}
        </p>
        <label for="reason">{d(lang, "reason")}</label>
        <select id="reason" name="reason">
          {reasons.map(([value, word]) => (
            <option key={value} value={value} selected={p.typed.reason === value}>
              {d(lang, word)}
            </option>
          ))}
        </select>
        <div class="actions">
          <button type="submit">{d(lang, "confirmRefund")}</button>{" "}
          <a href={p.payment.back}>{d(lang, "cancel")}</a>
        </div>
      </form>
    </>
  )
}

export const make = (root: string, frame: (v: Visit) => Frame, shell: Shell) =>
  Effect.gen(function* () {
    const refunds = yield* Refunds.Refunds
    const mandates = yield* Mandates.Mandates
    const qrCodes = yield* QrCodes.QrCodes
    const subscriptions = yield* Subscriptions.Subscriptions
    const reads = yield* Reads.Reads
    const keyed = yield* KeyedCommands.KeyedCommands
    const params = Effect.map(HttpRouter.params, (p) => ({ id: p.id ?? "", payment: p.payment ?? "" }))

    /**
     * The tenant's payment the path names, read by id, when it is the one of the mandate, subscription
     * or QR code the path names too (by id or reference); else `undefined`.
     */
    const load = (kind: Kind, p: Auth.Principal) =>
      Effect.gen(function* () {
        const { id, payment } = yield* params
        const tenant = Auth.tenantOf(p)
        /**
         * What `read` finds, as the page shows it (`shown`), when `get` finds what it belongs to (read only
         * then); the refund returns to that owner's page under `pages`.
         */
        const owned = <O extends { readonly id: string }, E, A extends Paid, F>(
          get: Effect.Effect<O, E>,
          pages: string,
          read: Effect.Effect<A | undefined, F>,
          shown: (a: A) => Shown
        ) =>
          Effect.gen(function* () {
            const owner = yield* Effect.either(get)
            if (Either.isLeft(owner)) return undefined
            const a = yield* read
            const s = a === undefined ? undefined : shown(a)
            if (a === undefined || s === undefined || s.owner !== owner.right.id) return undefined
            const found: Payment = {
              source: { kind: s.kind, id: a.id },
              amount: a.amount,
              amountRefunded: a.amountRefunded,
              createdAt: s.createdAt,
              label: s.label,
              back: `${root}/${pages}/${s.owner}`
            }
            return found
          })
        if (kind === "charges")
          return yield* owned(mandates.get(tenant, id), "mandates", reads.charge(tenant, payment), (c) => ({
            owner: c.mandateId,
            kind: "charge",
            createdAt: c.createdAt,
            label: c.reference
          }))
        if (kind === "qr-payments")
          return yield* owned(qrCodes.get(tenant, id), "qr-codes", reads.qrPayment(tenant, payment), (q) => ({
            owner: q.qrCodeId,
            kind: "qr_payment",
            createdAt: q.createdAt,
            label: q.qrid
          }))
        return yield* owned(
          subscriptions.get(tenant, id),
          "subscriptions",
          reads.invoice(tenant, payment),
          (i) => ({
            owner: i.subscriptionId,
            kind: "invoice",
            createdAt: i.paidAt,
            label: i.periodKey
          })
        )
      })

    /** The confirmation page, or the refusal of an unknown payment (the route's permission is `at`'s). */
    const page = (
      kind: Kind,
      v: Visit,
      signed: Signed,
      typed: Partial<Typed>,
      error?: string,
      status = 200
    ) =>
      Effect.gen(function* () {
        const p = signed.principal
        const { section, title } = kinds[kind]
        const payment = yield* load(kind, p)
        if (payment === undefined)
          return yield* shell(v, signed, {
            section,
            title,
            children: null,
            error: d(v.lang, "paymentNotFound"),
            status: 404
          })
        const { id, payment: paymentId } = yield* params
        const left = payment.amount - payment.amountRefunded
        const children = (
          <Confirm
            frame={frame(v)}
            payment={payment}
            action={path(root, kind).replace(":id", id).replace(":payment", paymentId)}
            typed={{
              amount: typed.amount ?? Money.formatMvr(Math.max(left, 0)),
              reason: typed.reason ?? "requested_by_customer",
              // A new confirmation each time the page is made; a refused one keeps its token, which
              // the refusal left unclaimed.
              token: typed.token ?? randomUUID()
            }}
          />
        )
        return yield* shell(v, signed, { section, title, children, error, status })
      })

    /**
     * Runs the refund once per token: the claim, the refund and the stored answer commit together; a
     * refusal rolls the claim back with everything else, so the corrected form can use it again.
     */
    const once = (p: Auth.Principal, token: string, request: Refunds.RefundRequest) =>
      Effect.gen(function* () {
        const scope: Idempotency.Scope = {
          merchantId: p.merchantId,
          environment: p.environment,
          method: "POST",
          path: "/dashboard/refunds",
          key: token
        }
        const fingerprint = Keys.hash(JSON.stringify([request.source, request.amount, request.reason]))
        return yield* keyed.once({ scope, fingerprint }, refunds.create(Auth.tenantOf(p), request), {
          ran: (outcome) =>
            Either.isLeft(outcome)
              ? Effect.fail(outcome.left)
              : Effect.succeed({
                  response: {
                    status: 201,
                    headers: {},
                    body: JSON.stringify({ id: outcome.right.id, amount: outcome.right.amount })
                  },
                  result: outcome.right.amount
                }),
          replayed: (response) => Effect.succeed(JSON.parse(response.body).amount as number)
        })
      })

    const confirm = (kind: Kind) => (v: Visit, _p: Auth.Principal, signed: Signed) =>
      page(kind, v, signed, {})

    const submit = (kind: Kind) => (v: Visit, p: Auth.Principal, signed: Signed) =>
      Effect.gen(function* () {
        const field = yield* form
        const typed: Typed = {
          amount: field("amount") ?? "",
          reason: field("reason") ?? "",
          token: field("token") ?? ""
        }
        const again = (error: string, status: number, keep = true) =>
          page(kind, v, signed, keep ? typed : { amount: typed.amount, reason: typed.reason }, error, status)
        if (!/^[0-9a-f-]{36}$/.test(typed.token)) return yield* again(d(v.lang, "expired"), 400, false)
        if (!Schema.is(Refund.Reason)(typed.reason)) return yield* again(d(v.lang, "badReason"), 422)
        const amount = parseMvr(typed.amount)
        if (amount === null || amount === "invalid") return yield* again(d(v.lang, "badAmount"), 422)
        const payment = yield* load(kind, p)
        if (payment === undefined) return yield* page(kind, v, signed, typed)
        const done = yield* Effect.either(
          once(p, typed.token, { source: payment.source, amount, reason: typed.reason })
        )
        if (Either.isRight(done)) return redirect(`${payment.back}?refunded=${done.right}`)
        const e = done.left
        if (e._tag === "RefundRefused") {
          const r = refusals[e.code]
          return yield* again(d(v.lang, r.word), r.status)
        }
        if (e._tag === "IdempotencyKeyReused") return yield* again(d(v.lang, "refundUsed"), 409, false)
        if (e._tag === "IdempotencyKeyInFlight") return yield* again(d(v.lang, "refundInFlight"), 409)
        const problem = problemOf(e)
        return yield* again(problem.text, problem.status)
      })

    return { confirm, submit } as const
  })

/** The notice of `?refunded=` on a payment's page, after a refund. */
export const notice = (lang: Lang, url: string): ComponentChildren | undefined => {
  const amount = new URL(url, "http://dashboard").searchParams.get("refunded")
  return amount !== null && /^\d{1,9}$/.test(amount)
    ? dn(lang, "refundDone", { amount: <Ltr>{money(Number(amount))}</Ltr> })
    : undefined
}
