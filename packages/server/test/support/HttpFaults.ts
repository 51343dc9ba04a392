/**
 * An HTTP proxy in front of the wallet core that injects the faults a network and a core can give laari,
 * per request, on the requests a rule picks (`POST /transfers` only, say), for the next `count` of them:
 * - `drop-after-commit`: forwarded, the core's whole answer read (so it committed), then the connection to
 *   laari destroyed without a byte;
 * - `delay`: forwarded, the answer held `ms` before it is sent (past laari's timeout);
 * - `error-500-before`: `500` without forwarding (the core never saw it);
 * - `error-500-after`: forwarded, the answer replaced by a `500`;
 * - `reset`: the connection destroyed without forwarding.
 */
import * as Http from "node:http"
import type { AddressInfo } from "node:net"

export type Fault = "drop-after-commit" | "delay" | "error-500-before" | "error-500-after" | "reset"

export interface Rule {
  readonly fault: Fault
  /** Which requests: method and a path pattern. */
  readonly method?: string
  readonly path?: RegExp
  /** How many matching requests get it; then the rule is spent. */
  readonly count: number
  /** For `delay`. */
  readonly ms?: number
}

export interface FaultProxy {
  readonly url: string
  /** The rules in force from now on (none: every request forwarded); the first that matches applies. */
  readonly setFaults: (rules: ReadonlyArray<Rule>) => void
  /** Faults applied so far, by kind. */
  readonly applied: () => Readonly<Record<string, number>>
  readonly close: () => Promise<void>
}

export const start = async (target: string): Promise<FaultProxy> => {
  let rules: Array<Rule & { left: number }> = []
  const applied: Record<string, number> = {}
  const take = (method: string, path: string): Rule | undefined => {
    const rule = rules.find(
      (r) =>
        r.left > 0 &&
        (r.method === undefined || r.method === method) &&
        (r.path === undefined || r.path.test(path))
    )
    if (rule === undefined) return undefined
    rule.left--
    applied[rule.fault] = (applied[rule.fault] ?? 0) + 1
    return rule
  }
  const forward = (req: Http.IncomingMessage, body: Buffer) =>
    new Promise<{ status: number; headers: Http.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
      const upstream = Http.request(
        `${target}${req.url}`,
        { method: req.method, headers: { ...req.headers, host: new URL(target).host } },
        (res) => {
          const chunks: Array<Buffer> = []
          res.on("data", (c: Buffer) => chunks.push(c))
          res.on("end", () =>
            resolve({ status: res.statusCode ?? 502, headers: res.headers, body: Buffer.concat(chunks) })
          )
          res.on("error", reject)
        }
      )
      upstream.on("error", reject)
      upstream.end(body)
    })
  const server = Http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", async () => {
      const body = Buffer.concat(chunks)
      const fault = take(req.method ?? "GET", (req.url ?? "/").split("?")[0]!)
      try {
        if (fault?.fault === "reset") return req.socket.destroy()
        if (fault?.fault === "error-500-before") return res.writeHead(500).end("injected")
        const answer = await forward(req, body)
        if (fault?.fault === "drop-after-commit") return req.socket.destroy()
        if (fault?.fault === "error-500-after") return res.writeHead(500).end("injected")
        if (fault?.fault === "delay") await new Promise((r) => setTimeout(r, fault.ms ?? 2_000))
        const { connection: _c, "transfer-encoding": _t, "content-length": _l, ...headers } = answer.headers
        res.writeHead(answer.status, headers).end(answer.body)
      } catch {
        // The core went away mid-request: laari sees the connection drop.
        req.socket.destroy()
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}`,
    setFaults: (next) => {
      rules = next.map((r) => ({ ...r, left: r.count }))
    },
    applied: () => ({ ...applied }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
