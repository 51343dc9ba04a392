/**
 * The customer's hosted pages in a real browser: mandate approval and checkout, live and in
 * test mode, in English and Dhivehi; escaping, CSRF and framing. Screenshots at 375 and 1280 px go to
 * `artifacts/screenshots`. The servers run on fresh PostgreSQL databases with `DATABASE_URL`, else on PGlite.
 */
import { readFile } from "node:fs/promises"
import http from "node:http"
import type { Browser, BrowserContext, Page } from "playwright-core"
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest"
import * as B from "./support/Browser.js"
import * as F from "./support/Fixtures.js"
import * as PostgresServer from "./support/PostgresServer.js"
import * as TestServer from "./support/TestServer.js"

B.requireOrWarn("the hosted pages' browser tests")
// A browser drives each flow end to end, result pages wait 3 s before sending the customer on.
// A browser driving a server: a minute and a half leaves room for a 2-core machine shared with a CPU hog.
vi.setConfig({ testTimeout: 90_000 })

let server: TestServer.TestServer
/** For the form posts' limits, the one thing a server of its own is needed for (`rateLimit` is its config). */
let limited: TestServer.TestServer
let browser: Browser
let merchantSite: http.Server
let merchantOrigin: string

// Both servers and the browser start at once.
beforeAll(async () => {
  const launched = B.available ? B.launch().then((b) => (browser = b)) : undefined
  const [main, limit] = await Promise.allSettled([
    PostgresServer.startQuickest(),
    PostgresServer.startQuickest({ rateLimit: 100 })
  ])
  // Whichever started is closed by afterAll, even when the other did not.
  if (main.status === "fulfilled") server = main.value
  if (limit.status === "fulfilled") limited = limit.value
  for (const s of [main, limit]) if (s.status === "rejected") throw s.reason
  await launched
  // The merchant's site: where return URLs lead, and a page that tries to frame the approval page.
  merchantSite = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://merchant")
    if (url.pathname === "/frame")
      return res
        .writeHead(200, { "content-type": "text/html" })
        .end(`<!doctype html><iframe id="f" src="${url.searchParams.get("src")}"></iframe>`)
    res.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><h1>Back at the merchant</h1>")
  })
  await new Promise<void>((r) => merchantSite.listen(0, "127.0.0.1", r))
  merchantOrigin = `http://127.0.0.1:${(merchantSite.address() as { port: number }).port}`
}, 120_000)

afterAll(async () => {
  await browser?.close()
  await server?.close()
  await limited?.close()
  await new Promise((r) => merchantSite?.close(r))
})

/** The page behind a URL the API returned, on this test's server. */
const local = (url: string) => `${server.baseUrl}${new URL(url).pathname}`

/** Each test's pages, closed after it: an open page keeps its renderer busy with its timers. */
const contexts: Array<BrowserContext> = []
afterEach(async () => {
  await Promise.all(contexts.splice(0).map((c) => c.close()))
})

const newPage = async (): Promise<{ page: Page; dialogs: Array<string> }> => {
  const context = await browser.newContext()
  contexts.push(context)
  const page = await context.newPage()
  // A step that cannot happen fails on its own, naming itself, before the test's limit.
  page.setDefaultTimeout(8_000)
  const dialogs: Array<string> = []
  page.on("dialog", (d) => {
    dialogs.push(d.message())
    void d.dismiss()
  })
  return { page, dialogs }
}

/** The one-time code last sent to the customer's wallet. */
const lastCode = async (customerId: string) => {
  const notes = await server.ops("GET", `/ops/customers/${customerId}/notifications`)
  return notes.body.find((n: any) => n.kind === "one_time_code").data.code as string
}

const liveMerchant = async (features: Record<string, boolean>) => {
  const m = await F.merchant(server)
  await server.ops("POST", `/ops/merchants/${m.id}/features`, features)
  return m
}

describe.skipIf(!B.available)("mandate approval page", () => {
  const liveMandate = async (body: Record<string, unknown> = {}) => {
    const m = await liveMerchant({ mandates_live: true })
    const customer = await F.customer(server, { balance: 100_000 })
    const created = await server.request("POST", "/mandates", {
      key: m.live,
      body: F.mandateBody({
        title: "Weekly groceries",
        description: "Delivered every Friday",
        per_charge_cap: 50_000,
        period_cap: 120_000,
        period: "MONTH",
        return_url: `${merchantOrigin}/done?order=42`,
        ...body
      })
    })
    expect(created.status, created.text).toBe(201)
    return { m, customer, mandate: created.body }
  }

  it("approves with the code from the wallet, returns to the merchant, and the mandate is chargeable", async () => {
    const { m, customer, mandate } = await liveMandate()
    const { page } = await newPage()
    await page.goto(local(mandate.url))
    await expect(page.getByRole("heading", { name: "Weekly groceries" }).isVisible()).resolves.toBe(true)
    const text = await page.textContent("main")
    for (const shown of ["Delivered every Friday", "MVR 500.00", "MVR 1,200.00", "Per month, at most"])
      expect(text).toContain(shown)
    expect(text).toMatch(/Valid until\s*\d{4}-\d{2}-\d{2} \d{2}:\d{2}/)
    await B.capture(page, "mandate-approval")
    await page.getByLabel("Phone number").fill(customer.phone)
    await page.getByRole("button", { name: "Send code" }).click()
    await page.getByLabel("One-time code").waitFor()
    await B.capture(page, "mandate-code")
    // A wrong code first: the page says so and keeps the form.
    await page.getByLabel("One-time code").fill("000000")
    await page.getByRole("button", { name: "Approve" }).click()
    await expect(page.getByRole("alert").textContent()).resolves.toMatch(/code/i)
    await page.getByLabel("One-time code").fill(await lastCode(customer.id))
    await page.getByRole("button", { name: "Approve" }).click()
    await page.getByRole("heading", { name: "Approved" }).waitFor()
    await B.capture(page, "mandate-approved")
    // No timed redirect (WCAG 2.2.1): the customer follows the link when ready.
    expect(await page.locator('meta[http-equiv="refresh"]').count()).toBe(0)
    await page.getByRole("link", { name: "Continue" }).click()
    await page.waitForURL(/\/done\?/, { timeout: 10_000 })
    const landed = new URL(page.url())
    expect(landed.origin).toBe(merchantOrigin)
    expect(Object.fromEntries(landed.searchParams)).toEqual({
      order: "42",
      mandate_id: mandate.id,
      status: "ACTIVE"
    })
    const read = await server.request("GET", `/mandates/${mandate.id}`, { key: m.live })
    expect(read.body.status).toBe("ACTIVE")
    const charge = await server.request("POST", `/mandates/${mandate.id}/charges`, {
      key: m.live,
      body: { amount: 1_000 }
    })
    expect(charge.status, charge.text).toBe(201)
  })

  it("declines, and the merchant learns it from the return URL", async () => {
    const { customer, mandate } = await liveMandate()
    const { page } = await newPage()
    await page.goto(local(mandate.url))
    await page.getByLabel("Phone number").fill(customer.phone)
    await page.getByRole("button", { name: "Send code" }).click()
    await page.getByLabel("One-time code").fill(await lastCode(customer.id))
    await page.getByRole("button", { name: "Decline" }).click()
    await page.getByRole("heading", { name: "Declined" }).waitFor()
    await page.getByRole("link", { name: "Continue" }).click()
    await page.waitForURL(/\/done\?/, { timeout: 10_000 })
    expect(new URL(page.url()).searchParams.get("status")).toBe("DECLINED")
    // The link is used: a clear page, not a form.
    await page.goto(local(mandate.url))
    await page.getByRole("heading", { name: "This request is closed" }).waitFor()
  })

  it("says clearly when a link is unknown or has lapsed", async () => {
    const { page } = await newPage()
    const unknown = await page.goto(`${server.baseUrl}/mandate/00000000-0000-4000-8000-000000000000`)
    expect(unknown!.status()).toBe(404)
    await page.getByRole("heading", { name: "This link is not valid" }).waitFor()
    expect(await page.textContent("body")).not.toMatch(/stack|Error:|at /)
    const { mandate } = await liveMandate()
    expect((await server.ops("POST", "/ops/clock/advance", { by_seconds: 25 * 3600 })).status).toBe(200)
    const lapsed = await page.goto(local(mandate.url))
    expect(lapsed!.status()).toBe(410)
    await page.getByRole("heading", { name: "This link has lapsed" }).waitFor()
    await B.capture(page, "mandate-lapsed")
  })

  it("shows merchant text verbatim and runs none of it", async () => {
    const { mandate } = await liveMandate({
      title: "<script>alert(1)</script>",
      description: '"><img src=x onerror=alert(1)>'
    })
    const { page, dialogs } = await newPage()
    await page.goto(local(mandate.url))
    await page.getByRole("heading", { name: "<script>alert(1)</script>" }).waitFor()
    expect(await page.textContent("main")).toContain('"><img src=x onerror=alert(1)>')
    expect(await page.locator("main img").count()).toBe(0)
    expect(await page.locator("main script").count()).toBe(0)
    expect(dialogs).toEqual([])
  })

  it("refuses a form post without its CSRF token, and refuses to be framed", async () => {
    const { customer, mandate } = await liveMandate()
    const path = new URL(mandate.url).pathname
    const bare = await fetch(`${server.baseUrl}${path}/code`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ phone: customer.phone }).toString(),
      redirect: "manual"
    })
    expect(bare.status).toBe(403)
    const { page } = await newPage()
    await page.goto(local(mandate.url))
    await page
      .locator('input[name="_csrf"]')
      .evaluate((e) => ((e as HTMLInputElement).value = "0".repeat(64)))
    await page.getByLabel("Phone number").fill(customer.phone)
    const forged = page.waitForResponse((r) => r.url().endsWith("/code"))
    await page.getByRole("button", { name: "Send code" }).click()
    expect((await forged).status()).toBe(403)
    const notes = await server.ops("GET", `/ops/customers/${customer.id}/notifications`)
    expect(notes.body.filter((n: any) => n.kind === "one_time_code")).toEqual([])

    const res = await fetch(`${server.baseUrl}${path}`)
    expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'")
    expect(res.headers.get("x-frame-options")).toBe("DENY")
    await page.goto(`${merchantOrigin}/frame?src=${encodeURIComponent(local(mandate.url))}`)
    // Whatever the frame holds once it has loaded (the refusal's error page): no fixed wait.
    const framed = await (await page.waitForSelector("#f")).contentFrame()
    await framed?.waitForLoadState("load")
    const inside = await framed
      ?.locator("body")
      .textContent()
      .catch(() => "")
    expect(inside ?? "").not.toContain("Weekly groceries")
  })

  it("speaks Dhivehi, right to left, with merchant text in its own direction", async () => {
    const { mandate } = await liveMandate({ title: "ހަފްތާގެ ބާޒާރު" })
    const { page } = await newPage()
    await page.goto(`${local(mandate.url)}?lang=dv`)
    expect(await page.getAttribute("html", "dir")).toBe("rtl")
    expect(await page.getAttribute("html", "lang")).toBe("dv")
    await page.getByLabel("ފޯނު ނަންބަރު").waitFor()
    expect(await page.getByRole("heading", { name: "ހަފްތާގެ ބާޒާރު" }).locator("span").getAttribute("dir")).toBe(
      "auto"
    )
    await B.capture(page, "mandate-approval-dv")
    // The choice is remembered.
    await page.goto(local(mandate.url))
    expect(await page.getAttribute("html", "dir")).toBe("rtl")
  })
})

describe.skipIf(!B.available)("checkout page", () => {
  const session = async (key: string, body: Record<string, unknown> = {}) => {
    const res = await server.request("POST", "/checkout/sessions", {
      key,
      body: {
        mode: "SUBSCRIPTION",
        reference: F.unique("sub"),
        title: "Fibre 100",
        return_url: `${merchantOrigin}/subscribed`,
        price_data: { name: "Fibre 100", amount: 15_000, interval: "MONTH" },
        ...body
      }
    })
    expect(res.status, res.text).toBe(200)
    return res.body
  }

  it("a live subscription is paid with the wallet's code and becomes active", async () => {
    const m = await liveMerchant({ subscriptions_live: true })
    const customer = await F.customer(server, { balance: 100_000 })
    const s = await session(m.live)
    const { page } = await newPage()
    await page.goto(local(s.url))
    const text = await page.textContent("main")
    expect(text).toContain("MVR 150.00 every month")
    expect(text).toContain("Renews automatically")
    expect(await page.locator(".banner").count()).toBe(0)
    await B.capture(page, "checkout-live")
    await page.getByLabel("Phone number").fill(customer.phone)
    await page.getByRole("button", { name: "Send code" }).click()
    await page.getByLabel("One-time code").fill(await lastCode(customer.id))
    await page.getByRole("button", { name: "Pay" }).click()
    await page.getByRole("heading", { name: "Paid" }).waitFor()
    await B.capture(page, "checkout-paid")
    await page.getByRole("link", { name: "Continue" }).click()
    await page.waitForURL(/\/subscribed\?/, { timeout: 10_000 })
    const query = Object.fromEntries(new URL(page.url()).searchParams)
    expect(query).toEqual({ session_id: s.id, status: "COMPLETE" })
    const read = await server.request("GET", `/checkout/sessions/${s.id}`, { key: m.live })
    const sub = await server.request("GET", `/subscriptions/${read.body.subscriptionId}`, { key: m.live })
    expect(sub.body.status).toBe("ACTIVE")
    // Paid: the link now says so.
    await page.goto(local(s.url))
    await page.getByRole("heading", { name: "Paid" }).waitFor()
  })

  it("test mode shows a banner and pays with the sandbox payer, no code", async () => {
    const m = await F.merchant(server)
    const s = await session(m.test, {
      price_data: { name: "Weekly box", amount: 5_000, interval: "WEEK", interval_count: 2 }
    })
    const { page } = await newPage()
    await page.goto(local(s.url))
    await expect(page.locator(".banner").textContent()).resolves.toBe("Test mode")
    expect(await page.textContent("main")).toContain("MVR 50.00 every 2 weeks")
    await B.capture(page, "checkout-test")
    await page.getByRole("button", { name: "Pay" }).click()
    await page.getByRole("heading", { name: "Paid" }).waitFor()
    await page.getByRole("link", { name: "Continue" }).click()
    await page.waitForURL(/\/subscribed\?/, { timeout: 10_000 })
    const read = await server.request("GET", `/checkout/sessions/${s.id}`, { key: m.test })
    expect(read.body.status).toBe("COMPLETE")
  })

  it("expired and cancelled sessions get clear pages", async () => {
    const m = await F.merchant(server)
    const cancelled = await session(m.test)
    await server.request("POST", `/checkout/sessions/${cancelled.id}/cancel`, { key: m.test })
    const { page } = await newPage()
    const res = await page.goto(local(cancelled.url))
    expect(res!.status()).toBe(410)
    await page.getByText("The merchant cancelled this payment.").waitFor()
    const expired = await session(m.test)
    expect((await server.ops("POST", "/ops/clock/advance", { by_seconds: 48 * 3600 })).status).toBe(200)
    await page.goto(local(expired.url))
    await page.getByText("The time to pay has passed.", { exact: false }).waitFor()
    await B.capture(page, "checkout-expired")
  })
})

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
    await page.goto(`${server.baseUrl}/dashboard/subscriptions/${subscriptionId}`)
    await page.getByLabel("Secret key").fill(m.live)
    await page.getByRole("button", { name: "Sign in" }).click()
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

describe.skipIf(!B.available)("merchant dashboard", () => {
  it("signs in with a secret key, shows each section, manages an endpoint and resends a failed delivery", async () => {
    const m = await F.merchant(server)
    const created = await server.request("POST", "/mandates", {
      key: m.test,
      body: F.mandateBody({ title: "Tea <b>club</b>" })
    })
    await server.request("POST", `/mandates/${created.body.id}/charges`, {
      key: m.test,
      body: { amount: 700 }
    })
    await server.request("POST", "/qr-codes", {
      key: m.test,
      body: { outlet_id: m.outletId, title: "Till 1" }
    })
    const { page } = await newPage()
    await page.goto(`${server.baseUrl}/dashboard`)
    await page.getByLabel("Secret key").fill("sk_test_wrong")
    await page.getByRole("button", { name: "Sign in" }).click()
    await page.getByText("That is not a valid secret key.").waitFor()
    await page.getByLabel("Secret key").fill(m.test)
    await page.getByRole("button", { name: "Sign in" }).click()
    await page.getByRole("heading", { name: "Mandates" }).waitFor()
    expect(await page.textContent(".badge")).toBe("TEST")
    const cookies = await page.context().cookies()
    const session = cookies.find((c) => c.name === "laari_dashboard")!
    expect(session.httpOnly).toBe(true)
    expect(session.value).not.toContain(m.test.slice(8))
    expect(await page.textContent("main")).toContain("Tea <b>club</b>")
    await B.capture(page, "dashboard-mandates")
    await page.getByRole("link", { name: created.body.reference }).click()
    await page.getByRole("heading", { name: "Charges", exact: true }).waitFor()
    expect(await page.textContent("main")).toContain("MVR 7.00")
    await B.capture(page, "dashboard-mandate")
    await page.getByRole("link", { name: "QR codes" }).click()
    await page.locator('img[alt^="QR code"]').first().waitFor()
    await B.capture(page, "dashboard-qr-codes")
    expect(
      await page
        .locator('img[alt^="QR code"]')
        .first()
        .evaluate((i) => (i as HTMLImageElement).naturalWidth)
    ).toBeGreaterThan(0)
    for (const name of ["Checkout sessions", "Subscriptions", "Events"]) {
      await page.getByRole("link", { name, exact: true }).click()
      await page.getByRole("heading", { name }).waitFor()
      await B.capture(page, `dashboard-${name.toLowerCase().replaceAll(" ", "-")}`)
    }
    expect(await page.textContent("main")).toContain("mandate.charge.succeeded")

    // An endpoint that answers 500: the delivery fails and is logged.
    const failing = http.createServer((_, res) => res.writeHead(500).end("boom"))
    await new Promise<void>((r) => failing.listen(0, "127.0.0.1", r))
    const url = `http://127.0.0.1:${(failing.address() as { port: number }).port}/hook`
    await page.getByRole("link", { name: "Webhooks" }).click()
    await page.getByLabel("Endpoint URL").fill(url)
    await page.getByRole("button", { name: "Add endpoint" }).click()
    const secret = (await page.locator("#secret").textContent())!.trim()
    expect(secret).toMatch(/^whsec_/)
    await B.capture(page, "dashboard-endpoint-created")
    await server.request("POST", "/mandates", { key: m.test, body: F.mandateBody() })
    await page.getByRole("link", { name: "Webhooks" }).click()
    await page.getByRole("link", { name: url }).click()
    const endpointUrl = page.url()
    await expect
      .poll(
        async () => {
          await page.reload()
          return page.locator("table[aria-label=Deliveries]").textContent()
        },
        { timeout: 10_000 }
      )
      .toContain("Failed")
    expect(await page.textContent("main")).not.toContain(secret)
    expect(await page.textContent("table[aria-label=Deliveries]")).toContain("500")
    await B.capture(page, "dashboard-deliveries")
    await page
      .getByRole("button", { name: /^Resend / })
      .first()
      .click()
    await page.getByText("Queued: it is sent again now.").waitFor()
    const log = await server.request(
      "GET",
      `${new URL(endpointUrl).pathname.replace("/dashboard/webhooks", "/webhook-endpoints")}/deliveries`,
      { key: m.test }
    )
    expect(log.body.some((d: any) => d.resend === true)).toBe(true)
    // Edit, rotate, delete.
    await page.getByLabel("Description").fill("Orders")
    await page.getByRole("button", { name: "Save" }).click()
    await page.getByText("Saved.").waitFor()
    await page.getByRole("button", { name: "Rotate secret" }).click()
    const rotated = (await page.locator("#secret").textContent())!.trim()
    expect(rotated).not.toBe(secret)
    await page.getByRole("button", { name: "Delete endpoint" }).click()
    await page.getByText("Endpoint deleted.").waitFor()
    failing.close()

    // In Dhivehi, right to left.
    await page.goto(`${server.baseUrl}/dashboard/webhooks?lang=dv`)
    expect(await page.getAttribute("html", "dir")).toBe("rtl")
    await page.getByRole("heading", { name: "ވެބްހުކް އެންޑްޕޮއިންޓްތައް" }).waitFor()
    await B.capture(page, "dashboard-webhooks-dv")
    await page.goto(`${server.baseUrl}/dashboard/webhooks?lang=en`)

    await page.getByRole("button", { name: "Sign out" }).click()
    await page.getByLabel("Secret key").waitFor()
    await B.capture(page, "dashboard-sign-in")
  })

  it("shows the balance and its movements, and downloads a day's settlement report", async () => {
    const m = await F.merchant(server)
    const created = await server.request("POST", "/mandates", { key: m.test, body: F.mandateBody() })
    await server.request("POST", `/mandates/${created.body.id}/charges`, {
      key: m.test,
      body: { amount: 12_550 }
    })
    const { page } = await newPage()
    await page.goto(`${server.baseUrl}/dashboard`)
    await page.getByLabel("Secret key").fill(m.test)
    await page.getByRole("button", { name: "Sign in" }).click()
    await page.getByRole("heading", { name: "Mandates" }).waitFor()
    await page.getByRole("link", { name: "Balance", exact: true }).click()
    await page.getByRole("heading", { name: "Balance" }).waitFor()
    const main = await page.textContent("main")
    // 12,550 less the 1% fee (126): the balance, and the one movement with its figures.
    expect(main).toContain("Available: MVR 124.24")
    expect(main).toContain("charge")
    expect(main).toContain("MVR 125.50")
    await B.capture(page, "dashboard-balance")
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("button", { name: "Download settlement report" }).click()
    ])
    const today = await page.getByLabel("Day (Maldives time)").inputValue()
    expect(download.suggestedFilename()).toBe(`settlement-test-${today}.csv`)
    const csv = await readFile(await download.path(), "utf8")
    expect(csv.split("\r\n").at(-2)).toBe(`total,,,${today},12550,126,12424`)
    const bad = await page.goto(`${server.baseUrl}/dashboard/balance/settlement?date=2026-02-30`)
    expect(bad?.status()).toBe(400)
    expect(await page.textContent("main")).toContain("2026-02-30 is not a calendar date")
  })

  it("shows a narrow key only what its scopes allow, and refuses forged posts", async () => {
    const m = await F.merchant(server)
    const narrow = await m.key("test", ["qr:write"])
    const { page } = await newPage()
    await page.goto(`${server.baseUrl}/dashboard`)
    await page.getByLabel("Secret key").fill(narrow)
    await page.getByRole("button", { name: "Sign in" }).click()
    await page.getByText("This key lacks the mandates:write scope.").waitFor()
    // The refused section keeps its own title, in words, not its internal name.
    expect(await page.title()).toMatch(/^Mandates\b/)
    expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("Mandates")
    const res = await fetch(`${server.baseUrl}/dashboard/webhooks`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "url=http%3A%2F%2F127.0.0.1%2Fx",
      redirect: "manual"
    })
    expect(res.status).toBe(403)
  })
})

describe.skipIf(!B.available)("dashboard refunds", () => {
  /** A test merchant with one charge of `amount`, and a page signed in to its dashboard with `key`. */
  const charged = async (amount: number, scopes?: ReadonlyArray<string>) => {
    const m = await F.merchant(server)
    const mandate = await server.request("POST", "/mandates", { key: m.test, body: F.mandateBody() })
    const charge = await server.request("POST", `/mandates/${mandate.body.id}/charges`, {
      key: m.test,
      body: { amount }
    })
    expect(charge.status, charge.text).toBe(201)
    const { page } = await newPage()
    await page.goto(`${server.baseUrl}/dashboard/mandates/${mandate.body.id}`)
    await page.getByLabel("Secret key").fill(scopes === undefined ? m.test : await m.key("test", scopes))
    await page.getByRole("button", { name: "Sign in" }).click()
    await page.getByRole("heading", { name: "Mandates" }).waitFor()
    await page.goto(`${server.baseUrl}/dashboard/mandates/${mandate.body.id}`)
    const refunds = async () =>
      (await server.request("GET", `/refunds?charge_id=${charge.body.id}`, { key: m.test }))
        .body as Array<any>
    return { m, page, mandateId: mandate.body.id as string, chargeId: charge.body.id as string, refunds }
  }

  /** The confirmation's post, answered: its status and the page it led to. */
  const confirm = async (page: Page) => {
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === "POST"),
      page.getByRole("button", { name: "Confirm refund" }).click()
    ])
    await page.waitForLoadState()
    return response
  }

  it("refunds part of a charge after a confirmation, then refuses more than remains", async () => {
    const { page, mandateId, chargeId, refunds } = await charged(12_550)
    await page.getByRole("link", { name: /^Refund: / }).click()
    await page.getByRole("heading", { name: "Refund a charge" }).waitFor()
    expect(page.url()).toContain(`/dashboard/mandates/${mandateId}/charges/${chargeId}/refund`)
    expect(await page.getByLabel("Amount to refund (MVR)").inputValue()).toBe("125.50")
    await B.capture(page, "dashboard-refund")
    await page.getByLabel("Amount to refund (MVR)").fill("40.00")
    await page.getByLabel("Reason").selectOption("duplicate")
    const done = await confirm(page)
    // Post, redirect, get: back on the mandate's page with the notice.
    expect(done.status()).toBe(303)
    await page.getByText("Refunded MVR 40.00 to the customer's wallet.").waitFor()
    expect(new URL(page.url()).pathname).toBe(`/dashboard/mandates/${mandateId}`)
    expect(await page.textContent("table[aria-label=Charges]")).toContain("MVR 40.00")
    expect((await refunds()).map((r) => [r.amount, r.reason])).toEqual([[4_000, "duplicate"]])

    // What remains is the default now; more than that is refused, keeping what was typed.
    await page.getByRole("link", { name: /^Refund: / }).click()
    expect(await page.getByLabel("Amount to refund (MVR)").inputValue()).toBe("85.50")
    expect(await page.textContent("main")).toContain("MVR 85.50")
    await page.getByLabel("Amount to refund (MVR)").fill("85.51")
    await page.getByLabel("Reason").selectOption("fraudulent")
    const refused = await confirm(page)
    expect(refused.status()).toBe(422)
    await page.getByText("Refund amount exceeds what remains to be refunded of the payment").waitFor()
    expect(await page.getByLabel("Amount to refund (MVR)").inputValue()).toBe("85.51")
    expect(await page.getByLabel("Reason").inputValue()).toBe("fraudulent")
    // Not an amount: refused before anything is tried.
    await page.getByLabel("Amount to refund (MVR)").fill("12,00")
    expect((await confirm(page)).status()).toBe(422)
    await page.getByText("Enter an amount in MVR, like 25.50.").waitFor()
    expect(await refunds()).toHaveLength(1)

    // The rest, in Dhivehi: more than the balance holds (laari kept its fee of 1.26), then what it holds.
    await page.goto(`${page.url()}?lang=dv`)
    await page.getByRole("heading", { name: "ފައިސާ ނެގުމެއް ރީފަންޑްކުރުން" }).waitFor()
    const [short] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === "POST"),
      page.getByRole("button", { name: "ރީފަންޑް ކަށަވަރުކުރޭ" }).click()
    ])
    expect(short.status()).toBe(402)
    await page.getByText("ވިޔަފާރިވެރިޔާގެ ބެލެންސް މި ރީފަންޑަށް ފުދޭވަރަށް ނެތް").waitFor()
    await page.locator("#amount").fill("84.24")
    await page.getByRole("button", { name: "ރީފަންޑް ކަށަވަރުކުރޭ" }).click()
    await page.getByText("MVR 84.24 ކަސްޓަމަރުގެ ވޯލެޓަށް ރީފަންޑްކޮށްފި.").waitFor()
    expect((await refunds()).map((r) => r.amount).sort()).toEqual([4_000, 8_424])
  })

  it("refunds once when one confirmation is submitted twice", async () => {
    const { page, mandateId, refunds } = await charged(5_000)
    await page.getByRole("link", { name: /^Refund: / }).click()
    await page.getByLabel("Amount to refund (MVR)").fill("10.00")
    // Two posts of the same form at once, as a double click sends them (the page's cookies, its fields).
    const fields = await page.evaluate(() => {
      const form = document.querySelector("form[action$='/refund']") as HTMLFormElement
      return { action: form.action, fields: Object.fromEntries(new FormData(form) as any) }
    })
    const send = async () => {
      const r = await page.request.post(fields.action, { form: fields.fields })
      return { status: r.status(), url: r.url() }
    }
    const answers = await Promise.all([send(), send()])
    for (const a of answers) {
      expect(a.status).toBe(200)
      expect(new URL(a.url).pathname).toBe(`/dashboard/mandates/${mandateId}`)
    }
    expect((await refunds()).map((r) => r.amount)).toEqual([1_000])
    // The same token with another amount is not a second refund either.
    await page.getByLabel("Amount to refund (MVR)").fill("20.00")
    expect((await confirm(page)).status()).toBe(409)
    await page.getByText("This confirmation was already used for another refund.", { exact: false }).waitFor()
    expect((await refunds()).map((r) => r.amount)).toEqual([1_000])
  })

  it("refuses a key without payments:write, on the page and on a post", async () => {
    const { page, mandateId, chargeId, refunds } = await charged(5_000, ["mandates:write"])
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith("/refund")),
      page.getByRole("link", { name: /^Refund: / }).click()
    ])
    expect(response.status()).toBe(403)
    await page.getByText("This key lacks the payments:write scope.").waitFor()
    expect(await page.locator("form[action$='/refund']").count()).toBe(0)
    // A post made by hand, with a valid CSRF token, is refused the same way.
    const csrf = await page.locator("input[name=_csrf]").first().inputValue()
    const post = await page.request.post(
      `${server.baseUrl}/dashboard/mandates/${mandateId}/charges/${chargeId}/refund`,
      { form: { _csrf: csrf, token: crypto.randomUUID(), amount: "10.00", reason: "duplicate" } }
    )
    const status = post.status()
    expect(status).toBe(403)
    expect(await refunds()).toEqual([])
  })

  it("refunds a QR payment from its code's page, and lists refunds newest first with links to their payments", async () => {
    const { m, page, mandateId, chargeId } = await charged(8_000)
    // The charge first (older), through the API; then a QR payment, refunded through the dashboard.
    expect(
      (await server.request("POST", "/refunds", { key: m.test, body: { charge_id: chargeId, amount: 300 } }))
        .status
    ).toBe(201)
    const code = await server.request("POST", "/qr-codes", {
      key: m.test,
      body: { outlet_id: m.outletId, type: "DYNAMIC", amount: 4_000, title: "Table 9" }
    })
    const paid = await server.request("POST", "/test-helpers/qr-codes/pay", {
      key: m.test,
      body: { payload: code.body.payload }
    })
    expect(paid.status, paid.text).toBe(201)
    await page.goto(`${server.baseUrl}/dashboard/qr-codes`)
    await page.getByRole("link", { name: "Table 9", exact: true }).click()
    await page.getByRole("heading", { name: "QR code" }).waitFor()
    await page.getByRole("link", { name: /^Refund: / }).click()
    await page.getByRole("heading", { name: "Refund a QR payment" }).waitFor()
    expect(page.url()).toContain(`/dashboard/qr-codes/${code.body.id}/payments/${paid.body.id}/refund`)
    expect(await page.getByLabel("Amount to refund (MVR)").inputValue()).toBe("40.00")
    await page.getByLabel("Amount to refund (MVR)").fill("10")
    expect((await confirm(page)).status()).toBe(303)
    await page.getByText("Refunded MVR 10.00 to the customer's wallet.").waitFor()
    expect(page.url()).toContain(`/dashboard/qr-codes/${code.body.id}?refunded=1000`)
    expect(await page.textContent("table[aria-label=Payments]")).toContain("MVR 10.00")
    const listed = (await server.request("GET", `/refunds?qr_payment_id=${paid.body.id}`, { key: m.test }))
      .body
    expect(listed.map((r: { amount: number }) => r.amount)).toEqual([1_000])

    // Another merchant's QR payment under this code's path, and this payment under another code: none.
    const other = await server.request("POST", "/qr-codes", {
      key: m.test,
      body: { outlet_id: m.outletId, type: "STATIC", title: "Counter" }
    })
    await page.goto(`${server.baseUrl}/dashboard/qr-codes/${other.body.id}/payments/${paid.body.id}/refund`)
    await page.getByText("No such payment.").waitFor()

    await page.goto(`${server.baseUrl}/dashboard/refunds`)
    await page.getByRole("heading", { name: "Refunds" }).waitFor()
    const rows = page.locator("table[aria-label=Refunds] tbody tr")
    expect(await rows.count()).toBe(2)
    expect(await rows.nth(0).textContent()).toContain("MVR 10.00")
    expect(await rows.nth(0).textContent()).toContain("QR payment")
    expect(await rows.nth(1).textContent()).toContain("MVR 3.00")
    await rows.nth(1).getByRole("link", { name: "Charge" }).click()
    await page.getByRole("heading", { name: "Mandate" }).waitFor()
    expect(page.url()).toBe(`${server.baseUrl}/dashboard/mandates/${mandateId}`)
    await page.goto(`${server.baseUrl}/dashboard/refunds`)
    await rows.nth(0).getByRole("link", { name: "QR payment" }).click()
    await page.getByRole("heading", { name: "QR code" }).waitFor()
    expect(page.url()).toBe(`${server.baseUrl}/dashboard/qr-codes/${code.body.id}`)

    // Another merchant's refund names no payment here.
    const stranger = await charged(2_000)
    const theirs = await server.request("POST", "/refunds", {
      key: stranger.m.test,
      body: { charge_id: stranger.chargeId, amount: 100 }
    })
    const hidden = await page.goto(`${server.baseUrl}/dashboard/refunds/${theirs.body.id}/payment`)
    expect(hidden?.status()).toBe(404)
    await page.getByText("No such payment.").waitFor()
    // Paged: no "Older" link while one page holds them all.
    await page.goto(`${server.baseUrl}/dashboard/refunds`)
    expect(await page.getByRole("link", { name: "Older" }).count()).toBe(0)
    await page.goto(`${server.baseUrl}/dashboard/refunds?offset=1`)
    expect(await rows.count()).toBe(1)
    expect(await page.getByRole("link", { name: "Newer" }).getAttribute("href")).toBe(
      "/dashboard/refunds?offset=0"
    )
  })
})

describe("form posts are limited per client address", () => {
  it("answers 429 past the customer endpoints' burst (20), with the limit's headers", async () => {
    // 60 at once: more than the burst, faster than the refill (10 a second) when the server answers
    // faster than that. On a machine busy enough that it answers 60 in more than 4 s the refill keeps
    // up, so another 60 are sent (at most 3 rounds), and each round's time is in the message.
    const post = () =>
      fetch(`${limited.baseUrl}/wallet/code`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: "phone=%2B9607000000",
        redirect: "manual"
      })
    const answers: Array<Response> = []
    const rounds: Array<string> = []
    for (let round = 0; round < 3 && !answers.some((r) => r.status === 429); round++) {
      const started = performance.now()
      answers.push(...(await Promise.all(Array.from({ length: 60 }, post))))
      rounds.push(`${Math.round(performance.now() - started)} ms`)
    }
    const statuses = answers.map((r) => r.status)
    // Without a CSRF token each is refused (403) until the address has spent its burst (429).
    expect(new Set(statuses), `rounds of 60: ${rounds.join(", ")}`).toEqual(new Set([403, 429]))
    expect(statuses.filter((s) => s === 403).length).toBeGreaterThanOrEqual(20)
    expect(answers.find((r) => r.status === 429)!.headers.get("retry-after")).not.toBeNull()
  }, 120_000)
})
