/**
 * `/docs` renders the published document in a real headless Chromium without reaching any other origin
 * (the machine has no internet access, and the page must not need it), and the operator API has its own
 * document at `/ops/openapi.json`, outside the merchants' contract.
 */
import { existsSync } from "node:fs"
import { type Browser, chromium } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as TestServer from "../support/TestServer.js"

const Chromium = "/usr/bin/chromium"
const hasChromium = existsSync(Chromium)

if (!hasChromium) {
  if (process.env.CI === "true")
    throw new Error(`${Chromium} is missing: .ci/run installs it; the browser test must run in CI`)
  console.warn(
    `\n!!! SKIPPING the /docs browser test: ${Chromium} is missing (apt-get install -y chromium) !!!\n`
  )
}

let server: TestServer.TestServer
let browser: Browser | undefined

beforeAll(async () => {
  server = await TestServer.start()
  if (hasChromium) browser = await chromium.launch({ executablePath: Chromium, args: ["--no-sandbox"] })
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await server?.close()
})

describe("GET /docs", () => {
  it("is served with a content security policy limited to this origin", async () => {
    const res = await fetch(`${server.baseUrl}/docs`)
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toMatch(/^text\/html/)
    const csp = res.headers.get("content-security-policy") ?? ""
    expect(csp).toContain("default-src 'self'")
    expect(csp).toContain("connect-src 'self'")
    expect(csp).toContain("frame-ancestors 'none'")
    expect(csp).not.toMatch(/https?:/)
    expect(res.headers.get("x-content-type-options")).toBe("nosniff")
    const html = await res.text()
    expect(html).not.toMatch(/<script[^>]+src=["']https?:/)
  })

  it.skipIf(!hasChromium)(
    "renders the reference offline in Chromium: operations shown, no other origin reached, no page errors",
    async () => {
      const page = await browser!.newPage()
      const foreign: Array<string> = []
      const errors: Array<string> = []
      page.on("pageerror", (e) => errors.push(e.message))
      await page.route("**/*", (route) => {
        const url = route.request().url()
        if (url.startsWith(server.baseUrl) || url.startsWith("data:") || url.startsWith("blob:"))
          return route.continue()
        foreign.push(url)
        return route.abort()
      })
      const started = Date.now()
      await page.goto(`${server.baseUrl}/docs`)
      await page.getByText("Create a mandate").first().waitFor({ timeout: 30_000 })
      const rendered = Date.now() - started
      console.log(`/docs rendered in ${rendered} ms`)
      await expect(page.title()).resolves.toBe("laari")
      // The first group open, every other group (and the webhooks) listed in the sidebar.
      for (const text of ["Charge a mandate", "QR codes", "Checkout", "Subscriptions", "Webhooks"])
        expect(await page.getByText(text, { exact: true }).count(), text).toBeGreaterThan(0)
      expect(foreign).toEqual([])
      expect(errors).toEqual([])
      await page.close()
    },
    60_000
  )
})

describe("GET /ops/openapi.json", () => {
  it("describes the operator API alone, and /openapi.json none of it", async () => {
    const ops = await server.request("GET", "/ops/openapi.json")
    expect(ops.status).toBe(200)
    expect(ops.body.openapi).toMatch(/^3\.1\./)
    expect(ops.body.info).toMatchObject({ title: "laari operator API", version: "2026-07-01" })
    const paths = Object.keys(ops.body.paths)
    expect(paths).toEqual(
      expect.arrayContaining(["/ops/merchants", "/ops/merchants/{id}/keys", "/ops/clock/advance"])
    )
    expect(paths.every((p) => p.startsWith("/ops/"))).toBe(true)
    expect(Object.keys(ops.body.components.securitySchemes)).toEqual(["opsToken"])

    const merchants = await server.request("GET", "/openapi.json")
    expect(Object.keys(merchants.body.paths).filter((p) => p.startsWith("/ops"))).toEqual([])
  })
})
