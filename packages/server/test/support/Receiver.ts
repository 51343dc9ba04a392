/**
 * A webhook receiver for tests: a local HTTP server that records every request and answers as told.
 */
import { createHmac, timingSafeEqual } from "node:crypto"
import http from "node:http"

export interface Received {
  readonly path: string
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
  readonly at: number
}

export interface Receiver {
  readonly url: (path?: string) => string
  readonly received: Array<Received>
  /** The status (and optional delay) of the next answers; default 200 at once. */
  answer: (req: Received) => { status: number; delayMs?: number; body?: string }
  readonly close: () => Promise<void>
}

/** Listens on `port` (default: any free one); a receiver closed and started again on its port is "back". */
export const start = async (port = 0): Promise<Receiver> => {
  const received: Array<Received> = []
  const receiver: Receiver = {
    url: (path = "/hook") => `http://127.0.0.1:${(server.address() as { port: number }).port}${path}`,
    received,
    answer: () => ({ status: 200 }),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
  const server = http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const r: Received = {
        path: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
        at: Date.now()
      }
      received.push(r)
      const { status, delayMs, body } = receiver.answer(r)
      const reply = () => {
        if (!res.destroyed) res.writeHead(status, { "content-type": "text/plain" }).end(body ?? "ok")
      }
      if (delayMs) setTimeout(reply, delayMs)
      else reply()
    })
  })
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve))
  return receiver
}

/** The `v1,` signatures of `webhook-signature`. */
export const signatures = (r: Received): ReadonlyArray<string> => {
  const header = String(r.headers["webhook-signature"] ?? "")
  return header.split(" ")
}

export const sign = (secret: string, id: string, timestamp: string, body: string): string =>
  `v1,${createHmac("sha256", Buffer.from(secret.replace(/^whsec_/, ""), "base64"))
    .update(`${id}.${timestamp}.${body}`)
    .digest("base64")}`

/**
 * Whether `r` carries a valid signature by `secret`, with `node:crypto`: standardwebhooks' own verify
 * checks the timestamp against the wall clock, which a server on the manual clock does not keep.
 */
export const verifies = (secret: string, r: Received): boolean => {
  const expected = Buffer.from(
    sign(secret, String(r.headers["webhook-id"]), String(r.headers["webhook-timestamp"]), r.body)
  )
  return signatures(r).some((s) => {
    const given = Buffer.from(s)
    return given.length === expected.length && timingSafeEqual(given, expected)
  })
}

/** Waits until `check` holds, polling; fails after `timeoutMs`. */
export const eventually = async <T>(
  check: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 10_000,
  what = "condition"
): Promise<T> => {
  const until = Date.now() + timeoutMs
  for (;;) {
    const value = await check()
    if (value !== undefined && value !== false) return value
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 25))
  }
}
