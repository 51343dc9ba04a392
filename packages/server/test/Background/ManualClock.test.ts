/**
 * The manual clock survives a restart: it went back to wall time, so new events were
 * stamped before existing ones and pending retries waited weeks.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import * as ServerProcess from "../support/ServerProcess.js"

const dir = mkdtempSync(Path.join(tmpdir(), "laari-clock-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const env = { LAARI_DATA_DIR: dir, LAARI_CLOCK: "manual", LAARI_OPS_TOKEN: "ops_clock_test" }
const ops = (server: ServerProcess.ServerProcess, method: string, path: string, body?: unknown) =>
  fetch(`${server.baseUrl}${path}`, {
    method,
    headers: { authorization: "Bearer ops_clock_test", "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(30_000)
  }).then(async (r) => ({ status: r.status, body: (await r.json()) as { now: string } }))

describe("LAARI_CLOCK=manual", () => {
  it("goes on after a restart from where it was advanced to", async () => {
    const first = await ServerProcess.start({ env })
    const before = Date.parse((await ops(first, "GET", "/ops/clock")).body.now)
    expect(Math.abs(before - Date.now())).toBeLessThan(120_000)
    const advanced = await ops(first, "POST", "/ops/clock/advance", { by_seconds: 40 * 86_400 })
    expect(advanced.status).toBe(200)
    const at = Date.parse((await ops(first, "GET", "/ops/clock")).body.now)
    expect(at - before).toBeGreaterThanOrEqual(40 * 86_400_000)
    await first.stop()

    const second = await ServerProcess.start({ env })
    const after = Date.parse((await ops(second, "GET", "/ops/clock")).body.now)
    await second.stop()
    expect(after).toBe(at)
  }, 180_000)
})
