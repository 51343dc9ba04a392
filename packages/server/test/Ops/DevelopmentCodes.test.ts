/**
 * One-time codes on a developer's start: with `LAARI_DEVELOPMENT=true` and the system
 * clock, `laari customers codes` reads a customer's current codes over the operator API and the start-up
 * lines say so; without it the endpoint does not exist (404), the CLI says how to turn it on, and the
 * notices keep their codes to themselves. Two service processes (on PostgreSQL with DATABASE_URL, else PGlite), the compiled CLI against them.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import { Effect, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as CliProcess from "../support/CliProcess.js"
import { eventually } from "../support/Receiver.js"
import * as ServerProcess from "../support/ServerProcess.js"
import { createDatabase, postgresUrl } from "../support/TestDatabase.js"

// After `pnpm laari` as the banner prints it for this service (its port and data folder before it).
const developmentLine =
  /\n {2}development on: one-time codes readable with (LAARI_\S+ )*pnpm laari customers codes --phone <phone>; never set LAARI_DEVELOPMENT in production\n/

interface Started {
  readonly server: ServerProcess.ServerProcess
  readonly dataDir: string
}

let development: Started
let production: Started

/** The fresh PostgreSQL databases' scope, when DATABASE_URL is set. */
const databases = Effect.runSync(Scope.make())

/**
 * A service on its own data folder; its database a fresh PostgreSQL one when DATABASE_URL is set (two
 * PGlite initdbs in parallel took most of this file's time), else PGlite in that folder.
 */
const start = async (env: Record<string, string>): Promise<Started> => {
  const dataDir = mkdtempSync(Path.join(tmpdir(), "laari-codes-"))
  const database: Record<string, string> =
    postgresUrl === undefined
      ? {}
      : {
          DATABASE_URL: await Effect.runPromise(Scope.extend(createDatabase(postgresUrl), databases)),
          // One process, as on PGlite: the file is about codes, not the process cluster.
          LAARI_PROCESSES: "1"
        }
  const server = await ServerProcess.start({
    env: { ...database, LAARI_DATA_DIR: dataDir, ...env },
    readyTimeoutMs: 300_000
  })
  // On PostgreSQL the service runs several processes and prints its start-up lines once they all listen,
  // which may be after the first answers /healthz.
  await eventually(() => server.stdout().includes("laari is running on"), 30_000, "the start-up lines")
  return { server, dataDir }
}

const cli = (on: Started, args: ReadonlyArray<string>) =>
  CliProcess.run(args, { LAARI_URL: on.server.baseUrl, LAARI_DATA_DIR: on.dataDir })

const ok = async (on: Started, args: ReadonlyArray<string>) => {
  const run = await cli(on, args)
  expect(run.stderr, `laari ${args.join(" ")}`).toBe("")
  expect(run.code).toBe(0)
  return run.stdout
}

/** The wallet page's sign-in form, as a browser posts it: its CSRF cookie and token. */
const walletForm = async (baseUrl: string) => {
  const page = await fetch(`${baseUrl}/wallet`)
  const cookie = page.headers
    .getSetCookie()
    .map((c) => c.split(";")[0]!)
    .find((c) => c.startsWith("laari_csrf="))!
  const csrf = /name="_csrf" value="([0-9a-f]+)"/.exec(await page.text())![1]!
  return (path: string, fields: Record<string, string>) =>
    fetch(`${baseUrl}/wallet/${path}`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", cookie },
      body: new URLSearchParams({ ...fields, _csrf: csrf }).toString(),
      redirect: "manual"
    })
}

/** Asks for a wallet sign-in code for `phone`; returns the challenge id the page carries. */
const requestCode = async (on: Started, phone: string) => {
  const customer = JSON.parse(
    await ok(on, ["customers", "create", "--environment", "live", "--phone", phone, "--json"])
  ) as { id: string }
  const post = await walletForm(on.server.baseUrl)
  const sent = await post("code", { phone })
  const html = await sent.text()
  expect(sent.status, html).toBe(200)
  return {
    post,
    customerId: customer.id,
    challengeId: /name="challenge_id" value="([0-9a-f-]+)"/.exec(html)![1]!
  }
}

const ops = (on: Started, path: string) =>
  fetch(`${on.server.baseUrl}${path}`, {
    headers: {
      authorization: `Bearer ${readFileSync(Path.join(on.dataDir, "ops-token"), "utf8").trim()}`
    }
  })

/** The codes the customer's notices show over the operator API. */
const noticeCodes = async (on: Started, customerId: string) =>
  (
    (await (await ops(on, `/ops/customers/${customerId}/notifications`)).json()) as Array<{
      kind: string
      data: { code?: string }
    }>
  )
    .filter((n) => n.kind === "one_time_code")
    .map((n) => n.data.code)

beforeAll(async () => {
  ;[development, production] = await Promise.all([start({ LAARI_DEVELOPMENT: "true" }), start({})])
}, 330_000)

afterAll(async () => {
  for (const s of [development, production])
    if (s !== undefined) {
      await s.server.stop()
      rmSync(s.dataDir, { recursive: true, force: true })
    }
  await Effect.runPromise(Scope.close(databases, Exit.void))
})

describe("one-time codes on a development start", { timeout: 300_000 }, () => {
  it("the start-up lines name development mode only when it is on", () => {
    expect(development.server.stdout()).toMatch(developmentLine)
    expect(production.server.stdout()).toContain("laari is running on")
    expect(production.server.stdout()).not.toContain("development on")
  })

  it("laari customers codes prints the current code, which signs in, and then none", async () => {
    const phone = "+960 7770301"
    const { post, challengeId, customerId } = await requestCode(development, phone)
    const out = await ok(development, ["customers", "codes", "--phone", phone, "--environment", "live"])
    const line = /^(\d{6}) {2}wallet (\S+) {2}expires (\S+)$/.exec(out.trim())
    expect(line, out).not.toBeNull()
    const listed = await ok(development, [
      "customers",
      "codes",
      "--phone",
      // Any spelling of the number finds the customer (stored as +9607770301).
      "00960 777 0301",
      "--environment",
      "live",
      "--json"
    ])
    const codes = JSON.parse(listed) as Array<{ code: string; subject_kind: string; expires_at: string }>
    expect(codes).toEqual([
      { code: line![1], subject_kind: "wallet", subject_id: line![2], expires_at: line![3] }
    ])
    expect(Date.parse(codes[0]!.expires_at)).toBeGreaterThan(Date.now())
    expect(await noticeCodes(development, customerId)).toEqual([codes[0]!.code])

    const signedIn = await post("sign-in", { phone, challenge_id: challengeId, otp: codes[0]!.code })
    expect(signedIn.status).toBeLessThan(400)
    expect(signedIn.headers.get("set-cookie") ?? "").toContain("laari_wallet")
    // Used: no longer current.
    expect(await ok(development, ["customers", "codes", "--phone", phone, "--environment", "live"])).toBe(
      `No current one-time code for +9607770301 (live).\n`
    )
  })

  it("laari merchants features sets and shows a merchant's gates", async () => {
    const list = JSON.parse(await ok(development, ["merchants", "list", "--json"])) as Array<{ id: string }>
    const id = list[0]!.id
    expect(
      await ok(development, ["merchants", "features", "--merchant", id, "--mandates-live", "true"])
    ).toMatch(/live mandates on, live subscriptions off/)
    expect(
      await ok(development, ["merchants", "features", "--merchant", id, "--subscriptions-live", "true"])
    ).toMatch(/live mandates on, live subscriptions on/)
    expect(
      await ok(development, ["merchants", "features", "--merchant", id, "--mandates-live", "false"])
    ).toMatch(/live mandates off, live subscriptions on/)
    const bad = await cli(development, ["merchants", "features", "--merchant", id, "--mandates-live", "yes"])
    expect(bad.code).not.toBe(0)
  })

  it("without LAARI_DEVELOPMENT the endpoint is 404, the CLI says how to turn it on, notices hide codes", async () => {
    const phone = "+960 7770302"
    const { customerId } = await requestCode(production, phone)
    const res = await ops(
      production,
      `/ops/customers/codes?phone=${encodeURIComponent(phone)}&environment=live`
    )
    expect(res.status).toBe(404)
    expect(((await res.json()) as { message: string }).message).toContain("only with LAARI_DEVELOPMENT=true")

    const run = await cli(production, ["customers", "codes", "--phone", phone, "--environment", "live"])
    expect(run.code).toBe(1)
    expect(run.stdout).toBe("")
    expect(run.stderr).toContain("Start it with LAARI_DEVELOPMENT=true")
    expect(await noticeCodes(production, customerId)).toEqual([undefined])

    const customers = await fetch(`${production.server.baseUrl}/ops/customers/codes?phone=x`, {
      headers: { authorization: "Bearer wrong" }
    })
    expect(customers.status).toBe(401)
  })
})
