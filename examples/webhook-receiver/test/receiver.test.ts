/**
 * The receiver against a live laari server (a child process, as `pnpm start` runs it, on embedded
 * PGlite in a temporary folder): events arrive verified, a resend is dropped as a duplicate, a
 * forged delivery is refused, and so is a real delivery replayed with its body changed.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import type http from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createReceiver, type Event } from "../src/receiver.js"

const root = Path.resolve(fileURLToPath(import.meta.url), "../../../..")
const ops = "ops_example_receiver"
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

const until = async <T>(f: () => T | undefined | false, ms = 15_000): Promise<T> => {
  const end = Date.now() + ms
  for (;;) {
    const v = f()
    if (v !== undefined && v !== false) return v
    if (Date.now() > end) throw new Error("timed out")
    await sleep(25)
  }
}

describe("examples/webhook-receiver against a live server", () => {
  let laari: ChildProcess
  let baseUrl: string
  let dataDir: string
  let output = ""

  beforeAll(async () => {
    dataDir = mkdtempSync(Path.join(tmpdir(), "laari-receiver-"))
    const port = 40_000 + Math.floor(Math.random() * 20_000)
    baseUrl = `http://127.0.0.1:${port}`
    laari = spawn(process.execPath, ["packages/server/dist/bin.js"], {
      cwd: root,
      env: {
        ...process.env,
        PORT: String(port),
        LAARI_DATA_DIR: dataDir,
        LAARI_OPS_TOKEN: ops,
        // The receiver listens on 127.0.0.1, which endpoints may target only when the operator allows it.
        LAARI_WEBHOOK_ALLOW_PRIVATE: "true",
        DATABASE_URL: ""
      },
      stdio: ["ignore", "pipe", "pipe"]
    })
    laari.stdout!.on("data", (d) => (output += d))
    laari.stderr!.on("data", (d) => (output += d))
    const deadline = Date.now() + 60_000
    while (Date.now() < deadline) {
      const ok = await fetch(`${baseUrl}/healthz`).then(
        (r) => r.ok,
        () => false
      )
      if (ok) return
      await sleep(200)
    }
    throw new Error(`laari did not start:\n${output}`)
  }, 90_000)

  afterAll(async () => {
    laari?.kill("SIGTERM")
    await new Promise((r) => laari?.once("exit", r))
    rmSync(dataDir, { recursive: true, force: true })
  }, 40_000)

  const call = async (method: string, path: string, key: string, body?: unknown) => {
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { "content-type": "application/json" })
      },
      body: body === undefined ? undefined : JSON.stringify(body)
    })
    return { status: res.status, body: (await res.json()) as any }
  }

  it("prints verified events once each and refuses forgeries and tampered bodies", async () => {
    const merchant = await call("POST", "/ops/merchants", ops, {
      name: "Receiver Café",
      outlets: [{ name: "Main" }]
    })
    const key = (await call("POST", `/ops/merchants/${merchant.body.id}/keys`, ops, { environment: "test" }))
      .body.key
    const events: Array<Event> = []
    const skipped: Array<string> = []
    let receiver: http.Server | undefined
    let secret = ""
    // The secret is known once the endpoint exists, and the endpoint needs the receiver's port.
    const placeholder = createReceiver({
      secrets: ["whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="],
      onEvent: () => {}
    })
    await new Promise<void>((r) => placeholder.listen(0, "127.0.0.1", r))
    const port = (placeholder.address() as AddressInfo).port
    await new Promise((r) => placeholder.close(r))
    const endpoint = await call("POST", "/webhook-endpoints", key, {
      url: `http://127.0.0.1:${port}/`,
      enabled_events: ["mandate.activated", "mandate.charge.succeeded"]
    })
    expect(endpoint.status).toBe(201)
    secret = endpoint.body.secret
    receiver = createReceiver({
      secrets: [secret],
      onEvent: (e) => events.push(e),
      onSkip: (r) => skipped.push(r)
    })
    // What laari actually sent, byte for byte, to replay it below: a second listener sees the same chunks.
    const delivered: Array<{ headers: Record<string, string>; body: string }> = []
    receiver.prependListener("request", (req: http.IncomingMessage) => {
      const chunks: Array<Buffer> = []
      req.on("data", (c: Buffer) => chunks.push(c))
      req.on("end", () =>
        delivered.push({
          headers: Object.fromEntries(
            ["webhook-id", "webhook-timestamp", "webhook-signature"].map((h) => [h, String(req.headers[h])])
          ),
          body: Buffer.concat(chunks).toString("utf8")
        })
      )
    })
    await new Promise<void>((r) => receiver!.listen(port, "127.0.0.1", r))
    try {
      const mandate = await call("POST", "/mandates", key, {
        reference: "receiver-1",
        title: "Coffee",
        per_charge_cap: 10_000
      })
      expect(mandate.status).toBe(201)
      const charge = await call("POST", `/mandates/${mandate.body.id}/charges`, key, { amount: 2_500 })
      expect(charge.status).toBe(201)
      await until(() => events.length >= 2)
      expect(events.map((e) => e.type)).toEqual(["mandate.activated", "mandate.charge.succeeded"])
      expect(events.map((e) => e.sequence)).toEqual([1, 2])
      const resent = await call("POST", `/webhook-endpoints/${endpoint.body.id}/resend`, key, {
        event_id: events[0]!.id
      })
      expect(resent.status).toBe(202)
      await until(() => skipped.includes("duplicate"))
      expect(events).toHaveLength(2)
      const forged = await fetch(`http://127.0.0.1:${port}/`, {
        method: "POST",
        headers: {
          "webhook-id": "evt_forged",
          "webhook-timestamp": String(Math.floor(Date.now() / 1000)),
          "webhook-signature": "v1,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="
        },
        body: "{}"
      })
      expect(forged.status).toBe(400)
      expect(events).toHaveLength(2)

      // The charge's real delivery, signature and all, with the amount changed: refused.
      const real = delivered.find((d) => d.headers["webhook-id"] === events[1]!.id)!
      expect(JSON.parse(real.body).data.object.amount).toBe(2_500)
      const replay = (body: string) =>
        fetch(`http://127.0.0.1:${port}/`, { method: "POST", headers: real.headers, body })
      const changed = real.body.replace('"amount":2500', '"amount":250000')
      expect(changed).not.toBe(real.body)
      const tampered = await replay(changed)
      expect(tampered.status).toBe(400)
      expect(skipped.filter((r) => r === "signature")).toHaveLength(2)
      // The same bytes unchanged still verify (and are dropped as a duplicate): only the change was refused.
      const untouched = await replay(real.body)
      expect([untouched.status, await untouched.text()]).toEqual([200, "duplicate"])
      expect(events).toHaveLength(2)
    } finally {
      await new Promise((r) => receiver?.close(r))
    }
  }, 60_000)
})
