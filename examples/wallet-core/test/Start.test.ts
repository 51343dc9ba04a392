/**
 * The one command of the README, as an operator (or the conformance suite) runs it: `pnpm --filter
 * @laari/example-wallet-core start` prints the URL and token, answers there, and a SIGTERM to pnpm stops
 * the service with it instead of leaving it listening behind pnpm's shell.
 */
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { expect, it } from "vitest"

const root = Path.resolve(fileURLToPath(import.meta.url), "../../../..")

it("pnpm start prints URL and token, serves, and stops with pnpm", async () => {
  const dataDir = mkdtempSync(Path.join(tmpdir(), "wallet-core-start-"))
  const pnpm = spawn("pnpm", ["--filter", "@laari/example-wallet-core", "start"], {
    cwd: root,
    env: {
      ...process.env,
      PORT: "0",
      WALLET_CORE_DATA_DIR: dataDir,
      WALLET_CORE_TOKEN: "",
      DATABASE_URL: ""
    },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  pnpm.stdout.on("data", (d) => (output += d))
  pnpm.stderr.on("data", (d) => (output += d))
  const exited = new Promise<number | null>((resolve) => pnpm.once("exit", (code) => resolve(code)))
  try {
    const deadline = Date.now() + 90_000
    while (!/^WALLET_CORE_TOKEN=\S+$/m.test(output) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100))
    const url = /^WALLET_CORE_URL=(\S+)$/m.exec(output)?.[1]
    const token = /^WALLET_CORE_TOKEN=(\S+)$/m.exec(output)?.[1]
    expect(url, output).toBeDefined()
    // No token set: one is made for this run and printed, and it is the one that works.
    const wallets = await fetch(`${url}/admin/wallets`, { headers: { authorization: `Bearer ${token}` } })
    expect(wallets.status).toBe(200)

    pnpm.kill("SIGTERM")
    await exited
    const after = await fetch(`${url}/healthz`).then(
      () => "still answering",
      () => "stopped"
    )
    expect(after).toBe("stopped")
  } finally {
    pnpm.kill("SIGKILL")
    rmSync(dataDir, { recursive: true, force: true })
  }
}, 120_000)
