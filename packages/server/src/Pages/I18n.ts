/**
 * The hosted pages' words in English and Dhivehi (right to left). The language comes from `?lang=`,
 * then the `laari_lang` cookie, then English. Merchant-supplied text is shown as given, in `dir="auto"`.
 */
import { Money } from "@laari/core"
import type { ComponentChild } from "preact"

export type Lang = "en" | "dv"

export const langs: ReadonlyArray<Lang> = ["en", "dv"]

export const dir = (lang: Lang): "ltr" | "rtl" => (lang === "dv" ? "rtl" : "ltr")

const en = {
  langName: "English",
  phone: "Phone number",
  sendCode: "Send code",
  code: "One-time code",
  approve: "Approve",
  decline: "Decline",
  pay: "Pay",
  continue: "Continue",
  testMode: "Test mode",
  testModeNote:
    "This is a test payment. Pay settles it from the merchant's test wallet: no code is asked for and no real money moves.",
  mandateHeading: "Approve a standing payment",
  mandateMeaning:
    "Approving lets {merchant} charge your wallet without asking you each time, within the limits above, until {date}. You can revoke it at any time in the wallet app.",
  mandateMeaningOpen:
    "Approving lets {merchant} charge your wallet without asking you each time, within the limits above, until you revoke it. You can revoke it at any time in the wallet app.",
  perCharge: "Per charge, at most",
  perMonth: "Per month, at most",
  validUntil: "Valid until",
  codeSent: "A code was sent to your wallet app. It works for 5 minutes.",
  approved: "Approved",
  approvedText: "{merchant} can now charge your wallet within the limits you approved.",
  declined: "Declined",
  declinedText: "Nothing was approved. {merchant} cannot charge your wallet.",
  linkUnknown: "This link is not valid",
  linkUnknownText: "Check the link you were given, or ask the merchant for a new one.",
  mandateClosed: "This request is closed",
  mandateClosedText: "This mandate is {status}; there is nothing to approve.",
  mandateLapsed: "This link has lapsed",
  mandateLapsedText: "The time to approve this mandate is over. Ask the merchant for a new link.",
  checkoutHeading: "Subscribe",
  paymentHeading: "Pay",
  every: "{amount} every {interval}",
  renewsNote: "Renews automatically. You can end it at any time in the wallet app.",
  paid: "Paid",
  paidText: "Thank you. Your payment to {merchant} is complete.",
  subscribedText: "Thank you. Your subscription to {plan} with {merchant} is active.",
  sessionClosed: "This payment is closed",
  sessionExpiredText: "The time to pay has passed. Ask the merchant for a new link.",
  sessionCancelledText: "The merchant cancelled this payment.",
  sessionPaidText: "This has already been paid.",
  returnTo: "Return to {merchant} to finish.",
  csrf: "This form has expired. Reload the page and try again.",
  month: "month",
  months: "{n} months",
  week: "week",
  weeks: "{n} weeks",
  merchant: "Merchant",
  language: "Language",
  walletHeading: "Your wallet",
  signInHeading: "Sign in to your wallet",
  signIn: "Sign in",
  signOut: "Sign out",
  signedInAs: "Signed in as {phone}",
  mandates: "Mandates",
  noMandates: "No active mandates.",
  revoke: "Revoke",
  subscriptions: "Subscriptions",
  noSubscriptions: "No active subscriptions.",
  cancelSubscription: "Cancel subscription",
  nextBilling: "Next payment",
  charges: "Recent charges",
  refundedAmount: "Refunded {amount}",
  noCharges: "No charges yet.",
  invoices: "Invoices",
  notifications: "Notifications",
  noNotifications: "Nothing yet.",
  payQr: "Pay a QR code",
  qrPayload: "QR payload",
  qrAmount: "Amount (MVR)",
  qrAmountNote: "Only for codes without an amount.",
  qrPaid: "Paid {amount}. Reference {qrid}.",
  revoked: "The mandate is revoked; no further charges can be made under it.",
  cancelled: "The subscription is cancelled.",
  signedOut: "You are signed out.",
  badAmount: "Type the amount in MVR, for example 25.50.",
  busy: "Too many requests from this connection. Wait a moment and try again.",
  beingConfirmed:
    "Your payment is being confirmed with your wallet. You will be notified of the outcome within minutes; do not pay again meanwhile.",
  serviceBusy: "The service is busy. Try again shortly.",
  balance: "Balance",
  payments: "Payments",
  noPayments: "No payments yet.",
  noInvoices: "No invoices yet.",
  receipt: "Receipt",
  olderCodes: "{n} older codes are not shown: only the newest can be used.",
  revokeHeading: "Revoke this mandate?",
  revokeText:
    "{merchant} will no longer be able to charge your wallet for “{title}”. This cannot be undone: the merchant would have to ask for a new mandate.",
  revokeConfirm: "Yes, revoke",
  cancelHeading: "Cancel this subscription?",
  cancelText:
    "{merchant} will not charge your wallet for {plan} again. This cannot be undone: you would have to subscribe again.",
  cancelConfirm: "Yes, cancel subscription",
  goBack: "No, go back",
  notYours: "That is not one of your active mandates or subscriptions."
}

type Messages = typeof en

const dv: Messages = {
  langName: "ދިވެހި",
  phone: "ފޯނު ނަންބަރު",
  sendCode: "ކޯޑު ފޮނުވާ",
  code: "އެއްފަހަރު ބޭނުންކުރާ ކޯޑު",
  approve: "ގަބޫލުކުރަން",
  decline: "ނުފެތޭ",
  pay: "ފައިސާ ދައްކާ",
  continue: "ކުރިއަށް",
  testMode: "ޓެސްޓް މޯޑް",
  testModeNote: "މިއީ ޓެސްޓް ފައިސާ ދެއްކުމެއް. ފައިސާ ދައްކާ އަށް ފިތާލުމުން ވިޔަފާރިވެރިޔާގެ ޓެސްޓް ވޯލެޓުން ދައްކާނެ: ކޯޑެއް ނުއެދޭ، އަދި ހަގީގީ ފައިސާއެއް ނުބަދަލުވޭ.",
  mandateHeading: "ދާއިމީ ފައިސާ ދެއްކުމަށް ހުއްދަ ދިނުން",
  mandateMeaning:
    "ހުއްދަ ދިނުމުން، {merchant} އަށް ކޮންމެ ފަހަރަކު ތިބާއާ ނުސުވާލުކޮށް، މަތީގައިވާ ހައްދުތަކުގެ ތެރޭގައި، {date} އާ ހަމައަށް ތިބާގެ ވޯލެޓުން ފައިސާ ނެގޭނެ. ވޯލެޓް އެޕުން ކޮންމެ ވަގުތެއްގައި މިހުއްދަ ބާތިލުކުރެވޭނެ.",
  mandateMeaningOpen:
    "ހުއްދަ ދިނުމުން، {merchant} އަށް ކޮންމެ ފަހަރަކު ތިބާއާ ނުސުވާލުކޮށް، މަތީގައިވާ ހައްދުތަކުގެ ތެރޭގައި، ތިބާ މިހުއްދަ ބާތިލުކުރާހާ ހިނދަކު ތިބާގެ ވޯލެޓުން ފައިސާ ނެގޭނެ. ވޯލެޓް އެޕުން ކޮންމެ ވަގުތެއްގައި މިހުއްދަ ބާތިލުކުރެވޭނެ.",
  perCharge: "އެއް ފަހަރަކު، ގިނަވެގެން",
  perMonth: "މަހަކު، ގިނަވެގެން",
  validUntil: "ސައްޙަ މުއްދަތު",
  codeSent: "ތިބާގެ ވޯލެޓް އެޕަށް ކޯޑެއް ފޮނުވިއްޖެ. އެ ކޯޑު 5 މިނިޓު ވަންދެން ބޭނުންކުރެވޭނެ.",
  approved: "ހުއްދަ ދެވިއްޖެ",
  approvedText: "ތިބާ ދިން ހައްދުތަކުގެ ތެރޭގައި {merchant} އަށް މިހާރު ތިބާގެ ވޯލެޓުން ފައިސާ ނެގޭނެ.",
  declined: "ނުފެތުނު",
  declinedText: "އެއްވެސް ހުއްދައެއް ނުދެވޭ. {merchant} އަށް ތިބާގެ ވޯލެޓުން ފައިސާ ނުނެގޭނެ.",
  linkUnknown: "މި ލިންކު ސައްޙައެއް ނޫން",
  linkUnknownText: "ލިބުނު ލިންކު ޗެކްކުރައްވާ، ނުވަތަ ވިޔަފާރިވެރިޔާއަށް އައު ލިންކެއް އެދިވަޑައިގަންނަވާ.",
  mandateClosed: "މި އެދުން ބަންދުކުރެވިއްޖެ",
  mandateClosedText: "މި މެންޑޭޓް {status}؛ ހުއްދަ ދޭންޖެހޭ އެއްޗެއް ނެތް.",
  mandateLapsed: "މި ލިންކުގެ މުއްދަތު ހަމަވެއްޖެ",
  mandateLapsedText: "މި މެންޑޭޓަށް ހުއްދަ ދެވޭ މުއްދަތު ހަމަވެއްޖެ. ވިޔަފާރިވެރިޔާއަށް އައު ލިންކެއް އެދިވަޑައިގަންނަވާ.",
  checkoutHeading: "ސަބްސްކްރައިބް ކުރުން",
  paymentHeading: "ފައިސާ ދެއްކުން",
  every: "ކޮންމެ {interval} {amount}",
  renewsNote: "އަމިއްލައަށް އާވާނެ. ވޯލެޓް އެޕުން ކޮންމެ ވަގުތެއްގައި ނިންމާލެވޭނެ.",
  paid: "ފައިސާ ދައްކައިފި",
  paidText: "ޝުކުރިއްޔާ. {merchant} އަށް ދެއްކި ފައިސާ ހަމަވެއްޖެ.",
  subscribedText: "ޝުކުރިއްޔާ. {merchant} ގެ {plan} ސަބްސްކްރިޕްޝަން މިހާރު ހަރަކާތްތެރި.",
  sessionClosed: "މި ފައިސާ ދެއްކުން ބަންދުކުރެވިއްޖެ",
  sessionExpiredText: "ފައިސާ ދެއްކޭ މުއްދަތު ހަމަވެއްޖެ. ވިޔަފާރިވެރިޔާއަށް އައު ލިންކެއް އެދިވަޑައިގަންނަވާ.",
  sessionCancelledText: "ވިޔަފާރިވެރިޔާ މި ފައިސާ ދެއްކުން ބާތިލުކޮށްފި.",
  sessionPaidText: "މިއީ ކުރިން ދައްކާފައިވާ ފައިސާއެއް.",
  returnTo: "ނިންމުމަށް {merchant} އަށް އެނބުރި ވަޑައިގަންނަވާ.",
  csrf: "މި ފޯމުގެ މުއްދަތު ހަމަވެއްޖެ. ޞަފްޙާ އަލުން ލޯޑްކޮށް އަނެއްކާ މަސައްކަތް ކުރައްވާ.",
  month: "މަހަކު",
  months: "{n} މަހުން",
  week: "ހަފްތާއަކު",
  weeks: "{n} ހަފްތާއިން",
  merchant: "ވިޔަފާރިވެރިޔާ",
  language: "ބަސް",
  walletHeading: "ތިބާގެ ވޯލެޓް",
  signInHeading: "ވޯލެޓަށް ސައިން އިން ކުރުން",
  signIn: "ސައިން އިން",
  signOut: "ސައިން އައުޓް",
  signedInAs: "{phone} ގެ ގޮތުގައި ސައިން އިން ކޮށްފައި",
  mandates: "މެންޑޭޓްތައް",
  noMandates: "ހަރަކާތްތެރި މެންޑޭޓެއް ނެތް.",
  revoke: "ބާތިލުކުރޭ",
  subscriptions: "ސަބްސްކްރިޕްޝަންތައް",
  noSubscriptions: "ހަރަކާތްތެރި ސަބްސްކްރިޕްޝަނެއް ނެތް.",
  cancelSubscription: "ސަބްސްކްރިޕްޝަން ބާތިލުކުރޭ",
  nextBilling: "ދެން ދައްކަންޖެހޭ",
  charges: "ފަހުގެ ފައިސާ ނެގުންތައް",
  refundedAmount: "{amount} ރީފަންޑްކުރި",
  noCharges: "އަދި ފައިސާއެއް ނުނަގާ.",
  invoices: "އިންވޮއިސްތައް",
  notifications: "އެންގުންތައް",
  noNotifications: "އަދި އެއްވެސް އެއްޗެއް ނެތް.",
  payQr: "ކިއުއާރު ކޯޑަކުން ފައިސާ ދައްކާ",
  qrPayload: "ކިއުއާރު ޕޭލޯޑް",
  qrAmount: "އަދަދު (ރުފިޔާ)",
  qrAmountNote: "އަދަދެއް ނެތް ކޯޑުތަކަށް ހަމައެކަނި.",
  qrPaid: "{amount} ދައްކައިފި. ރެފަރެންސް {qrid}.",
  revoked: "މެންޑޭޓް ބާތިލުކޮށްފި؛ މީގެ ދަށުން އިތުރު ފައިސާއެއް ނުނެގޭނެ.",
  cancelled: "ސަބްސްކްރިޕްޝަން ބާތިލުކޮށްފި.",
  signedOut: "ސައިން އައުޓް ކޮށްފި.",
  badAmount: "އަދަދު ރުފިޔާއިން ލިޔުއްވާ، މިސާލަކަށް 25.50.",
  busy: "މި ކަނެކްޝަނުން ގިނަ އެދުންތަކެއް އައިސްފި. ކުޑަ ވަގުތަކަށް މަޑުކޮށްލައްވާފައި އަނެއްކާ މަސައްކަތް ކުރައްވާ.",
  beingConfirmed: "ތިބާގެ ފައިސާ ދެއްކުން ވޯލެޓާއެކު ކަށަވަރުކުރަމުން ދަނީ. ނަތީޖާ މިނެޓުކޮޅެއްގެ ތެރޭގައި އަންގާނެ؛ އެހާތަނަށް އަލުން ފައިސާ ނުދައްކަވާ.",
  serviceBusy: "ޚިދުމަތް މިވަގުތު ބިޒީ. ކުޑަ ވަގުތަކުން އަނެއްކާ މަސައްކަތް ކުރައްވާ.",
  balance: "ބެލެންސް",
  payments: "ދެއްކި ފައިސާ",
  noPayments: "އަދި އެއްވެސް ފައިސާއެއް ނުދައްކާ.",
  noInvoices: "އަދި އެއްވެސް އިންވޮއިސްއެއް ނެތް.",
  receipt: "ރަސީދު",
  olderCodes: "ކުރީގެ {n} ކޯޑު ނުދައްކާ: ބޭނުންކުރެވޭނީ އެންމެ ފަހުގެ ކޯޑު ހަމައެކަނި.",
  revokeHeading: "މި މެންޑޭޓް ބާތިލުކުރަންތޯ؟",
  revokeText:
    "މިހެން ކުރުމުން {merchant} އަށް “{title}” އަށް ތިބާގެ ވޯލެޓުން އިތުރަށް ފައިސާ ނުނެގޭނެ. މިކަން އަނބުރާ ނުކުރެވޭނެ: ވިޔަފާރިވެރިޔާ އައު މެންޑޭޓަކަށް އެދެންޖެހޭނެ.",
  revokeConfirm: "އާން، ބާތިލުކުރޭ",
  cancelHeading: "މި ސަބްސްކްރިޕްޝަން ބާތިލުކުރަންތޯ؟",
  cancelText: "މިހެން ކުރުމުން {merchant} އަށް {plan} އަށް ތިބާގެ ވޯލެޓުން އިތުރަށް ފައިސާ ނުނެގޭނެ. މިކަން އަނބުރާ ނުކުރެވޭނެ: އަލުން ސަބްސްކްރައިބް ކުރަންޖެހޭނެ.",
  cancelConfirm: "އާން، ސަބްސްކްރިޕްޝަން ބާތިލުކުރޭ",
  goBack: "ނޫން، ފަހަތަށް",
  notYours: "އެއީ ތިބާގެ ހަރަކާތްތެރި މެންޑޭޓެއް ނުވަތަ ސަބްސްކްރިޕްޝަނެއް ނޫން."
}

const messages: { readonly [L in Lang]: Messages } = { en, dv }

export type Key = keyof Messages

/**
 * `template` as page content, `{name}` placeholders filled with `params`: elements stay elements (an
 * amount or a date in its own left-to-right `<bdi>`, merchant text in `dir="auto"`), so a value never runs
 * into the sentence around it. Undefined when `params` lacks a placeholder's value.
 */
export const fillNodes = (
  template: string,
  params: Record<string, ComponentChild | undefined>
): ReadonlyArray<ComponentChild> | undefined => {
  const parts: Array<ComponentChild> = []
  for (const part of template.split(/(\{\w+\})/)) {
    const name = /^\{(\w+)\}$/.exec(part)?.[1]
    if (name === undefined) parts.push(part)
    else if (params[name] === undefined) return undefined
    else parts.push(params[name])
  }
  return parts
}

/** The text of `key` in `lang` as page content (`fillNodes`); every placeholder of `key` is given. */
export const tn = (
  lang: Lang,
  key: Key,
  params: Record<string, ComponentChild>
): ReadonlyArray<ComponentChild> => fillNodes(messages[lang][key], params) ?? [t(lang, key)]

/** `text` with its `{name}` placeholders filled from `params` (an unknown name stays as written). */
export const fill = (text: string, params: Record<string, string>): string =>
  text.replace(/\{(\w+)\}/g, (whole, name: string) => params[name] ?? whole)

/** The text of `key` in `lang`, `{name}` placeholders filled from `params`. */
export const t = (lang: Lang, key: Key, params: Record<string, string> = {}): string =>
  fill(messages[lang][key], params)

/** `25.50` MVR as laari; empty is no amount; anything else `"invalid"`. */
export const parseMvr = (text: string): number | null | "invalid" => {
  const s = text.trim()
  if (s === "") return null
  const m = /^(\d{1,7})(?:\.(\d{1,2}))?$/.exec(s)
  if (m === null) return "invalid"
  return Number(m[1]) * 100 + Number((m[2] ?? "").padEnd(2, "0"))
}

/** `MVR 1,200.00`: amounts in laari, as the pages (and the customer's notices) show them. */
export const money: (laari: number) => string = Money.display

/** "every month", "every 2 weeks" (in words, in `lang`). */
export const interval = (lang: Lang, unit: "WEEK" | "MONTH", count: number): string =>
  unit === "MONTH"
    ? count === 1
      ? t(lang, "month")
      : t(lang, "months", { n: String(count) })
    : count === 1
      ? t(lang, "week")
      : t(lang, "weeks", { n: String(count) })

/** Every state, mode and type a page shows, in words: the API's codes are for machines. */
const statusWords = {
  en: {
    INITIATED: "Awaiting approval",
    ACTIVE: "Active",
    DECLINED: "Declined",
    REVOKED: "Revoked",
    EXPIRED: "Expired",
    SUSPENDED: "Suspended",
    PAST_DUE: "Past due",
    CANCELLED: "Cancelled",
    PENDING: "Pending",
    CHARGING: "Being charged",
    PAID: "Paid",
    FAILED: "Failed",
    VOID: "Void",
    OPEN: "Open",
    COMPLETE: "Complete",
    INACTIVE: "Inactive",
    ENABLED: "Enabled",
    DISABLED: "Disabled",
    SUCCEEDED: "Succeeded",
    PAYMENT: "Payment",
    SUBSCRIPTION: "Subscription",
    STATIC: "Static",
    DYNAMIC: "Dynamic"
  },
  dv: {
    INITIATED: "ހުއްދައަށް އިންތިޒާރުގައި",
    ACTIVE: "ހަރަކާތްތެރި",
    DECLINED: "ނުފެތުނު",
    REVOKED: "ބާތިލުކުރެވިފައި",
    EXPIRED: "މުއްދަތު ހަމަވެފައި",
    SUSPENDED: "ހުއްޓާލެވިފައި",
    PAST_DUE: "ފައިސާ ދެއްކުން ލަސްވެފައި",
    CANCELLED: "ކެންސަލްކުރެވިފައި",
    PENDING: "އިންތިޒާރުގައި",
    CHARGING: "ފައިސާ ނަގަމުން",
    PAID: "ދައްކާފައި",
    FAILED: "ނާކާމިޔާބު",
    VOID: "ބާތިލު",
    OPEN: "ހުޅުވިފައި",
    COMPLETE: "ނިމިފައި",
    INACTIVE: "ހަރަކާތެއް ނެތް",
    ENABLED: "ހުޅުވާލެވިފައި",
    DISABLED: "ބަންދުކުރެވިފައި",
    SUCCEEDED: "ކާމިޔާބު",
    PAYMENT: "ފައިސާ ދެއްކުން",
    SUBSCRIPTION: "ސަބްސްކްރިޕްޝަން",
    STATIC: "ސްޓެޓިކް",
    DYNAMIC: "ޑައިނަމިކް"
  }
} as const

export type StatusCode = keyof (typeof statusWords)["en"]

/** A state (`ACTIVE`), mode or type in words, in `lang`. */
export const status = (lang: Lang, code: StatusCode): string => statusWords[lang][code]

/** `status` inside a sentence ("This mandate is revoked"). */
export const statusInText = (lang: Lang, code: StatusCode): string =>
  lang === "en" ? status(lang, code).toLowerCase() : status(lang, code)

/** What moved a wallet's money (a ledger transfer's type), in words: the API's `checkout_payment` is for machines. */
const paymentTypeWords = {
  en: {
    charge: "Mandate charge",
    qr_payment: "QR payment",
    checkout_payment: "Checkout payment",
    invoice: "Subscription payment",
    refund: "Refund",
    adjustment: "Adjustment"
  },
  dv: {
    charge: "މެންޑޭޓުން ނެގި ފައިސާ",
    qr_payment: "ކިއުއާރު ކޯޑުން ދެއްކި ފައިސާ",
    checkout_payment: "ޗެކްއައުޓުން ދެއްކި ފައިސާ",
    invoice: "ސަބްސްކްރިޕްޝަނުގެ ފައިސާ",
    refund: "ރީފަންޑް",
    adjustment: "އިސްލާހު"
  }
} as const

export type PaymentType = keyof (typeof paymentTypeWords)["en"]

/** A payment's or movement's type (`checkout_payment`) in words, in `lang`. */
export const paymentType = (lang: Lang, type: PaymentType): string => paymentTypeWords[lang][type]

export const parseLang = (value: string | undefined | null): Lang | undefined =>
  value === "en" || value === "dv" ? value : undefined
