/**
 * The customer's notices in the wallet, in the page's language. Core words each notice in English for
 * the channels that carry it (`title`, `body`) and keeps what it is about in `data` (amounts, names, the
 * code); in Dhivehi the wallet words it again from `kind` and `data`, with every amount and code isolated
 * left to right. A notice whose `data` lacks a name (stored before names were kept) is shown as stored,
 * marked English so that it is read and laid out as English.
 */
import type { Notifications } from "@laari/core"
import { Given, Ltr, When } from "./Html.js"
import { fillNodes, type Lang, money } from "./I18n.js"

interface Words {
  readonly title: string
  readonly body: string
}

/** Dhivehi, by kind; `{merchant}`, `{plan}`, `{amount}` and `{code}` come from the notice's data. */
const dv: { readonly [K in Notifications.Kind]: Words } = {
  one_time_code: {
    title: "ތިބާގެ laari ކޯޑު",
    body: "{code} އަކީ ތިބާގެ ކޯޑު. 5 މިނިޓުން މުއްދަތު ހަމަވާނެ. އެއްވެސް މީހަކާ ހިއްސާ ނުކުރައްވާ."
  },
  "mandate.charge": {
    title: "{merchant} ން {amount} ނެގި",
    body: "މެންޑޭޓުގެ ދަށުން {merchant} ން ތިބާގެ ވޯލެޓުން {amount} ނެގި."
  },
  "mandate.charge_failed": {
    title: "{merchant} އަށް ފައިސާ ނުނެގުނު",
    body: "{merchant} ން {amount} ނެގުމަށް ކުރި މަސައްކަތް ބާތިލުވި. ތިބާގެ ވޯލެޓުން އެއްވެސް ފައިސާއެއް ނުނެގޭ."
  },
  "mandate.approved": {
    title: "{merchant} އަށް ހުއްދަ ދެވިއްޖެ",
    body: "ތިބާ ދިން ހައްދުތަކުގެ ތެރޭގައި {merchant} އަށް މިހާރު ތިބާގެ ވޯލެޓުން ފައިސާ ނެގޭނެ. ވޯލެޓް އެޕުން ކޮންމެ ވަގުތެއްގައި މިހުއްދަ ބާތިލުކުރެވޭނެ."
  },
  "mandate.revoked": {
    title: "މެންޑޭޓް ނިމިއްޖެ",
    body: "މެންޑޭޓް ބާތިލުކޮށްފި؛ މީގެ ދަށުން އިތުރު ފައިސާއެއް ނުނެގޭނެ."
  },
  payment: {
    title: "{merchant} އަށް {amount} ދައްކައިފި",
    body: "ޝުކުރިއްޔާ. {merchant} އަށް ދެއްކި {amount} ހަމަވެއްޖެ."
  },
  balance_warning: {
    title: "{plan} އަށް ބެލެންސް އިތުރުކުރައްވާ",
    body: "{plan} އާވާއިރު {amount} ދައްކަން ޖެހޭނެ، އަދި ތިބާގެ ބެލެންސް އެއަށް ނުފުދޭ."
  },
  payment_failed: {
    title: "{merchant} އަށް {amount} ނުނެގުނު",
    body: "{plan} ގެ ފައިސާ ނުނެގުނު. ބެލެންސް އިތުރުކުރައްވާ."
  },
  "subscription.cancelled": {
    title: "{plan} ނިމިއްޖެ",
    body: "ތިބާގެ {plan} ސަބްސްކްރިޕްޝަން ނިމިއްޖެ؛ އިތުރު ފައިސާއެއް ނުނެގޭނެ."
  },
  refund: {
    title: "{merchant} ން {amount} އަނބުރާ ދީފި",
    body: "{merchant} ން ތިބާގެ ވޯލެޓަށް {amount} އަނބުރާ ދީފި."
  }
}

/** A used, locked or lapsed code: the notice no longer holds it. */
const dvCodeGone = "މި ކޯޑު އިތުރަށް ބޭނުމެއް ނުކުރެވޭނެ."

const text = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined)
const amount = (value: unknown): number | undefined =>
  typeof value === "number" && Number.isSafeInteger(value) ? value : undefined

/**
 * The newest `limit` notices with only the newest one-time code among them: every sign-in or approval
 * sends one, and only the newest is of use. `olderCodes` counts the codes left out.
 */
export const collapseCodes = (
  list: ReadonlyArray<Notifications.Notification>,
  limit: number
): { readonly shown: ReadonlyArray<Notifications.Notification>; readonly olderCodes: number } => {
  const newestCode = list.find((n) => n.kind === "one_time_code")
  const shown = list.filter((n) => n.kind !== "one_time_code" || n === newestCode)
  return { shown: shown.slice(0, limit), olderCodes: list.length - shown.length }
}

/** The notice as the wallet shows it in `lang`: its title and body, then when it came (Maldives time). */
export const Notice = (p: { readonly lang: Lang; readonly notice: Notifications.Notification }) => (
  <>
    <Words lang={p.lang} notice={p.notice} />
    <br />
    <span class="note">
      <When at={p.notice.createdAt} />
    </span>
  </>
)

const Words = (p: { readonly lang: Lang; readonly notice: Notifications.Notification }) => {
  const n = p.notice
  const stored = (
    <>
      <strong>{n.title}</strong>
      <br />
      {n.body}
    </>
  )
  if (p.lang === "en") return stored
  const d = n.data
  const merchant = text(d.merchant_name)
  const plan = text(d.plan_name)
  const laari = amount(d.amount)
  const code = text(d.code)
  const values = {
    merchant: merchant === undefined ? undefined : <Given text={merchant} />,
    plan: plan === undefined ? undefined : <Given text={plan} />,
    amount: laari === undefined ? undefined : <Ltr>{money(laari)}</Ltr>,
    code: code === undefined ? undefined : <Ltr>{code}</Ltr>
  }
  const w = dv[n.kind]
  const body = n.kind === "one_time_code" && code === undefined ? [dvCodeGone] : fillNodes(w.body, values)
  const title = fillNodes(w.title, values)
  if (title === undefined || body === undefined)
    return (
      <span lang="en" dir="ltr">
        {stored}
      </span>
    )
  return (
    <>
      <strong>{title}</strong>
      <br />
      {body}
    </>
  )
}
