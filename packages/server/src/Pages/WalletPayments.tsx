/**
 * The wallet's payments, newest first, whatever paid them (a mandate's charge, a QR code, a checkout, a
 * subscription's cycle): each with its merchant, what it was in words, when (Maldives time), how much of
 * it went back, and a link to its page where one exists (a checkout's, which says it was paid).
 */
import type { Reads } from "@laari/core"
import type { ComponentChild } from "preact"
import { Given, Ltr, When } from "./Html.js"
import { type Lang, money, paymentType, t, tn } from "./I18n.js"

export interface Shown {
  readonly item: Reads.WalletPayment
  readonly merchant: string
}

/** What the payment was for, as its record says, and what of it was refunded; nothing when unknown. */
const detailOf = (s: Reads.WalletPayment["source"]): { detail: ComponentChild; refunded: number } => {
  switch (s.type) {
    case "charge":
      return {
        detail: s.charge?.description ? <Given text={s.charge.description} /> : null,
        refunded: s.charge?.amountRefunded ?? 0
      }
    case "qr_payment":
      return {
        detail: s.qrPayment && <Ltr>{s.qrPayment.qrid}</Ltr>,
        refunded: s.qrPayment?.amountRefunded ?? 0
      }
    case "checkout_payment":
      return { detail: s.session && <Given text={s.session.title} />, refunded: 0 }
    case "invoice":
      return {
        detail: s.invoice && <Ltr>{s.invoice.periodKey}</Ltr>,
        refunded: s.invoice?.amountRefunded ?? 0
      }
    default:
      return { detail: null, refunded: 0 }
  }
}

export const Payments = (p: {
  readonly lang: Lang
  /** Where the customer pages are served (the checkout pages' prefix). */
  readonly prefix: string
  readonly payments: ReadonlyArray<Shown>
}) => {
  const { lang } = p
  if (p.payments.length === 0) return <p class="note">{t(lang, "noPayments")}</p>
  return (
    <ul class="items">
      {p.payments.map(({ item, merchant }) => {
        const { detail, refunded } = detailOf(item.source)
        const type = item.source.type === "none" ? "adjustment" : item.source.type
        return (
          <li key={item.payment.transferId} class="payment">
            <p class="line">
              <strong>
                <Given text={merchant} />
              </strong>
              <span class="sum">
                <Ltr>{money(item.payment.amount)}</Ltr>
              </span>
            </p>
            <p class="note">
              {paymentType(lang, type)}
              {detail === null || detail === undefined ? null : <> · {detail}</>} ·{" "}
              <When at={item.payment.createdAt} />
            </p>
            {refunded === 0 ? null : (
              <p class="note refunded">
                {tn(lang, "refundedAmount", { amount: <Ltr>{money(refunded)}</Ltr> })}
              </p>
            )}
            {item.source.type === "checkout_payment" && item.source.session !== undefined ? (
              <p class="note">
                <a
                  href={`${p.prefix}/checkout/${item.source.session.id}`}
                  aria-label={`${t(lang, "receipt")}: ${merchant}, ${money(item.payment.amount)}`}
                >
                  {t(lang, "receipt")}
                </a>
              </p>
            ) : null}
          </li>
        )
      })}
    </ul>
  )
}
