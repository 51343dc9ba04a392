/**
 * The merchant's dashboard in a real browser: a person's first sign-in (one-time password, a new one,
 * the authenticator), each section, webhook endpoints and their deliveries, the balance and settlement
 * report, the audit log and its export, what a role may not do, and refunds of charges and QR payments.
 * Screenshots at 375 and 1280 px go to `artifacts/screenshots`. The server runs on a fresh PostgreSQL
 * database with `DATABASE_URL`, else on PGlite.
 */
import { readFile } from "node:fs/promises"
import http from "node:http"
import type { Page } from "playwright-core"
import { describe, expect, it, vi } from "vitest"
import * as B from "../support/Browser.js"
import * as F from "../support/Fixtures.js"
import * as People from "../support/DashboardPeople.js"
import { newPage, server, start } from "../support/HostedPages.js"

B.requireOrWarn("the merchant dashboard's browser tests")
// A browser drives each flow end to end, result pages wait 3 s before sending the customer on.
// A browser driving a server: a minute and a half leaves room for a 2-core machine shared with a CPU hog.
vi.setConfig({ testTimeout: 90_000 })
start()

describe.skipIf(!B.available)("merchant dashboard", () => {
  it("signs in a new owner by hand, shows each section, manages an endpoint and resends a failed delivery", async () => {
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
    const owner = await People.create(server, m.id, "owner")
    await page.goto(`${server.baseUrl}/dashboard`)
    // A secret key is an API credential: it opens no dashboard.
    await page.getByLabel("Email address").fill(owner.email)
    await page.getByLabel("Password").fill(m.test)
    await page.getByRole("button", { name: "Sign in" }).click()
    await page.getByText("That email, password or code is not right.").waitFor()
    await page.getByLabel("Password").fill(owner.password)
    await page.getByRole("button", { name: "Sign in" }).click()
    // The one-time password is changed first; a short one is refused.
    await page.getByRole("heading", { name: "Choose a new password" }).waitFor()
    await page.getByLabel("Current password").fill(owner.password)
    const chosen = "a long and quiet lagoon at dawn"
    await page.getByLabel("New password", { exact: true }).fill(chosen)
    await page.getByLabel("Repeat the new password").fill(chosen)
    await page.getByRole("button", { name: "Change password" }).click()
    // An owner must set up an authenticator: the code is computed here from the secret the page shows.
    await page.getByRole("heading", { name: "Set up two-factor sign-in" }).waitFor()
    await B.capture(page, "dashboard-enrol")
    const secret0 = (await page.locator("#totp-secret").textContent())!.trim()
    await page.getByLabel("Code").fill(People.totp(secret0))
    await page.getByRole("button", { name: "Verify" }).click()
    await page.getByRole("heading", { name: "Recovery codes" }).waitFor()
    expect(await page.locator("ul.codes li").count()).toBe(10)
    await page.getByRole("link", { name: "Continue" }).click()
    await page.getByRole("heading", { name: "Mandates" }).waitFor()
    expect(await page.textContent(".badge")).toBe("TEST")
    const cookies = await page.context().cookies()
    const session = cookies.find((c) => c.name === "laari_dashboard")!
    expect(session.httpOnly).toBe(true)
    expect(session.value).not.toContain(chosen)
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
    await page.getByLabel("Email address").waitFor()
    await B.capture(page, "dashboard-sign-in")
    // Signing in again asks for the authenticator's code (the next step's: this one's was used).
    await page.getByLabel("Email address").fill(owner.email)
    await page.getByLabel("Password").fill(chosen)
    await page.getByRole("button", { name: "Sign in" }).click()
    await page.getByRole("heading", { name: "Two-factor sign-in" }).waitFor()
    await page.getByLabel("Code").fill(People.totp(secret0, 1))
    await page.getByRole("button", { name: "Verify" }).click()
    await page.getByRole("heading", { name: "Mandates" }).waitFor()
  })

  it("shows the balance and its movements, and downloads a day's settlement report", async () => {
    const m = await F.merchant(server)
    const created = await server.request("POST", "/mandates", { key: m.test, body: F.mandateBody() })
    await server.request("POST", `/mandates/${created.body.id}/charges`, {
      key: m.test,
      body: { amount: 12_550 }
    })
    const page = await signedIn(m.id, "finance", "/dashboard/mandates")
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

  it("shows the audit log with its filters, in English and Dhivehi, and exports it as CSV", async () => {
    const m = await F.merchant(server)
    // Signed in first: the owner's own sign-in steps are rows of the log too.
    const page = await signedIn(m.id, "owner", "/dashboard/mandates")
    const mandate = await server.request("POST", "/mandates", { key: m.test, body: F.mandateBody() })
    const charge = await server.request("POST", `/mandates/${mandate.body.id}/charges`, {
      key: m.test,
      body: { amount: 5_000 }
    })
    const refund = await server.request("POST", "/refunds", {
      key: m.test,
      body: { charge_id: charge.body.id, amount: 700, reference: "=HYPERLINK(1)" }
    })
    expect(refund.status, refund.text).toBe(201)
    const rows = (await server.request("GET", "/audit-events", { key: m.test })).body.data as Array<any>
    const keyId: string = rows.find((r) => r.action === "refund.create").actor.id
    await page.goto(`${server.baseUrl}/dashboard/mandates`)
    await page.getByRole("link", { name: "Audit log" }).click()
    await page.getByRole("heading", { name: "Audit log" }).waitFor()
    const table = page.locator("table[aria-label='Audit log'] tbody tr")
    expect(await table.count()).toBe(rows.length)
    const main = (await page.textContent("main"))!
    expect(main).toContain("refund.create")
    expect(main).toContain("mandate.create")
    // The key that acted has no page: shown short; the full id only in the CSV.
    expect(main).toContain(`API key ${keyId.slice(0, 8)}…`)
    expect(main).not.toContain(keyId)
    await B.capture(page, "dashboard-audit")

    // The refund's row links to the refund and to the charge it refunded.
    const refunded = table.filter({ hasText: "refund.create" })
    expect(await refunded.getByRole("link", { name: refund.body.id }).getAttribute("href")).toBe(
      `/dashboard/refunds/${refund.body.id}`
    )
    await refunded.getByRole("link", { name: charge.body.id }).click()
    await page.getByRole("heading", { name: "Charge" }).waitFor()

    // Filters: the action, the kind of resource, the actor (from its row), the days.
    await page.goto(`${server.baseUrl}/dashboard/audit`)
    await page.getByLabel("Action").fill("refund.create")
    await page.getByRole("button", { name: "Filter" }).click()
    await page.getByRole("heading", { name: "Audit log" }).waitFor()
    expect(await table.count()).toBe(1)
    expect(await page.getByLabel("Action").inputValue()).toBe("refund.create")
    await page.getByRole("link", { name: "Clear filters" }).click()
    await page.getByLabel("What").selectOption("mandate")
    await page.getByRole("button", { name: "Filter" }).click()
    await page.getByRole("heading", { name: "Audit log" }).waitFor()
    expect(await table.count()).toBe(rows.filter((r) => r.resource.type === "mandate").length)
    expect(await table.count()).toBeGreaterThan(0)
    await page.goto(`${server.baseUrl}/dashboard/audit`)
    await table
      .filter({ hasText: "refund.create" })
      .getByRole("link", { name: /^API key / })
      .click()
    await page.getByRole("heading", { name: "Audit log" }).waitFor()
    expect(await page.getByLabel("Actor id").inputValue()).toBe(keyId)
    expect(await table.count()).toBe(rows.filter((r) => r.actor.id === keyId).length)
    const today = (rows[0].createdAt as string).slice(0, 10)
    await page.goto(`${server.baseUrl}/dashboard/audit?from=${today}&to=${today}`)
    expect(await table.count()).toBe(rows.length)
    await page.goto(`${server.baseUrl}/dashboard/audit?to=2000-01-01`)
    await page.getByText("No changes recorded.").waitFor()
    const bad = await page.goto(`${server.baseUrl}/dashboard/audit?from=2026-02-30`)
    expect(bad?.status()).toBe(400)
    await page.getByText("Enter each day as YYYY-MM-DD.").waitFor()

    // The export: the filtered rows, every id in full, a formula defused.
    await page.goto(`${server.baseUrl}/dashboard/audit?action=refund.create`)
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("button", { name: "Download CSV" }).click()
    ])
    expect(download.suggestedFilename()).toMatch(/^audit-test-\d{4}-\d{2}-\d{2}\.csv$/)
    const csv = (await readFile(await download.path(), "utf8")).split("\r\n")
    expect(csv[0]).toMatch(/^id,created_at,actor_kind,actor_id,action,resource_type,resource_id,/)
    expect(csv).toHaveLength(3)
    expect(csv[1]).toContain(`,api_key,${keyId},refund.create,refund,${refund.body.id},test,`)
    expect(csv[1]).toContain(`""payment_id"":""${charge.body.id}""`)
    expect(csv[1]).toContain(`""reference"":""=HYPERLINK(1)""`)
    const all = await page.request.get(`${server.baseUrl}/dashboard/audit/export`)
    expect((await all.text()).split("\r\n")).toHaveLength(rows.length + 2)

    // In Dhivehi, right to left.
    await page.goto(`${server.baseUrl}/dashboard/audit?lang=dv`)
    expect(await page.getAttribute("html", "dir")).toBe("rtl")
    await page.getByRole("heading", { name: "އޯޑިޓް ލޮގު" }).waitFor()
    await page.getByLabel("ކުރި ކަންތައް").fill("refund.create")
    await page.getByRole("button", { name: "ފިލްޓަރ ކުރޭ" }).click()
    await page.getByRole("heading", { name: "އޯޑިޓް ލޮގު" }).waitFor()
    expect(await page.locator("table[aria-label='އޯޑިޓް ލޮގު'] tbody tr").count()).toBe(1)
    await B.capture(page, "dashboard-audit-dv")
    await page.goto(`${server.baseUrl}/dashboard/audit?lang=en`)

    // A role without logs:read sees neither the rows nor the file.
    const other = await signedIn(m.id, "finance", "/dashboard/mandates")
    const refused = await other.goto(`${server.baseUrl}/dashboard/audit/export`)
    expect(refused?.status()).toBe(403)
    await other.getByText("Your role lacks the logs:read permission.").waitFor()
  })

  it("shows a role only what it may do, names the permission it lacks, and refuses forged posts", async () => {
    const m = await F.merchant(server)
    const page = await signedIn(m.id, "viewer", "/dashboard/webhooks")
    await page.getByRole("heading", { name: "Webhook endpoints" }).waitFor()
    // No keys section for a viewer, and its page refused by name.
    expect(await page.getByRole("link", { name: "API keys" }).count()).toBe(0)
    const keys = await page.goto(`${server.baseUrl}/dashboard/keys`)
    expect(keys?.status()).toBe(403)
    await page.getByText("Your role lacks the keys:manage permission.").waitFor()
    // The refused page keeps a title in words.
    expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("Not allowed")
    // A post with a valid CSRF token but without the permission changes nothing.
    const csrf = await page.locator("input[name=_csrf]").first().inputValue()
    const post = await page.request.post(`${server.baseUrl}/dashboard/webhooks`, {
      form: { _csrf: csrf, url: "https://hooks.example.com/x" }
    })
    expect(post.status()).toBe(403)
    expect((await server.request("GET", "/webhook-endpoints", { key: m.test })).body).toEqual([])
    const res = await fetch(`${server.baseUrl}/dashboard/webhooks`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "url=http%3A%2F%2F127.0.0.1%2Fx",
      redirect: "manual"
    })
    expect(res.status).toBe(403)
  })
})

/** A page signed in (over HTTP first) as a new member of the merchant with `role`, at `path`. */
const signedIn = async (merchantId: string, role: string, path: string) => {
  const person = await People.signIn(server, merchantId, role)
  const { page } = await newPage()
  await page.context().addCookies(People.browserCookies(server.baseUrl, person))
  await page.goto(`${server.baseUrl}${path}`)
  return page
}

describe.skipIf(!B.available)("dashboard refunds", () => {
  /** A test merchant with one charge of `amount`, and a page signed in to its dashboard as `role`. */
  const charged = async (amount: number, role = "finance") => {
    const m = await F.merchant(server)
    const mandate = await server.request("POST", "/mandates", { key: m.test, body: F.mandateBody() })
    const charge = await server.request("POST", `/mandates/${mandate.body.id}/charges`, {
      key: m.test,
      body: { amount }
    })
    expect(charge.status, charge.text).toBe(201)
    const page = await signedIn(m.id, role, `/dashboard/mandates/${mandate.body.id}`)
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
    const { m, page, mandateId, chargeId, refunds } = await charged(12_550)
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

    // Each refund made in the dashboard is the signed-in person's in the audit log, from the browser; the
    // refused attempts left nothing.
    const audit = await server.request("GET", "/audit-events?action=refund.create", { key: m.test })
    expect(audit.status, audit.text).toBe(200)
    const rows = audit.body.data as ReadonlyArray<any>
    expect(rows.map((r) => r.summary.amount)).toEqual([8_424, 4_000])
    for (const row of rows) {
      expect(row.actor.kind).toBe("user")
      expect(row.userAgent).toMatch(/Chrome/)
    }
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

  it("refuses a role without refunds:create, on the page and on a post", async () => {
    const { page, mandateId, chargeId, refunds } = await charged(5_000, "developer")
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith("/refund")),
      page.getByRole("link", { name: /^Refund: / }).click()
    ])
    expect(response.status()).toBe(403)
    await page.getByText("Your role lacks the refunds:create permission.").waitFor()
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
