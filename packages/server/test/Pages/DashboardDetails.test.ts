/**
 * The merchant dashboard's detail pages in a real browser: every id shown links to its object's page
 * (read by walking every page a merchant can reach), a dynamic QR code shows its code, a mandate lists
 * its refused charges with their codes, and a subscription says why it ended and why each renewal
 * attempt missed. On a server of its own: the renewals need the manual clock moved by days.
 */
import type { Browser, BrowserContext, Page } from "playwright-core"
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest"
import * as B from "../support/Browser.js"
import * as People from "../support/DashboardPeople.js"
import * as F from "../support/Fixtures.js"
import * as PostgresServer from "../support/PostgresServer.js"
import type * as TestServer from "../support/TestServer.js"

B.requireOrWarn("the dashboard's detail pages")
vi.setConfig({ testTimeout: 120_000 })

let server: TestServer.LocalTestServer
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

const ok = <T extends { status: number; text: string }>(res: T, status = 201): T => {
  expect(res.status, res.text).toBe(status)
  return res
}

/** A page signed in to the merchant's dashboard as a new owner (over HTTP first, then its cookies). */
const signedIn = async (m: { readonly id: string }): Promise<Page> => {
  const person = await People.signIn(server, m.id, "owner")
  const context = await browser.newContext()
  contexts.push(context)
  await context.addCookies(People.browserCookies(server.baseUrl, person))
  const page = await context.newPage()
  page.setDefaultTimeout(8_000)
  await page.goto(`${server.baseUrl}/dashboard`)
  await page.getByRole("heading", { name: "Mandates" }).waitFor()
  return page
}

/** A paid monthly subscription of the merchant's sandbox payer: its id. */
const subscribe = async (key: string) => {
  const session = ok(
    await server.request("POST", "/checkout/sessions", {
      key,
      body: {
        mode: "SUBSCRIPTION",
        title: "Island Fibre",
        reference: F.unique("sub"),
        price_data: { name: "Fibre 50", amount: 1_000, interval: "MONTH" }
      }
    }),
    200
  )
  const paid = ok(
    await server.request("POST", `/test-helpers/checkout/sessions/${session.body.id}/pay`, { key }),
    200
  )
  return paid.body.subscription.id as string
}

const advanceBy = async (seconds: number) =>
  ok(await server.ops("POST", "/ops/clock/advance", { by_seconds: seconds }), 200)

const uuid = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|evt_[0-9a-f]{32}/g

describe.skipIf(!B.available)("dashboard detail pages", () => {
  it("links every id it shows to its object's page, and every such page opens", async () => {
    const m = await F.merchant(server)
    const mandate = ok(await server.request("POST", "/mandates", { key: m.test, body: F.mandateBody() }))
    const charge = ok(
      await server.request("POST", `/mandates/${mandate.body.id}/charges`, {
        key: m.test,
        body: { amount: 5_000 }
      })
    )
    ok(
      await server.request("POST", "/refunds", {
        key: m.test,
        body: { charge_id: charge.body.id, amount: 700 }
      })
    )
    const code = ok(
      await server.request("POST", "/qr-codes", {
        key: m.test,
        body: { outlet_id: m.outletId, type: "DYNAMIC", amount: 2_000, title: "Table 4" }
      })
    )
    ok(
      await server.request("POST", "/test-helpers/qr-codes/pay", {
        key: m.test,
        body: { payload: code.body.payload }
      })
    )
    await subscribe(m.test)
    ok(
      await server.request("POST", "/webhook-endpoints", {
        key: m.test,
        body: { url: "http://127.0.0.1:9/hooks", enabled_events: ["*"] }
      })
    )
    const page = await signedIn(m)

    // Every page reachable from the sections, once each (not the forms, which change things).
    const sections = [
      "mandates",
      "qr-codes",
      "checkout-sessions",
      "subscriptions",
      "balance",
      "refunds",
      "events",
      "webhooks",
      "audit"
    ]
    const queue = sections.map((s) => `/dashboard/${s}`)
    const seen = new Set(queue)
    const kinds = new Set<string>()
    while (queue.length > 0) {
      const path = queue.shift()!
      const res = await page.goto(`${server.baseUrl}${path}`)
      expect(res?.status(), path).toBe(200)
      expect(await page.locator("main .error").count(), path).toBe(0)
      // An id on the page is the text of a link to its page, or the page's own (its facts say what it is).
      const loose: ReadonlyArray<string> = await page.evaluate((source) => {
        const out: Array<string> = []
        const walker = document.createTreeWalker(document.querySelector("main")!, NodeFilter.SHOW_TEXT)
        for (let n = walker.nextNode(); n !== null; n = walker.nextNode()) {
          const ids = (n.nodeValue ?? "").match(new RegExp(source, "g")) ?? []
          const link = n.parentElement!.closest("a")
          if (link !== null) {
            // A link showing an id leads to that id's page, not elsewhere (a list filtered by it).
            for (const id of ids)
              if (!new URL(link.href).pathname.includes(id)) out.push(`${id} (a link elsewhere)`)
            continue
          }
          // A QR code's content is what it encodes, not an id of anything.
          if (n.parentElement!.closest("pre, input, option, .payload") !== null) continue
          for (const id of ids) if (!location.pathname.includes(id)) out.push(id)
        }
        return out
      }, uuid.source)
      expect(loose, `ids without a link on ${path}`).toEqual([])
      const links: ReadonlyArray<string> = await page.evaluate(() =>
        Array.from(document.querySelectorAll("main a[href^='/dashboard/']"), (a) => a.getAttribute("href")!)
      )
      for (const href of links) {
        const to = href.split("?")[0]!
        if (seen.has(to) || /\/(refund|payment|settlement)$/.test(to)) continue
        seen.add(to)
        queue.push(to)
        kinds.add(to.split("/")[2]!)
      }
    }
    // Each kind of object has a page, reached through a link.
    expect([...kinds].sort()).toEqual(
      expect.arrayContaining([
        "charges",
        "checkout-sessions",
        "events",
        "invoices",
        "mandates",
        "qr-codes",
        "qr-payments",
        "refunds",
        "subscriptions",
        "webhooks"
      ])
    )

    // The balance's movement of the charge leads to the charge, which leads back to its mandate.
    await page.goto(`${server.baseUrl}/dashboard/balance`)
    await page.getByRole("link", { name: charge.body.id }).click()
    await page.getByRole("heading", { name: "Charge" }).waitFor()
    expect(await page.textContent("main")).toContain("MVR 7.00")
    await B.capture(page, "dashboard-charge")
    await page.getByRole("link", { name: mandate.body.id }).click()
    await page.getByRole("heading", { name: "Mandate" }).waitFor()
    // Another merchant's charge is nothing of this one's.
    const other = await F.merchant(server)
    const theirs = ok(await server.request("POST", "/mandates", { key: other.test, body: F.mandateBody() }))
    const theirCharge = ok(
      await server.request("POST", `/mandates/${theirs.body.id}/charges`, {
        key: other.test,
        body: { amount: 900 }
      })
    )
    const hidden = await page.goto(`${server.baseUrl}/dashboard/charges/${theirCharge.body.id}`)
    expect(hidden?.status()).toBe(404)
    await page.getByText("Nothing of yours has this id.").waitFor()
    await page.goto(`${server.baseUrl}/dashboard/events`)
    await page.locator("table[aria-label=Events] a.id").first().click()
    await page.getByRole("heading", { name: "Event" }).waitFor()
    await B.capture(page, "dashboard-event")
  })

  it("shows a dynamic QR code's image and content", async () => {
    const m = await F.merchant(server)
    const code = ok(
      await server.request("POST", "/qr-codes", {
        key: m.test,
        body: { outlet_id: m.outletId, type: "DYNAMIC", amount: 4_500, title: "Table 9" }
      })
    )
    const page = await signedIn(m)
    await page.goto(`${server.baseUrl}/dashboard/qr-codes`)
    await page.getByRole("link", { name: "Show code: Table 9" }).click()
    await page.getByRole("heading", { name: "QR code" }).waitFor()
    const image = page.locator("img.qr")
    await image.waitFor()
    expect(await image.evaluate((i) => (i as HTMLImageElement).naturalWidth)).toBeGreaterThan(0)
    expect(await image.getAttribute("alt")).toBe(`QR code ${code.body.qrid}`)
    expect(await page.textContent("table[aria-label=Details]")).toContain(code.body.payload)
    await B.capture(page, "dashboard-qr-dynamic")
  })

  it("lists a mandate's refused charges with their codes", async () => {
    const m = await F.merchant(server)
    const mandate = ok(
      await server.request("POST", "/mandates", {
        key: m.test,
        body: F.mandateBody({ per_charge_cap: 1_000 })
      })
    )
    const refused = await server.request("POST", `/mandates/${mandate.body.id}/charges`, {
      key: m.test,
      body: { amount: 1_500, reference: "order-77" }
    })
    expect(refused.status).toBe(422)
    const page = await signedIn(m)
    await page.goto(`${server.baseUrl}/dashboard/mandates/${mandate.body.id}`)
    await page.getByRole("heading", { name: "Refused charges" }).waitFor()
    const row = await page.textContent("table[aria-label='Refused charges'] tbody tr")
    expect(row).toContain("PER_CHARGE_CAP_EXCEEDED")
    expect(row).toContain("The amount is above the mandate's per charge cap")
    expect(row).toContain("MVR 15.00")
    expect(row).toContain("order-77")
    await B.capture(page, "dashboard-mandate-refused")
    await page.goto(`${server.baseUrl}/dashboard/mandates/${mandate.body.id}?lang=dv`)
    expect(await page.textContent("table[aria-label='ނުނެގުނު ފައިސާ']")).toContain("PER_CHARGE_CAP_EXCEEDED")
  })

  it("says why a subscription ended, and why each renewal attempt missed", async () => {
    const m = await F.merchant(server)
    const byMerchant = await subscribe(m.test)
    ok(await server.request("POST", `/subscriptions/${byMerchant}/cancel`, { key: m.test, body: {} }), 200)
    const dunned = await subscribe(m.test)
    ok(await server.request("POST", "/test-helpers/payer", { key: m.test, body: { balance: 0 } }), 200)
    // The renewal a month on, then its three retries 12, 24 and 48 hours apart: all missed.
    await advanceBy(32 * 86_400)
    for (const hours of [12, 24, 48]) await advanceBy(hours * 3_600 + 60)
    const sub = ok(await server.request("GET", `/subscriptions/${dunned}`, { key: m.test }), 200)
    expect(sub.body.cancellationInitiator).toBe("DUNNING")

    const page = await signedIn(m)
    await page.goto(`${server.baseUrl}/dashboard/subscriptions/${byMerchant}`)
    expect(await page.textContent("table[aria-label=Details]")).toContain("Cancelled by the merchant")
    await page.goto(`${server.baseUrl}/dashboard/subscriptions/${dunned}`)
    expect(await page.textContent("table[aria-label=Details]")).toContain(
      "Ended after four failed renewal attempts"
    )
    const attempts = page.locator("table[aria-label='Failed attempts'] tbody tr")
    expect(await attempts.count()).toBe(4)
    for (let i = 0; i < 4; i++) {
      const text = await attempts.nth(i).textContent()
      expect(text).toContain("The customer's balance was too low")
      expect(text).toContain(String(4 - i))
    }
    await B.capture(page, "dashboard-subscription-ended")
    // The failed invoice's own page lists its attempts too.
    await attempts.first().locator("a.id").click()
    await page.getByRole("heading", { name: "Invoice" }).waitFor()
    expect(await page.locator("table[aria-label='Failed attempts'] tbody tr").count()).toBe(4)
    expect(await page.textContent("table[aria-label=Details]")).toContain(
      "The customer's balance was too low"
    )
    await B.capture(page, "dashboard-invoice")
  })
})
