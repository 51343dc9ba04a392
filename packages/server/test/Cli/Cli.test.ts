/**
 * The `laari` CLI as a developer runs it (`node packages/server/dist/Cli/laari.js`, what `pnpm laari`
 * runs: the CLI's bundle, or the compiled build for `serve` and `migrate`) against the service as a
 * child process on PGlite with a manual clock: every command, the errors a developer acts on, `listen`
 * forwarding signed deliveries, and the start-up output with the operator token kept across a restart.
 */
import { StandardWebhooksVector } from "@laari/testkit"
import { spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import { Webhook } from "standardwebhooks"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as CliProcess from "../support/CliProcess.js"
import * as Receiver from "../support/Receiver.js"
import * as ServerProcess from "../support/ServerProcess.js"

const dataDir = mkdtempSync(Path.join(tmpdir(), "laari-cli-"))
const serverEnv = { LAARI_DATA_DIR: dataDir, LAARI_CLOCK: "manual" }

let server: ServerProcess.ServerProcess

const cliEnv = (extra: Record<string, string>) => ({
  LAARI_URL: server.baseUrl,
  LAARI_DATA_DIR: dataDir,
  ...extra
})

const launch = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  CliProcess.launch(args, cliEnv(env))

const collect = CliProcess.collect

const cli = (args: ReadonlyArray<string>, env: Record<string, string> = {}) => collect(launch(args, env))

const ok = async (args: ReadonlyArray<string>, env: Record<string, string> = {}) => {
  const run = await cli(args, env)
  expect(run.stderr, `laari ${args.join(" ")}`).toBe("")
  expect(run.code).toBe(0)
  return run.stdout
}

const json = async <A>(args: ReadonlyArray<string>, env: Record<string, string> = {}): Promise<A> =>
  JSON.parse(await ok([...args, "--json"], env)) as A

let demo: Promise<string> | undefined

/** A key of the demo merchant the server seeded, made by the CLI once (it outlives restarts). */
const demoKey = () => {
  demo ??= (async () => {
    const merchants = await json<Array<{ id: string; name: string }>>(["merchants", "list"])
    const cafe = merchants.find((m) => m.name === "Demo Cafe")!
    return (await json<{ key: string }>(["keys", "create", "--merchant", cafe.id])).key
  })()
  return demo
}

/** `laari listen` forwarding two events to `url`, once it says it is ready; `output` is its stdout so far. */
const listen = async (key: string, url: string, extra: ReadonlyArray<string>, readyWithinMs: number) => {
  const listener = launch([
    "listen",
    "--key",
    key,
    "--forward-to",
    url,
    ...extra,
    "--interval",
    "200",
    "--max-events",
    "2"
  ])
  const listened = collect(listener)
  let said = ""
  listener.stdout!.on("data", (s: string) => (said += s))
  await Receiver.eventually(async () => said.includes("Ready"), readyWithinMs, "listen to be ready")
  return { listened, output: () => said }
}

const commands = [
  "serve",
  "migrate",
  "merchants create",
  "merchants list",
  "merchants features",
  "keys create",
  "keys list",
  "keys revoke",
  "customers create",
  "customers codes",
  "clock now",
  "clock advance",
  "users create",
  "users list",
  "users invitations",
  "listen",
  "trigger",
  "wallet-conformance"
]

/** A refused command line: `message`, then the usage within 100 columns, nothing internal, status 1. */
const expectUsageError = (run: CliProcess.Run, message: string, usage: string, internal: RegExp) => {
  expect(run.code).toBe(1)
  expect(run.stderr).toContain(message)
  expect(run.stderr).toContain(usage)
  expect(run.stderr).not.toMatch(internal)
  for (const line of run.stderr.split("\n"))
    if (line.startsWith("Usage") || line.startsWith(" ")) expect(line.length).toBeLessThanOrEqual(100)
}

/** A module-loading hook that names every file a process loads, on stderr. */
const hooks = mkdtempSync(Path.join(tmpdir(), "laari-cli-hooks-"))
writeFileSync(
  Path.join(hooks, "hooks.mjs"),
  'export async function load(url, context, next) {\n  if (url.startsWith("file:")) process.stderr.write("LOADED " + url + "\\n")\n  return next(url, context)\n}\n'
)
writeFileSync(
  Path.join(hooks, "register.mjs"),
  'import { register } from "node:module"\nregister("./hooks.mjs", import.meta.url)\n'
)

/**
 * What a command does not use is not loaded. `pnpm laari` runs the launcher (with its choice of build,
 * `Bundle.js`) and the bundle: their own files only, no package's module, and not the chunks of the API
 * and its client.
 */
const expectOnlyTheBundlesStart = (loaded: ReadonlyArray<string>, what: string) => {
  const files = loaded.map((url) => url.slice(url.lastIndexOf("/") + 1))
  expect(files.slice(0, 3), what).toEqual(["laari.js", "Bundle.js", "laari-cli.js"])
  expect(
    loaded.filter(
      (url) => !/\/server\/(dist\/Cli\/laari|dist\/Bundle|build\/laari-cli[\w-]*)\.js$/.test(url)
    ),
    what
  ).toEqual([])
  expect(
    files.filter((file) => /^laari-cli-(Api|HttpApiClient)-/.test(file)),
    what
  ).toEqual([])
}

/** The compiled CLI loads neither the API, nor the database, nor a package's whole index. */
const expectNoApi = (loaded: ReadonlyArray<string>, what: string) => {
  expect(
    loaded.some((url) => url.endsWith("/Cli/Commands.js")),
    what
  ).toBe(true)
  for (const unused of [
    /\/server\/dist\/Api\.js$/,
    /\/server\/dist\/Sql\//,
    /\/core\/dist\/index\.js$/,
    /@effect\/platform(-node)?\/dist\/esm\/index\.js$/,
    /@effect\/(cluster|opentelemetry|sql)\//,
    /pglite|\/pg\//
  ])
    expect(
      loaded.filter((url) => unused.test(url)),
      what
    ).toEqual([])
}

/** `entry` run with `args` under the hook: its run, without the hook's lines, and the files it loaded. */
const hooked = async (entry: string, args: ReadonlyArray<string>) => {
  const run = await collect(
    spawn(process.execPath, ["--import", Path.join(hooks, "register.mjs"), entry, ...args], {
      cwd: CliProcess.root,
      stdio: ["ignore", "pipe", "pipe"]
    })
  )
  const lines = run.stderr.split("\n")
  return {
    run: { ...run, stderr: lines.filter((line) => !line.startsWith("LOADED ")).join("\n") },
    loaded: lines.filter((line) => line.startsWith("LOADED ")).map((line) => line.slice("LOADED ".length))
  }
}

beforeAll(async () => {
  server = await ServerProcess.start({ env: serverEnv, readyTimeoutMs: 300_000 })
}, 330_000)

afterAll(async () => {
  await server?.stop()
  rmSync(dataDir, { recursive: true, force: true })
  rmSync(hooks, { recursive: true, force: true })
})

describe("laari CLI", { timeout: 300_000 }, () => {
  it("--help lists every command within 100 columns, loading neither the API nor a package's module", async () => {
    const { run, loaded } = await hooked(CliProcess.entry, ["--help"])
    expect(run).toMatchObject({ code: 0, stderr: "" })
    for (const command of commands) expect(run.stdout).toMatch(new RegExp(`\\n  ${command} +\\S`))
    expect(run.stdout.split("\n").filter((line) => line.length > 100)).toEqual([])
    expectOnlyTheBundlesStart(loaded, "--help")
    // The compiled CLI (the installed package's bin) prints the same, and loads no more than it needs.
    const compiled = await hooked(CliProcess.unbundledEntry, ["--help"])
    expect(compiled.run).toEqual(run)
    expectNoApi(compiled.loaded, "--help")
    expect((await ok(["keys", "--help"])).split("\n").filter((line) => line.length > 100)).toEqual([])
  })

  it("bad arguments: the message and the usage, no internal error, exit status 1, and no API loaded", async () => {
    const args = ["keys", "create", "--environmnt", "test"]
    const flag = await hooked(CliProcess.entry, args)
    expectUsageError(
      flag.run,
      "Did you mean '--environment'?",
      "Usage: laari keys create ",
      /_tag|CorrectedFlag|ERROR/
    )
    expectOnlyTheBundlesStart(flag.loaded, args.join(" "))
    const compiled = await hooked(CliProcess.unbundledEntry, args)
    expect(compiled.run).toEqual(flag.run)
    expectNoApi(compiled.loaded, args.join(" "))
    expectUsageError(
      await cli(["trigger", "invoice.payed"]),
      "Expected one of the following cases: mandate.activated",
      "Usage: laari trigger ",
      /_tag|InvalidArgument|ERROR/
    )
  })

  it("the first start seeds a demo merchant, prints its keys once, and says where everything is", () => {
    const out = server.stdout()
    expect(out).toContain(`database    embedded PGlite, data in ${dataDir}`)
    expect(out).toContain("/docs")
    expect(out).toContain("/dashboard")
    expect(out).toContain("/metrics")
    expect(out).toContain(`ops token   in ${Path.join(dataDir, "ops-token")} (generated now)`)
    expect(out).toMatch(/sandbox secret key: +sk_test_/)
    // Its owner signs in to the dashboard first, with a one-time password printed once beside the keys.
    expect(out).toMatch(
      /\n {2}dashboard owner: +owner@demo\.laari\.mv \(http:\/\/localhost:\d+\/dashboard\)\n/
    )
    expect(out).toMatch(/\n {2}one-time password: +\S{12,} \(change it at first sign-in\)\n/)
    expect(out).toContain("notices     kept in laari (the wallet page); LAARI_NOTIFY_URL sends them")
    expect(out).toContain("pnpm laari keys create --merchant <merchant id> --environment test")
    // The generated token is kept beside the data, readable by its owner only.
    expect(statSync(Path.join(dataDir, "ops-token")).mode & 0o777).toBe(0o600)
    expect(out).toContain(readFileSync(Path.join(dataDir, "ops-token"), "utf8").trim())
  })

  it("the banner's hints work as printed, from another folder; a refused token says where it came from", async () => {
    const hint = /^ {2}((?:LAARI_\w+=\S+ )*)pnpm laari merchants list$/m.exec(server.stdout())
    expect(hint, server.stdout()).not.toBeNull()
    const env = Object.fromEntries(
      hint![1]!
        .trim()
        .split(" ")
        .map((a) => a.split("=", 2) as [string, string])
    )
    expect(env).toEqual({ LAARI_URL: `http://localhost:${server.port}`, LAARI_DATA_DIR: dataDir })
    // Only what the hint sets: no LAARI_URL or LAARI_DATA_DIR from this test, another working folder.
    const elsewhere = await CliProcess.run(["merchants", "list"], env, tmpdir())
    expect(elsewhere.stderr).toBe("")
    expect(elsewhere.stdout).toContain("Demo Cafe")

    const stale = mkdtempSync(Path.join(tmpdir(), "laari-stale-"))
    try {
      writeFileSync(Path.join(stale, "ops-token"), "ops_not_this_service\n")
      const refused = await cli(["merchants", "list"], { LAARI_DATA_DIR: stale })
      expect(refused.code).toBe(1)
      expect(refused.stderr).toContain(
        `does not accept the operator token from ${Path.join(stale, "ops-token")} (looked in ${Path.join(stale, "ops-token")}`
      )
      expect(refused.stderr).toContain("--ops-token or LAARI_OPS_TOKEN")
    } finally {
      rmSync(stale, { recursive: true, force: true })
    }
  })

  it("merchants create and list, keys create, list and revoke, with the saved operator token", async () => {
    const created = await json<{ id: string; name: string; outlets: Array<{ name: string }> }>([
      "merchants",
      "create",
      "--name",
      "Cli Shop",
      "--outlet",
      "Front",
      "--outlet",
      "Back"
    ])
    expect(created.name).toBe("Cli Shop")
    expect(created.outlets.map((o) => o.name)).toEqual(["Front", "Back"])
    const list = await json<Array<{ id: string; name: string }>>(["merchants", "list"])
    expect(list.map((m) => m.name)).toEqual(expect.arrayContaining(["Demo Cafe", "Cli Shop"]))
    // The seeded owner is the demo merchant's team.
    const cafe = list.find((m) => m.name === "Demo Cafe")!
    expect(await ok(["users", "list", "--merchant", cafe.id])).toMatch(
      /^owner@demo\.laari\.mv {2}owner {2}two-factor off {2}since \S+\n$/
    )
    expect(await ok(["merchants", "list"])).toContain(`${created.id}  Cli Shop`)

    const key = await json<{ id: string; key: string; scopes: Array<string> }>([
      "keys",
      "create",
      "--merchant",
      created.id,
      "--scope",
      "qr:write"
    ])
    expect(key.key).toMatch(/^sk_test_/)
    expect(key.scopes).toEqual(["qr:write"])
    const listed = await ok(["keys", "list", "--merchant", created.id])
    expect(listed).toContain(`${key.id}  ${key.key.slice(0, 12)}...`)
    expect(listed).not.toContain(key.key)
    const headers = { authorization: `Bearer ${key.key}` }
    expect((await fetch(`${server.baseUrl}/qr-codes`, { headers })).status).toBe(200)

    expect(await ok(["keys", "revoke", "--merchant", created.id, key.id])).toContain("Revoked")
    expect(await ok(["keys", "list", "--merchant", created.id])).toContain("REVOKED")
    expect((await fetch(`${server.baseUrl}/qr-codes`, { headers })).status).toBe(401)
  })

  it("customers create, and the manual clock read and moved", async () => {
    const customer = await json<{ balance: number; phone: string }>([
      "customers",
      "create",
      "--phone",
      "+960 7770101",
      "--balance",
      "5000"
    ])
    expect(customer).toMatchObject({ balance: 5000, phone: "+9607770101" })
    const before = await json<{ now: string; mode: string }>(["clock", "now"])
    expect(before.mode).toBe("manual")
    const after = await json<{ now: string }>(["clock", "advance", "--by", "2d"])
    expect(Date.parse(after.now) - Date.parse(before.now)).toBe(2 * 86_400_000)
  })

  it("errors say what to do, on stderr, with exit status 1", async () => {
    const wrongToken = await cli(["merchants", "list", "--ops-token", "ops_wrong"])
    expect(wrongToken).toMatchObject({ code: 1, stdout: "" })
    expect(wrongToken.stderr).toContain("Refused (401)")
    const noServer = await cli(["merchants", "list", "--url", "http://127.0.0.1:9"])
    expect(noServer.code).toBe(1)
    expect(noServer.stderr).toContain("Cannot reach http://127.0.0.1:9")
    const badDuration = await cli(["clock", "advance", "--by", "soon"])
    expect(badDuration.code).toBe(1)
    expect(badDuration.stderr).toContain("use a number and a unit")
    const invalid = await cli(["keys", "list", "--merchant", "not-a-uuid"])
    expect(invalid.code).toBe(1)
    expect(invalid.stderr).toContain("id: must be a UUID")
    const noToken = await cli(["merchants", "list"], { LAARI_DATA_DIR: Path.join(dataDir, "elsewhere") })
    expect(noToken.code).toBe(1)
    // No token there: none at all, or one of another service (the repository's .data), refused.
    expect(noToken.stderr).toContain(`looked in ${Path.join(dataDir, "elsewhere", "ops-token")}`)
    expect(noToken.stderr).toContain("--ops-token or LAARI_OPS_TOKEN")
  })

  it("trigger emits the event asked for; listen forwards events signed like real deliveries", async () => {
    const key = await demoKey()
    const receiver = await Receiver.start()
    const { secret } = StandardWebhooksVector
    try {
      const { listened } = await listen(key, receiver.url("/hooks"), ["--secret", secret], 30_000)

      const triggered = await ok(["trigger", "mandate.charge.succeeded", "--key", key])
      expect(triggered).toMatch(/evt_\w+ {2}mandate\.activated\nevt_\w+ {2}mandate\.charge\.succeeded/)

      const done = await listened
      expect(done.code).toBe(0)
      expect(receiver.received).toHaveLength(2)
      const webhook = new Webhook(secret)
      const types = receiver.received.map((r) => {
        const verified = webhook.verify(r.body, r.headers as Record<string, string>) as {
          id: string
          type: string
        }
        expect(r.headers["webhook-id"]).toBe(verified.id)
        return verified.type
      })
      expect(types).toEqual(["mandate.activated", "mandate.charge.succeeded"])
      expect(done.stdout).toContain("--> mandate.charge.succeeded")

      const declined = await cli(["trigger", "mandate.declined", "--key", key])
      expect(declined.code).toBe(1)
      expect(declined.stderr).toContain("sandbox mandates approve themselves")
      const live = await cli(["trigger", "mandate.activated", "--key", "sk_live_x"])
      expect(live.stderr).toContain("use a test secret key")
      const refunded = await ok(["trigger", "refund.created", "--key", key])
      expect(refunded).toMatch(/mandate\.charge\.succeeded\nevt_\w+ {2}refund\.created/)
    } finally {
      await receiver.close()
    }
  })

  it("after a restart: the same operator token, no keys printed, and JSON logs keep the banner on stderr", async () => {
    const token = readFileSync(Path.join(dataDir, "ops-token"), "utf8").trim()
    await server.stop()
    server = await ServerProcess.start({
      env: { ...serverEnv, LAARI_LOG_FORMAT: "json" },
      readyTimeoutMs: 240_000
    })
    await Receiver.eventually(
      async () => server.stderr().includes("Keys are shown once"),
      10_000,
      "the start-up lines"
    )
    expect(readFileSync(Path.join(dataDir, "ops-token"), "utf8").trim()).toBe(token)
    const merchants = await fetch(`${server.baseUrl}/ops/merchants`, {
      headers: { authorization: `Bearer ${token}` }
    })
    expect(merchants.status).toBe(200)
    for (const line of server.stdout().trim().split("\n")) expect(() => JSON.parse(line)).not.toThrow()
    expect(server.stderr()).toContain(
      `ops token   in ${Path.join(dataDir, "ops-token")}; LAARI_OPS_TOKEN sets your own`
    )
    expect(server.stderr()).not.toContain(token)
    expect(server.stderr()).not.toMatch(/sk_test_|pk_test_|Seeded|one-time password/)
  })

  // The last two run together: `listen` mostly waits (for the service to restart, then out its back-off),
  // and `migrate` uses a database of its own, not the service.
  it.concurrent("listen waits out a restart of the service, says so, and forwards what follows once", async () => {
    const key = await demoKey()
    const receiver = await Receiver.start()
    try {
      const { listened, output } = await listen(key, receiver.url("/hooks"), [], 60_000)
      await server.stop()
      await Receiver.eventually(
        async () => output().includes("Lost the connection"),
        60_000,
        "listen to notice"
      )
      server = await ServerProcess.start({ env: serverEnv, port: server.port, readyTimeoutMs: 240_000 })
      await ok(["trigger", "mandate.charge.succeeded", "--key", key])
      const done = await listened
      expect(done.code, done.stderr).toBe(0)
      expect(done.stdout).toMatch(/Lost the connection to http:\/\/127\.0\.0\.1:\d+; retrying\./)
      expect(done.stdout).toContain("regained")
      const ids = receiver.received.map((r) => r.headers["webhook-id"])
      expect(ids).toHaveLength(2)
      expect(new Set(ids).size).toBe(2)
    } finally {
      await receiver.close()
    }
  })

  it.concurrent("migrate brings a new database up to date, then finds nothing to do", async () => {
    const fresh = mkdtempSync(Path.join(tmpdir(), "laari-migrate-"))
    try {
      const first = await ok(["migrate"], { LAARI_DATA_DIR: fresh })
      expect(first).toContain(`Migrating PGlite in ${fresh}`)
      expect(first).toMatch(/\[1\/\d+\] 0001_init/)
      expect(first).toMatch(/\d+ applied in/)
      expect(await ok(["migrate"], { LAARI_DATA_DIR: fresh })).toContain("The schema is up to date.")
    } finally {
      rmSync(fresh, { recursive: true, force: true })
    }
  })
})
