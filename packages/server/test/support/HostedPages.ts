/**
 * What the browser tests of the hosted pages share: a server (on a fresh PostgreSQL database with
 * `DATABASE_URL`, else on PGlite), Chromium, and the merchant's site that return URLs lead to. `start`
 * registers the hooks of the calling test file, so each file has its own; the bindings below are set once
 * its `beforeAll` has run.
 */
import http from "node:http"
import type { Browser, BrowserContext, Page } from "playwright-core"
import { afterAll, afterEach, beforeAll } from "vitest"
import * as B from "./Browser.js"
import * as F from "./Fixtures.js"
import * as PostgresServer from "./PostgresServer.js"
import type * as TestServer from "./TestServer.js"

export let server: TestServer.TestServer
/** For the form posts' limits, the one thing a server of its own is needed for (`rateLimit` is its config). */
export let limited: TestServer.TestServer
export let merchantOrigin: string
let browser: Browser
let merchantSite: http.Server

/** Each test's pages, closed after it: an open page keeps its renderer busy with its timers. */
const contexts: Array<BrowserContext> = []

/** Starts the server (and the rate-limited one, with `limited`) and the browser at once, for this file. */
export const start = (options: { readonly limited?: boolean } = {}) => {
  beforeAll(async () => {
    const launched = B.available ? B.launch().then((b) => (browser = b)) : undefined
    const [main, limit] = await Promise.allSettled([
      PostgresServer.startQuickest(),
      options.limited ? PostgresServer.startQuickest({ rateLimit: 100 }) : Promise.resolve(undefined)
    ])
    // Whichever started is closed by afterAll, even when the other did not.
    if (main.status === "fulfilled") server = main.value
    if (limit.status === "fulfilled" && limit.value !== undefined) limited = limit.value
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

  afterEach(async () => {
    await Promise.all(contexts.splice(0).map((c) => c.close()))
  })
}

/** The page behind a URL the API returned, on this file's server. */
export const local = (url: string) => `${server.baseUrl}${new URL(url).pathname}`

export const newPage = async (): Promise<{ page: Page; dialogs: Array<string> }> => {
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
export const lastCode = async (customerId: string) => {
  const notes = await server.ops("GET", `/ops/customers/${customerId}/notifications`)
  return notes.body.find((n: any) => n.kind === "one_time_code").data.code as string
}

export const liveMerchant = async (features: Record<string, boolean>) => {
  const m = await F.merchant(server)
  await server.ops("POST", `/ops/merchants/${m.id}/features`, features)
  return m
}
