/**
 * The wallet app's views: sign-in, the home page with the customer's balance, mandates, subscriptions,
 * payments, invoices, notifications and the QR payment form, and the step that confirms ending a mandate
 * or a subscription (a page of its own with the form that does it, so it needs no JavaScript).
 */
import type { Invoice, Mandate, Notifications, Subscription } from "@laari/core"
import type { ComponentChildren } from "preact"
import { Csrf, Given, Ltr, Messages, Page, When } from "./Html.js"
import { interval, type Lang, money, status, t, tn } from "./I18n.js"
import { CodeForms, type Frame } from "./Views.js"
import { collapseCodes, Notice } from "./WalletNotices.js"
import { Payments, type Shown } from "./WalletPayments.js"

export const SignIn = (p: {
  readonly frame: Frame
  readonly phone?: string | undefined
  readonly challengeId?: string | undefined
  readonly error?: string | undefined
  readonly notice?: string | undefined
}) => {
  const { lang, path } = p.frame
  return (
    <Page lang={lang} title={t(lang, "signInHeading")} path={path} assets={p.frame.assets}>
      <section class="card" aria-labelledby="heading">
        <h1 id="heading">{t(lang, "signInHeading")}</h1>
        <Messages error={p.error} notice={p.notice} />
        <CodeForms
          frame={p.frame}
          challengeId={p.challengeId}
          phone={p.phone}
          codeAction={`${path}/code`}
          answerAction={`${path}/sign-in`}
          actions={[{ name: "sign-in", label: t(lang, "signIn") }]}
        />
      </section>
    </Page>
  )
}

/** " · Refunded MVR 5.00" after a payment some of which went back; nothing when none did. */
const Refunded = (p: { readonly lang: Lang; readonly amount: number }) =>
  p.amount === 0 ? null : (
    <span class="refunded">
      {" · "}
      {tn(p.lang, "refundedAmount", { amount: <Ltr>{money(p.amount)}</Ltr> })}
    </span>
  )

const Section = (p: {
  readonly id: string
  readonly title: string
  readonly children: ComponentChildren
}) => (
  <section class="card" aria-labelledby={p.id}>
    <h2 id={p.id}>{p.title}</h2>
    {p.children}
  </section>
)

export interface Home {
  readonly phone: string
  readonly mandates: ReadonlyArray<{ readonly mandate: Mandate.Mandate; readonly merchant: string }>
  readonly subscriptions: ReadonlyArray<{
    readonly subscription: Subscription.Subscription
    readonly merchant: string
  }>
  /** `undefined` when the customer has no wallet. */
  readonly balance: number | undefined
  readonly payments: ReadonlyArray<Shown>
  readonly invoices: ReadonlyArray<{ readonly invoice: Invoice.Invoice; readonly plan: string }>
  readonly notifications: ReadonlyArray<Notifications.Notification>
}

export const Wallet = (p: {
  readonly frame: Frame
  readonly home: Home
  readonly error?: string | undefined
  readonly notice?: ComponentChildren | undefined
}) => {
  const { lang, csrf, path } = p.frame
  const h = p.home
  const notices = collapseCodes(h.notifications, 10)
  return (
    <Page lang={lang} title={t(lang, "walletHeading")} path={path} assets={p.frame.assets}>
      <section class="card" aria-labelledby="heading">
        <h1 id="heading">{t(lang, "walletHeading")}</h1>
        <p class="note">{tn(lang, "signedInAs", { phone: <Ltr>{h.phone}</Ltr> })}</p>
        {h.balance === undefined ? null : (
          <p class="balance">
            <span>{t(lang, "balance")}</span>
            <span class="amount">
              <Ltr>{money(h.balance)}</Ltr>
            </span>
          </p>
        )}
        <form method="post" action={`${path}/sign-out`}>
          <Csrf token={csrf} />
          <button type="submit" class="secondary">
            {t(lang, "signOut")}
          </button>
        </form>
        <Messages error={p.error} notice={p.notice} />
      </section>

      <Section id="mandates" title={t(lang, "mandates")}>
        {h.mandates.length === 0 ? <p class="note">{t(lang, "noMandates")}</p> : null}
        <ul class="items">
          {h.mandates.map(({ mandate: m, merchant }) => (
            <li key={m.id}>
              <p class="merchant">
                <Given text={merchant} />
              </p>
              <p>
                <strong>
                  <Given text={m.title} />
                </strong>{" "}
                · {t(lang, "perCharge")} <Ltr>{money(m.perChargeCap)}</Ltr>
              </p>
              <form method="get" action={`${path}/mandates/${m.id}/revoke`}>
                <button type="submit" class="secondary" aria-label={`${t(lang, "revoke")}: ${m.title}`}>
                  {t(lang, "revoke")}
                </button>
              </form>
            </li>
          ))}
        </ul>
      </Section>

      <Section id="subscriptions" title={t(lang, "subscriptions")}>
        {h.subscriptions.length === 0 ? <p class="note">{t(lang, "noSubscriptions")}</p> : null}
        <ul class="items">
          {h.subscriptions.map(({ subscription: s, merchant }) => (
            <li key={s.id}>
              <p class="merchant">
                <Given text={merchant} />
              </p>
              <p>
                <strong>
                  <Given text={s.planName} />
                </strong>{" "}
                ·{" "}
                {tn(lang, "every", {
                  amount: <Ltr>{money(s.amount)}</Ltr>,
                  interval: interval(lang, s.interval, s.intervalCount)
                })}
              </p>
              {s.nextBillingAt === null ? null : (
                <p class="note">
                  {t(lang, "nextBilling")}: <When at={s.nextBillingAt} />
                </p>
              )}
              <form method="get" action={`${path}/subscriptions/${s.id}/cancel`}>
                <button
                  type="submit"
                  class="secondary"
                  aria-label={`${t(lang, "cancelSubscription")}: ${s.planName}`}
                >
                  {t(lang, "cancelSubscription")}
                </button>
              </form>
            </li>
          ))}
        </ul>
      </Section>

      <Section id="qr" title={t(lang, "payQr")}>
        <form method="post" action={`${path}/qr/pay`}>
          <Csrf token={csrf} />
          <label for="payload">{t(lang, "qrPayload")}</label>
          <input id="payload" name="payload" type="text" required maxlength={512} autocomplete="off" />
          <label for="amount">{t(lang, "qrAmount")}</label>
          <input
            id="amount"
            name="amount"
            type="text"
            inputmode="decimal"
            maxlength={12}
            aria-describedby="amount-note"
          />
          <p id="amount-note" class="note">
            {t(lang, "qrAmountNote")}
          </p>
          <div class="actions">
            <button type="submit">{t(lang, "pay")}</button>
          </div>
        </form>
      </Section>

      <Section id="payments" title={t(lang, "payments")}>
        <Payments lang={lang} prefix={p.frame.assets} payments={h.payments} />
      </Section>

      <Section id="invoices" title={t(lang, "invoices")}>
        {h.invoices.length === 0 ? <p class="note">{t(lang, "noInvoices")}</p> : null}
        <ul class="items">
          {h.invoices.map(({ invoice: i, plan }) => (
            <li key={i.id}>
              <Given text={plan} /> · <Ltr>{i.periodKey}</Ltr> · <Ltr>{money(i.amount)}</Ltr> ·{" "}
              {status(lang, i.status)}
              <Refunded lang={lang} amount={i.amountRefunded} />
            </li>
          ))}
        </ul>
      </Section>

      <Section id="notifications" title={t(lang, "notifications")}>
        {notices.shown.length === 0 ? <p class="note">{t(lang, "noNotifications")}</p> : null}
        <ul class="items">
          {notices.shown.map((n) => (
            <li key={n.id}>
              <Notice lang={lang} notice={n} />
            </li>
          ))}
        </ul>
        {notices.olderCodes === 0 ? null : (
          <p class="note">{tn(lang, "olderCodes", { n: <Ltr>{notices.olderCodes}</Ltr> })}</p>
        )}
      </Section>
    </Page>
  )
}

/** Asks before ending a mandate or a subscription: the form that does it, or back to the wallet. */
export const Confirm = (p: {
  readonly frame: Frame
  readonly heading: string
  readonly text: ComponentChildren
  readonly action: string
  readonly confirm: string
}) => {
  const { lang, csrf, path } = p.frame
  return (
    <Page lang={lang} title={p.heading} path={path} assets={p.frame.assets}>
      <section class="card" aria-labelledby="heading">
        <h1 id="heading">{p.heading}</h1>
        <p>{p.text}</p>
        <form method="post" action={p.action}>
          <Csrf token={csrf} />
          <div class="actions">
            <button type="submit" class="danger">
              {p.confirm}
            </button>
            <a class="button secondary" href={path}>
              {t(lang, "goBack")}
            </a>
          </div>
        </form>
      </section>
    </Page>
  )
}
