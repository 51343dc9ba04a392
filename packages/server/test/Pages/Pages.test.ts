/**
 * The customer's hosted pages in a real browser: mandate approval and checkout, live and in test mode, in
 * English and Dhivehi; escaping, CSRF and framing; and the limit on form posts per client address.
 * Screenshots at 375 and 1280 px go to `artifacts/screenshots`. The servers run on fresh PostgreSQL
 * databases with `DATABASE_URL`, else on PGlite. The wallet app is in PagesWalletApp.test.ts, the
 * merchant's dashboard in PagesDashboard.test.ts.
 */
import { describe, expect, it, vi } from "vitest"
import * as B from "../support/Browser.js"
import * as F from "../support/Fixtures.js"
import {
  lastCode,
  limited,
  liveMerchant,
  local,
  merchantOrigin,
  newPage,
  server,
  start
} from "../support/HostedPages.js"

B.requireOrWarn("the hosted pages' browser tests")
// A browser drives each flow end to end, result pages wait 3 s before sending the customer on.
// A browser driving a server: a minute and a half leaves room for a 2-core machine shared with a CPU hog.
vi.setConfig({ testTimeout: 90_000 })
start({ limited: true })

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
