/**
 * The wallet app's views: sign-in, and the home page with the customer's mandates, subscriptions,
 * charges, invoices, notifications and the QR payment form.
 */
import type { Invoice, Mandate, Notifications, Subscription } from "@laari/core"
import type { ComponentChildren } from "preact"
import { Csrf, Given, Ltr, Messages, Page, When } from "./Html.js"
import { interval, type Lang, money, status, t, tn } from "./I18n.js"
import { CodeForms, type Frame } from "./Views.js"
import { Notice } from "./WalletNotices.js"

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
  readonly charges: ReadonlyArray<{ readonly charge: Mandate.Charge; readonly merchant: string }>
  readonly invoices: ReadonlyArray<Invoice.Invoice>
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
  return (
    <Page lang={lang} title={t(lang, "walletHeading")} path={path} assets={p.frame.assets}>
      <section class="card" aria-labelledby="heading">
        <h1 id="heading">{t(lang, "walletHeading")}</h1>
        <p class="note">{tn(lang, "signedInAs", { phone: <Ltr>{h.phone}</Ltr> })}</p>
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
              <form method="post" action={`${path}/mandates/${m.id}/revoke`}>
                <Csrf token={csrf} />
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
              <form method="post" action={`${path}/subscriptions/${s.id}/cancel`}>
                <Csrf token={csrf} />
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

      <Section id="charges" title={t(lang, "charges")}>
        {h.charges.length === 0 ? <p class="note">{t(lang, "noCharges")}</p> : null}
        <ul class="items">
          {h.charges.map(({ charge: c, merchant }) => (
            <li key={c.id}>
              <When at={c.createdAt} /> · <Given text={merchant} /> · <Ltr>{money(c.amount)}</Ltr>
              <Refunded lang={lang} amount={c.amountRefunded} />
            </li>
          ))}
        </ul>
      </Section>

      <Section id="invoices" title={t(lang, "invoices")}>
        <ul class="items">
          {h.invoices.map((i) => (
            <li key={i.id}>
              <Ltr>{i.periodKey}</Ltr> · <Ltr>{money(i.amount)}</Ltr> · {status(lang, i.status)}
              <Refunded lang={lang} amount={i.amountRefunded} />
            </li>
          ))}
        </ul>
      </Section>

      <Section id="notifications" title={t(lang, "notifications")}>
        {h.notifications.length === 0 ? <p class="note">{t(lang, "noNotifications")}</p> : null}
        <ul class="items">
          {h.notifications.map((n) => (
            <li key={n.id}>
              <Notice lang={lang} notice={n} />
            </li>
          ))}
        </ul>
      </Section>
    </Page>
  )
}
