/**
 * `laari wallet-conformance` through the real CLI process against the reference wallet core
 * (examples/wallet-core) in a child process, started as its README says: the correct core passes every
 * rule (exit 0), and each of its test-only faults fails the rule that names it (exit 1).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "vitest"
import * as CliProcess from "../support/CliProcess.js"

const example = Path.join(CliProcess.root, "examples/wallet-core")
const tsx = Path.join(CliProcess.root, "node_modules/tsx/dist/cli.mjs")

interface Core {
  readonly url: string
  readonly token: string
  readonly wallets: Record<"payer" | "merchant" | "fee" | "frozen" | "blocked" | "limited" | "empty", string>
  readonly stop: () => Promise<void>
}

/** A wallet core on PGlite in a directory of its own, with `faults`, and the wallets the suite needs. */
const startCore = async (faults: string): Promise<Core> => {
  const token = `conformance-${randomUUID()}`
  const dataDir = mkdtempSync(Path.join(tmpdir(), "laari-conformance-core-"))
  const child: ChildProcess = spawn(process.execPath, [tsx, "-C", "@laari/source", "src/main.ts"], {
    cwd: example,
    env: {
      ...CliProcess.baseEnv(),
      PORT: "0",
      WALLET_CORE_TOKEN: token,
      WALLET_CORE_DATA_DIR: dataDir,
      WALLET_CORE_FAULTS: faults
    },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout!.setEncoding("utf8").on("data", (s: string) => (output += s))
  child.stderr!.setEncoding("utf8").on("data", (s: string) => (output += s))
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  const stop = async () => {
    child.kill("SIGTERM")
    await exited
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
  const open = async (role: string, n: number, wallet: Record<string, unknown>) => {
    const id = `${role}-${randomUUID()}`
    const res = await fetch(`${url}/admin/wallets`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
        "request-id": randomUUID()
      },
      body: JSON.stringify({ id, phone: `+96070000${n}0`, ...wallet })
    })
    if (res.status !== 201) throw new Error(`seeding ${role}: ${res.status} ${await res.text()}`)
    return id
  }
  const wallets = {
    payer: await open("payer", 1, { balance: 1_000_000 }),
    merchant: await open("merchant", 2, { balance: 0 }),
    fee: await open("fee", 3, { balance: 0 }),
    frozen: await open("frozen", 4, { balance: 1000, status: "frozen" }),
    blocked: await open("blocked", 5, { balance: 1000, status: "blocked" }),
    limited: await open("limited", 6, { balance: 100, limit: 500 }),
    empty: await open("empty", 7, { balance: 0 })
  }
  return { url, token, wallets, stop }
}

const conformance = (core: Core, extra: ReadonlyArray<string> = []) =>
  CliProcess.run(
    [
      "wallet-conformance",
      "--url",
      core.url,
      "--token",
      core.token,
      ...Object.entries(core.wallets).flatMap(([role, id]) => [`--${role}`, id]),
      ...extra
    ],
    {}
  )

/** The rules a run printed, by outcome. */
const outcomes = (stdout: string) => {
  const rules = stdout.split("\n").filter((line) => /^(ok|FAILED|not checked) {2}/.test(line))
  return {
    ok: rules.filter((l) => l.startsWith("ok  ")).map((l) => l.slice(4).split(" ")[0]),
    failed: rules.filter((l) => l.startsWith("FAILED  ")).map((l) => l.slice(8).split(":")[0]),
    lines: rules
  }
}

describe("laari wallet-conformance against the reference wallet core", { timeout: 300_000 }, () => {
  it("the reference core passes every rule, twice in a row, and exits 0", async () => {
    const core = await startCore("")
    try {
      const run = await conformance(core)
      const { ok, failed, lines } = outcomes(run.stdout)
      expect(failed, `${run.stdout}${run.stderr}`).toEqual([])
      expect(run.stderr).toBe("")
      expect(ok).toHaveLength(lines.length)
      expect(ok).toEqual(expect.arrayContaining(["money-moves-once", "statement-paging", "refusal-frozen"]))
      expect(run.stdout).toMatch(/\n\d+ passed, 0 failed, 0 not checked \(http:/)
      expect(run.code).toBe(0)
      // Fresh ids each run: again against the same core, and its results as JSON.
      const again = await conformance(core, ["--json"])
      const results = JSON.parse(again.stdout) as Array<{ rule: string; ok: boolean }>
      expect(results.filter((r) => !r.ok)).toEqual([])
      expect(again.code).toBe(0)
    } finally {
      await core.stop()
    }
  })

  it.each([
    ["no-tombstones", ["late-post-after-cancel", "cancel-before-post"], /after its cancel/],
    ["double-post", ["money-moves-once"], /the repeat moved the money again/]
  ])("a core with the fault %s fails %j, and exits 1", async (fault, rules, detail) => {
    const core = await startCore(fault)
    try {
      const run = await conformance(core)
      const { failed, lines } = outcomes(run.stdout)
      expect(failed, run.stdout).toEqual(expect.arrayContaining(rules))
      expect(lines.find((l) => l.startsWith(`FAILED  ${rules[0]}: `))).toMatch(detail)
      expect(run.code).toBe(1)
    } finally {
      await core.stop()
    }
  })

  it("a core that does not answer: every rule fails saying so, exit 1", async () => {
    // Takes the connection, never answers.
    const silent = createServer(() => {})
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve))
    try {
      const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`
      const run = await CliProcess.run(
        [
          "wallet-conformance",
          "--url",
          url,
          "--token",
          "t",
          "--payer",
          "p",
          "--merchant",
          "m",
          "--fee",
          "f"
        ].concat(["--timeout-ms", "300"]),
        {}
      )
      expect(run.stdout).toContain("FAILED  authentication: GET /wallets/p: no answer within 300 ms\n")
      expect(run.stdout).toContain("not checked  refusal-frozen: no frozen wallet given (--frozen)")
      expect(run.stdout).toMatch(/\n0 passed, 15 failed, 8 not checked \(http:/)
      expect(run.code).toBe(1)
    } finally {
      silent.closeAllConnections()
      await new Promise((resolve) => silent.close(resolve))
    }
  })

  it("the token comes from LAARI_WALLET_TOKEN when --token is not given; no token is a usage error", async () => {
    const args = [
      "wallet-conformance",
      "--url",
      "http://127.0.0.1:9",
      "--payer",
      "p",
      "--merchant",
      "m",
      "--fee",
      "f"
    ]
    const missing = await CliProcess.run(args, {})
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain("--token")
    const fromEnv = await CliProcess.run([...args, "--timeout-ms", "500"], { LAARI_WALLET_TOKEN: "t" })
    expect(fromEnv.stdout).toContain("FAILED  authentication")
  })
})
