/**
 * What the dashboard's detail pages share: an object's facts as a labelled table, and in words what the
 * codes say: why a charge was refused (the `code` of its `mandate.charge.failed` event), why a renewal
 * attempt missed (an invoice's `failureReason`) and why a subscription ended (its initiator).
 */
import type { Events, Invoice, Mandate, Reads, Subscription } from "@laari/core"
import { DateTime } from "effect"
import type { ComponentChildren } from "preact"
import { d, type Word } from "./DashboardText.js"
import { IdLink } from "./DashboardLinks.js"
import { Table } from "./DashboardViews.js"
import { Given, Ltr, When } from "./Html.js"
import { type Lang, money } from "./I18n.js"

/** An object's facts, one labelled row each; a row whose value is `null` is left out. */
export const Facts = (p: {
  readonly label: string
  readonly rows: ReadonlyArray<readonly [string, ComponentChildren | null]>
}) => (
  <table aria-label={p.label} class="facts">
    <tbody>
      {p.rows
        .filter(([, value]) => value !== null)
        .map(([name, value]) => (
          <tr key={name}>
            <th scope="row">{name}</th>
            <td>{value}</td>
          </tr>
        ))}
    </tbody>
  </table>
)

/** Each refusal code in words, as the spec's table of charge refusals tells them. */
const refusalWords: Record<Mandate.RefusalCode, Word> = {
  MANDATE_NOT_FOUND: "codeNotFound",
  MANDATE_INACTIVE: "codeInactive",
  MANDATE_EXPIRED: "codeExpired",
  PER_CHARGE_CAP_EXCEEDED: "codePerCharge",
  PERIOD_CAP_EXCEEDED: "codePeriod",
  MANDATE_CHARGE_AMOUNT_INVALID: "codeAmount",
  WALLET_LIMIT_EXCEEDED: "codeWalletLimit",
  MANDATE_CHARGE_FAILED: "codeFailed",
  INSUFFICIENT_FUNDS: "codeFunds",
  SERVICE_UNAVAILABLE: "codeUnavailable"
}

const failureWords: Record<Invoice.FailureReason, Word> = {
  "insufficient-balance": "failureInsufficient",
  "blocked-by-rules": "failureRules",
  "wallet-frozen": "failureFrozen",
  "executor-error": "failureExecutor"
}

/** Why an invoice's attempt missed, in words. */
export const failure = (lang: Lang, reason: Invoice.FailureReason | null): string =>
  reason === null ? "" : d(lang, failureWords[reason])

const endWords: Record<Subscription.Initiator, Word> = {
  PAYER: "endPayer",
  MERCHANT: "endMerchant",
  OPS: "endOps",
  DUNNING: "endDunning"
}

/** Why a subscription ended (or that it will at its period's end); `null` while it goes on. */
export const endOf = (lang: Lang, s: Subscription.Subscription): string | null =>
  s.cancellationInitiator !== null
    ? d(lang, endWords[s.cancellationInitiator])
    : s.cancelAtPeriodEnd
      ? d(lang, "endsAtPeriodEnd")
      : null

/** Unix seconds as a time on the page. */
const at = (seconds: number | null) => (
  <When at={seconds === null ? null : DateTime.unsafeMake(seconds * 1000)} />
)

/** A mandate's refused charges: when, how much, the merchant's reference, the code and what it means. */
export const RefusedCharges = (p: {
  readonly lang: Lang
  readonly list: ReadonlyArray<Reads.Failure<Events.ChargeFailureObject>>
}) => (
  <Table
    label={d(p.lang, "refusedCharges")}
    head={(["when", "amount", "reference", "code", "why"] as const).map((w) => d(p.lang, w))}
    rows={p.list.map(({ at: when, object: f }) => [
      <When at={when} />,
      <Ltr>{money(f.amount)}</Ltr>,
      <Given text={f.reference} />,
      <code>{f.code}</code>,
      d(p.lang, refusalWords[f.code])
    ])}
    empty={d(p.lang, "noRefusedCharges")}
  />
)

/** A subscription's (or one invoice's) missed renewal attempts, each with its reason in words. */
export const FailedAttempts = (p: {
  readonly lang: Lang
  readonly root: string
  readonly list: ReadonlyArray<Reads.Failure<Events.InvoiceObject>>
}) => (
  <Table
    label={d(p.lang, "failedAttempts")}
    head={(["when", "invoice", "attempt", "why", "nextRetry"] as const).map((w) => d(p.lang, w))}
    rows={p.list.map(({ at: when, object: i }) => [
      <When at={when} />,
      <IdLink root={p.root} kind="invoice" id={i.id} />,
      String(i.attempt_count),
      failure(p.lang, i.failure_reason),
      at(i.next_retry_at)
    ])}
    empty={d(p.lang, "noFailedAttempts")}
  />
)
