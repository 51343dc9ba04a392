/**
 * A team in a real browser, end to end: the owner invites a finance member from the Team page; the
 * invitation's link (read as a development start shows it) opens the accept page, where the new member
 * chooses a password; they sign in, set up an authenticator with a code computed here, refund a payment,
 * and are refused the keys page by name. Both changes are in the merchant's audit log as the people who
 * made them, and `audit verify` finds the chains intact. Then the owner changes the member's role, and
 * hands ownership on.
 */
import type { Page } from "playwright-core"
import { describe, expect, it, vi } from "vitest"
import * as B from "../support/Browser.js"
import * as People from "../support/DashboardPeople.js"
import * as F from "../support/Fixtures.js"
import { newPage, server, start } from "../support/HostedPages.js"

B.requireOrWarn("the dashboard team's browser tests")
vi.setConfig({ testTimeout: 120_000 })
start()

const signedInPage = async (person: People.SignedInPerson, path: string): Promise<Page> => {
  const { page } = await newPage()
  await page.context().addCookies(People.browserCookies(server.baseUrl, person))
  await page.goto(`${server.baseUrl}${path}`)
  return page
}

describe.skipIf(!B.available)("a merchant's team", () => {
  it("invites a finance member who joins, enrols, refunds, cannot make a key, and both are audited", async () => {
    const name = F.unique("Cafe")
    const m = await F.merchant(server, { name })
    const mandate = await server.request("POST", "/mandates", { key: m.test, body: F.mandateBody() })
    const charge = await server.request("POST", `/mandates/${mandate.body.id}/charges`, {
      key: m.test,
      body: { amount: 6_000 }
    })
    expect(charge.status, charge.text).toBe(201)
    const owner = await People.signIn(server, m.id, "owner")
    const page = await signedInPage(owner, "/dashboard/team")
    await page.getByRole("heading", { name: "Team", exact: true }).waitFor()
    // The roles' matrix, on the page.
    expect(await page.locator("table[aria-label='Roles and their permissions'] tbody tr").count()).toBe(12)
    const email = `finance-${Date.now()}@example.mv`
    await page.getByLabel("Email address").fill(email)
    await page.locator("#invite-role").selectOption("finance")
    await page.getByRole("button", { name: "Invite", exact: true }).click()
    // No notification channel on this server: the inviter is shown the link, once, to hand over.
    await page.getByText(`Invitation made for ${email}.`, { exact: false }).waitFor()
    await B.capture(page, "dashboard-team")
    const shown = /http\S+\/dashboard\/invitations\/[A-Za-z0-9_-]{43}/.exec(
      (await page.textContent("main"))!
    )![0]
    // The same link as a development start reads for the operator.
    const pending = await server.ops("GET", `/ops/users/invitations?merchant_id=${m.id}`)
    expect(pending.status, pending.text).toBe(200)
    const link = (pending.body as Array<{ email: string; link: string }>).find((i) => i.email === email)!.link
    expect(shown).toBe(link)
    // Shown only in the answer to the invitation: not on the team page again.
    await page.goto(`${server.baseUrl}/dashboard/team`)
    expect(await page.textContent("main")).not.toContain(link)
    const path = new URL(link).pathname

    // The new member: the link, a password (a common one refused), then sign-in.
    const { page: member } = await newPage()
    await member.goto(`${server.baseUrl}${path}`)
    await member.getByRole("heading", { name: `Join ${name}` }).waitFor()
    await B.capture(member, "dashboard-invitation")
    await member.getByLabel("Password", { exact: true }).fill("password1234")
    await member.getByLabel("Repeat the new password").fill("password1234")
    await member.getByRole("button", { name: "Accept the invitation" }).click()
    await member.locator(".error, [role=alert]").first().waitFor()
    const chosen = "tide pools under a pale moon"
    await member.getByLabel("Password", { exact: true }).fill(chosen)
    await member.getByLabel("Repeat the new password").fill(chosen)
    await member.getByRole("button", { name: "Accept the invitation" }).click()
    await member.getByText(`You have joined ${name}. Sign in to go on.`).waitFor()
    // The link worked once.
    const again = await member.goto(`${server.baseUrl}${path}`)
    expect(again?.status()).toBe(404)
    await member.goto(`${server.baseUrl}/dashboard`)
    await member.getByLabel("Email address").fill(email)
    await member.getByLabel("Password").fill(chosen)
    await member.getByRole("button", { name: "Sign in" }).click()
    await member.getByRole("heading", { name: "Mandates" }).waitFor()

    // Two-factor, offered to a finance member: set up from the account page, with a computed code.
    await member.getByRole("link", { name: "Account" }).click()
    await member.getByRole("link", { name: "Set up two-factor sign-in" }).click()
    const secret = (await member.locator("#totp-secret").textContent())!.trim()
    await member.getByLabel("Code").fill("000000")
    await member.getByRole("button", { name: "Verify" }).click()
    await member.getByText("That email, password or code is not right.").waitFor()
    const secret2 = (await member.locator("#totp-secret").textContent())!.trim()
    await member.getByLabel("Code").fill(People.totp(secret2))
    await member.getByRole("button", { name: "Verify" }).click()
    await member.getByRole("heading", { name: "Recovery codes" }).waitFor()
    const codes = await member.locator("ul.codes li").allTextContents()
    expect(codes).toHaveLength(10)
    expect(secret2).not.toBe(secret)
    await member.getByRole("link", { name: "Continue" }).click()
    await member.getByRole("heading", { name: "Mandates" }).waitFor()

    // The refund, from the mandate's page.
    await member.goto(`${server.baseUrl}/dashboard/mandates/${mandate.body.id}`)
    await member.getByRole("link", { name: /^Refund: / }).click()
    await member.getByLabel("Amount to refund (MVR)").fill("15.00")
    await member.getByRole("button", { name: "Confirm refund" }).click()
    await member.getByText("Refunded MVR 15.00 to the customer's wallet.").waitFor()
    // No key for finance: no link to the section, and its page and post refused by name.
    expect(await member.getByRole("link", { name: "API keys" }).count()).toBe(0)
    const keys = await member.goto(`${server.baseUrl}/dashboard/keys`)
    expect(keys?.status()).toBe(403)
    await member.getByText("Your role lacks the keys:manage permission.").waitFor()
    const csrf = await member.locator("input[name=_csrf]").first().inputValue()
    const made = await member.request.post(`${server.baseUrl}/dashboard/keys`, { form: { _csrf: csrf } })
    expect(made.status()).toBe(403)

    // The owner's page: the team has both, the finance member with two-factor on.
    await page.reload()
    const team = (await page.textContent("table[aria-label=Team]"))!
    expect(team).toContain(email)
    expect(team).toContain("finance")

    // The audit log: the invitation by the owner, the refund by the member, as people.
    const log = await server.request("GET", "/audit-events?limit=100", { key: m.test })
    expect(log.status, log.text).toBe(200)
    const rows = log.body.data as Array<any>
    const memberId = (await server.ops("GET", `/ops/users?merchant_id=${m.id}`)).body.find(
      (u: any) => u.email === email
    ).user_id as string
    const invite = rows.find((r) => r.action === "member.invite")
    expect(invite.actor).toEqual({ kind: "user", id: owner.userId })
    expect(JSON.stringify(invite.summary)).not.toContain(path.split("/").at(-1))
    const refund = rows.find((r) => r.action === "refund.create")
    expect(refund.actor).toEqual({ kind: "user", id: memberId })
    expect(refund.userAgent).toMatch(/Chrome/)
    expect(rows.some((r) => r.action === "api_key.create" && r.actor.id === memberId)).toBe(false)
    // The member's own authenticator and the owner's first password are theirs too.
    expect(
      rows.find((r) => r.action === "user.two_factor_enrol" && r.resource.id === memberId)?.actor
    ).toEqual({
      kind: "user",
      id: memberId
    })
    expect(
      rows.find((r) => r.action === "user.password_change" && r.resource.id === owner.userId)?.actor
    ).toEqual({
      kind: "user",
      id: owner.userId
    })
    const verified = await server.ops("POST", "/ops/audit/verify")
    expect(verified.status, verified.text).toBe(200)
    expect(verified.body.broken).toEqual([])

    // The owner makes the member support, then hands ownership on and is an admin.
    await page.goto(`${server.baseUrl}/dashboard/team`)
    const row = page.locator("table[aria-label=Team] tbody tr", { hasText: email })
    await row.locator("select[name=role]").selectOption("support")
    await row.getByRole("button", { name: "Change role" }).click()
    await page.getByText("Role changed.").waitFor()
    await page
      .locator("table[aria-label=Team] tbody tr", { hasText: email })
      .getByRole("button", { name: "Make owner, and become an admin" })
      .click()
    await page.getByText("Ownership transferred: you are an admin now.").waitFor()
    const after = (await server.ops("GET", `/ops/users?merchant_id=${m.id}`)).body as Array<any>
    expect(after.find((u) => u.email === email).role).toBe("owner")
    expect(after.find((u) => u.user_id === owner.userId).role).toBe("admin")
  })
})
