/**
 * The README run as a newcomer runs it, in a fresh clone of the committed HEAD: one
 * `pnpm install`, then `pnpm start` exactly as the README writes it, on PGlite and once more on a fresh
 * PostgreSQL database, on a port of its own (the commands read `$PORT`, never a literal 4000); every
 * `curl` and `pnpm laari` command of the shell blocks of the README and of docs/, with the keys and ids
 * the service printed in place of the placeholders; the pages in Chromium on that process (a test
 * checkout, the dashboard and a webhook endpoint, /docs); the first webhook, from `laari trigger` through
 * `laari listen` to the example receiver; then, in development mode, a live mandate approved and one
 * declined with their codes, a live checkout paid, the wallet signed in to and a mandate revoked; and the
 * JSON log format line by line. The commands come from the pages themselves, so they cannot drift; every
 * shell block is run here or says why not (`<!-- not-run: ... -->`).
 *
 * Its own CI step (`pnpm test:quickstart`): it builds a clone from nothing, which `pnpm test` need not.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import http from "node:http"
import * as Net from "node:net"
import os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { Effect, Exit, Scope } from "effect"
import * as OTPAuth from "otpauth"
import type { Browser } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as B from "../support/Browser.js"
import * as TestDatabase from "../support/TestDatabase.js"
import * as Readme from "./Readme.js"

B.requireOrWarn("the quick-start test's pages")
const postgresUrl = TestDatabase.postgresUrl
if (postgresUrl === undefined && process.env.CI === "true")
  throw new Error("DATABASE_URL is not set: the quick-start test must run on PostgreSQL in CI")

const repo = Path.resolve(fileURLToPath(import.meta.url), "../../../../..")
const log = (line: string) => console.log(`[quickstart] ${line}`)
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

// A busy 2-core machine: a first start builds every package (about four minutes at a load of 17 was seen).
const FirstStartMs = 600_000
const StartMs = 120_000
const CommandMs = 120_000

// ---------------------------------------------------------------------------------------------------------
// The clone, its environment and the commands run in it.

let clone: string
let curlHome: string
const started = Date.now()

/** A newcomer's environment: nothing that configures laari behind the README's back. */
const baseEnv = (): Record<string, string> => {
  const env: Record<string, string> = {}
  for (const [name, value] of Object.entries(process.env))
    if (value !== undefined && !/^(LAARI_|DATABASE_URL$|PORT$|NODE_OPTIONS$|CURL_HOME$)/.test(name))
      env[name] = value
  // curl runs exactly as written; its config adds the status as a last line, for the test to read.
  return { ...env, CURL_HOME: curlHome }
}

interface Ran {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

const sh = (command: string, env: Record<string, string>, timeoutMs = CommandMs): Promise<Ran> =>
  new Promise((resolve, reject) => {
    const child = spawn("sh", ["-c", command], { cwd: clone, env, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (s: string) => (stdout += s))
    child.stderr.setEncoding("utf8").on("data", (s: string) => (stderr += s))
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`\`${command}\` did not finish within ${timeoutMs} ms\n${stdout}\n${stderr}`))
    }, timeoutMs)
    child.once("exit", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = Net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as Net.AddressInfo
      server.close(() => resolve(port))
    })
  })

// ---------------------------------------------------------------------------------------------------------
// The README.

let blocks: ReadonlyArray<Readme.Block>
/** README commands run so far, as written (before substitution). */
const executed = new Set<string>()
/** The names of the blocks run so far. */
const executedBlocks = new Set<string>()

// ---------------------------------------------------------------------------------------------------------
// A started service: `pnpm start` in a shell, as typed.

interface Service {
  readonly command: string
  readonly baseUrl: string
  readonly stdout: () => string
  readonly stderr: () => string
  /** Ctrl-C: SIGINT to the whole process group, as a terminal sends it. */
  readonly stop: () => Promise<number | null>
}

const startService = async (
  command: string,
  env: Record<string, string>,
  options: { readonly timeoutMs: number; readonly bannerOn: "stdout" | "stderr" }
): Promise<Service> => {
  const t0 = Date.now()
  const child: ChildProcess = spawn("sh", ["-c", command], {
    cwd: clone,
    env,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true
  })
  let stdout = ""
  let stderr = ""
  child.stdout!.setEncoding("utf8").on("data", (s: string) => (stdout += s))
  child.stderr!.setEncoding("utf8").on("data", (s: string) => (stderr += s))
  let exit: number | null | undefined
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => {
      exit = code
      resolve(code)
    })
  )
  const output = () => `\n--- stdout\n${stdout}\n--- stderr\n${stderr}`
  const stop = async () => {
    if (exit !== undefined) return exit
    process.kill(-child.pid!, "SIGINT")
    const timer = setTimeout(() => process.kill(-child.pid!, "SIGKILL"), 45_000)
    const code = await exited
    clearTimeout(timer)
    return code
  }
  // Ready: the start-up lines are complete (their last line names `laari --help`), and /readyz says so.
  const deadline = t0 + options.timeoutMs
  let baseUrl: string | undefined
  for (;;) {
    if (exit !== undefined) throw new Error(`\`${command}\` exited (${exit}) before it was ready${output()}`)
    if (Date.now() > deadline) {
      await stop()
      throw new Error(`\`${command}\` was not ready within ${options.timeoutMs} ms${output()}`)
    }
    const banner = options.bannerOn === "stdout" ? stdout : stderr
    const running = /^laari is running on (\S+)/m.exec(banner)
    if (running !== null && /`laari --help` lists every command\)$/m.test(banner)) {
      baseUrl = running[1]!
      const ready = await fetch(`${baseUrl}/readyz`, { signal: AbortSignal.timeout(5_000) }).then(
        (r) => r.status,
        () => 0
      )
      if (ready === 200) break
    }
    await sleep(200)
  }
  log(`${command}: ready in ${((Date.now() - t0) / 1000).toFixed(1)} s at ${baseUrl}`)
  return { command, baseUrl, stdout: () => stdout, stderr: () => stderr, stop }
}

// ---------------------------------------------------------------------------------------------------------
// A receiver for webhook deliveries (the dashboard's endpoint, `laari listen`).

interface Received {
  readonly path: string
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
}
let receiver: http.Server
let receiverOrigin: string
const received: Array<Received> = []

// ---------------------------------------------------------------------------------------------------------

let browser: Browser | undefined
let tempDatabase: { readonly url: string; readonly scope: Scope.CloseableScope } | undefined

beforeAll(async () => {
  const head = execFileSync("git", ["-C", repo, "rev-parse", "HEAD"]).toString().trim()
  const dirty = execFileSync("git", ["-C", repo, "status", "--porcelain", "--untracked-files=no"])
    .toString()
    .trim()
  if (dirty !== "")
    console.warn(`[quickstart] uncommitted changes are not in the clone; testing HEAD ${head.slice(0, 9)}`)
  clone = mkdtempSync(Path.join(os.tmpdir(), "laari-quickstart-"))
  curlHome = mkdtempSync(Path.join(os.tmpdir(), "laari-quickstart-curl-"))
  writeFileSync(Path.join(curlHome, ".curlrc"), 'write-out = "\\n%{http_code}"\nmax-time = 60\n')
  execFileSync("git", ["clone", "--quiet", "--no-checkout", repo, clone])
  execFileSync("git", ["-C", clone, "checkout", "--quiet", head])
  log(`cloned ${head.slice(0, 9)} into ${clone}`)
  blocks = Readme.pages(clone)

  receiver = http.createServer((req, res) => {
    let body = ""
    req.setEncoding("utf8").on("data", (s: string) => (body += s))
    req.on("end", () => {
      received.push({ path: req.url ?? "", headers: req.headers, body })
      res.writeHead(204).end()
    })
  })
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r))
  receiverOrigin = `http://127.0.0.1:${(receiver.address() as Net.AddressInfo).port}`
  if (B.available) browser = await B.launch()
}, 120_000)

afterAll(async () => {
  await browser?.close()
  await new Promise((r) => receiver?.close(r))
  if (tempDatabase !== undefined) await Effect.runPromise(Scope.close(tempDatabase.scope, Exit.void))
  if (clone !== undefined) rmSync(clone, { recursive: true, force: true })
  if (curlHome !== undefined) rmSync(curlHome, { recursive: true, force: true })
  log(`the whole quick-start test took ${((Date.now() - started) / 1000).toFixed(0)} s`)
})

// ---------------------------------------------------------------------------------------------------------
// Running a README block.

interface Values {
  [placeholder: string]: string
}

interface Result {
  readonly command: string
  readonly stdout: string
  /** For `curl`: the HTTP status and the parsed JSON body. */
  readonly status?: number
  readonly json?: any
}

/**
 * Runs each command of the README block `name` as written, placeholders replaced: `export` sets the
 * environment of those after it (its value as the shell makes it), a command ending in `&` starts in the
 * background (stopped with the returned `stopBackground`, its output read with `output`) and is waited
 * for until it says it is ready, `curl` must answer `2xx`, every other command must exit 0.
 */
const runBlock = async (
  name: string,
  env: Record<string, string>,
  values: Values,
  /** Called after each command: learns the values later commands of the block need. */
  learn: (result: Result) => void = () => {}
) => {
  const results: Array<Result> = []
  const background: Array<{ readonly text: string; readonly child: ChildProcess; out: string }> = []
  const local = { ...env }
  executedBlocks.add(name)
  for (const command of Readme.commands(Readme.block(blocks, name).text)) {
    // Any port: the service runs on the test's own, so a literal 4000 would reach nothing (or another's).
    expect(command.text, `README block ${name}: a literal port`).not.toMatch(/localhost:4000\b/)
    const text = Readme.substitute(command.text, values)
    executed.add(command.text)
    const exported = /^export (\w+)=(.+)$/.exec(text)
    if (exported !== null) {
      const ran = await sh(`${text}; printf '%s' "$${exported[1]!}"`, local)
      expect(ran.code, `\`${text}\` (README block ${name}) exited ${ran.code}\n${ran.stderr}`).toBe(0)
      local[exported[1]!] = ran.stdout
      log(`export ${exported[1]!}`)
      continue
    }
    if (command.background) {
      const child = spawn("sh", ["-c", text], {
        cwd: clone,
        env: local,
        stdio: ["ignore", "pipe", "pipe"],
        detached: true
      })
      const started = { text, child, out: "" }
      background.push(started)
      // A reader waits for the line the README names (`Ready.`, `listening on`) before the next command.
      child.stdout!.setEncoding("utf8").on("data", (s: string) => (started.out += s))
      child.stderr!.setEncoding("utf8").on("data", (s: string) => (started.out += s))
      const deadline = Date.now() + CommandMs
      while (!/^(Ready\.|listening on )/m.test(started.out)) {
        if (child.exitCode !== null || Date.now() > deadline)
          throw new Error(`\`${text}\` (README block ${name}) never said it was ready\n${started.out}`)
        await sleep(200)
      }
      log(`in the background, ready: ${text}`)
      continue
    }
    const t0 = Date.now()
    const ran = await sh(text, local)
    const took = ((Date.now() - t0) / 1000).toFixed(1)
    expect(
      ran.code,
      `\`${text}\` (README block ${name}) exited ${ran.code}\n${ran.stdout}\n${ran.stderr}`
    ).toBe(0)
    if (text.startsWith("curl ")) {
      const lines = ran.stdout.split("\n")
      const status = Number(lines.pop())
      const body = lines.join("\n")
      log(`${status} in ${took} s: ${text.slice(0, 100)}`)
      expect(status, `\`${text}\` (README block ${name}) answered ${status}: ${body}`).toBeGreaterThanOrEqual(
        200
      )
      expect(status, `\`${text}\` (README block ${name}) answered ${status}: ${body}`).toBeLessThan(300)
      results.push({ command: text, stdout: body, status, json: JSON.parse(body) })
    } else {
      log(`exit 0 in ${took} s: ${text}`)
      results.push({ command: text, stdout: ran.stdout })
    }
    learn(results.at(-1)!)
  }
  const stopBackground = () => {
    for (const { child } of background) if (child.exitCode === null) process.kill(-child.pid!, "SIGTERM")
  }
  /** What the background command `index` (in the block's order) has written so far. */
  const output = (index: number) => background[index]!.out
  return { results, stopBackground, output, env: local }
}

// ---------------------------------------------------------------------------------------------------------
// Pages: any page answering 5xx, or a page that is not HTML, fails the test.

const openPage = async () => {
  const context = await browser!.newContext()
  const page = await context.newPage()
  // Each step bounded on its own, so a step that cannot happen names itself.
  page.setDefaultTimeout(30_000)
  const problems: Array<string> = []
  page.on("response", (r) => {
    const status = r.status()
    const type = r.headers()["content-type"] ?? ""
    if (status >= 500) problems.push(`${status} ${r.request().method()} ${r.url()}`)
    else if (
      r.request().isNavigationRequest() &&
      (status < 300 || status >= 400) &&
      !type.startsWith("text/html")
    )
      problems.push(`${status} ${r.url()} is ${type || "without a content type"}, not HTML`)
  })
  /** Opens `url`; a page that answered 5xx or not HTML fails here, naming itself. */
  const goto = async (url: string) => {
    await page.goto(url)
    expect(problems, "pages that answered 5xx or not HTML").toEqual([])
  }
  const close = async () => {
    await context.close()
    expect(problems, "pages that answered 5xx or not HTML").toEqual([])
  }
  return { page, goto, close }
}

/** The six-digit code `laari customers codes` printed last (the newest). */
const codeIn = (stdout: string): string => {
  const codes = [...stdout.matchAll(/^(\d{6})\b/gm)].map((m) => m[1]!)
  expect(codes.length, `no code in:\n${stdout}`).toBeGreaterThan(0)
  return codes[0]!
}

// ---------------------------------------------------------------------------------------------------------
// The walk: the quick start, then the live section, on one backend.

/**
 * The quick start on `backend`, all of it: the start, the CLI and curl examples, Ctrl-C, the development
 * start, `laari listen`/`trigger` and the live section in Chromium (the same on PostgreSQL as on
 * PGlite, the newcomer's database).
 */
const walk = (backend: "PGlite" | "PostgreSQL") => {
  const state: {
    env: Record<string, string>
    service?: Service
    values: Values
    secretKey?: string
    ownerPassword?: string
  } = { env: {}, values: {} }

  afterAll(async () => {
    await state.service?.stop()
  })

  it(`pnpm install && pnpm start (${backend}): ready, with the sandbox keys printed`, async () => {
    const [install, start, ...rest] = Readme.commands(Readme.block(blocks, "start").text)
    expect(install?.text).toBe("pnpm install")
    expect(start?.text).toBe("pnpm start")
    expect(rest).toEqual([])
    executed.add("pnpm install").add("pnpm start")
    executedBlocks.add("start")
    const port = await freePort()
    state.env = { ...baseEnv(), PORT: String(port) }
    if (backend === "PostgreSQL") {
      const scope = await Effect.runPromise(Scope.make())
      const url = await Effect.runPromise(Scope.extend(TestDatabase.createDatabase(postgresUrl!), scope))
      tempDatabase = { url, scope }
      state.env.DATABASE_URL = url
    } else {
      // One install for the whole test (the store is warm in CI: --prefer-offline).
      const t0 = Date.now()
      const ran = await sh("pnpm install --frozen-lockfile --prefer-offline", state.env, 600_000)
      expect(ran.code, `pnpm install failed\n${ran.stdout}\n${ran.stderr}`).toBe(0)
      log(`pnpm install: ${((Date.now() - t0) / 1000).toFixed(1)} s`)
    }
    state.service = await startService(start!.text, state.env, {
      timeoutMs: backend === "PGlite" ? FirstStartMs : StartMs,
      bannerOn: "stdout"
    })
    const out = state.service.stdout()
    expect(out).toContain(backend === "PGlite" ? "embedded PGlite" : "PostgreSQL postgres://")
    const secret = /sandbox secret key:\s+(sk_test_\S+)/.exec(out)?.[1]
    const publishable = /sandbox publishable key:\s+(pk_test_\S+)/.exec(out)?.[1]
    expect(secret, `no sandbox secret key in the start-up lines:\n${out}`).toBeDefined()
    expect(publishable).toBeDefined()
    // The demo merchant's owner, printed beside the keys: the dashboard's first sign-in.
    expect(out).toMatch(
      /\n {2}dashboard owner: +owner@demo\.laari\.mv \(http:\/\/localhost:\d+\/dashboard\)\n/
    )
    const password = /\n {2}one-time password: +(\S+) \(change it at first sign-in\)\n/.exec(out)?.[1]
    expect(password, `no one-time password in the start-up lines:\n${out}`).toBeDefined()
    expect(password!.length).toBeGreaterThanOrEqual(12)
    state.secretKey = secret!
    state.ownerPassword = password!
    state.values = { "sk_test_...": secret! }
    // The second terminal: where the service is, said once, for every command after it.
    const { env } = await runBlock("env", state.env, state.values)
    expect(env.LAARI).toBe(`http://localhost:${port}`)
    state.env = env
  })

  it(`the quick start's CLI commands and curl examples (${backend})`, async () => {
    const { results } = await runBlock("keys", state.env, state.values, (r) => {
      // `merchants list` names the demo merchant's id, which `keys create` takes.
      const demo = /^(\S+)\s+Demo Cafe\b/m.exec(r.stdout)
      if (r.command.includes("merchants list")) {
        expect(demo, `no Demo Cafe in \`${r.command}\`:\n${r.stdout}`).not.toBeNull()
        state.values["<merchant id>"] = demo![1]!
      }
    })
    expect(results[1]!.stdout).toMatch(/^sk_test_\w+$/m)
    const api = await runBlock("api", state.env, state.values)
    expect(api.results.map((r) => r.status)).toEqual([201, 201])
    expect(api.results[0]!.json).toMatchObject({ reference: "order-1", status: "ACTIVE" })
    expect(api.results[1]!.json).toMatchObject({ amount: 12_550 })
  })

  it.skipIf(!B.available)(
    `pages on that process: a test checkout, the dashboard, /docs (${backend})`,
    async () => {
      const base = state.service!.baseUrl
      const { results } = await runBlock("checkout", state.env, state.values)
      const session = results[0]!.json
      const { page, goto, close } = await openPage()
      await goto(session.url)
      await expect(page.locator(".banner").textContent()).resolves.toBe("Test mode")
      await page.getByRole("button", { name: "Pay" }).click()
      await page.getByRole("heading", { name: "Paid" }).waitFor()

      // The printed owner's first sign-in, as the README says: a new password, then an authenticator (its
      // code computed here from the secret the page shows, as an app would).
      await goto(`${base}/dashboard`)
      await page.getByLabel("Email address").fill("owner@demo.laari.mv")
      await page.getByLabel("Password").fill(state.ownerPassword!)
      await page.getByRole("button", { name: "Sign in" }).click()
      await page.getByLabel("Current password").fill(state.ownerPassword!)
      const chosen = "a quiet reef at low tide"
      await page.getByLabel("New password", { exact: true }).fill(chosen)
      await page.getByLabel("Repeat the new password").fill(chosen)
      await page.getByRole("button", { name: "Change password" }).click()
      const secret = (await page.locator("#totp-secret").textContent())!.trim()
      await page
        .getByLabel("Code")
        .fill(
          new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), digits: 6, period: 30 }).generate()
        )
      await page.getByRole("button", { name: "Verify" }).click()
      await page.getByRole("link", { name: "Continue" }).click()
      await page.getByRole("heading", { name: "Mandates" }).waitFor()
      expect(await page.textContent("main")).toContain("order-1")
      await page.getByRole("link", { name: "Webhooks" }).click()
      // A local address is refused, and the page says what to do instead.
      await page.getByLabel("Endpoint URL").fill(`${receiverOrigin}/dashboard-hook`)
      await page.getByRole("button", { name: "Add endpoint" }).click()
      expect(await page.textContent("main")).toContain("laari listen")
      // A public https address is taken, its secret shown once. It is deleted at once: nothing is ever
      // delivered to it (tests send no traffic off this machine; the name is not even looked up).
      await page.getByLabel("Endpoint URL").fill("https://hooks.example.com/laari")
      await page.getByRole("button", { name: "Add endpoint" }).click()
      expect((await page.locator("#secret").textContent())?.trim()).toMatch(/^whsec_/)
      const auth = { authorization: `Bearer ${state.secretKey!}` }
      const endpoints = await (await fetch(`${base}/webhook-endpoints`, { headers: auth })).json()
      for (const e of endpoints as Array<{ id: string; url: string }>)
        if (e.url === "https://hooks.example.com/laari")
          expect(
            (await fetch(`${base}/webhook-endpoints/${e.id}`, { method: "DELETE", headers: auth })).status
          ).toBe(200)

      const docs = await page.goto(`${base}/docs`)
      expect(docs?.status()).toBe(200)
      await page.getByText("Create a mandate").first().waitFor()
      await close()
    }
  )

  it(`the first webhook: laari trigger's event, forwarded by laari listen to the example receiver (${backend})`, async () => {
    // The receiver's port, free on this machine, in place of the README's 4242.
    const values = { ...state.values, "4242": String(await freePort()) }
    const { stopBackground, output, env } = await runBlock("webhook", state.env, values)
    try {
      expect(env.LAARI_WEBHOOK_SECRET).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
      // In the same terminal: LAARI_API_KEY exported.
      await runBlock("trigger", env, values)
      const deadline = Date.now() + 60_000
      // The receiver verified the signature and printed the event, as the README says it does; listen logs
      // the receiver's answer once it has it, a moment after the receiver printed, so both are awaited.
      const received = () => /^mandate\.charge\.succeeded evt_\w+ sequence \d+ \{/m.test(output(0))
      const forwarded = () => /--> mandate\.charge\.succeeded\s+evt_\w+\s+\[2\d\d\]/.test(output(1))
      while (!(received() && forwarded())) {
        if (Date.now() > deadline)
          throw new Error(
            `in 60 s the example receiver ${received() ? "printed" : "printed no"} mandate.charge.succeeded and laari listen ${forwarded() ? "logged" : "logged no"} its 2xx\n--- receiver\n${output(0)}\n--- listen\n${output(1)}`
          )
        await sleep(250)
      }
    } finally {
      stopBackground()
    }
  })

  it(`Ctrl-C stops it (${backend})`, async () => {
    await state.service!.stop()
    state.service = undefined
  })

  it(`LAARI_DEVELOPMENT=true pnpm start (${backend}): the start-up lines name development mode`, async () => {
    const [command, ...rest] = Readme.commands(Readme.block(blocks, "live-start").text)
    expect(rest).toEqual([])
    executed.add(command!.text)
    executedBlocks.add("live-start")
    state.service = await startService(command!.text, state.env, { timeoutMs: StartMs, bannerOn: "stdout" })
    expect(state.service.stdout()).toMatch(/development/i)
  })

  it.skipIf(!B.available)(
    `the live section: mandates approved and declined with their codes, a checkout paid, the wallet (${backend})`,
    async () => {
      const base = state.service!.baseUrl
      const setup = Readme.block(blocks, "live-setup").text
      const phone = /customers create --phone (\S+)/.exec(setup)?.[1]
      expect(phone, "the live section makes no customer").toBeDefined()
      await runBlock("live-setup", state.env, state.values, (r) => {
        const live = /^(sk_live_\w+)$/m.exec(r.stdout)
        if (live !== null) state.values["sk_live_..."] = live[1]!
      })
      expect(state.values["sk_live_..."], "no live key printed by the live section's commands").toBeDefined()

      /** The code `laari customers codes` shows, as the README reads it. */
      const readCode = async () =>
        codeIn((await runBlock("live-code", state.env, state.values)).results[0]!.stdout)

      /** The README block's session or mandate, opened, a code sent and read, then `button`. */
      const customerStep = async (name: string, button: string, outcome: string) => {
        const { results } = await runBlock(name, state.env, state.values)
        const created = results[0]!.json
        const { page, goto, close } = await openPage()
        await goto(created.url)
        await page.getByLabel("Phone number").fill(phone!)
        await page.getByRole("button", { name: "Send code" }).click()
        await page.getByLabel("One-time code").fill(await readCode())
        await page.getByRole("button", { name: button }).click()
        await page.getByRole("heading", { name: outcome }).waitFor()
        await close()
        return created
      }

      const approved = await customerStep("live-mandate", "Approve", "Approved")
      // The wallet names the mandate by the title the README's request gave it.
      const title = JSON.parse(/-d '([^']*)'/.exec(Readme.block(blocks, "live-mandate").text)![1]!).title
      const charge = await runBlock("live-charge", state.env, state.values)
      expect(charge.results[0]!.status).toBe(201)
      const declined = await customerStep("live-decline", "Decline", "Declined")
      const mandate = (id: string) =>
        fetch(`${base}/mandates/${id}`, {
          headers: { authorization: `Bearer ${state.values["sk_live_..."]}` }
        })
          .then((r) => r.json())
          .then((m) => m.status)
      expect(await mandate(declined.id)).toBe("DECLINED")
      await customerStep("live-checkout", "Pay", "Paid")

      const { page, goto, close } = await openPage()
      await goto(`${base}/wallet`)
      await page.getByLabel("Phone number").fill(phone!)
      await page.getByRole("button", { name: "Send code" }).click()
      await page.getByLabel("One-time code").fill(await readCode())
      await page.getByRole("button", { name: "Sign in" }).click()
      await page.getByRole("heading", { name: "Your wallet" }).waitFor()
      await page.getByRole("button", { name: `Revoke: ${title}` }).click()
      // The wallet asks before it ends a mandate.
      await page.getByRole("button", { name: "Yes, revoke" }).click()
      await page.getByText("The mandate is revoked").waitFor()
      await close()
      expect(await mandate(approved.id)).toBe("REVOKED")
    }
  )
}

/** `LAARI_LOG_FORMAT=json` as the README starts it, on the PGlite data of the walk before. */
const jsonLogs = () => {
  it("every line on stdout is one JSON object, and no key is in the output", async () => {
    const [command, ...rest] = Readme.commands(Readme.block(blocks, "json-logs").text)
    expect(rest).toEqual([])
    executed.add(command!.text)
    executedBlocks.add("json-logs")
    const port = await freePort()
    const service = await startService(
      command!.text,
      { ...baseEnv(), PORT: String(port) },
      {
        timeoutMs: StartMs,
        bannerOn: "stderr"
      }
    )
    try {
      const base = service.baseUrl
      const key = "sk_test_0000000000000000000000000000000000000000"
      // Requests that log: served, refused, not found, and a body that is not JSON.
      await fetch(`${base}/mandates`, { headers: { authorization: `Bearer ${key}` } })
      await fetch(`${base}/nowhere`)
      await fetch(`${base}/mandates`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: "{"
      })
      await fetch(`${base}/dashboard`)
    } finally {
      await service.stop()
    }
    const lines = service
      .stdout()
      .split("\n")
      .filter((line) => line !== "")
    expect(lines.length, "no log line on stdout").toBeGreaterThan(0)
    for (const line of lines) {
      let parsed: unknown
      expect(() => (parsed = JSON.parse(line)), `not JSON on stdout: ${line}`).not.toThrow()
      expect(typeof parsed === "object" && parsed !== null && !Array.isArray(parsed), line).toBe(true)
    }
    expect(service.stdout() + service.stderr()).not.toMatch(/sk_test_\w{8}/)
  })
}

describe("the README's quick start, in a fresh clone", () => {
  describe("on PGlite", () => walk("PGlite"))
  describe("LAARI_LOG_FORMAT=json", jsonLogs)
  describe.skipIf(postgresUrl === undefined)("on PostgreSQL (DATABASE_URL)", () => walk("PostgreSQL"))
  it("ran every curl and pnpm laari example of the README and docs/", () => {
    const missed = Readme.examples(blocks).filter((c) => !executed.has(c))
    expect(missed, "README examples no test step runs: mark their block and run it here").toEqual([])
  })
  it("ran every shell block, or the block says why not", () => {
    const missed = blocks
      .filter((b) => b.lang === "sh" && !(b.name !== undefined && executedBlocks.has(b.name)))
      .filter((b) => b.notes["not-run"] === undefined)
      .map((b) => `${b.file}:${b.line}`)
    expect(missed, "shell blocks no step runs and that say not why (<!-- not-run: ... -->)").toEqual([])
  })
})
