/**
 * The customer's wallet app in a real browser: signing in with a code, what the customer has and ending
 * it, paying QR codes, refunds in English and Dhivehi, and refusals without a session or CSRF token.
 * Screenshots at 375 and 1280 px go to `artifacts/screenshots`. The server runs on a fresh PostgreSQL
 * database with `DATABASE_URL`, else on PGlite.
 */
import type { Page } from "playwright-core"
import { describe, expect, it, vi } from "vitest"
import * as B from "../support/Browser.js"
import * as People from "../support/DashboardPeople.js"
import * as F from "../support/Fixtures.js"
import { lastCode, liveMerchant, newPage, server, start } from "../support/HostedPages.js"

B.requireOrWarn("the wallet app's browser tests")
// A browser drives each flow end to end, result pages wait 3 s before sending the customer on.
// A browser driving a server: a minute and a half leaves room for a 2-core machine shared with a CPU hog.
vi.setConfig({ testTimeout: 90_000 })
start()

describe.skipIf(!B.available)("wallet app", () => {
  /** A live customer with an approved mandate and a paid subscription with one merchant. */
  const customerWithThings = async () => {
    const m = await liveMerchant({ mandates_live: true, subscriptions_live: true })
    const customer = await F.customer(server, { balance: 200_000 })
    const created = await server.request("POST", "/mandates", {
      key: m.live,
      body: F.mandateBody({ title: "Daily coffee", per_charge_cap: 5_000 })
    })
    const mandateId = created.body.id as string
    const c1 = await server.request("POST", `/approvals/mandates/${mandateId}/challenge`, {
      body: { phone: customer.phone }
    })
    await server.request("POST", `/approvals/mandates/${mandateId}/approve`, {
      body: { challenge_id: c1.body.challenge_id, otp: await lastCode(customer.id) }
    })
    const charge = await server.request("POST", `/mandates/${mandateId}/charges`, {
      key: m.live,
      body: { amount: 1_500 }
    })
    expect(charge.status).toBe(201)
    const s = await server.request("POST", "/checkout/sessions", {
      key: m.live,
      body: {
        mode: "SUBSCRIPTION",
        reference: F.unique("sub"),
        title: "Gym",
        price_data: { name: "Gold gym", amount: 25_000, interval: "MONTH" }
      }
    })
    const c2 = await server.request("POST", `/approvals/checkout/${s.body.id}/challenge`, {
      body: { phone: customer.phone }
    })
    const paid = await server.request("POST", `/approvals/checkout/${s.body.id}/pay`, {
      body: { challenge_id: c2.body.challenge_id, otp: await lastCode(customer.id) }
    })
    expect(paid.status, paid.text).toBe(200)
    return {
      m,
      customer,
      mandateId,
      chargeId: charge.body.id as string,
      subscriptionId: paid.body.subscriptionId as string
    }
  }

  const signIn = async (page: Page, customer: { id: string; phone: string }) => {
    await page.goto(`${server.baseUrl}/wallet`)
    await B.capture(page, "wallet-sign-in")
    await page.getByLabel("Phone number").fill(customer.phone)
    await page.getByRole("button", { name: "Send code" }).click()
    // The code is in the wallet's notifications, where the app would show it.
    await page.getByLabel("One-time code").fill(await lastCode(customer.id))
    await page.getByRole("button", { name: "Sign in" }).click()
    await page.getByRole("heading", { name: "Your wallet" }).waitFor()
  }

  it("signs in with a code, lists what the customer has, and ends a mandate and a subscription", async () => {
    const { m, customer, mandateId, subscriptionId } = await customerWithThings()
    const { page } = await newPage()
    await signIn(page, customer)
    const text = await page.textContent("main")
    for (const shown of [
      "Daily coffee",
      "Gold gym",
      "MVR 250.00 every month",
      "MVR 15.00",
      "Your laari code"
    ])
      expect(text).toContain(shown)
    await B.capture(page, "wallet-home")

    await page.getByRole("button", { name: "Revoke: Daily coffee" }).click()
    await page.getByRole("button", { name: "Yes, revoke" }).click()
    await page.getByText("The mandate is revoked").waitFor()
    expect(await page.textContent("#mandates ~ *")).not.toContain("Daily coffee")
    const refused = await server.request("POST", `/mandates/${mandateId}/charges`, {
      key: m.live,
      body: { amount: 500 }
    })
    expect(refused.status).toBe(409)
    const mandate = await server.request("GET", `/mandates/${mandateId}`, { key: m.live })
    expect(mandate.body).toMatchObject({ status: "REVOKED" })

    await page.getByRole("button", { name: "Cancel subscription: Gold gym" }).click()
    await page.getByRole("button", { name: "Yes, cancel subscription" }).click()
    await page.getByText("The subscription is cancelled.").waitFor()
    const sub = await server.request("GET", `/subscriptions/${subscriptionId}`, { key: m.live })
    expect(sub.body).toMatchObject({ status: "CANCELLED", cancellationInitiator: "PAYER" })

    await page.getByRole("button", { name: "Sign out" }).click()
    await page.getByRole("heading", { name: "Sign in to your wallet" }).waitFor()
    await page.goto(`${server.baseUrl}/wallet`)
    await page.getByRole("heading", { name: "Sign in to your wallet" }).waitFor()
  })

  it("pays a static and a dynamic QR code and records the qrid", async () => {
    const { m, customer } = await customerWithThings()
    const staticCode = await server.request("POST", "/qr-codes", {
      key: m.live,
      body: { outlet_id: m.outletId, type: "STATIC", title: "Counter" }
    })
    expect(staticCode.status, staticCode.text).toBe(201)
    const dynamicCode = await server.request("POST", "/qr-codes", {
      key: m.live,
      body: { outlet_id: m.outletId, type: "DYNAMIC", amount: 4_250 }
    })
    const { page } = await newPage()
    await signIn(page, customer)
    await page.getByLabel("QR payload").fill(staticCode.body.payload)
    await page.getByLabel("Amount (MVR)").fill("25.50")
    await page.getByRole("button", { name: "Pay", exact: true }).click()
    await page.getByText(`Paid MVR 25.50. Reference ${staticCode.body.qrid}.`).waitFor()
    await page.getByLabel("QR payload").fill(dynamicCode.body.payload)
    await page.getByRole("button", { name: "Pay", exact: true }).click()
    await page.getByText(`Paid MVR 42.50. Reference ${dynamicCode.body.qrid}.`).waitFor()
    await B.capture(page, "wallet-qr-paid")
    // The same rules as every QR payment: a dynamic code is paid once.
    await page.getByLabel("QR payload").fill(dynamicCode.body.payload)
    await page.getByRole("button", { name: "Pay", exact: true }).click()
    await page.getByRole("alert").waitFor()
    await page.getByLabel("QR payload").fill(staticCode.body.payload)
    await page.getByLabel("Amount (MVR)").fill("12,5")
    await page.getByRole("button", { name: "Pay", exact: true }).click()
    await page.getByText("Type the amount in MVR").waitFor()
    const events = await F.events(server, m.id, "qr_code.payment.succeeded")
    expect(events.map((e) => [e.data.object.qrid, e.data.object.amount]).sort()).toEqual(
      [
        [staticCode.body.qrid, 2_550],
        [dynamicCode.body.qrid, 4_250]
      ].sort()
    )
  })

  it("shows what was refunded of a charge and of an invoice, in English and Dhivehi", async () => {
    const { m, customer, chargeId, subscriptionId } = await customerWithThings()
    const refund = await server.request("POST", "/refunds", {
      key: m.live,
      body: { charge_id: chargeId, amount: 500 }
    })
    expect(refund.status, refund.text).toBe(201)
    // The invoice through the dashboard's confirmation step.
    const { page } = await newPage()
    const finance = await People.signIn(server, m.id, "finance", { environment: "live" })
    await page.context().addCookies(People.browserCookies(server.baseUrl, finance))
    await page.goto(`${server.baseUrl}/dashboard/subscriptions/${subscriptionId}`)
    await page.getByRole("link", { name: /^Refund: / }).click()
    await page.getByRole("heading", { name: "Refund an invoice" }).waitFor()
    expect(await page.getByLabel("Amount to refund (MVR)").inputValue()).toBe("250.00")
    await page.getByLabel("Amount to refund (MVR)").fill("25")
    await page.getByRole("button", { name: "Confirm refund" }).click()
    await page.getByText("Refunded MVR 25.00 to the customer's wallet.").waitFor()
    expect(await page.textContent("table[aria-label=Invoices]")).toContain("MVR 25.00")
    await signIn(page, customer)
    expect(await page.textContent("#payments ~ ul")).toMatch(/MVR 15\.00.*Refunded MVR 5\.00/)
    expect(await page.textContent("#invoices ~ ul")).toContain("Refunded MVR 25.00")
    // The customer is notified of each refund (core's Notifications port), in the wallet's notices.
    const notices = await page.textContent("#notifications ~ ul")
    expect(notices).toMatch(/refunded MVR 5\.00 to your wallet\./)
    expect(notices).toMatch(/refunded MVR 25\.00 to your wallet\./)
    await B.capture(page, "wallet-refunded")
    await page.goto(`${server.baseUrl}/wallet?lang=dv`)
    expect(await page.textContent("#payments ~ ul")).toContain("MVR 5.00 ރީފަންޑްކުރި")
    expect(await page.textContent("#notifications ~ ul")).toContain("ވޯލެޓަށް MVR 25.00 އަނބުރާ ދީފި")
    await page.goto(`${server.baseUrl}/wallet?lang=en`)
  })

  it("refuses actions without a session or a CSRF token", async () => {
    const res = await fetch(`${server.baseUrl}/wallet/mandates/00000000-0000-4000-8000-000000000000/revoke`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "",
      redirect: "manual"
    })
    expect(res.status).toBe(403)
  })
})
