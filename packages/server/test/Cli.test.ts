/**
 * The `laari` CLI as a developer runs it (`node packages/server/dist/Cli/main.js`, the compiled build
 * `pnpm laari` runs) against the service as a child process on PGlite with a manual clock: every
 * command, the errors a developer acts on, `listen` forwarding signed deliveries, and the start-up
 * output with the operator token kept across a restart.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { Webhook } from "standardwebhooks"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Receiver from "./support/Receiver.js"
import * as ServerProcess from "./support/ServerProcess.js"

const root = Path.resolve(fileURLToPath(import.meta.url), "../../../..")
const dataDir = mkdtempSync(Path.join(tmpdir(), "laari-cli-"))
const serverEnv = { LAARI_DATA_DIR: dataDir, LAARI_CLOCK: "manual" }

let server: ServerProcess.ServerProcess

interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

const cliEnv = (extra: Record<string, string>) => {
  const env: Record<string, string> = {}
  for (const [name, value] of Object.entries(process.env))
    if (value !== undefined && !/^(LAARI_|DATABASE_URL$|PORT$|NODE_OPTIONS$)/.test(name)) env[name] = value
  return { ...env, LAARI_URL: server.baseUrl, LAARI_DATA_DIR: dataDir, ...extra }
}

const launch = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  spawn(process.execPath, ["packages/server/dist/Cli/main.js", ...args], {
    cwd: root,
    env: cliEnv(env),
    stdio: ["ignore", "pipe", "pipe"]
  })

const collect = (child: ChildProcess): Promise<Run> =>
  new Promise((resolve) => {
    let stdout = ""
    let stderr = ""
    child.stdout!.setEncoding("utf8").on("data", (s: string) => (stdout += s))
    child.stderr!.setEncoding("utf8").on("data", (s: string) => (stderr += s))
    child.once("exit", (code) => resolve({ code, stdout, stderr }))
  })

const cli = (args: ReadonlyArray<string>, env: Record<string, string> = {}) => collect(launch(args, env))

const ok = async (args: ReadonlyArray<string>, env: Record<string, string> = {}) => {
  const run = await cli(args, env)
  expect(run.stderr, `laari ${args.join(" ")}`).toBe("")
  expect(run.code).toBe(0)
  return run.stdout
}

const json = async <A>(args: ReadonlyArray<string>, env: Record<string, string> = {}): Promise<A> =>
  JSON.parse(await ok([...args, "--json"], env)) as A

beforeAll(async () => {
  server = await ServerProcess.start({ env: serverEnv })
}, 90_000)

afterAll(async () => {
  await server?.stop()
  rmSync(dataDir, { recursive: true, force: true })
})

describe("laari CLI", { timeout: 60_000 }, () => {
  it("--help lists every command", async () => {
    const help = (await ok(["--help"]))
      .replaceAll(`${String.fromCharCode(27)}[`, "")
      .replace(/\d+(;\d+)*m/g, "")
    for (const command of [
      "serve",
      "migrate",
      "merchants create",
      "merchants list",
      "keys create",
      "keys list",
      "keys revoke",
      "customers create",
      "clock now",
      "clock advance",
      "listen",
      "trigger"
    ])
      expect(help).toContain(`- ${command}`)
  })

  it("the first start seeds a demo merchant, prints its keys once, and says where everything is", () => {
    const out = server.stdout()
    expect(out).toContain(`database    embedded PGlite, data in ${dataDir}`)
    expect(out).toContain("/docs")
    expect(out).toContain("/dashboard")
    expect(out).toContain("/metrics")
    expect(out).toContain(`ops token   in ${Path.join(dataDir, "ops-token")} (generated now)`)
    expect(out).toMatch(/sandbox secret key: +sk_test_/)
    expect(out).toContain("notices     kept in laari (the wallet page); LAARI_NOTIFY_URL sends them")
    expect(out).toContain("pnpm laari keys create --merchant <merchant id> --environment test")
    // The generated token is kept beside the data, readable by its owner only.
    expect(statSync(Path.join(dataDir, "ops-token")).mode & 0o777).toBe(0o600)
    expect(out).toContain(readFileSync(Path.join(dataDir, "ops-token"), "utf8").trim())
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
    expect(invalid.stderr).toContain("id: Expected a Universally Unique Identifier")
    const noToken = await cli(["merchants", "list"], { LAARI_DATA_DIR: Path.join(dataDir, "elsewhere") })
    expect(noToken.code).toBe(1)
    expect(noToken.stderr).toContain("No operator token")
  })

  it("trigger emits the event asked for; listen forwards events signed like real deliveries", async () => {
    const merchants = await json<Array<{ id: string; name: string }>>(["merchants", "list"])
    const demo = merchants.find((m) => m.name === "Demo Cafe")!
    const { key } = await json<{ key: string }>(["keys", "create", "--merchant", demo.id])
    const receiver = await Receiver.start()
    const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    try {
      const listener = launch([
        "listen",
        "--key",
        key,
        "--forward-to",
        receiver.url("/hooks"),
        "--secret",
        secret,
        "--interval",
        "200",
        "--max-events",
        "2"
      ])
      const listened = collect(listener)
      let ready = ""
      listener.stdout!.on("data", (s: string) => (ready += s))
      await Receiver.eventually(async () => ready.includes("Ready"), 30_000, "listen to be ready")

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
    } finally {
      await receiver.close()
    }
  })

  it("after a restart: the same operator token, no keys printed, and JSON logs keep the banner on stderr", async () => {
    const token = readFileSync(Path.join(dataDir, "ops-token"), "utf8").trim()
    await server.stop()
    server = await ServerProcess.start({ env: { ...serverEnv, LAARI_LOG_FORMAT: "json" } })
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
    expect(server.stderr()).not.toMatch(/sk_test_|pk_test_|Seeded/)
  })

  it("migrate brings a new database up to date, then finds nothing to do", async () => {
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
