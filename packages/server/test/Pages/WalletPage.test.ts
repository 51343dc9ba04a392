/**
 * The customer's wallet page and the Dhivehi pages, in a real browser with JavaScript off (every page is
 * a form that works without it): the balance, every payment the customer made whatever paid it (newest
 * first, with its merchant, and the checkout's page as its receipt), empty sections in words, notices
 * with their date and time and only the newest one-time code, and a confirming step before a mandate is
 * revoked or a subscription cancelled. In Dhivehi, Thaana is set larger and heavier than Latin (which
 * keeps its English size), and no code (`checkout_payment`, `SUCCEEDED`) is shown as is, nor in English.
 */
import type { Browser, BrowserContext, Page } from "playwright-core"
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest"
import * as B from "../support/Browser.js"
import * as People from "../support/DashboardPeople.js"
import * as F from "../support/Fixtures.js"
import * as PostgresServer from "../support/PostgresServer.js"
import type * as TestServer from "../support/TestServer.js"

B.requireOrWarn("the wallet page's browser tests")
vi.setConfig({ testTimeout: 120_000 })

let server: TestServer.TestServer
let browser: Browser

beforeAll(async () => {
  const launched = B.available ? B.launch().then((b) => (browser = b)) : undefined
  server = await PostgresServer.startQuickest()
  await launched
}, 120_000)

afterAll(async () => {
  await browser?.close()
  await server?.close()
})

const contexts: Array<BrowserContext> = []
afterEach(async () => {
  await Promise.all(contexts.splice(0).map((c) => c.close()))
})

/** A page with JavaScript off: nothing here may need it. */
const newPage = async (): Promise<Page> => {
  const context = await browser.newContext({ javaScriptEnabled: false })
  contexts.push(context)
  const page = await context.newPage()
  page.setDefaultTimeout(8_000)
  return page
}

const lastCode = async (customerId: string) => {
  const notes = await server.ops("GET", `/ops/customers/${customerId}/notifications`)
  return notes.body.find((n: any) => n.kind === "one_time_code").data.code as string
}

/** A minute later on the server's manual clock: each payment at a time of its own. */
const tick = () => server.ops("POST", "/ops/clock/advance", { by_seconds: 60 })

const ok = <T extends { status: number; text: string }>(res: T, status: number): T => {
  expect(res.status, res.text).toBe(status)
  return res
}

/** A live customer who paid a merchant in each way: a mandate's charge, a subscription, a checkout, a QR code. */
const customerWhoPaid = async () => {
  const m = await F.merchant(server, { name: "Island Grocer" })
  ok(
    await server.ops("POST", `/ops/merchants/${m.id}/features`, {
      mandates_live: true,
      subscriptions_live: true
    }),
    200
  )
  const customer = await F.customer(server, { balance: 200_000 })
  const mandate = ok(
    await server.request("POST", "/mandates", {
      key: m.live,
      body: F.mandateBody({ title: "Daily coffee", per_charge_cap: 5_000 })
    }),
    201
  ).body.id as string
  const c1 = await server.request("POST", `/approvals/mandates/${mandate}/challenge`, {
    body: { phone: customer.phone }
  })
  await server.request("POST", `/approvals/mandates/${mandate}/approve`, {
    body: { challenge_id: c1.body.challenge_id, otp: await lastCode(customer.id) }
  })
  ok(
    await server.request("POST", `/mandates/${mandate}/charges`, {
      key: m.live,
      body: { amount: 1_500, description: "Flat white" }
    }),
    201
  )
  const pay = async (body: Record<string, unknown>) => {
    await tick()
    const s = ok(
      await server.request("POST", "/checkout/sessions", {
        key: m.live,
        body: { reference: F.unique("s"), ...body }
      }),
      200
    ).body.id as string
    const c = await server.request("POST", `/approvals/checkout/${s}/challenge`, {
      body: { phone: customer.phone }
    })
    const paid = ok(
      await server.request("POST", `/approvals/checkout/${s}/pay`, {
        body: { challenge_id: c.body.challenge_id, otp: await lastCode(customer.id) }
      }),
      200
    )
    return { session: s, subscriptionId: paid.body.subscriptionId as string | undefined }
  }
  const gym = await pay({
    mode: "SUBSCRIPTION",
    title: "Gym",
    price_data: { name: "Gold gym", amount: 25_000, interval: "MONTH" }
  })
  const curry = await pay({ mode: "PAYMENT", title: "Fish curry", amount: 12_550 })
  await tick()
  const qr = ok(
    await server.request("POST", "/qr-codes", {
      key: m.live,
      body: { outlet_id: m.outletId, type: "DYNAMIC", amount: 4_250 }
    }),
    201
  ).body
  return { m, customer, mandate, subscriptionId: gym.subscriptionId!, checkout: curry.session, qr }
}

const signIn = async (page: Page, customer: { id: string; phone: string }, lang = "en") => {
  await page.goto(`${server.baseUrl}/wallet?lang=${lang}`)
  await page.locator("#phone").fill(customer.phone)
  await page.locator("main button[type=submit]").first().click()
  await page.locator("#otp").fill(await lastCode(customer.id))
  await page.locator("main button[type=submit]").first().click()
  await page.locator("#mandates").waitFor()
}

const items = (page: Page, section: string) => page.locator(`#${section} ~ ul > li`).allInnerTexts()

describe.skipIf(!B.available)("the wallet page", () => {
  it("shows the balance and every payment, newest first, with its merchant and the checkout's receipt", async () => {
    const { customer, qr, checkout } = await customerWhoPaid()
    const page = await newPage()
    await signIn(page, customer)
    await page.getByLabel("QR payload").fill(qr.payload)
    await page.getByRole("button", { name: "Pay", exact: true }).click()
    await page.getByText("Paid MVR 42.50.").waitFor()
    // 2,000.00 less 15.00, 250.00, 125.50 and 42.50.
    expect(await page.locator(".balance").innerText()).toMatch(/Balance\s+MVR 1,567\.00/)
    const payments = await items(page, "payments")
    expect(payments).toHaveLength(4)
    expect(payments.map((p) => p.replace(/\s+/g, " ").trim())).toEqual([
      expect.stringMatching(
        new RegExp(`^Island Grocer MVR 42\\.50 QR payment · ${qr.qrid} · \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d`)
      ),
      expect.stringMatching(/^Island Grocer MVR 125\.50 Checkout payment · Fish curry · .* Receipt$/),
      expect.stringMatching(/^Island Grocer MVR 250\.00 Checkout payment · Gym · .* Receipt$/),
      expect.stringMatching(/^Island Grocer MVR 15\.00 Mandate charge · Flat white · /)
    ])
    await B.capture(page, "wallet-payments")
    await page.screenshot({ path: "/tmp/shots/wallet-en.png", fullPage: true })
    await page.getByRole("link", { name: "Receipt: Island Grocer, MVR 125.50" }).click()
    expect(new URL(page.url()).pathname).toBe(`/checkout/${checkout}`)
    await page.getByText("Your payment to Island Grocer is complete.").waitFor()
  })

  it("says in words that a section is empty, and dates notices, showing only the newest code", async () => {
    const customer = await F.customer(server, { balance: 0 })
    const page = await newPage()
    // Two codes asked for, then a third to sign in with: only that one is shown.
    for (let i = 0; i < 2; i++) {
      await page.goto(`${server.baseUrl}/wallet`)
      await page.locator("#phone").fill(customer.phone)
      await page.getByRole("button", { name: "Send code" }).click()
      await page.locator("#otp").waitFor()
    }
    await signIn(page, customer)
    expect(await page.locator("#mandates ~ p").innerText()).toBe("No active mandates.")
    expect(await page.locator("#subscriptions ~ p").innerText()).toBe("No active subscriptions.")
    expect(await page.locator("#payments ~ p").innerText()).toBe("No payments yet.")
    expect(await page.locator("#invoices ~ p").innerText()).toBe("No invoices yet.")
    expect(await page.locator(".balance").innerText()).toMatch(/MVR 0\.00/)
    const notices = await items(page, "notifications")
    expect(notices).toHaveLength(1)
    // When it came, in Maldives time (UTC + 5 h), to the minute.
    const stamp = /(\d{4}-\d\d-\d\d \d\d:\d\d)$/.exec(notices[0]!.trim())![1]!
    const maldives = Date.parse(`${stamp.replace(" ", "T")}:00+05:00`)
    const now = Date.parse((await server.ops("GET", "/ops/clock")).body.now as string)
    expect(Math.abs(now - maldives)).toBeLessThan(2 * 60_000)
  })

  it("asks before revoking a mandate or cancelling a subscription, without JavaScript", async () => {
    const { m, customer, mandate, subscriptionId } = await customerWhoPaid()
    const page = await newPage()
    await signIn(page, customer)
    await page.getByRole("button", { name: "Revoke: Daily coffee" }).click()
    await page.getByRole("heading", { name: "Revoke this mandate?" }).waitFor()
    await page.screenshot({ path: "/tmp/shots/wallet-confirm.png", fullPage: true })
    expect((await server.request("GET", `/mandates/${mandate}`, { key: m.live })).body.status).toBe("ACTIVE")
    await page.getByRole("link", { name: "No, go back" }).click()
    expect(await page.locator("#mandates ~ ul").innerText()).toContain("Daily coffee")
    await page.getByRole("button", { name: "Revoke: Daily coffee" }).click()
    await page.getByRole("button", { name: "Yes, revoke" }).click()
    await page.getByText("The mandate is revoked").waitFor()
    expect((await server.request("GET", `/mandates/${mandate}`, { key: m.live })).body.status).toBe("REVOKED")

    await page.getByRole("button", { name: "Cancel subscription: Gold gym" }).click()
    await page.getByRole("heading", { name: "Cancel this subscription?" }).waitFor()
    expect(
      (await server.request("GET", `/subscriptions/${subscriptionId}`, { key: m.live })).body.status
    ).toBe("ACTIVE")
    await page.getByRole("button", { name: "Yes, cancel subscription" }).click()
    await page.getByText("The subscription is cancelled.").waitFor()
    expect(
      (await server.request("GET", `/subscriptions/${subscriptionId}`, { key: m.live })).body.status
    ).toBe("CANCELLED")
    // Someone else's (or an unknown) mandate gets no confirming step.
    const res = await page.goto(
      `${server.baseUrl}/wallet/mandates/00000000-0000-4000-8000-000000000000/revoke`
    )
    expect(res?.status()).toBe(404)
  })
})

/** Codes the API spells for machines: none may be shown to a person as is. */
const rawCodes =
  /\b(checkout_payment|qr_payment|mandate_charge|INITIATED|ACTIVE|DECLINED|REVOKED|EXPIRED|SUSPENDED|PAST_DUE|CANCELLED|PENDING|CHARGING|PAID|FAILED|VOID|OPEN|COMPLETE|SUCCEEDED|PAYMENT|SUBSCRIPTION|STATIC|DYNAMIC)\b/

/** The computed size (px) and weight of the element `selector` matches first. */
const fontOf = (page: Page, selector: string) =>
  page
    .locator(selector)
    .first()
    .evaluate((e) => {
      const s = getComputedStyle(e)
      return { size: Number.parseFloat(s.fontSize), weight: Number(s.fontWeight), lineHeight: s.lineHeight }
    })

describe.skipIf(!B.available)("Dhivehi pages", () => {
  it("set Thaana larger and heavier than Latin, Latin at its English size, and show no code as is", async () => {
    const { m, customer, mandate } = await customerWhoPaid()
    const pending = ok(
      await server.request("POST", "/mandates", {
        key: m.live,
        body: F.mandateBody({ title: "Weekly fish" })
      }),
      201
    ).body.url as string
    const open = ok(
      await server.request("POST", "/checkout/sessions", {
        key: m.live,
        body: { reference: F.unique("s"), mode: "PAYMENT", title: "Tuna", amount: 9_900 }
      }),
      200
    ).body.url as string
    const page = await newPage()
    await signIn(page, customer, "dv")
    const thaana = await fontOf(page, "main .card .note")
    const latin = await fontOf(page, "#payments ~ ul .sum bdi")
    await page.goto(`${server.baseUrl}/wallet?lang=en`)
    const english = await fontOf(page, "main .card .note")
    const englishLatin = await fontOf(page, "#payments ~ ul .sum bdi")
    expect(thaana.size).toBeGreaterThanOrEqual(english.size * 1.15)
    expect(thaana.weight).toBeGreaterThan(english.weight)
    // The amounts inside Dhivehi text keep the size they have on English pages.
    expect(latin.size).toBeCloseTo(englishLatin.size, 0)
    expect(english.weight).toBe(400)

    // Every page a customer or a merchant reads, in Dhivehi and English: no code shown as is.
    const dashboard = async () => {
      const owner = await People.signIn(server, m.id, "owner", { environment: "live" })
      await page.context().addCookies(People.browserCookies(server.baseUrl, owner))
    }
    await dashboard()
    for (const lang of ["dv", "en"])
      for (const path of [
        "/wallet",
        new URL(pending).pathname,
        new URL(open).pathname,
        "/dashboard/balance",
        "/dashboard/mandates",
        `/dashboard/mandates/${mandate}`,
        "/dashboard/subscriptions",
        "/dashboard/checkout-sessions"
      ]) {
        const res = await page.goto(`${server.baseUrl}${path}?lang=${lang}`)
        expect(res?.status(), path).toBeLessThan(400)
        const text = await page.locator("body").innerText()
        expect(text, `${path} in ${lang}`).not.toMatch(rawCodes)
        const name = path.replace(/\//g, "-").replace(/-[0-9a-f-]{36}/, "-id")
        if (lang === "dv") await page.screenshot({ path: `/tmp/shots/dv${name}.png`, fullPage: true })
      }
  })
})
