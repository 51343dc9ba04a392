/**
 * Reconciliation end to end: the reference wallet core (examples/wallet-core) as a child process on PGlite,
 * transfers posted in it through the protocol, laari's `wallet_movements` rows written directly in laari's
 * database (matching, and wrong in each way), and the day reconciled through the real operator endpoint
 * and the real CLI process: each kind of break with both sides' figures, a clean day saying so, the metric
 * counting the latest run. Also: the connector off (409), a core that does not answer or pages without end
 * (a failed run, never a clean one), and the daily job's claim (one run per date, one process).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as SqlClient from "@effect/sql/SqlClient"
import { Connector, Reconciliation, Work } from "@laari/core"
import { DateTime, Duration, Effect, Layer, Option, Redacted } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Client from "../../src/WalletConnector/Client.js"
import * as Reconcile from "../../src/WalletConnector/Reconcile.js"
import * as Store from "../../src/Sql/Reconciliation.js"
import * as CliProcess from "../support/CliProcess.js"
import * as ServerProcess from "../support/ServerProcess.js"
import { postgresUrl } from "../support/TestDatabase.js"
import * as WalletCore from "../support/WalletCore.js"
import * as TestServer from "../support/TestServer.js"

const example = Path.join(CliProcess.root, "examples/wallet-core")
const tsx = Path.join(CliProcess.root, "node_modules/tsx/dist/cli.mjs")

interface Core {
  readonly url: string
  readonly token: string
  readonly call: (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }>
  readonly stop: () => Promise<void>
}

/** The reference core on PGlite in a directory of its own, as its README starts it. */
const startCore = async (): Promise<Core> => {
  const token = `reconcile-${randomUUID()}`
  const dataDir = mkdtempSync(Path.join(tmpdir(), "laari-reconcile-core-"))
  const child: ChildProcess = spawn(process.execPath, [tsx, "-C", "@laari/source", "src/main.ts"], {
    cwd: example,
    env: { ...CliProcess.baseEnv(), PORT: "0", WALLET_CORE_TOKEN: token, WALLET_CORE_DATA_DIR: dataDir },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout!.setEncoding("utf8").on("data", (s: string) => (output += s))
  child.stderr!.setEncoding("utf8").on("data", (s: string) => (output += s))
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  const stop = async () => {
    child.kill("SIGTERM")
    await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))])
    rmSync(dataDir, { recursive: true, force: true })
  }
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`wallet-core did not start:\n${output}`)), 120_000)
    child.stdout!.on("data", () => {
      const found = /^WALLET_CORE_URL=(\S+)$/m.exec(output)
      if (found !== null) {
        clearTimeout(timer)
        resolve(found[1]!)
      }
    })
    child.once("exit", () => reject(new Error(`wallet-core exited:\n${output}`)))
  }).catch(async (e) => {
    await stop()
    throw e
  })
  const call: Core["call"] = async (method, path, body) => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        "request-id": randomUUID(),
        ...(body === undefined ? {} : { "content-type": "application/json" })
      },
      body: body === undefined ? undefined : JSON.stringify(body)
    })
    const text = await res.text()
    return { status: res.status, body: text.length > 0 ? JSON.parse(text) : undefined }
  }
  return { url, token, call, stop }
}

const connectorTo = (url: string, token: string) => ({
  url,
  token: Redacted.make(token),
  environments: ["live" as const],
  timeoutMs: 2_000,
  cancelAfterS: 60,
  feeWallet: "laari-fees"
})

interface Posted {
  readonly id: string
  readonly amount: number
  readonly fee: number
  readonly postedAt: string
}

/** A movement row as the charge path writes one, with the figures and status given. */
const insertMovement = (
  m: { readonly id: string; readonly amount: number; readonly fee: number; readonly status: string },
  postedAt: string | null
) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql`INSERT INTO wallet_movements ${sql.insert({
        id: m.id,
        merchant_id: randomUUID(),
        environment: "live",
        kind: "payment",
        cause: "mandate-charge",
        cause_id: randomUUID(),
        customer_id: randomUUID(),
        from_wallet: "payer",
        to_wallet: "merchant",
        fee_wallet: "laari-fees",
        amount: m.amount,
        fee: m.fee,
        memo: "reconciliation test",
        status: m.status,
        reason: null,
        detail: "{}",
        created_at: new Date(),
        next_check_at: m.status === "pending" ? new Date() : null,
        posted_at: postedAt === null ? null : new Date(postedAt)
      })}`
  )

const metric = async (server: TestServer.TestServer) => {
  const res = await server.ops("GET", "/metrics")
  expect(res.status).toBe(200)
  return Object.fromEntries(
    Reconciliation.Kinds.map((kind) => {
      const found = new RegExp(`^laari_reconciliation_breaks\\{kind="${kind}"\\} (\\d+)$`, "m").exec(res.text)
      return [kind, found === null ? undefined : Number(found[1])]
    })
  )
}

const cli = (server: TestServer.TestServer, ...args: ReadonlyArray<string>) =>
  CliProcess.run(["reconcile", "--url", server.baseUrl, ...args], { LAARI_OPS_TOKEN: TestServer.OpsToken })

/** laari's database: PGlite always, PostgreSQL too when the environment names one (else skipped, as `TestDatabase` warns). */
const databases: ReadonlyArray<"pglite" | "postgres"> =
  postgresUrl === undefined ? ["pglite"] : ["pglite", "postgres"]

describe.each(databases)("reconciliation against the reference core, laari on %s", (database) => {
  let core: Core
  let server: TestServer.LocalTestServer
  let dropDatabase = async () => {}
  let date: string
  const sent: Array<Posted> = []

  const pay = async (amount: number, fee: number): Promise<Posted> => {
    const id = randomUUID()
    const res = await core.call("POST", "/transfers", {
      id,
      environment: "live",
      from: "payer",
      to: "merchant",
      amount,
      fee: { to: "laari-fees", amount: fee },
      memo: "reconciliation test",
      kind: "payment"
    })
    expect(res.status).toBe(201)
    const posted = { id, amount, fee, postedAt: res.body.posted_at as string }
    sent.push(posted)
    return posted
  }

  beforeAll(async () => {
    core = await startCore()
    for (const [i, [id, balance]] of [
      ["payer", 1_000_000],
      ["merchant", 0],
      ["laari-fees", 0]
    ].entries()) {
      const res = await core.call("POST", "/admin/wallets", {
        id,
        phone: `+9607${String((process.pid * 3 + i) % 1_000_000).padStart(6, "0")}`,
        balance
      })
      expect(res.status, JSON.stringify(res.body)).toBe(201)
    }
    const own = database === "postgres" ? await WalletCore.database(postgresUrl!) : undefined
    if (own !== undefined) dropDatabase = own.drop
    server = await TestServer.start({
      databaseUrl: own?.url,
      config: { walletConnector: connectorTo(core.url, core.token) }
    })
  }, 180_000)

  afterAll(async () => {
    await server?.close()
    await core?.stop()
    await dropDatabase()
  })

  it("finds each break with both sides' figures, through the endpoint, the CLI and the metric; then a clean day", async () => {
    const agreed = await pay(10_000, 150)
    const otherAmount = await pay(20_000, 300)
    const stillPending = await pay(5_000, 50)
    const notInLaari = await pay(7_000, 70)
    date = Reconciliation.dateOf(DateTime.unsafeMake(agreed.postedAt))
    // A run near Maldives midnight could post across two days: the day is the one all four fell on.
    expect(sent.map((p) => Reconciliation.dateOf(DateTime.unsafeMake(p.postedAt)))).toEqual(
      Array(4).fill(date)
    )
    const notInCore = { id: randomUUID(), amount: 3_000, fee: 30, postedAt: agreed.postedAt }

    await server.sql(insertMovement({ ...agreed, status: "posted" }, agreed.postedAt))
    await server.sql(
      insertMovement({ ...otherAmount, amount: 19_000, status: "posted" }, otherAmount.postedAt)
    )
    await server.sql(insertMovement({ ...stillPending, status: "pending" }, null))
    await server.sql(insertMovement({ ...notInCore, status: "posted" }, notInCore.postedAt))

    // Before any run every kind is exported, at 0.
    expect(await metric(server)).toEqual({
      missing_in_core: 0,
      missing_in_laari: 0,
      amount_mismatch: 0,
      status_mismatch: 0
    })

    const res = await server.ops("POST", "/ops/reconciliation/runs", { date })
    expect(res.status, res.text).toBe(200)
    const expected = [
      {
        transfer_id: otherAmount.id,
        kind: "amount_mismatch",
        laari_amount: 19_000,
        core_amount: 20_000,
        laari_fee: 300,
        core_fee: 300,
        laari_status: "posted",
        core_status: "posted"
      },
      {
        transfer_id: stillPending.id,
        kind: "status_mismatch",
        laari_amount: 5_000,
        core_amount: 5_000,
        laari_fee: 50,
        core_fee: 50,
        laari_status: "pending",
        core_status: "posted"
      },
      {
        transfer_id: notInLaari.id,
        kind: "missing_in_laari",
        laari_amount: null,
        core_amount: 7_000,
        laari_fee: null,
        core_fee: 70,
        laari_status: null,
        core_status: "posted"
      },
      {
        transfer_id: notInCore.id,
        kind: "missing_in_core",
        laari_amount: 3_000,
        core_amount: null,
        laari_fee: 30,
        core_fee: null,
        laari_status: "posted",
        core_status: null
      }
    ].sort((a, b) => (a.transfer_id < b.transfer_id ? -1 : 1))
    expect(res.body).toMatchObject({
      date,
      status: "breaks",
      laari_count: 3,
      laari_amount: 10_000 + 19_000 + 3_000,
      laari_fee: 150 + 300 + 30,
      core_count: 4,
      core_amount: 10_000 + 20_000 + 5_000 + 7_000,
      core_fee: 150 + 300 + 50 + 70,
      break_count: 4,
      error: null,
      breaks: expected
    })
    expect(res.body.finished_at).toMatch(/\+05:00$/)

    const read = await server.ops("GET", `/ops/reconciliation/runs/${date}`)
    expect(read.status).toBe(200)
    expect(read.body).toEqual(res.body)
    expect((await server.ops("GET", "/ops/reconciliation/runs/2001-01-01")).status).toBe(404)
    expect(await metric(server)).toEqual({
      missing_in_core: 1,
      missing_in_laari: 1,
      amount_mismatch: 1,
      status_mismatch: 1
    })

    // The CLI runs it again: one line a break, both sides' figures, exit status 1.
    const withBreaks = await cli(server, "--date", date)
    expect(withBreaks.code, withBreaks.stderr).toBe(1)
    const lines = withBreaks.stdout.trim().split("\n")
    expect(lines[0]).toBe(
      `${date}: 4 breaks (laari: 3 transfers, 32000 laari, fees 480; core: 4 transfers, 42000 laari, fees 570)`
    )
    expect(lines.slice(1)).toEqual(
      expected.map((b) =>
        expect.stringMatching(
          new RegExp(
            `^  ${b.kind}\\s+${b.transfer_id}  laari (none|${b.laari_amount} \\(fee ${b.laari_fee}, ${b.laari_status}\\))  core (none|${b.core_amount} \\(fee ${b.core_fee}, ${b.core_status}\\))$`
          )
        )
      )
    )
    expect(withBreaks.stdout).toContain(
      `amount_mismatch   ${otherAmount.id}  laari 19000 (fee 300, posted)  core 20000 (fee 300, posted)`
    )
    expect(withBreaks.stdout).toContain(
      `missing_in_laari  ${notInLaari.id}  laari none  core 7000 (fee 70, posted)`
    )

    // laari's side corrected: the re-run replaces the day's run and its breaks, and says clean in one line.
    await server.sql(
      Effect.flatMap(SqlClient.SqlClient, (sql) =>
        Effect.all([
          sql`UPDATE wallet_movements SET amount = 20000 WHERE id = ${otherAmount.id}`,
          sql`UPDATE wallet_movements SET status = 'posted', next_check_at = NULL, posted_at = ${new Date(stillPending.postedAt)} WHERE id = ${stillPending.id}`,
          sql`DELETE FROM wallet_movements WHERE id = ${notInCore.id}`
        ])
      )
    )
    await server.sql(insertMovement({ ...notInLaari, status: "posted" }, notInLaari.postedAt))
    const clean = await cli(server, "--date", date)
    expect(clean.code, clean.stderr).toBe(0)
    expect(clean.stdout).toBe(
      `${date}: clean: laari and the core agree on 4 transfers, 42000 laari, fees 570.\n`
    )
    const after = await server.ops("GET", `/ops/reconciliation/runs/${date}`)
    expect(after.body).toMatchObject({
      status: "clean",
      break_count: 0,
      breaks: [],
      laari_count: 4,
      core_count: 4
    })
    expect(
      await server.sql(
        Effect.flatMap(
          SqlClient.SqlClient,
          (sql) => sql`SELECT count(*)::int AS n FROM reconciliation_breaks WHERE date = ${date}`
        )
      )
    ).toEqual([{ n: 0 }])
    expect(await metric(server)).toEqual({
      missing_in_core: 0,
      missing_in_laari: 0,
      amount_mismatch: 0,
      status_mismatch: 0
    })

    // --json prints the run as the endpoint answers it.
    const json = await cli(server, "--date", date, "--json")
    expect(JSON.parse(json.stdout)).toMatchObject({ date, status: "clean", breaks: [] })
  }, 120_000)

  it("refuses a date that is no calendar date, or after today", async () => {
    const bad = await server.ops("POST", "/ops/reconciliation/runs", { date: "2026-02-30" })
    expect(bad.status).toBe(422)
    expect(bad.body.errors).toEqual([{ field: "date", message: "must be a calendar date YYYY-MM-DD" }])
    const later = Reconciliation.dateOf(DateTime.add(DateTime.unsafeNow(), { days: 2 }))
    const future = await server.ops("POST", "/ops/reconciliation/runs", { date: later })
    expect(future.status).toBe(422)
    expect(future.body.message).toMatch(/^date: must not be after today/)
    expect((await server.ops("GET", "/ops/reconciliation/runs/yesterday")).status).toBe(422)
    const viaCli = await cli(server, "--date", "2026-13-01")
    expect(viaCli.code).toBe(1)
    expect(viaCli.stderr).toContain("must be a calendar date YYYY-MM-DD")
  })

  it("the daily job runs a day once it is over, once, in one of two processes at once", async () => {
    // A day before the test's, with nothing posted on it: its run is clean and empty.
    const day = "2020-03-04"
    const clock = (iso: string) =>
      Work.makeManualClock(DateTime.toEpochMillis(DateTime.unsafeMake(iso))).clock
    const reconciler = await server.sql(
      Reconcile.make().pipe(
        Effect.provide(
          Client.layer({ url: core.url, token: core.token, timeoutMs: 2_000 }).pipe(
            Layer.provide(FetchHttpClient.layer)
          )
        )
      )
    )
    // 00:59 on the 5th, Maldives time: the 4th is not due yet (the 3rd is, and runs).
    expect(await Effect.runPromise(Effect.withClock(reconciler.daily, clock("2020-03-04T19:59:00Z")))).toBe(1)
    expect(await server.sql(reconciler.get(day))).toBeUndefined()
    // From 01:00 two processes look at once: one runs it.
    const at = clock("2020-03-04T20:00:30Z")
    const ran = await Promise.all([
      Effect.runPromise(Effect.withClock(reconciler.daily, at)),
      Effect.runPromise(Effect.withClock(reconciler.daily, at))
    ])
    expect(ran.sort()).toEqual([0, 1])
    const run = await server.sql(reconciler.get(day))
    expect(run?.run).toMatchObject({ date: day, status: "clean", breakCount: 0, core: { count: 0 } })
    // Once per date: a later look runs nothing more.
    expect(await Effect.runPromise(Effect.withClock(reconciler.daily, clock("2020-03-05T10:00:00Z")))).toBe(0)
  })

  it.runIf(database === "pglite")(
    "a server process started with the connector reconciles the day due by itself, from its background workers",
    async () => {
      const dataDir = mkdtempSync(Path.join(tmpdir(), "laari-reconcile-server-"))
      const process_ = await ServerProcess.spawnServer({
        env: {
          LAARI_DATA_DIR: dataDir,
          LAARI_OPS_TOKEN: TestServer.OpsToken,
          LAARI_WALLET_URL: core.url,
          LAARI_WALLET_TOKEN: core.token
        }
      })
      try {
        await process_.ready()
        const due = Reconciliation.dueDate(DateTime.unsafeNow())
        const client = TestServer.client(process_.baseUrl)
        let found: TestServer.Response | undefined
        for (const deadline = Date.now() + 60_000; Date.now() < deadline; ) {
          found = await client.ops("GET", `/ops/reconciliation/runs/${due}`)
          if (found.status === 200 && found.body.status !== "running") break
          await new Promise((r) => setTimeout(r, 250))
        }
        expect(found?.status, process_.stdout()).toBe(200)
        expect(found?.body).toMatchObject({ date: due, status: "clean", core_count: 0, breaks: [] })
      } finally {
        await process_.stop()
        rmSync(dataDir, { recursive: true, force: true })
      }
    },
    120_000
  )

  it("a claim is one process's until it goes stale; the daily job retries a failed run an hour on", async () => {
    const store = await server.sql(Store.make)
    const day = "2020-06-01"
    const t0 = DateTime.unsafeMake("2020-06-02T01:00:00Z")
    expect(await server.sql(store.claim(day, t0, "daily"))).toBe(true)
    expect(await server.sql(store.claim(day, DateTime.add(t0, { minutes: 1 }), "operator"))).toBe(false)
    expect(await server.sql(store.claim(day, DateTime.add(t0, { minutes: 14 }), "daily"))).toBe(false)
    const t1 = DateTime.add(t0, { minutes: Reconciliation.StaleAfterMinutes })
    expect(await server.sql(store.claim(day, t1, "daily"))).toBe(true)
    // The stale claim's run finishing late does not overwrite the run that took over.
    expect(await server.sql(store.finish(day, t0, { _tag: "failed", error: "late" }, t1))).toBe(false)
    expect(await server.sql(store.finish(day, t1, { _tag: "failed", error: "core down" }, t1))).toBe(true)
    expect((await server.sql(store.get(day)))?.run).toMatchObject({ status: "failed", error: "core down" })
    expect(await server.sql(store.claim(day, DateTime.add(t1, { minutes: 59 }), "daily"))).toBe(false)
    expect(await server.sql(store.claim(day, DateTime.add(t1, { minutes: 60 }), "daily"))).toBe(true)
  })
})

describe("reconciliation without a usable core", () => {
  it("with the connector off, POST is refused as 409 WALLET_CONNECTOR_OFF and GET finds nothing", async () => {
    const server = await TestServer.start()
    try {
      const res = await server.ops("POST", "/ops/reconciliation/runs", { date: "2026-01-05" })
      expect(res.status).toBe(409)
      expect(res.body).toEqual({
        code: "WALLET_CONNECTOR_OFF",
        message: Reconciliation.ConnectorOff.instance.message
      })
      expect((await server.ops("GET", "/ops/reconciliation/runs/2026-01-05")).status).toBe(404)
      const viaCli = await cli(server, "--date", "2026-01-05")
      expect(viaCli.code).toBe(1)
      expect(viaCli.stderr).toContain("409: WALLET_CONNECTOR_OFF: The wallet connector is off")
    } finally {
      await server.close()
    }
  })

  /** A core on 127.0.0.1 answering every statement page with `page(n)`, the n-th request. */
  const fakeCore = async (page: (n: number) => { status: number; body: unknown }) => {
    let n = 0
    const http: Server = createServer((_req, res) => {
      const answer = page(++n)
      res.writeHead(answer.status, { "content-type": "application/json" }).end(JSON.stringify(answer.body))
    })
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve))
    const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`
    return { url, requests: () => n, close: () => new Promise<void>((r) => http.close(() => r())) }
  }

  it("a core that fails, or pages in a loop, makes a failed run with why, never a clean one", async () => {
    const failing = await fakeCore(() => ({ status: 503, body: { error: "down" } }))
    const looping = await fakeCore((n) => ({
      status: 200,
      body: { transfers: [], next_cursor: n === 1 ? "a" : "b" }
    }))
    const server = await TestServer.start({ config: { walletConnector: connectorTo(failing.url, "t") } })
    const other = await TestServer.start({ config: { walletConnector: connectorTo(looping.url, "t") } })
    try {
      const date = Reconciliation.dateOf(DateTime.unsafeNow())
      const res = await server.ops("POST", "/ops/reconciliation/runs", { date })
      expect(res.status).toBe(200)
      expect(res.body).toMatchObject({ date, status: "failed", break_count: 0, breaks: [], core_count: null })
      expect(res.body.error).toMatch(/^wallet core: outcome unknown \(Request-Id [0-9a-f-]+\): HTTP 503/)
      expect((await server.ops("GET", `/ops/reconciliation/runs/${date}`)).body.status).toBe("failed")
      const viaCli = await cli(server, "--date", date)
      expect(viaCli.code).toBe(1)
      expect(viaCli.stdout).toMatch(
        new RegExp(`^${date}: the reconciliation failed, nothing was compared: wallet core`)
      )

      const loop = await other.ops("POST", "/ops/reconciliation/runs", { date })
      expect(loop.body).toMatchObject({ status: "failed" })
      expect(loop.body.error).toBe(
        `the core's statement of ${date} gave cursor "b" again after 3 pages; it would never end`
      )
      expect(looping.requests()).toBe(3)
    } finally {
      await Promise.all([server.close(), other.close()])
      await Promise.all([failing.close(), looping.close()])
    }
  })

  it("a statement stops at its page limit, and one not of its day fails the run", async () => {
    let n = 0
    const endless: Client.WalletConnectorClientService = {
      statement: () => Effect.sync(() => ({ transfers: [], next_cursor: `page-${++n}` })),
      wallet: () => Effect.succeed(Option.none()),
      walletByPhone: () => Effect.succeed(Option.none()),
      transfer: () => Effect.die("unused"),
      status: () => Effect.die("unused"),
      cancel: () => Effect.die("unused")
    }
    const stopped = await Effect.runPromise(Effect.flip(Reconcile.readStatement(endless, "2026-01-05", 5)))
    expect(stopped.message).toBe("the core's statement of 2026-01-05 has more than 5 pages; stopped there")
    expect(n).toBe(5)

    const item = (posted_at: string): Connector.StatementItem => ({
      id: randomUUID(),
      from: "payer",
      to: "merchant",
      amount: 100,
      fee: null,
      kind: "payment",
      posted_at
    })
    const wrongDay: Client.WalletConnectorClientService = {
      ...endless,
      statement: () =>
        Effect.succeed({
          transfers: [item("2026-01-05T10:00:00+05:00"), item("2026-01-06T00:00:00+05:00")],
          next_cursor: null
        })
    }
    const server = await TestServer.start()
    try {
      const reconciler = await server.sql(
        Reconcile.make({ maxPages: 5, deadline: Duration.seconds(10) }).pipe(
          Effect.provideService(Client.WalletConnectorClient, wrongDay)
        )
      )
      const run = await server.sql(reconciler.run("2026-01-05"))
      expect(run.run.status).toBe("failed")
      expect(run.run.error).toMatch(
        /^the core's statement of 2026-01-05 is not one of that day: transfer .* is listed with posted_at 2026-01-06T00:00:00\+05:00, not on 2026-01-05$/
      )
    } finally {
      await server.close()
    }
  })
})
