/**
 * The dashboard's pages for people: signing in and each step after the password (a new password, setting
 * up an authenticator, its code), an invitation's page, and the bodies of the team, account and keys
 * sections. Every value a person typed is text, escaped by preact.
 */
import { type ApiKey, Person, Role } from "@laari/core"
import type { DateTime } from "effect"
import type { ComponentChildren } from "preact"
import type { Signed } from "./DashboardAccess.js"
import { d, dn } from "./DashboardText.js"
import { type Frame, Table } from "./DashboardViews.js"
import { Csrf, Given, Ltr, Messages, Page, When } from "./Html.js"

/** A page of its own (no sections): a sign-in step or an invitation. */
const Alone = (p: {
  readonly frame: Frame
  readonly path: string
  readonly title: string
  /** The heading, when it holds more than the title's text (a name someone gave). */
  readonly heading?: ComponentChildren
  readonly note?: string | undefined
  readonly notice?: string | undefined
  readonly error?: string | undefined
  readonly children?: ComponentChildren
}) => (
  <Page lang={p.frame.lang} title={p.title} path={p.path} assets={p.frame.assets}>
    <section class="card" aria-labelledby="heading">
      <h1 id="heading">{p.heading ?? p.title}</h1>
      {p.note === undefined ? null : <p class="note">{p.note}</p>}
      <Messages notice={p.notice} error={p.error} />
      {p.children}
    </section>
  </Page>
)

/** The code of an authenticator (or, at sign-in, a recovery code), posted to `action`. */
const CodeForm = (p: { readonly frame: Frame; readonly action: string }) => (
  <form method="post" action={p.action}>
    <Csrf token={p.frame.csrf} />
    <label for="code">{d(p.frame.lang, "code")}</label>
    <input
      id="code"
      name="code"
      type="text"
      autocomplete="one-time-code"
      required
      maxlength={32}
      dir="ltr"
      spellcheck={false}
    />
    <Submit label={d(p.frame.lang, "verify")} />
  </form>
)

/** A password field: a new one (twelve characters at least) or the current one. */
const PasswordInput = (p: { readonly id: string; readonly label: string; readonly fresh: boolean }) => (
  <>
    <label for={p.id}>{p.label}</label>
    <input
      id={p.id}
      name={p.id}
      type="password"
      autocomplete={p.fresh ? "new-password" : "current-password"}
      required
      minlength={p.fresh ? 12 : undefined}
      maxlength={1024}
    />
  </>
)

const Submit = (p: { readonly label: string }) => (
  <div class="actions">
    <button type="submit">{p.label}</button>
  </div>
)

export const SignIn = (p: {
  readonly frame: Frame
  readonly error?: string | undefined
  readonly notice?: string | undefined
  /** The address typed before a refusal, kept in its field. */
  readonly email?: string | undefined
}) => (
  <Alone
    frame={p.frame}
    path={p.frame.root}
    title={p.frame.title ?? d(p.frame.lang, "title")}
    note={d(p.frame.lang, "signInNote")}
    error={p.error}
    notice={p.notice}
  >
    <form method="post" action={`${p.frame.root}/sign-in`}>
      <Csrf token={p.frame.csrf} />
      <label for="email">{d(p.frame.lang, "email")}</label>
      <input
        id="email"
        name="email"
        type="email"
        autocomplete="username"
        required
        maxlength={254}
        dir="ltr"
        value={p.email}
      />
      <PasswordInput id="password" label={d(p.frame.lang, "password")} fresh={false} />
      <Submit label={d(p.frame.lang, "signIn")} />
    </form>
  </Alone>
)

export const TwoFactor = (p: { readonly frame: Frame; readonly error?: string | undefined }) => (
  <Alone
    frame={p.frame}
    path={`${p.frame.root}/two-factor`}
    title={d(p.frame.lang, "twoFactorTitle")}
    note={d(p.frame.lang, "twoFactorNote")}
    error={p.error}
  >
    <CodeForm frame={p.frame} action={`${p.frame.root}/two-factor`} />
  </Alone>
)

export const Enrol = (p: {
  readonly frame: Frame
  readonly secret: string
  /** The `otpauth://` URI as a PNG data URL. */
  readonly image: string
  readonly required: boolean
  readonly error?: string | undefined
}) => (
  <Alone
    frame={p.frame}
    path={`${p.frame.root}/two-factor/enrol`}
    title={d(p.frame.lang, "enrolTitle")}
    note={d(p.frame.lang, "enrolNote")}
    notice={p.required ? d(p.frame.lang, "enrolRequired") : undefined}
    error={p.error}
  >
    <figure class="qr">
      <img class="qr" src={p.image} alt={d(p.frame.lang, "totpQr")} width={224} height={224} />
    </figure>
    <p>
      {d(p.frame.lang, "totpSecret")}:{" "}
      <Ltr>
        <code id="totp-secret">{p.secret}</code>
      </Ltr>
    </p>
    <CodeForm frame={p.frame} action={`${p.frame.root}/two-factor/enrol`} />
  </Alone>
)

export const RecoveryCodes = (p: { readonly frame: Frame; readonly codes: ReadonlyArray<string> }) => (
  <Alone
    frame={p.frame}
    path={`${p.frame.root}/two-factor/enrol`}
    title={d(p.frame.lang, "recoveryTitle")}
    note={d(p.frame.lang, "recoveryNote")}
  >
    <ul class="codes" aria-label={d(p.frame.lang, "recoveryTitle")}>
      {p.codes.map((c) => (
        <li key={c}>
          <Ltr>
            <code>{c}</code>
          </Ltr>
        </li>
      ))}
    </ul>
    <p>
      <a href={`${p.frame.root}${p.frame.home ?? "/mandates"}`}>{d(p.frame.lang, "continue")}</a>
    </p>
  </Alone>
)

/** The new-password form: at the `change_password` step (alone) or from the account page. */
export const PasswordForm = (p: { readonly frame: Frame }) => (
  <form method="post" action={`${p.frame.root}/password`}>
    <Csrf token={p.frame.csrf} />
    <PasswordInput id="current" label={d(p.frame.lang, "currentPassword")} fresh={false} />
    <PasswordInput id="next" label={d(p.frame.lang, "newPassword")} fresh />
    <PasswordInput id="repeat" label={d(p.frame.lang, "repeatPassword")} fresh />
    <Submit label={d(p.frame.lang, "changePassword")} />
  </form>
)

export const Password = (p: { readonly frame: Frame; readonly error?: string | undefined }) => (
  <Alone
    frame={p.frame}
    path={`${p.frame.root}/password`}
    title={d(p.frame.lang, "passwordTitle")}
    note={d(p.frame.lang, "passwordNote")}
    notice={d(p.frame.lang, "mustChange")}
    error={p.error}
  >
    <PasswordForm frame={p.frame} />
  </Alone>
)

export const Invitation = (p: {
  readonly frame: Frame
  readonly token: string
  readonly merchant: string
  readonly role: Role.MerchantRole
  readonly email: string
  readonly existing: boolean
  readonly error?: string | undefined
}) => (
  <Alone
    frame={p.frame}
    path={`${p.frame.root}/invitations/${p.token}`}
    title={d(p.frame.lang, "invitationTitle", { merchant: p.merchant })}
    heading={dn(p.frame.lang, "invitationTitle", { merchant: <Given text={p.merchant} /> })}
    note={d(p.frame.lang, p.existing ? "invitationExisting" : "invitationNote", { role: p.role })}
    error={p.error}
  >
    <p>
      <bdi dir="ltr">
        <Given text={p.email} />
      </bdi>
    </p>
    <form method="post" action={`${p.frame.root}/invitations/${p.token}`}>
      <Csrf token={p.frame.csrf} />
      <PasswordInput id="password" label={d(p.frame.lang, "password")} fresh={!p.existing} />
      {p.existing ? null : <PasswordInput id="repeat" label={d(p.frame.lang, "repeatPassword")} fresh />}
      <Submit label={d(p.frame.lang, "accept")} />
    </form>
  </Alone>
)

/** A message on a page of its own: an invitation gone or accepted. */
export const Said = (p: {
  readonly frame: Frame
  readonly path: string
  readonly title: string
  readonly notice?: string | undefined
  readonly error?: string | undefined
}) => (
  <Alone frame={p.frame} path={p.path} title={p.title} notice={p.notice} error={p.error}>
    <p>
      <a href={p.frame.root}>{d(p.frame.lang, "signIn")}</a>
    </p>
  </Alone>
)

/** A small form posting one button to `action`, with hidden fields. */
export const Button = (p: {
  readonly frame: Frame
  readonly action: string
  readonly label: string
  readonly fields?: Readonly<Record<string, string>>
  readonly secondary?: boolean
}) => (
  <form method="post" action={p.action} class="inline">
    <Csrf token={p.frame.csrf} />
    {Object.entries(p.fields ?? {}).map(([name, value]) => (
      <input key={name} type="hidden" name={name} value={value} />
    ))}
    <button type="submit" class={p.secondary === false ? undefined : "secondary"}>
      {p.label}
    </button>
  </form>
)

const RoleSelect = (p: {
  readonly id: string
  readonly selected?: Role.MerchantRole
  readonly label: string
}) => (
  <select id={p.id} name="role" aria-label={p.label}>
    {Role.merchantRoles.map((r) => (
      <option key={r} value={r} selected={r === p.selected}>
        {r}
      </option>
    ))}
  </select>
)

export const Team = (p: {
  readonly frame: Frame
  readonly signed: Signed
  readonly members: ReadonlyArray<Person.Member>
  readonly invitations: ReadonlyArray<Person.Invitation>
  readonly now: DateTime.Utc
}) => {
  const { lang, root } = p.frame
  const manage = Role.can(p.signed.role, "team:manage")
  const transfer = Role.can(p.signed.role, "ownership:transfer")
  return (
    <>
      <Table
        label={d(lang, "team")}
        head={[
          d(lang, "member"),
          d(lang, "role"),
          d(lang, "twoFactor"),
          ...(manage ? [d(lang, "changeRole"), ""] : [])
        ]}
        rows={p.members.map((m, i) => [
          <>
            <bdi dir="ltr">
              <Given text={m.email} />
            </bdi>
            {m.userId === p.signed.user.id ? ` (${d(lang, "you")})` : null}
          </>,
          m.role,
          d(lang, m.twoFactor ? "on" : "off"),
          ...(manage
            ? [
                <form method="post" action={`${root}/team/members/${m.userId}/role`} class="inline">
                  <Csrf token={p.frame.csrf} />
                  <RoleSelect id={`role-${i}`} selected={m.role} label={`${d(lang, "role")}: ${m.email}`} />{" "}
                  <button type="submit" class="secondary">
                    {d(lang, "changeRole")}
                  </button>
                </form>,
                <>
                  <Button
                    frame={p.frame}
                    action={`${root}/team/members/${m.userId}/remove`}
                    label={d(lang, "removeMember")}
                  />
                  {transfer && m.role !== "owner" ? (
                    <Button
                      frame={p.frame}
                      action={`${root}/team/members/${m.userId}/ownership`}
                      label={d(lang, "transferOwnership")}
                    />
                  ) : null}
                </>
              ]
            : [])
        ])}
        empty=""
      />
      {manage ? (
        <>
          <h2>{d(lang, "inviteTitle")}</h2>
          <form method="post" action={`${root}/team/invitations`}>
            <Csrf token={p.frame.csrf} />
            <label for="invite-email">{d(lang, "email")}</label>
            <input id="invite-email" name="email" type="email" required maxlength={254} dir="ltr" />
            <label for="invite-role">{d(lang, "role")}</label>
            <RoleSelect id="invite-role" selected="viewer" label={d(lang, "role")} />
            <Submit label={d(lang, "invite")} />
          </form>
          <h2>{d(lang, "invitations")}</h2>
          <Table
            label={d(lang, "invitations")}
            head={[d(lang, "email"), d(lang, "role"), d(lang, "state"), d(lang, "expires"), ""]}
            rows={p.invitations.map((inv) => {
              const state = Person.invitationState(inv, p.now)
              return [
                <bdi dir="ltr">
                  <Given text={inv.email} />
                </bdi>,
                inv.role,
                state,
                <When at={inv.expiresAt} />,
                state === "pending" ? (
                  <Button
                    frame={p.frame}
                    action={`${root}/team/invitations/${inv.id}/revoke`}
                    label={d(lang, "revoke")}
                  />
                ) : null
              ]
            })}
            empty={d(lang, "noInvitations")}
          />
        </>
      ) : null}
      <h2>{d(lang, "roles")}</h2>
      <Table
        label={d(lang, "roles")}
        head={[d(lang, "permission"), ...Role.merchantRoles]}
        rows={Role.permissions.map((permission) => [
          <code>{permission}</code>,
          ...Role.merchantRoles.map((r) => (Role.can(r, permission) ? "✓" : "—"))
        ])}
        empty=""
      />
    </>
  )
}

export const Account = (p: {
  readonly frame: Frame
  /** The person and this session (the dashboard's or the operator console's). */
  readonly signed: Pick<Signed, "user" | "session">
  readonly sessions: ReadonlyArray<Person.Session>
}) => {
  const { lang, root } = p.frame
  return (
    <>
      <p>
        {p.signed.user.twoFactor ? (
          d(lang, "twoFactorOn")
        ) : (
          <a href={`${root}/two-factor/enrol`}>{d(lang, "setUpTwoFactor")}</a>
        )}
      </p>
      <h2>{d(lang, "sessionsTitle")}</h2>
      <Table
        label={d(lang, "sessionsTitle")}
        head={[d(lang, "signedIn"), d(lang, "lastSeen"), d(lang, "address"), d(lang, "browser"), ""]}
        rows={p.sessions.map((s) => [
          <When at={s.signedInAt} />,
          <When at={s.lastSeenAt} />,
          <Ltr>
            <Given text={s.address} />
          </Ltr>,
          <Given text={s.userAgent} />,
          s.id === p.signed.session.id ? (
            d(lang, "thisSession")
          ) : (
            <Button
              frame={p.frame}
              action={`${root}/account/sessions/${s.id}/end`}
              label={d(lang, "endSession")}
            />
          )
        ])}
        empty=""
      />
      <h2>{d(lang, "changePassword")}</h2>
      <p class="note">{d(lang, "passwordNote")}</p>
      <PasswordForm frame={p.frame} />
    </>
  )
}

export const Keys = (p: {
  readonly frame: Frame
  readonly keys: ReadonlyArray<ApiKey.StoredKey>
  readonly created?: string | undefined
  /** Where the key actions post (`{base}/keys`, `{base}/keys/:id/revoke`); the dashboard's root by default. */
  readonly base?: string
  /** Whether revoke buttons are shown (the operator console's roles without `keys:manage` see none). */
  readonly manage?: boolean
  /** What issues a key, in place of the dashboard's one button (the console's form; `null`: nothing). */
  readonly issue?: ComponentChildren
}) => {
  const { lang } = p.frame
  const base = p.base ?? p.frame.root
  const manage = p.manage !== false
  return (
    <>
      {p.created === undefined ? null : (
        <p role="status">
          {d(lang, "keyCreated")}{" "}
          <Ltr>
            <code id="new-key">{p.created}</code>
          </Ltr>
        </p>
      )}
      <Table
        label={d(lang, "apiKeys")}
        head={[
          d(lang, "key"),
          d(lang, "kind"),
          d(lang, "scopes"),
          d(lang, "created"),
          d(lang, "revoked"),
          ""
        ]}
        rows={p.keys.map((k) => [
          <Ltr>
            <code>{k.keyPrefix}…</code>
          </Ltr>,
          k.kind,
          <code>{k.scopes.join(" ")}</code>,
          <When at={k.createdAt} />,
          k.revokedAt === null ? null : <When at={k.revokedAt} />,
          k.revokedAt === null && manage ? (
            <Button frame={p.frame} action={`${base}/keys/${k.id}/revoke`} label={d(lang, "revoke")} />
          ) : null
        ])}
        empty={d(lang, "noKeys")}
      />
      {p.issue === undefined ? (
        <Button frame={p.frame} action={`${base}/keys`} label={d(lang, "createKey")} secondary={false} />
      ) : (
        p.issue
      )}
    </>
  )
}
