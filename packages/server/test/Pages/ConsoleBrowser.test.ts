/**
 * The operator console in a real browser: a member of staff's first sign-in (one-time password, a new
 * one, the authenticator, the recovery codes), a merchant made with its first outlet, its page, and the
 * audit log naming the change, then the merchants page in Dhivehi. The server runs on a fresh PostgreSQL
 * database with `DATABASE_URL`, else on PGlite.
 */
import { describe, expect, it, vi } from "vitest"
import * as B from "../support/Browser.js"
import * as Staff from "../support/ConsolePeople.js"
import * as People from "../support/DashboardPeople.js"
import { newPage, server, start } from "../support/HostedPages.js"

B.requireOrWarn("the operator console's browser tests")
vi.setConfig({ testTimeout: 90_000 })
start()

describe.skipIf(!B.available)("operator console", () => {
  it("signs in a new member of staff, makes a merchant with an outlet, and shows it in the audit log", async () => {
    const made = await Staff.create(server, "ops_admin")
    const { page } = await newPage()
    await page.goto(`${server.baseUrl}/ops/console`)
    await page.getByRole("heading", { name: "Operator console" }).waitFor()
    await page.getByLabel("Email address").fill(made.email)
    await page.getByLabel("Password").fill(made.password)
    await page.getByRole("button", { name: "Sign in" }).click()
    await page.getByRole("heading", { name: "Choose a new password" }).waitFor()
    await page.getByLabel("Current password").fill(made.password)
    const chosen = "a long and quiet reef at dusk"
    await page.getByLabel("New password", { exact: true }).fill(chosen)
    await page.getByLabel("Repeat the new password").fill(chosen)
    await page.getByRole("button", { name: "Change password" }).click()
    // Staff always set up a second factor; the code is computed here from the secret the page shows.
    await page.getByRole("heading", { name: "Set up two-factor sign-in" }).waitFor()
    expect(await page.textContent("main")).toContain("Your role needs two-factor sign-in")
    const secret = (await page.locator("#totp-secret").textContent())!.trim()
    await page.getByLabel("Code").fill(People.totp(secret))
    await page.getByRole("button", { name: "Verify" }).click()
    await page.getByRole("heading", { name: "Recovery codes" }).waitFor()
    await page.getByRole("link", { name: "Continue" }).click()
    await page.getByRole("heading", { name: "Merchants" }).waitFor()
    const session = (await page.context().cookies()).find((c) => c.name === "laari_console")!
    expect(session.httpOnly).toBe(true)

    const name = `Reef Dive Shop ${Date.now()}`
    await page.getByLabel("Name").fill(name)
    await page.getByLabel("First outlet").fill("Hulhumale")
    await page.getByRole("button", { name: "Create merchant" }).click()
    await page.getByRole("heading", { name: "Merchant", exact: true }).waitFor()
    expect(await page.textContent("main")).toContain(name)
    expect(await page.textContent("main")).toContain("Hulhumale")
    expect(await page.textContent("[role=status]")).toContain("Merchant created.")
    await B.capture(page, "console-merchant")

    await page.getByRole("link", { name: "Audit log" }).click()
    await page.getByRole("heading", { name: "Audit log" }).waitFor()
    expect(await page.textContent("main")).toContain("merchant.create")

    await page.goto(`${server.baseUrl}/ops/console/merchants?lang=dv`)
    await page.getByRole("heading", { name: "ވިޔަފާރިތައް" }).waitFor()
    expect(await page.getAttribute("html", "dir")).toBe("rtl")
    expect(await page.textContent("main")).toContain(name)
  })
})
