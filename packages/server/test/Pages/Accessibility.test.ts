/**
 * axe-core in Debian's Chromium on every page the service serves, in English and Dhivehi, on the compiled
 * server a user starts (`node packages/server/dist/bin.js`, on a fresh PostgreSQL database with
 * `DATABASE_URL`, else on PGlite in a temporary directory): 0 critical and 0 serious findings. Every page
 * state a customer or a merchant can reach is visited: the forms, their code steps, the results, the
 * refusals, the wallet with things in it, each dashboard section, each operator console section. On each
 * page, besides axe: nothing is wider than a 390 px phone, and in Dhivehi every amount, date and time is
 * isolated left to right (so "MVR 1,500.00" and "2026-12-02 10:54" are never reordered), no state is left as its English code
 * (`PAID`, `ACTIVE`) and no notice is left in English. Screenshots of the Dhivehi pages go to
 * `artifacts/screenshots` (`a11y-<page>-dv-<width>.png`), for looking at the right-to-left layout.
 */
import { Effect, Exit, Scope } from "effect"
import { createRequire } from "node:module"
import type { Browser, BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import * as B from "../support/Browser.js"
import * as Staff from "../support/ConsolePeople.js"
import * as People from "../support/DashboardPeople.js"
import * as F from "../support/Fixtures.js"
import * as ProcessDatabase from "../support/ProcessDatabase.js"
import * as ServerProcess from "../support/ServerProcess.js"
import * as TestServer from "../support/TestServer.js"

B.requireOrWarn("the accessibility (axe-core) tests")
vi.setConfig({ testTimeout: 420_000 })

const axeSource = createRequire(import.meta.url).resolve("axe-core/axe.min.js")

interface Finding {
  readonly page: string
  readonly rule: string
  readonly impact: string
  readonly help: string
  readonly targets: ReadonlyArray<string>
}

const scope = Effect.runSync(Scope.make())
let process_: ServerProcess.ServerProcess
let server: TestServer.TestServer
let browser: Browser

// The server and the browser start at once.
beforeAll(async () => {
  const launched = B.available ? B.launch().then((b) => (browser = b)) : undefined
  process_ = await ServerProcess.start({
    env: {
      ...(await ProcessDatabase.env(scope, "laari-a11y-")),
      LAARI_OPS_TOKEN: TestServer.OpsToken,
      LAARI_CLOCK: "manual"
    }
  })
  server = { ...TestServer.client(process_.baseUrl), close: async () => {} }
  await launched
}, 180_000)

afterAll(async () => {
  await browser?.close()
  await process_?.stop()
  await Effect.runPromise(Scope.close(scope, Exit.void))
})

const lastCode = async (customerId: string) => {
  const notes = await server.ops("GET", `/ops/customers/${customerId}/notifications`)
  return notes.body.find((n: any) => n.kind === "one_time_code").data.code as string
}

const ok = <T extends { status: number; text: string }>(res: T, status = 201): T => {
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${res.text}`)
  return res
}

/** Everything the pages can show: a live merchant with a mandate in each state, sessions, a customer. */
const stage = async () => {
  const m = await F.merchant(server, { name: "Island Grocer" })
  ok(
    await server.ops("POST", `/ops/merchants/${m.id}/features`, {
      mandates_live: true,
      subscriptions_live: true
    }),
    200
  )
  const customer = await F.customer(server, { balance: 500_000 })
  const mandate = async (title: string) =>
    ok(
      await server.request("POST", "/mandates", {
        key: m.live,
        body: F.mandateBody({
          title,
          description: "Delivered every Friday",
          per_charge_cap: 150_000,
          period_cap: 400_000,
          period: "MONTH",
          return_url: "https://merchant.example/done"
        })
      })
    ).body.id as string
  const answer = async (id: string, action: "approve" | "decline") => {
    const c = ok(
      await server.request("POST", `/approvals/mandates/${id}/challenge`, {
        body: { phone: customer.phone }
      }),
      200
    )
    ok(
      await server.request("POST", `/approvals/mandates/${id}/${action}`, {
        body: { challenge_id: c.body.challenge_id, otp: await lastCode(customer.id) }
      }),
      200
    )
  }
  const pending = await mandate("Weekly groceries")
  const challenge = ok(
    await server.request("POST", `/approvals/mandates/${pending}/challenge`, {
      body: { phone: customer.phone }
    }),
    200
  ).body.challenge_id as string
  const approved = await mandate("Daily coffee")
  await answer(approved, "approve")
  const charge = ok(
    await server.request("POST", `/mandates/${approved}/charges`, {
      key: m.live,
      headers: { "idempotency-key": F.unique("k") },
      body: { amount: 150_000, description: "Order 1042" }
    })
  ).body.id as string
  // Part of it given back: the wallet and the dashboard show refunded amounts.
  ok(await server.request("POST", "/refunds", { key: m.live, body: { charge_id: charge, amount: 2_500 } }))
  // A charge above the cap: refused, listed on the mandate's page with its code.
  ok(
    await server.request("POST", `/mandates/${approved}/charges`, {
      key: m.live,
      headers: { "idempotency-key": F.unique("k") },
      body: { amount: 150_001, description: "Order 1043" }
    }),
    422
  )
  const declined = await mandate("Magazine")
  await answer(declined, "decline")

  const session = async (key: string, body: Record<string, unknown>) =>
    ok(
      await server.request("POST", "/checkout/sessions", {
        key,
        body: { reference: F.unique("s"), return_url: "https://merchant.example/done", ...body }
      }),
      200
    ).body.id as string
  const payment = await session(m.live, { mode: "PAYMENT", title: "Fish curry", amount: 12_550 })
  const plan = { name: "Gold gym", amount: 25_000, interval: "MONTH" }
  const subscription = await session(m.live, { mode: "SUBSCRIPTION", title: "Gym", price_data: plan })
  const sandbox = await session(m.test, { mode: "PAYMENT", title: "Fish curry", amount: 12_550 })
  const paid = await session(m.live, { mode: "SUBSCRIPTION", title: "Gym", price_data: plan })
  const c2 = ok(
    await server.request("POST", `/approvals/checkout/${paid}/challenge`, {
      body: { phone: customer.phone }
    }),
    200
  )
  ok(
    await server.request("POST", `/approvals/checkout/${paid}/pay`, {
      body: { challenge_id: c2.body.challenge_id, otp: await lastCode(customer.id) }
    }),
    200
  )
  const cancelled = await session(m.live, { mode: "PAYMENT", title: "Fish curry", amount: 12_550 })
  ok(await server.request("POST", `/checkout/sessions/${cancelled}/cancel`, { key: m.live }), 200)
  ok(
    await server.request("POST", "/qr-codes", {
      key: m.live,
      body: { outlet_id: m.outletId, title: "Till 1" }
    })
  )
  // The newest code: a dynamic one, whose page draws it.
  ok(
    await server.request("POST", "/qr-codes", {
      key: m.live,
      body: { outlet_id: m.outletId, type: "DYNAMIC", amount: 4_500, title: "Table 9" }
    })
  )
  ok(
    await server.request("POST", "/webhook-endpoints", {
      key: m.live,
      body: { url: "https://merchant.example/hooks", enabled_events: ["mandate.charge.succeeded"] }
    })
  )
  return {
    m,
    customer,
    pending,
    challenge,
    approved,
    charge,
    declined,
    payment,
    subscription,
    sandbox,
    paid,
    cancelled
  }
}

/** Every state's code, as the API spells it: none may be shown as is in Dhivehi. */
const codes =
  /\b(INITIATED|ACTIVE|DECLINED|REVOKED|EXPIRED|SUSPENDED|PAST_DUE|CANCELLED|PENDING|CHARGING|PAID|FAILED|VOID|OPEN|COMPLETE|INACTIVE|ENABLED|DISABLED|SUCCEEDED|PAYMENT|SUBSCRIPTION|STATIC|DYNAMIC|LIVE|TEST)\b/

/**
 * What the page shows wrongly, read in the browser: at 390 px, any element wider than the viewport; in
 * Dhivehi, any amount, date or time not inside a left-to-right element, and any text of a right-to-left
 * element that is a state's code or English words.
 */
const layout = async (page: Page, name: string, lang: "en" | "dv"): Promise<ReadonlyArray<Finding>> => {
  await page.setViewportSize({ width: 390, height: 900 })
  const found: ReadonlyArray<{ rule: string; help: string; target: string }> = await page.evaluate(
    ({ rtl, codes }) => {
      const out: Array<{ rule: string; help: string; target: string }> = []
      const describe = (e: Element) =>
        `${e.tagName.toLowerCase()}${e.id ? `#${e.id}` : ""}${e.className ? `.${String(e.className).replace(/ /g, ".")}` : ""}`
      const width = document.documentElement.clientWidth
      for (const e of Array.from(document.querySelectorAll("body *"))) {
        // What an ancestor clips (a visually hidden table head) is not shown, so cannot overflow.
        let clipped = false
        for (let a = e.parentElement; a !== null && !clipped; a = a.parentElement)
          clipped = getComputedStyle(a).overflowX !== "visible"
        if (clipped) continue
        const r = e.getBoundingClientRect()
        if (r.width > 0 && (r.right > width + 1 || r.left < -1))
          out.push({
            rule: "overflow",
            help: `beyond ${width} px: ${Math.round(r.left)}..${Math.round(r.right)}`,
            target: describe(e)
          })
      }
      if (!rtl) return out
      const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT)
      const states = new RegExp(codes)
      for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
        const value = node.nodeValue ?? ""
        const parent = node.parentElement!
        if (parent.closest("script,style,code,option,[lang=en]") !== null) continue
        // An element with `dir` isolates its content (`<bdi dir="ltr">`; what a merchant wrote: `dir="auto"`).
        const ltr = ["ltr", "auto"].includes(parent.closest("[dir]")?.getAttribute("dir") ?? "")
        if (/MVR|\d[,.:-]\d/.test(value) && !ltr)
          out.push({
            rule: "bidi",
            help: `not isolated left to right: ${value.trim()}`,
            target: describe(parent)
          })
        if (parent.closest("[dir=auto]") !== null) continue // what a merchant or customer wrote
        if (states.test(value))
          out.push({ rule: "state", help: `a state's code: ${value.trim()}`, target: describe(parent) })
        if (/[A-Za-z]{3,} [A-Za-z]{3,}/.test(value) && !ltr)
          out.push({ rule: "english", help: `English words: ${value.trim()}`, target: describe(parent) })
      }
      return out
    },
    { rtl: lang === "dv", codes: codes.source }
  )
  await page.setViewportSize({ width: 1280, height: 900 })
  return found.map((f) => ({ page: name, rule: f.rule, impact: "layout", help: f.help, targets: [f.target] }))
}

/**
 * axe-core's critical and serious findings on the page now open, and what `layout` finds there. Only the
 * violations are asked for: axe then skips detailing every passing node, which is most of its time.
 * Screenshots of the Dhivehi pages only: they are for looking at the right-to-left layout.
 */
const audit = async (page: Page, name: string, lang: "en" | "dv"): Promise<ReadonlyArray<Finding>> => {
  const results: any = await page.evaluate(() =>
    (globalThis as any).axe.run(document, { resultTypes: ["violations"] })
  )
  if (lang === "dv") await B.capture(page, `a11y-${name}`)
  return [
    ...results.violations
      .filter((v: any) => v.impact === "critical" || v.impact === "serious")
      .map((v: any) => ({
        page: name,
        rule: v.id,
        impact: v.impact,
        help: v.help,
        targets: v.nodes.map((n: any) => n.target.join(" "))
      })),
    ...(await layout(page, name, lang))
  ]
}

/**
 * `/docs` is Scalar's API reference (`HttpApiScalar` of @effect/platform serves its bundle): what axe finds inside
 * it is Scalar's to fix, so these rules are accepted there and only there. A new kind of finding fails.
 */
const acceptedOnDocs = new Set([
  "aria-allowed-attr",
  "aria-required-children",
  "button-name",
  "color-contrast",
  "html-has-lang",
  "label-content-name-mismatch",
  "list",
  "listitem",
  "scrollable-region-focusable",
  "overflow"
])
const accepted = (f: Finding) => f.page.startsWith("docs-") && acceptedOnDocs.has(f.rule)

/**
 * A browser of its own per language; the CSP forbids injected scripts, so axe needs it bypassed. axe is
 * in every page of it from the start (an init script, sent to the browser once, not once a page).
 */
const context = async (): Promise<BrowserContext> => {
  const ctx = await browser.newContext({ bypassCSP: true })
  await ctx.addInitScript({ path: axeSource })
  return ctx
}

describe.skipIf(!B.available)("axe-core on every page, in English and Dhivehi", () => {
  // The checks can fail: each finds what it is for on a page made to break it.
  it("finds a serious axe finding, an overflow, an unisolated amount and a state's code", async () => {
    const ctx = await context()
    const page = await ctx.newPage()
    await page.goto(`${process_.baseUrl}/wallet?lang=dv`)
    await page.evaluate(() => {
      const main = document.querySelector("main")!
      main.insertAdjacentHTML(
        "beforeend",
        '<img src="/x.png"><p style="width:2000px">MVR 1,500.00 · PAID · 2026-11-27 10:54</p>'
      )
    })
    const rules = new Set((await audit(page, "broken-dv", "dv")).map((f) => f.rule))
    await ctx.close()
    expect([...rules].sort()).toEqual(expect.arrayContaining(["bidi", "image-alt", "overflow", "state"]))
  })

  for (const lang of ["en", "dv"] as const)
    it(`${lang}: 0 critical and 0 serious findings`, async () => {
      const s = await stage()
      const ctx = await context()
      const page = await ctx.newPage()
      page.setDefaultTimeout(20_000)
      const base = process_.baseUrl
      const findings: Array<Finding> = []
      const visit = async (name: string, path: string, status: number) => {
        const res = await page.goto(`${base}${path}${path.includes("?") ? "&" : "?"}lang=${lang}`)
        expect(res?.status(), `${path} (${name})`).toBe(status)
        expect(res?.headers()["content-type"], path).toContain("text/html")
        findings.push(...(await audit(page, `${name}-${lang}`, lang)))
      }
      await visit("home", "/", 200)
      // The API reference is for developers, in English only.
      if (lang === "en") await visit("docs", "/docs", 200)
      await visit("mandate", `/mandate/${s.pending}`, 200)
      await visit("mandate-code", `/mandate/${s.pending}?challenge=${s.challenge}`, 200)
      await visit("mandate-approved", `/mandate/${s.approved}/done`, 200)
      await visit("mandate-declined", `/mandate/${s.declined}/done`, 200)
      await visit("mandate-closed", `/mandate/${s.approved}`, 409)
      await visit("mandate-unknown", "/mandate/7b0e8f3e-4a57-4f43-9d0e-3c1f0e0f0a11", 404)
      await visit("checkout-payment", `/checkout/${s.payment}`, 200)
      await visit("checkout-subscription", `/checkout/${s.subscription}`, 200)
      await visit("checkout-test", `/checkout/${s.sandbox}`, 200)
      await visit("checkout-paid", `/checkout/${s.paid}/done`, 200)
      await visit("checkout-cancelled", `/checkout/${s.cancelled}`, 410)

      // The wallet, signed in as the customer (with a mandate, a subscription, charges and notices).
      await visit("wallet-sign-in", "/wallet", 200)
      await page.locator("#phone").fill(s.customer.phone)
      await page.locator("form button[type=submit]").click()
      await page.locator("#otp").waitFor()
      findings.push(...(await audit(page, `wallet-code-${lang}`, lang)))
      await page.locator("#otp").fill(await lastCode(s.customer.id))
      await page.locator("form button[name=action]").click()
      await page.locator("#mandates").waitFor()
      findings.push(...(await audit(page, `wallet-${lang}`, lang)))

      // The dashboard: a new admin's first sign-in step by step (the new password, the authenticator, its
      // recovery codes), then on the live environment every section and the detail pages.
      const admin = await People.create(server, s.m.id, "admin")
      await visit("dashboard-sign-in", "/dashboard", 200)
      await page.locator("#email").fill(admin.email)
      await page.locator("#password").fill(admin.password)
      await page.locator("form button[type=submit]").click()
      await page.locator("#next").waitFor()
      findings.push(...(await audit(page, `dashboard-password-${lang}`, lang)))
      const chosen = `a long and quiet lagoon ${lang}`
      await page.locator("#current").fill(admin.password)
      await page.locator("#next").fill(chosen)
      await page.locator("#repeat").fill(chosen)
      await page.locator("form button[type=submit]").click()
      await page.locator("#totp-secret").waitFor()
      findings.push(...(await audit(page, `dashboard-enrol-${lang}`, lang)))
      const secret = (await page.locator("#totp-secret").textContent())!.trim()
      await page.locator("#code").fill(People.totp(secret))
      await page.locator("form button[type=submit]").click()
      await page.locator("ul.codes").waitFor()
      findings.push(...(await audit(page, `dashboard-recovery-codes-${lang}`, lang)))
      // Signed out and in again: the second factor's own page.
      await page.goto(`${base}/dashboard/account`)
      await page.locator("form[action$='/sign-out'] button").click()
      await page.locator("#email").fill(admin.email)
      await page.locator("#password").fill(chosen)
      await page.locator("form button[type=submit]").click()
      await page.locator("#code").waitFor()
      findings.push(...(await audit(page, `dashboard-two-factor-${lang}`, lang)))
      await page.locator("#code").fill(People.totp(secret, 1))
      await page.locator("form button[type=submit]").click()
      await page.locator("nav.sections").waitFor()
      await page.locator("#switch-to").selectOption(`${s.m.id}:live`)
      await page.locator("form[action$='/switch'] button").click()
      await page.locator(".badge.live").waitFor()
      for (const section of [
        "mandates",
        "qr-codes",
        "checkout-sessions",
        "subscriptions",
        "balance",
        "refunds",
        "events",
        "webhooks",
        "audit",
        "team",
        "keys",
        "account"
      ])
        await visit(`dashboard-${section}`, `/dashboard/${section}`, 200)
      // An invitation from the Team page, and its link's page as the invited person sees it.
      await page.goto(`${base}/dashboard/team?lang=${lang}`)
      const invited = `invited-${lang}-${Date.now()}@example.mv`
      await page.locator("#invite-email").fill(invited)
      await page.locator("form[action$='/team/invitations'] button[type=submit]").click()
      await page.locator("[role=status], .notice").first().waitFor()
      const links = await server.ops("GET", `/ops/users/invitations?merchant_id=${s.m.id}`)
      const link = (links.body as Array<{ email: string; link: string }>).find(
        (i) => i.email === invited
      )!.link
      await visit("dashboard-invitation", new URL(link).pathname, 200)
      await visit("dashboard-mandate", `/dashboard/mandates/${s.approved}`, 200)
      const refund = `/dashboard/mandates/${s.approved}/charges/${s.charge}/refund`
      await visit("dashboard-refund", refund, 200)
      // The refusal, as the confirmation page shows it (what was typed kept).
      await page.locator("#amount").fill("99999.00")
      await page.locator("form[action$='/refund'] button[type=submit]").click()
      await page.locator(".error, [role=alert]").first().waitFor()
      findings.push(...(await audit(page, `dashboard-refund-refused-${lang}`, lang)))
      const subscriptions = await server.request("GET", "/subscriptions", { key: s.m.live })
      await visit("dashboard-subscription", `/dashboard/subscriptions/${subscriptions.body[0].id}`, 200)
      const sub = subscriptions.body[0].id
      const invoices = await server.request("GET", `/subscriptions/${sub}/invoices`, { key: s.m.live })
      const invoice = `/dashboard/subscriptions/${sub}/invoices/${invoices.body[0].id}/refund`
      await visit("dashboard-invoice-refund", invoice, 200)
      const codes = await server.request("GET", "/qr-codes", { key: s.m.live })
      await visit("dashboard-qr-code", `/dashboard/qr-codes/${codes.body[0].id}`, 200)
      const endpoints = await server.request("GET", "/webhook-endpoints", { key: s.m.live })
      await visit("dashboard-webhook", `/dashboard/webhooks/${endpoints.body[0].id}`, 200)
      // The detail pages every id links to.
      await visit("dashboard-charge", `/dashboard/charges/${s.charge}`, 200)
      const refunds = await server.request("GET", `/refunds?charge_id=${s.charge}`, { key: s.m.live })
      await visit("dashboard-refund-detail", `/dashboard/refunds/${refunds.body[0].id}`, 200)
      await visit("dashboard-invoice", `/dashboard/invoices/${invoices.body[0].id}`, 200)
      await visit("dashboard-checkout-session", `/dashboard/checkout-sessions/${s.paid}`, 200)
      const events = await server.request("GET", "/events", { key: s.m.live })
      await visit("dashboard-event", `/dashboard/events/${events.body[0].id}`, 200)
      // The operator console: a new member of staff's first sign-in step by step, then every section.
      const staff = await Staff.create(server, "ops_admin")
      await visit("console-sign-in", "/ops/console", 200)
      await page.locator("#email").fill(staff.email)
      await page.locator("#password").fill(staff.password)
      await page.locator("form button[type=submit]").click()
      await page.locator("#next").waitFor()
      findings.push(...(await audit(page, `console-password-${lang}`, lang)))
      const staffChosen = `a long and quiet reef ${lang}`
      await page.locator("#current").fill(staff.password)
      await page.locator("#next").fill(staffChosen)
      await page.locator("#repeat").fill(staffChosen)
      await page.locator("form button[type=submit]").click()
      await page.locator("#totp-secret").waitFor()
      findings.push(...(await audit(page, `console-enrol-${lang}`, lang)))
      const staffSecret = (await page.locator("#totp-secret").textContent())!.trim()
      await page.locator("#code").fill(People.totp(staffSecret))
      await page.locator("form button[type=submit]").click()
      await page.locator("ul.codes").waitFor()
      findings.push(...(await audit(page, `console-recovery-codes-${lang}`, lang)))
      for (const section of [
        "merchants",
        `merchants/${s.m.id}`,
        "customers",
        "suspensions",
        "clock",
        "audit",
        "account"
      ])
        await visit(`console-${section.replace(/\/.*/, "-one")}`, `/ops/console/${section}`, 200)
      await ctx.close()
      const refused = findings.filter((f) => !accepted(f))
      expect(refused, JSON.stringify(refused, null, 2)).toEqual([])
    })
})
