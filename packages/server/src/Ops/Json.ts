/**
 * Read shapes of the operator API and the sandbox payer.
 */
import {
  type ApiKey,
  type Approval,
  Calendar,
  type Merchant,
  type Notifications,
  type OAuthClient,
  type People,
  type Person,
  type Wallet
} from "@laari/core"
import type * as Notices from "../People/Notices.js"
import type { InvitationRead, MemberRead, UserCreated, UserRead } from "./UsersApi.js"
import type {
  CodeRead,
  CustomerRead,
  KeyRead,
  MerchantRead,
  NotificationRead,
  OAuthClientRead
} from "./Api.js"

export const merchant = (
  m: Merchant.Merchant,
  outlets: ReadonlyArray<{ readonly id: number; readonly name: string }>
): typeof MerchantRead.Type => ({
  id: m.id,
  name: m.name,
  city: m.city,
  mcc: m.mcc,
  feeBps: m.feeBps,
  features: { mandatesLive: m.features.mandatesLive, subscriptionsLive: m.features.subscriptionsLive },
  outlets: outlets.map((o) => ({ id: o.id, name: o.name }))
})

export const key = (k: ApiKey.StoredKey): typeof KeyRead.Type => ({
  id: k.id,
  prefix: k.keyPrefix,
  environment: k.environment,
  kind: k.kind,
  scopes: k.scopes,
  createdAt: Calendar.formatMaldives(k.createdAt),
  revokedAt: k.revokedAt === null ? null : Calendar.formatMaldives(k.revokedAt)
})

export const oauthClient = (c: OAuthClient.Client): typeof OAuthClientRead.Type => ({
  client_id: c.clientId,
  name: c.name,
  environment: c.environment,
  scopes: c.scopes,
  createdAt: Calendar.formatMaldives(c.createdAt),
  revokedAt: c.revokedAt === null ? null : Calendar.formatMaldives(c.revokedAt)
})

export const payer = (a: Wallet.PayerAccount) => ({
  balance: a.balance,
  walletLimit: a.limit,
  frozen: a.frozen,
  blockedByRules: a.blockedByRules,
  timeZone: a.timeZone
})

export const customer = (c: Merchant.Customer, a: Wallet.PayerAccount): typeof CustomerRead.Type => ({
  id: c.id,
  environment: c.environment,
  phone: c.phone,
  name: c.name,
  ...payer(a)
})

/** One-time codes are shown only on a development start (`Config.codesVisible`); otherwise they stay in the wallet app. */
export const notification = (
  n: Notifications.Notification,
  showCodes: boolean
): typeof NotificationRead.Type => {
  const hide = n.kind === "one_time_code" && !showCodes
  const { code: _code, ...data } = n.data
  return {
    id: n.id,
    kind: n.kind,
    title: n.title,
    body: hide ? "A one-time code was sent to the wallet app." : n.body,
    data: hide ? data : n.data,
    createdAt: Calendar.formatMaldives(n.createdAt)
  }
}

/** A code still usable, from its notice (the only place its plaintext is kept) and its challenge. */
export const code = (n: Notifications.Notification, c: Approval.Challenge): typeof CodeRead.Type => ({
  code: String(n.data.code),
  subject_kind: c.subjectKind,
  subject_id: c.subjectId,
  expires_at: Calendar.formatMaldives(c.expiresAt)
})

export const user = (u: Person.User): typeof UserRead.Type => ({
  id: u.id,
  email: u.email,
  must_change_password: u.mustChangePassword,
  two_factor: u.twoFactor,
  operator_role: u.operatorRole
})

/** An account made or found by `People.createMember`/`createOperator`; `membership` for a team's. */
export const userCreated = (
  created: People.Created,
  membership: Pick<Person.Membership, "merchantId" | "role"> | undefined
): typeof UserCreated.Type => ({
  user: user(created.user),
  merchant_id: membership?.merchantId ?? null,
  role: membership?.role ?? null,
  password: created.password ?? null
})

export const member = (m: Person.Member): typeof MemberRead.Type => ({
  user_id: m.userId,
  email: m.email,
  role: m.role,
  two_factor: m.twoFactor,
  joined_at: Calendar.formatMaldives(m.createdAt)
})

/** A pending invitation as its notice keeps it: the link is readable only on a development start. */
export const invitation = (n: Notices.PendingInvitation): typeof InvitationRead.Type => ({
  id: n.invitationId,
  email: n.email,
  role: n.role,
  link: n.link,
  expires_at: Calendar.formatMaldives(n.expiresAt)
})
