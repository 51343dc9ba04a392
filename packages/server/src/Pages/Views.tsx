/**
 * The customer pages' views: the mandate approval, the checkout, and the pages that close them. Pure
 * functions of what they show; escaping is preact's.
 */
import type { CheckoutSession, Mandate } from "@laari/core"
import type { ComponentChildren } from "preact"
import { Csrf, Given, Ltr, Messages, Page, When } from "./Html.js"
import { interval, type Lang, money, t, tn } from "./I18n.js"

export interface Frame {
  readonly lang: Lang
  /** The page's path (the language links come back to it). */
  readonly path: string
  /** Where `/assets` is served (the pages' prefix). */
  readonly assets: string
  readonly csrf: string
}

/**
 * The phone form, or with a challenge the code form whose buttons are `actions`. A `phone` fills the
 * phone field and travels with the code (the wallet signs in by phone).
 */
export const CodeForms = (p: {
  readonly frame: Frame
  readonly challengeId: string | undefined
  readonly phone?: string | undefined
  readonly codeAction: string
  readonly answerAction: string
  readonly actions: ReadonlyArray<{
    readonly name: string
    readonly label: string
    readonly secondary?: boolean
  }>
}) => {
  const { lang, csrf } = p.frame
  if (p.challengeId === undefined)
    return (
      <form method="post" action={p.codeAction}>
        <Csrf token={csrf} />
        <label for="phone">{t(lang, "phone")}</label>
        <input
          id="phone"
          name="phone"
          type="tel"
          autocomplete="tel"
          inputmode="tel"
          required
          maxlength={32}
          value={p.phone}
        />
        <div class="actions">
          <button type="submit">{t(lang, "sendCode")}</button>
        </div>
      </form>
    )
  return (
    <form method="post" action={p.answerAction}>
      <Csrf token={csrf} />
      <p class="notice" role="status">
        {t(lang, "codeSent")}
      </p>
      {p.phone === undefined ? null : <input type="hidden" name="phone" value={p.phone} />}
      <input type="hidden" name="challenge_id" value={p.challengeId} />
      <label for="otp">{t(lang, "code")}</label>
      <input
        id="otp"
        name="otp"
        type="text"
        inputmode="numeric"
        autocomplete="one-time-code"
        pattern="[0-9]{6}"
        maxlength={6}
        required
      />
      <div class="actions">
        {p.actions.map((a) => (
          <button
            key={a.name}
            type="submit"
            name="action"
            value={a.name}
            class={a.secondary ? "secondary" : undefined}
          >
            {a.label}
          </button>
        ))}
      </div>
    </form>
  )
}

/** What a customer's form page is given besides its subject. */
interface FormPage {
  readonly frame: Frame
  readonly merchantName: string
  readonly challengeId: string | undefined
  /** What was typed in the phone field, shown again after a refusal. */
  readonly phone?: string | undefined
  readonly error?: string | undefined
}

/** The top of a form page's card: the merchant, what it asks for, and its description if any. */
const Asking = (p: {
  readonly merchantName: string
  readonly title: string
  readonly description: string | null
}) => (
  <>
    <p class="merchant">
      <Given text={p.merchantName} />
    </p>
    <h1 id="heading">
      <Given text={p.title} />
    </h1>
    {p.description === null ? null : (
      <p>
        <Given text={p.description} />
      </p>
    )}
  </>
)

export const MandateApproval = (p: FormPage & { readonly mandate: Mandate.Mandate }) => {
  const { lang, path } = p.frame
  const m = p.mandate
  return (
    <Page lang={lang} title={t(lang, "mandateHeading")} path={path} assets={p.frame.assets}>
      <section class="card" aria-labelledby="heading">
        <Asking merchantName={p.merchantName} title={m.title} description={m.description} />
        <dl class="terms">
          <dt>{t(lang, "perCharge")}</dt>
          <dd>
            <Ltr>{money(m.perChargeCap)}</Ltr>
          </dd>
          {m.periodCap === null ? null : (
            <>
              <dt>{t(lang, "perMonth")}</dt>
              <dd>
                <Ltr>{money(m.periodCap)}</Ltr>
              </dd>
            </>
          )}
          {m.expiresAt === null ? null : (
            <>
              <dt>{t(lang, "validUntil")}</dt>
              <dd>
                <When at={m.expiresAt} />
              </dd>
            </>
          )}
        </dl>
        <p class="note">
          {tn(lang, m.expiresAt === null ? "mandateMeaningOpen" : "mandateMeaning", {
            merchant: <Given text={p.merchantName} />,
            date: <When at={m.expiresAt} />
          })}
        </p>
        <Messages error={p.error} />
        <CodeForms
          frame={p.frame}
          challengeId={p.challengeId}
          phone={p.phone}
          codeAction={`${path}/code`}
          answerAction={`${path}/answer`}
          actions={[
            { name: "approve", label: t(lang, "approve") },
            { name: "decline", label: t(lang, "decline"), secondary: true }
          ]}
        />
      </section>
    </Page>
  )
}

export const Checkout = (p: FormPage & { readonly session: CheckoutSession.CheckoutSession }) => {
  const { lang, path } = p.frame
  const s = p.session
  const test = s.environment === "test"
  const price = s.price
  return (
    <Page
      lang={lang}
      title={t(lang, price === null ? "paymentHeading" : "checkoutHeading")}
      path={path}
      assets={p.frame.assets}
      testMode={test}
    >
      <section class="card" aria-labelledby="heading">
        <Asking
          merchantName={p.merchantName}
          title={price === null ? s.title : price.name}
          description={s.description}
        />
        <p class="amount">
          {price === null ? (
            <Ltr>{money(s.amount)}</Ltr>
          ) : (
            tn(lang, "every", {
              amount: <Ltr>{money(price.amount)}</Ltr>,
              interval: interval(lang, price.interval, price.intervalCount)
            })
          )}
        </p>
        {price === null ? null : <p class="note">{t(lang, "renewsNote")}</p>}
        <Messages error={p.error} />
        {test ? (
          <form method="post" action={`${path}/pay`}>
            <Csrf token={p.frame.csrf} />
            <p class="note">{t(lang, "testModeNote")}</p>
            <div class="actions">
              <button type="submit">{t(lang, "pay")}</button>
            </div>
          </form>
        ) : (
          <CodeForms
            frame={p.frame}
            challengeId={p.challengeId}
            phone={p.phone}
            codeAction={`${path}/code`}
            answerAction={`${path}/pay`}
            actions={[{ name: "pay", label: t(lang, "pay") }]}
          />
        )}
      </section>
    </Page>
  )
}

/**
 * A page that ends a flow or explains why it cannot go on; with `continueTo`, a link back to the merchant
 * that the customer follows when ready (no timed redirect: WCAG 2.2.1).
 */
export const Outcome = (p: {
  readonly frame: Omit<Frame, "csrf">
  readonly heading: string
  /** Text, or text with isolated values (`I18n.tn`). */
  readonly text: ComponentChildren
  readonly testMode?: boolean
  readonly continueTo?: { readonly url: string; readonly merchantName: string } | undefined
}) => (
  <Page
    lang={p.frame.lang}
    title={p.heading}
    path={p.frame.path}
    assets={p.frame.assets}
    testMode={p.testMode}
  >
    <section class="card" aria-labelledby="heading">
      <h1 id="heading" class="result">
        {p.heading}
      </h1>
      <p>{p.text}</p>
      {p.continueTo === undefined ? null : (
        <>
          <p class="note">
            {tn(p.frame.lang, "returnTo", { merchant: <Given text={p.continueTo.merchantName} /> })}
          </p>
          <p>
            <a href={p.continueTo.url}>{t(p.frame.lang, "continue")}</a>
          </p>
        </>
      )}
    </section>
  </Page>
)
