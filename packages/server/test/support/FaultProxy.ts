/**
 * An HTTP proxy in front of the wallet core (any HTTP target, 127.0.0.1 only) that gives laari the faults
 * a network and a core can give it, chosen per request by a rule the test sets at any time:
 * - `drop-after-commit`: forwarded, the core's whole answer read (so it committed), then laari's connection
 *   destroyed without a byte of it;
 * - `delay`: forwarded, the answer held `ms` before it is sent (past laari's timeout);
 * - `error-500-before`: `500` without forwarding (the core never saw it);
 * - `error-500-after`: forwarded, the answer replaced by a `500`;
 * - `reset`: laari's connection reset without forwarding;
 * - `blackhole`: never answered nor forwarded (a core that went silent); the request hangs until laari
 *   gives up or the proxy closes.
 * Beside the rules, `refuse` closes the listening socket and every connection (the core's host is down:
 * connections refused) and `restore` listens again on the same port.
 *
 * Everything else is forwarded as sent: headers (Authorization, Request-Id, content-type, ...) and body
 * bytes verbatim, less the hop-by-hop headers, with the target's Host. A request the proxy cannot forward
 * (the core is down) has its connection destroyed, as a direct call to a dead core would fail.
 */
import { Effect, type Scope } from "effect"
import * as Http from "node:http"
import type * as Net from "node:net"

export type FaultName =
  | "drop-after-commit"
  | "delay"
  | "error-500-before"
  | "error-500-after"
  | "reset"
  | "blackhole"

export type Fault =
  | { readonly fault: Exclude<FaultName, "delay"> }
  | { readonly fault: "delay"; readonly ms: number }

/**
 * How many of the requests a rule matches get its fault: every one; a fraction, drawn from a PRNG seeded
 * with `seed` (the same seed and the same requests, the same faults); or the next `count`, then none.
 */
export type Rate =
  | { readonly _tag: "Every" }
  | { readonly _tag: "Fraction"; readonly fraction: number; readonly seed: number }
  | { readonly _tag: "Next"; readonly count: number }

export const every: Rate = { _tag: "Every" }
export const fraction = (fraction: number, seed: number): Rate => ({ _tag: "Fraction", fraction, seed })
export const next = (count: number): Rate => ({ _tag: "Next", count })

export type Rule = Fault & {
  /** `POST`, `GET`, ...; unset: any. */
  readonly method?: string
  /**
   * The path without its query: a pattern where `*` is one segment (`/transfers/*\/cancel`), matched
   * whole, or a RegExp; unset: any.
   */
  readonly path?: string | RegExp
  /** Unset: `every`. */
  readonly rate?: Rate
}

/** One request the proxy answered or dropped, for assertions. */
export interface Entry {
  readonly method: string
  /** With its query. */
  readonly path: string
  readonly requestId: string | undefined
  /** The fault applied; `undefined`: forwarded as is. */
  readonly fault: FaultName | undefined
  /** The core's status; `"error"`: forwarding failed; `undefined`: not forwarded. */
  readonly upstream: number | "error" | undefined
}

export interface Stats {
  /** Requests read whole (a rule was consulted for each). */
  readonly seen: number
  /** Requests sent to the core (whether its answer then reached the client or not). */
  readonly forwarded: number
  /** Faults applied, by kind. */
  readonly applied: Readonly<Record<FaultName, number>>
}

export interface FaultProxy {
  readonly port: number
  /** `http://127.0.0.1:<port>`: what laari is pointed at. */
  readonly url: string
  /**
   * The rules from now on, replacing the ones before (their counts and PRNGs start afresh); the first whose
   * method and path match and whose rate picks the request applies. `undefined` or `[]`: forward all.
   */
  readonly setFault: (rule: Rule | ReadonlyArray<Rule> | undefined) => Effect.Effect<void>
  /** Connections refused from now on; every open one closed. */
  readonly refuse: Effect.Effect<void>
  /** Listening again on the same port. */
  readonly restore: Effect.Effect<void>
  readonly stats: Effect.Effect<Stats>
  readonly log: Effect.Effect<ReadonlyArray<Entry>>
  /** Counters and log back to zero, for the next round. */
  readonly clearStats: Effect.Effect<void>
}

/** mulberry32: small, fast, and the same sequence for the same seed on every machine. */
const prng = (seed: number) => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const literal = (s: string) => s.replace(/[.+?^${}()|[\]\\]/g, "\\$&")

/** A path pattern as a RegExp over the whole path: `*` is one segment. */
export const pathPattern = (pattern: string | RegExp): RegExp =>
  typeof pattern === "string" ? new RegExp(`^${pattern.split("*").map(literal).join("[^/]+")}$`) : pattern

/** A rule with its state: the matcher compiled, and what its rate has left or draws next. */
const arm = (rule: Rule) => {
  const method = rule.method?.toUpperCase()
  const path = rule.path === undefined ? undefined : pathPattern(rule.path)
  const rate = rule.rate ?? every
  const draw = rate._tag === "Fraction" ? prng(rate.seed) : undefined
  const share = rate._tag === "Fraction" ? rate.fraction : 1
  let left = rate._tag === "Next" ? rate.count : Number.POSITIVE_INFINITY
  return {
    rule,
    /** Whether this rule takes the request; consumes a draw or a count when it matches. */
    takes: (m: string, p: string) => {
      if (method !== undefined && method !== m) return false
      if (path !== undefined) {
        path.lastIndex = 0
        if (!path.test(p)) return false
      }
      if (draw !== undefined) return draw() < share
      if (left <= 0) return false
      left--
      return true
    }
  }
}

/** Headers that belong to one connection, not to the request: never forwarded. */
const hopByHop = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "te",
  "trailer",
  "upgrade",
  "host",
  "content-length"
])

/** Raw headers (name, value, name, value ...) as sent, less the hop-by-hop ones, with `extra` after. */
const passOn = (raw: ReadonlyArray<string>, extra: ReadonlyArray<string>): Array<string> => {
  const out: Array<string> = []
  for (let i = 0; i + 1 < raw.length; i += 2)
    if (!hopByHop.has(raw[i]!.toLowerCase())) out.push(raw[i]!, raw[i + 1]!)
  return [...out, ...extra]
}

interface Answer {
  readonly status: number
  readonly message: string
  readonly rawHeaders: ReadonlyArray<string>
  readonly body: Buffer
}

const emptyApplied = (): Record<FaultName, number> => ({
  "drop-after-commit": 0,
  delay: 0,
  "error-500-before": 0,
  "error-500-after": 0,
  reset: 0,
  blackhole: 0
})

/** A proxy to `target` (a base URL, e.g. the core's `http://127.0.0.1:4100`), closed with the scope. */
export const make = (target: string): Effect.Effect<FaultProxy, never, Scope.Scope> =>
  Effect.gen(function* () {
    const base = new URL(target)
    const prefix = base.pathname.replace(/\/$/, "")
    // Kept alive, so a burst of charges does not spend the ephemeral ports on connections in TIME_WAIT.
    const agent = new Http.Agent({ keepAlive: true })
    let rules: Array<ReturnType<typeof arm>> = []
    let seen = 0
    let forwarded = 0
    let applied = emptyApplied()
    let log: Array<Entry> = []
    const sockets = new Set<Net.Socket>()
    const timers = new Set<NodeJS.Timeout>()

    const choose = (method: string, path: string): Fault | undefined =>
      rules.find((r) => r.takes(method, path))?.rule

    const send = (req: Http.IncomingMessage, body: Buffer, retried = false): Promise<Answer> =>
      new Promise((resolve, reject) => {
        const upstream = Http.request(
          {
            protocol: base.protocol,
            hostname: base.hostname,
            port: base.port,
            method: req.method,
            path: `${prefix}${req.url ?? "/"}`,
            agent,
            // The body's length as sent; none where the client sent none (a GET).
            headers: passOn(req.rawHeaders, [
              "Host",
              base.host,
              ...(body.length > 0 || req.headers["content-length"] !== undefined
                ? ["Content-Length", String(body.length)]
                : [])
            ])
          },
          (res) => {
            const chunks: Array<Buffer> = []
            res.on("data", (c: Buffer) => chunks.push(c))
            res.on("end", () =>
              resolve({
                status: res.statusCode ?? 502,
                message: res.statusMessage ?? "",
                rawHeaders: res.rawHeaders,
                body: Buffer.concat(chunks)
              })
            )
            res.on("error", reject)
          }
        )
        upstream.on("error", (e: NodeJS.ErrnoException) =>
          // A kept-alive connection the core closed while idle: the request never reached it, so it
          // goes once more on a new one (what Node's documentation advises) instead of faulting by chance.
          upstream.reusedSocket && !retried && (e.code === "ECONNRESET" || e.code === "EPIPE")
            ? send(req, body, true).then(resolve, reject)
            : reject(e)
        )
        upstream.end(body)
      })

    // The client may have given up meanwhile (its timeout, `refuse`): then there is no one to answer.
    const gone = (res: Http.ServerResponse) => res.req.socket.destroyed || res.writableEnded

    const respond = (res: Http.ServerResponse, answer: Answer) => {
      if (gone(res)) return
      res.writeHead(
        answer.status,
        answer.message,
        passOn(answer.rawHeaders, ["Content-Length", String(answer.body.length)])
      )
      res.end(answer.body)
    }

    const injected500 = (res: Http.ServerResponse, fault: FaultName) => {
      if (gone(res)) return
      const body = JSON.stringify({ code: "injected", message: `FaultProxy: ${fault}` })
      res.writeHead(500, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
      res.end(body)
    }

    const handle = async (req: Http.IncomingMessage, res: Http.ServerResponse, body: Buffer) => {
      const method = (req.method ?? "GET").toUpperCase()
      const path = req.url ?? "/"
      const fault = choose(method, path.split("?")[0]!)
      seen++
      if (fault !== undefined) applied[fault.fault]++
      const header = req.headers["request-id"]
      const entry = {
        method,
        path,
        requestId: Array.isArray(header) ? header[0] : header,
        fault: fault?.fault,
        upstream: undefined as Entry["upstream"]
      }
      log.push(entry)
      switch (fault?.fault) {
        case "reset":
          return req.socket.resetAndDestroy()
        case "blackhole":
          return
        case "error-500-before":
          return injected500(res, "error-500-before")
      }
      forwarded++
      let answer: Answer
      try {
        answer = await send(req, body)
        entry.upstream = answer.status
      } catch {
        entry.upstream = "error"
        return req.socket.destroy()
      }
      switch (fault?.fault) {
        case "drop-after-commit":
          return req.socket.destroy()
        case "error-500-after":
          return injected500(res, "error-500-after")
        case "delay": {
          const ms = fault.ms
          await new Promise<void>((resolve) => {
            const timer = setTimeout(() => {
              timers.delete(timer)
              resolve()
            }, ms)
            timers.add(timer)
          })
          return respond(res, answer)
        }
        default:
          return respond(res, answer)
      }
    }

    const server = Http.createServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (c: Buffer) => chunks.push(c))
      req.on("error", () => req.socket.destroy())
      req.on("end", () => void handle(req, res, Buffer.concat(chunks)))
    })
    server.on("connection", (socket) => {
      sockets.add(socket)
      socket.on("close", () => sockets.delete(socket))
    })
    server.on("clientError", (_e, socket) => socket.destroy())

    const listen = (port: number) =>
      Effect.async<number>((resume) => {
        const failed = (e: Error) => resume(Effect.die(e))
        server.once("error", failed)
        server.listen(port, "127.0.0.1", () => {
          server.off("error", failed)
          resume(Effect.succeed((server.address() as Net.AddressInfo).port))
        })
      })
    const close = Effect.async<void>((resume) => {
      for (const socket of sockets) socket.destroy()
      if (!server.listening) return resume(Effect.void)
      server.close(() => resume(Effect.void))
    })

    const port = yield* Effect.acquireRelease(listen(0), () =>
      Effect.zipRight(
        close,
        Effect.sync(() => {
          for (const timer of timers) clearTimeout(timer)
          agent.destroy()
        })
      )
    )

    return {
      port,
      url: `http://127.0.0.1:${port}`,
      setFault: (rule) =>
        Effect.sync(() => {
          rules = (rule === undefined ? [] : Array.isArray(rule) ? rule : [rule as Rule]).map(arm)
        }),
      refuse: close,
      restore: Effect.suspend(() => (server.listening ? Effect.void : Effect.asVoid(listen(port)))),
      stats: Effect.sync(() => ({ seen, forwarded, applied: { ...applied } })),
      log: Effect.sync(() => log.map((entry) => ({ ...entry }))),
      clearStats: Effect.sync(() => {
        seen = 0
        forwarded = 0
        applied = emptyApplied()
        log = []
      })
    }
  })
