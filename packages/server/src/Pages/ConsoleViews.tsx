/**
 * The operator console's views: the shell with its sections (each shown only to a role that may open
 * it), and the bodies of the merchants, a merchant, customers, suspensions and clock pages. Names and
 * phone numbers someone typed are text, escaped by preact.
 */
import { type ApiKey, type Merchant, Role } from "@laari/core"
import type { ComponentChildren } from "preact"
import { type RouteName, Routes, type Signed } from "./ConsoleAccess.js"
import { c, type Word } from "./ConsoleText.js"
import { short } from "./DashboardAudit.js"
import { Keys } from "./DashboardPeopleViews.js"
import { d } from "./DashboardText.js"
import { type Frame, SignedInPage, Table } from "./DashboardViews.js"
import { Csrf, Given, Ltr } from "./Html.js"
import { money } from "./I18n.js"

export const Sections = [
  ["merchants", "merchants"],
  ["customers", "customers"],
  ["suspensions", "suspensions"],
  ["clock", "clock"],
  ["audit", "auditLog"],
  ["account", "account"]
] as const satisfies ReadonlyArray<readonly [RouteName, Word]>
export type Section = (typeof Sections)[number][0]

export const Shell = (p: {
  readonly frame: Frame
  readonly signed: Signed
  readonly section: Section
  readonly title: string
  readonly notice?: ComponentChildren | undefined
  readonly error?: string | undefined
  readonly children: ComponentChildren
}) => (
  <SignedInPage
    frame={p.frame}
    path={`${p.frame.root}/${p.section}`}
    title={p.title}
    notice={p.notice}
    error={p.error}
    top={
      <>
        <p>
          <strong>{c(p.frame.lang, "console")}</strong> ·{" "}
          <bdi dir="ltr">
            <Given text={p.signed.user.email} />
          </bdi>{" "}
          ({p.signed.role})
        </p>
        <nav class="sections" aria-label={c(p.frame.lang, "sections")}>
          {Sections.filter(([id]) => Role.operatorCan(p.signed.role, Routes[id].permission)).map(
            ([id, label]) => (
              <a key={id} href={`${p.frame.root}/${id}`} aria-current={id === p.section ? "page" : undefined}>
                {c(p.frame.lang, label)}
              </a>
            )
          )}
        </nav>
      </>
    }
  >
    {p.children}
  </SignedInPage>
)

const Field = (p: {
  readonly id: string
  readonly label: string
  /** A phone number or an amount: typed left to right, a number's keyboard. */
  readonly numeric?: boolean
  readonly required?: boolean
  readonly ltr?: boolean
  readonly value?: string | undefined
}) => (
  <>
    <label for={p.id}>{p.label}</label>
    <input
      id={p.id}
      name={p.id}
      type="text"
      inputMode={p.numeric ? "numeric" : undefined}
      required={p.required ?? true}
      maxlength={200}
      dir={p.ltr || p.numeric ? "ltr" : "auto"}
      value={p.value}
    />
  </>
)

const Submit = (p: { readonly label: string }) => (
  <div class="actions">
    <button type="submit">{p.label}</button>
  </div>
)

const EnvironmentSelect = (p: { readonly frame: Frame; readonly id: string }) => (
  <>
    <label for={p.id}>{c(p.frame.lang, "environment")}</label>
    <select id={p.id} name="environment">
      <option value="test">{d(p.frame.lang, "test")}</option>
      <option value="live">{d(p.frame.lang, "live")}</option>
    </select>
  </>
)

export const Merchants = (p: {
  readonly frame: Frame
  readonly signed: Signed
  readonly merchants: ReadonlyArray<Merchant.WithOutlets>
}) => {
  const { lang, root } = p.frame
  return (
    <>
      <Table
        label={c(lang, "merchants")}
        head={[c(lang, "name"), c(lang, "outlets"), "id"]}
        rows={p.merchants.map(({ merchant, outlets }) => [
          <a href={`${root}/merchants/${merchant.id}`}>
            <Given text={merchant.name} />
          </a>,
          String(outlets.length),
          // The first characters: the whole id is on the merchant's page (a phone has no room for it here).
          <Ltr>
            <code>{short(merchant.id)}</code>
          </Ltr>
        ])}
        empty={c(lang, "noMerchants")}
      />
      {Role.operatorCan(p.signed.role, "merchants:manage") ? (
        <>
          <h2>{c(lang, "createMerchant")}</h2>
          <form method="post" action={`${root}/merchants`}>
            <Csrf token={p.frame.csrf} />
            <Field id="name" label={c(lang, "name")} />
            <Field id="outlet" label={c(lang, "firstOutlet")} required={false} />
            <Submit label={c(lang, "createMerchant")} />
          </form>
        </>
      ) : null}
    </>
  )
}

export const MerchantPage = (p: {
  readonly frame: Frame
  readonly signed: Signed
  readonly merchant: Merchant.Merchant
  readonly outlets: ReadonlyArray<Merchant.Outlet>
  readonly keys: ReadonlyArray<ApiKey.StoredKey>
  /** A key just issued, shown this once. */
  readonly issued?: string | undefined
}) => {
  const { lang, root } = p.frame
  const base = `${root}/merchants/${p.merchant.id}`
  const can = (permission: Role.OperatorPermission) => Role.operatorCan(p.signed.role, permission)
  return (
    <>
      {/* `code` isolates the id left to right and may break it: a phone has no room for it whole. */}
      <p>
        <code>{p.merchant.id}</code>
      </p>
      <h2>{c(lang, "outlets")}</h2>
      <Table
        label={c(lang, "outlets")}
        head={["#", c(lang, "name")]}
        rows={p.outlets.map((o) => [<Ltr>{String(o.id)}</Ltr>, <Given text={o.name} />])}
        empty={c(lang, "noOutlets")}
      />
      {can("merchants:manage") ? (
        <form method="post" action={`${base}/outlets`}>
          <Csrf token={p.frame.csrf} />
          <Field id="outlet" label={c(lang, "outlet")} />
          <Submit label={c(lang, "addOutlet")} />
        </form>
      ) : null}
      <h2>{c(lang, "keys")}</h2>
      <Keys
        frame={p.frame}
        keys={p.keys}
        created={p.issued}
        base={base}
        manage={can("keys:manage")}
        issue={
          can("keys:manage") ? (
            <form method="post" action={`${base}/keys`}>
              <Csrf token={p.frame.csrf} />
              <EnvironmentSelect frame={p.frame} id="key-environment" />
              <label for="key-kind">{c(lang, "kind")}</label>
              <select id="key-kind" name="kind">
                <option value="secret">secret</option>
                <option value="publishable">publishable</option>
              </select>
              <Submit label={c(lang, "issueKey")} />
            </form>
          ) : null
        }
      />
      <h2>{c(lang, "features")}</h2>
      <form method="post" action={`${base}/features`}>
        <Csrf token={p.frame.csrf} />
        {(
          [
            ["mandates_live", "mandatesLive", p.merchant.features.mandatesLive],
            ["subscriptions_live", "subscriptionsLive", p.merchant.features.subscriptionsLive]
          ] as const
        ).map(([name, word, on]) => (
          <p key={name}>
            <input
              id={name}
              name={name}
              type="checkbox"
              value="on"
              checked={on}
              disabled={!can("features:manage")}
            />{" "}
            <label for={name}>{c(lang, word)}</label>
          </p>
        ))}
        {/* Unchecked boxes are not posted: this says the form holds both gates. */}
        <input type="hidden" name="gates" value="1" />
        {can("features:manage") ? <Submit label={c(lang, "saveFeatures")} /> : null}
      </form>
    </>
  )
}

export interface FoundCustomer {
  readonly id: string
  readonly phone: string
  readonly name: string | null
  readonly environment: string
  readonly balance: number | null
}

export const Customers = (p: {
  readonly frame: Frame
  readonly signed: Signed
  readonly phone: string
  readonly found: FoundCustomer | undefined
}) => {
  const { lang, root } = p.frame
  return (
    <>
      <form method="get" action={`${root}/customers`}>
        <Field id="phone" label={c(lang, "phone")} numeric value={p.phone} />
        <EnvironmentSelect frame={p.frame} id="lookup-environment" />
        <Submit label={c(lang, "lookUp")} />
      </form>
      {p.found === undefined ? (
        p.phone === "" ? null : (
          <p class="note">{c(lang, "noCustomer")}</p>
        )
      ) : (
        <Table
          label={c(lang, "customers")}
          head={["id", c(lang, "name"), c(lang, "phone"), c(lang, "environment"), d(lang, "balance")]}
          rows={[
            [
              <Ltr>
                <code>{p.found.id}</code>
              </Ltr>,
              <Given text={p.found.name} />,
              <Ltr>{p.found.phone}</Ltr>,
              p.found.environment,
              p.found.balance === null ? null : <Ltr>{money(p.found.balance)}</Ltr>
            ]
          ]}
          empty=""
        />
      )}
      {Role.operatorCan(p.signed.role, "customers:manage") ? (
        <>
          <h2>{c(lang, "createCustomer")}</h2>
          <form method="post" action={`${root}/customers`}>
            <Csrf token={p.frame.csrf} />
            <Field id="new-phone" label={c(lang, "phone")} numeric />
            <Field id="new-name" label={c(lang, "name")} required={false} />
            <Field id="new-balance" label={c(lang, "balance")} numeric required={false} />
            <EnvironmentSelect frame={p.frame} id="new-environment" />
            <Submit label={c(lang, "createCustomer")} />
          </form>
        </>
      ) : null}
    </>
  )
}

export const Suspensions = (p: { readonly frame: Frame; readonly signed: Signed }) => {
  const { lang, root } = p.frame
  return (
    <>
      <p class="note">{c(lang, "suspensionsNote")}</p>
      {Role.operatorCan(p.signed.role, "suspensions:manage") ? (
        <form method="post" action={`${root}/suspensions`}>
          <Csrf token={p.frame.csrf} />
          <Field id="mandate" label={c(lang, "mandateId")} ltr />
          <Submit label={c(lang, "suspend")} />
        </form>
      ) : null}
    </>
  )
}

export const Clock = (p: {
  readonly frame: Frame
  readonly signed: Signed
  readonly now: string
  readonly mode: "system" | "manual"
}) => {
  const { lang, root } = p.frame
  return (
    <>
      <p>
        {c(lang, "now")}:{" "}
        <Ltr>
          <code id="clock-now">{p.now}</code>
        </Ltr>{" "}
        · {c(lang, "mode")}: <code>{p.mode}</code>
      </p>
      {p.mode === "manual" && Role.operatorCan(p.signed.role, "clock:manage") ? (
        <form method="post" action={`${root}/clock`}>
          <Csrf token={p.frame.csrf} />
          <Field id="seconds" label={c(lang, "advanceBy")} numeric />
          <Submit label={c(lang, "advance")} />
        </form>
      ) : p.mode === "system" ? (
        <p class="note">{c(lang, "notManual")}</p>
      ) : null}
    </>
  )
}
