/**
 * One delivery attempt over HTTP, for webhooks (the adapter of core's `Sender.Sender`: `port`) and
 * for customer notices (`Notify`): a `POST` of the exact envelope text, no redirects followed, the whole
 * attempt bounded by `Webhook.AttemptTimeout`, the response body read up to `Webhook.LoggedBodyBytes`.
 * When the endpoint must be public, every address the name resolves to is checked as the socket
 * connects (the address connected to is the one checked, so DNS rebinding gains nothing).
 */
import { type Sender, Webhook } from "@laari/core"
import { Duration, Effect } from "effect"
import { lookup as dnsLookup, type LookupAddress } from "node:dns"
import http from "node:http"
import https from "node:https"
import { isIP, type LookupFunction } from "node:net"
import { isPublicAddress, mustBePublic, type Policy } from "./Address.js"

export interface Request {
  readonly url: string
  readonly headers: Record<string, string>
  readonly body: string
  /** Refuse loopback, private, link-local and reserved addresses. */
  readonly publicOnly: boolean
  /** Default `laari-webhooks/2026-07-01`. */
  readonly userAgent?: string | undefined
}

export type Response = Webhook.Response

export const succeeded = Webhook.succeeded

const Private = "refused: the address is not public"

/** `dns.lookup`, refusing any answer that is not a public address. */
const publicLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, "", 0)
    const list = addresses as unknown as ReadonlyArray<LookupAddress>
    const bad = list.find((a) => !isPublicAddress(a.address))
    if (bad !== undefined || list.length === 0) {
      const refusal = Object.assign(new Error(Private), { code: "EPRIVATE" })
      return callback(refusal, "", 0)
    }
    if ((options as { all?: boolean }).all)
      return (callback as unknown as (e: null, a: unknown) => void)(null, list)
    return callback(null, list[0]!.address, list[0]!.family)
  })
}

/**
 * Longest a connection waits idle for the next attempt to its origin. Node 20's agent follows an
 * endpoint's `Keep-Alive: timeout=N` (dropping the socket a second early) only when it has an idle timeout
 * of its own; without one it keeps the socket until the endpoint closes it, and an attempt written as
 * the endpoint closes it is reset (25 of 1,000 written 6 s after the last, to a Node 20 server).
 */
export const IdleSocketMs = 4_000

// Connections are reused across attempts to the same origin. The number of sockets is not capped here:
// attempts in flight are, by the workers (`Delivery.Limits`), and an attempt queued behind another
// origin's sockets would wait out its timeout there, so several merchants' endpoints on one host (a
// hosted receiver) would hold one another up.
const keepAlive = { keepAlive: true, timeout: IdleSocketMs }
const agents = {
  http: new http.Agent(keepAlive),
  https: new https.Agent(keepAlive),
  publicHttp: new http.Agent({ ...keepAlive, lookup: publicLookup }),
  publicHttps: new https.Agent({ ...keepAlive, lookup: publicLookup })
}

const describe = (error: unknown, timedOut: boolean): string => {
  if (timedOut) return `timed out after ${Duration.toSeconds(Webhook.AttemptTimeout)} s`
  const e = error as { readonly code?: string; readonly message?: string }
  switch (e.code) {
    case "ECONNREFUSED":
      return "connection refused"
    case "ECONNRESET":
      return "connection reset"
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return "the host name did not resolve"
    case "EPRIVATE":
      return Private
    default:
      if (typeof e.code === "string" && /CERT|SSL|TLS/.test(e.code)) return `TLS error (${e.code})`
      return e.message ?? "the request failed"
  }
}

const attempt = (request: Request, signal: AbortSignal): Promise<Response> =>
  new Promise((resolve) => {
    const started = performance.now()
    const elapsed = () => Math.round(performance.now() - started)
    let settled = false
    const done = (r: Omit<Response, "durationMs">) => {
      if (settled) return
      settled = true
      resolve({ ...r, durationMs: elapsed() })
    }
    const url = new URL(request.url)
    const host = url.hostname.replace(/^\[(.*)\]$/, "$1")
    // A literal address is never looked up, so it is checked here.
    if (request.publicOnly && isIP(host) !== 0 && !isPublicAddress(host))
      return done({ status: null, body: null, error: Private })
    const secure = url.protocol === "https:"
    const agent = request.publicOnly
      ? secure
        ? agents.publicHttps
        : agents.publicHttp
      : secure
        ? agents.https
        : agents.http
    const send = secure ? https.request : http.request
    const body = Buffer.from(request.body, "utf8")
    // One request an attempt, never sent again inside it: the endpoint may have seen the first (a reset
    // can come after its handler ran), and what reaches it must be an attempt of the log. A reused
    // connection the endpoint closed under the attempt is a failed attempt, retried on the schedule;
    // the idle timeout above keeps that race rare.
    const post = (): void => {
      const req = send(url, {
        method: "POST",
        agent,
        signal,
        headers: {
          ...request.headers,
          "content-type": "application/json",
          "content-length": String(body.length),
          "user-agent": request.userAgent ?? "laari-webhooks/2026-07-01"
        }
      })
      req.on("error", (error) => done({ status: null, body: null, error: describe(error, signal.aborted) }))
      req.on("response", (res) => answered(res))
      req.end(body)
    }
    const answered = (res: http.IncomingMessage): void => {
      const status = res.statusCode ?? 0
      const chunks: Array<Buffer> = []
      let size = 0
      const finish = () => {
        const text = Buffer.concat(chunks).subarray(0, Webhook.LoggedBodyBytes).toString("utf8")
        done({
          status,
          body: text,
          error: status >= 200 && status < 300 ? null : `HTTP ${status}`
        })
      }
      res.on("data", (chunk: Buffer) => {
        if (size < Webhook.LoggedBodyBytes) chunks.push(chunk)
        size += chunk.length
        // Enough is kept; the rest is not read.
        if (size >= Webhook.LoggedBodyBytes) {
          finish()
          res.destroy()
        }
      })
      res.on("end", finish)
      res.on("error", finish)
      res.on("aborted", finish)
    }
    post()
  })

/** Makes one attempt; never fails, every failure is an outcome. */
export const send = (request: Request): Effect.Effect<Response> =>
  Effect.promise(() => {
    const signal = AbortSignal.timeout(Duration.toMillis(Webhook.AttemptTimeout))
    return attempt(request, signal)
  })

/** Core's `Sender` for webhook deliveries, to the addresses `policy` allows. */
export const port = (policy: Policy): Sender.SenderService => ({
  send: (request) => send({ ...request, publicOnly: mustBePublic(policy) })
})
